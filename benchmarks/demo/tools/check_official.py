"""Dev check for the bundled demo: does every recorded official verdict reproduce?

For every task it runs the official verifier (tests/test.sh) in a fresh container on the null
world (R), the reference world (R[G]) and every trial's world (R[s]), and compares the reward
with the one recorded in the trial's result.json. With --candidates it also runs every
agent-scripts candidate file on the reference world and on every passing trial of its task, so
the recorded agent behaviour can be checked against real executions.

Run from the project root:  .venv/bin/python benchmarks/demo/tools/check_official.py [--candidates]
Uses podman through testjack_tui.sandbox.podman_conf (our containers.conf: runc on cgroup v1, ulimits),
network none, memory/pids limits, and removes every container it starts.
"""
from __future__ import annotations

import argparse
import json
import sys
import tomllib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

DEMO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(DEMO.parents[1]))

from testjack_tui.sandbox.labels import owner_labels  # noqa: E402
from testjack_tui.sandbox.podman_conf import podman  # noqa: E402

# Owner labels (our pid + its start time) keep the sandbox's start-up sweep, which removes
# containers of dead owners, away from containers this script is still using.
LIMITS = ("--network=none", "--memory=1g", "--pids-limit=256",
          *[arg for key, value in owner_labels("demo-check").items() for arg in ("--label", f"{key}={value}")])

# The benchmark's own flow: s (stdin) at /logs/artifacts/model.patch, then the task's test.sh
# (its grader applies s and T0, runs the suites and writes reward.json and ctrf.json).
APPLY_AND_VERIFY = r"""
set -u
mkdir -p /logs/artifacts
cat > /logs/artifacts/model.patch
[ -s /logs/artifacts/model.patch ] || rm -f /logs/artifacts/model.patch
bash /tests/test.sh > /tmp/verify.log 2>&1
python3 - <<'PY'
import json
try:
    reward = json.load(open("/logs/verifier/reward.json"))
except (OSError, ValueError):
    print("TJ-REWARD missing")
    raise SystemExit
if reward.get("apply_failed"):
    print("TJ-APPLY-FAILED")
print("TJ-REWARD", reward["reward"])
for row in json.load(open("/logs/verifier/ctrf.json"))["results"]["tests"]:
    if row["status"] != "passed":
        print("TJ-FAIL", row["name"].split(" ", 1)[1])
PY
"""

# After the verifier applied T0: run each candidate file (mounted at /cands/<n>.py -> its repo path).
RUN_CANDIDATES = r"""
python3 - <<'PY'
import json, os, shutil, subprocess
plan = json.load(open("/cands/plan.json"))
for entry in plan:
    os.makedirs(os.path.dirname(entry["path"]) or ".", exist_ok=True)
    shutil.copy(f"/cands/{entry['file']}", entry["path"])
    proc = subprocess.run(["python3", "-m", "pytest", "-q", "-p", "no:cacheprovider", entry["path"]],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)
    os.remove(entry["path"])
    tail = proc.stdout.strip().splitlines()[-1:] or [""]
    print("TJ-CAND", json.dumps({"name": entry["name"], "rc": proc.returncode, "tail": tail[0]}))
PY
"""


@dataclass
class Task:
    id: str
    dir: Path
    image: str
    reference: str


@dataclass
class Trial:
    id: str
    task: str
    model: str
    patch: str
    reward: float


def load() -> tuple[dict[str, Task], list[Trial], str]:
    manifest = tomllib.loads((DEMO / "benchmark.toml").read_text())
    tasks = {}
    for d in sorted((DEMO / manifest.get("tasks", "tasks")).iterdir()):
        conf = tomllib.loads((d / "task.toml").read_text())
        tasks[d.name] = Task(d.name, d, conf["environment"]["docker_image"],
                             (d / "solution" / "solution.patch").read_text())
    trials = []
    for jobs in manifest.get("jobs", ["jobs"]):
        for result in sorted((DEMO / jobs).glob("*/*/result.json")):
            data = json.loads(result.read_text())
            trials.append(Trial(data["trial_name"], data["task_name"],
                                data["agent_info"]["model_info"]["name"],
                                (result.parent / "artifacts" / "model.patch").read_text(),
                                float(data["verifier_result"]["rewards"]["reward"])))
    image = manifest["images"][0]
    return tasks, trials, image


def build_image(image: dict, rebuild: bool) -> None:
    exists = podman("image", "exists", image["name"], check=False).returncode == 0
    if exists and not rebuild:
        return
    podman("build", "--network=none", "-t", image["name"], "-f", str(DEMO / image["containerfile"]),
           str(DEMO / image["context"]))


def run_world(task: Task, patch: str, candidates_dir: Path | None = None, attempts: int = 3) -> dict:
    """One fresh container. Retried when the container vanished mid-run (e.g. another process
    swept containers by label): an incomplete run says nothing about the world."""
    expected = len(json.loads((candidates_dir / "plan.json").read_text())) if candidates_dir else 0
    for _ in range(attempts):
        result = _run_world_once(task, patch, candidates_dir)
        complete = (not result["applied"] or result["reward"] is not None) and len(result["candidates"]) == expected
        if complete and "error" not in result:
            return result
    return result


def _run_world_once(task: Task, patch: str, candidates_dir: Path | None = None) -> dict:
    mounts = ["-v", f"{task.dir / 'tests'}:/tests:ro"]
    script = APPLY_AND_VERIFY
    if candidates_dir is not None:
        mounts += ["-v", f"{candidates_dir}:/cands:ro"]
        script += RUN_CANDIDATES
    proc = podman("run", "--rm", "-i", *LIMITS, *mounts, task.image, "bash", "-c", script,
                  input=patch.encode(), check=False, timeout=600)
    out = proc.stdout.decode()
    result = {"applied": "TJ-APPLY-FAILED" not in out, "reward": None, "failed": [], "candidates": {}}
    for line in out.splitlines():
        if line.startswith("TJ-REWARD "):
            value = line.split()[1]
            result["reward"] = float(value) if value != "missing" else None
        elif line.startswith("TJ-FAIL "):
            result["failed"].append(line.split(" ", 1)[1])
        elif line.startswith("TJ-CAND "):
            entry = json.loads(line[len("TJ-CAND "):])
            result["candidates"][entry["name"]] = entry
    if proc.returncode != 0:
        result["error"] = proc.stderr.decode()[-2000:]
    return result


def short(test_id: str) -> str:
    """`tests.test_x.test_y[1.5-a]` -> `test_y[1.5-a]` (parameters may hold dots)."""
    head, bracket, params = test_id.partition("[")
    return head.rsplit(".", 1)[-1] + bracket + params


def check_official(tasks, trials, jobs=2) -> list[str]:
    labels = json.loads((DEMO / "labels.json").read_text()) if (DEMO / "labels.json").exists() else {}
    planted = {t for t, v in labels.get("trials", {}).items() if v.get("label") == "not_reproducible"}
    problems = []
    work = [(t, "null", "") for t in tasks] + [(t, "reference", tasks[t].reference) for t in tasks]
    work += [(tr.task, tr.id, tr.patch) for tr in trials]
    with ThreadPoolExecutor(jobs) as pool:
        results = list(pool.map(lambda w: run_world(tasks[w[0]], w[2]), work))
    recorded = {tr.id: tr for tr in trials}
    for (task_id, name, _), res in zip(work, results):
        if name == "reference":
            ok = res["reward"] == 1.0
            want = "reward 1"
        elif name == "null":
            ok = res["reward"] == 0.0
            want = "reward 0"
        else:
            tr = recorded[name]
            if name in planted:
                ok = not res["applied"] and tr.reward == 1.0
                want = "patch does not apply (planted)"
            else:
                ok = res["applied"] and res["reward"] == tr.reward
                want = f"reward {tr.reward:g}"
        got = "patch does not apply" if not res["applied"] else f"reward {res['reward']}"
        line = f"{'ok ' if ok else 'BAD'} {task_id:26s} {name:42s} want {want:32s} got {got}"
        if res["failed"] and res["applied"]:
            line += f"  failing: {', '.join(short(f) for f in res['failed'])}"
        print(line, flush=True)
        if not ok:
            problems.append(line)
    return problems


def check_candidates(tasks, trials, jobs=2) -> list[str]:
    """Run every candidate file of agent-scripts/<task>/candidates on R[G] and on every passing
    trial; print a matrix. Expectations are not judged here: the engine does that."""
    import tempfile
    scripts = DEMO / "agent-scripts"
    problems = []
    for task_id, task in tasks.items():
        cand_dir = scripts / task_id / "candidates"
        if not cand_dir.is_dir():
            continue
        paths = {}
        for chain_file in [scripts / task_id / "analysis.json", *sorted((scripts / task_id / "audits").glob("*.json"))]:
            for chain in json.loads(chain_file.read_text()).get("candidates", []):
                for version in chain["versions"]:
                    paths[Path(version).name] = chain["path"]
        with tempfile.TemporaryDirectory(prefix="tj-cands-") as tmp:
            tmp_path = Path(tmp)
            plan = []
            for f in sorted(cand_dir.glob("*.py")):
                (tmp_path / f.name).write_text(f.read_text())
                plan.append({"name": f.name, "file": f.name, "path": paths.get(f.name, f"tests/{f.name}")})
            (tmp_path / "plan.json").write_text(json.dumps(plan))
            tmp_path.chmod(0o755)
            worlds = [("reference", task.reference)] + [(tr.id, tr.patch) for tr in trials
                                                         if tr.task == task_id and tr.reward == 1.0]
            with ThreadPoolExecutor(jobs) as pool:
                results = list(pool.map(lambda w: run_world(task, w[1], tmp_path), worlds))
        names = [p["name"] for p in plan]
        print(f"\n== {task_id}: candidate results (P = passes, F = fails, - = world unavailable)")
        width = max(len(w[0]) for w in worlds)
        for n in names:
            print(f"   [{names.index(n):2d}] {n}")
        for (world, _), res in zip(worlds, results):
            marks = "".join(
                ("P" if res["candidates"][n]["rc"] == 0 else "F") if n in res["candidates"] else "-"
                for n in names)
            print(f"   {world:{width}s} {marks}")
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rebuild", action="store_true", help="rebuild the demo image")
    parser.add_argument("--candidates", action="store_true", help="also run agent-scripts candidates")
    parser.add_argument("--task", action="append", help="only these tasks")
    parser.add_argument("--no-official", action="store_true", help="skip the official verdict check")
    parser.add_argument("-j", "--jobs", type=int, default=2)
    args = parser.parse_args()
    tasks, trials, image = load()
    if args.task:
        tasks = {k: v for k, v in tasks.items() if k in args.task}
        trials = [t for t in trials if t.task in tasks]
    build_image(image, args.rebuild)
    problems = [] if args.no_official else check_official(tasks, trials, args.jobs)
    if args.candidates:
        problems += check_candidates(tasks, trials, args.jobs)
    print(f"\n{len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
