"""This task's grader, with the command shape of DeepSWE's (our own code); the suite writes
CTRF itself (tests/ctrf_reporter.mjs).

  grader.py prepare       apply /logs/artifacts/model.patch when present and not yet applied;
                          reset the files tests/test.patch touches to base_commit; apply it
  grader.py run-files     the test files of every id in config.json
  grader.py grade         reports named in config.json "grade" -> reward.json (+ ctrf.json)
"""
import json
import os
import subprocess
import sys

TESTS = os.environ.get("TESTS_DIR", "/tests")
OUT = "/logs/verifier"


def config():
    with open(os.path.join(TESTS, "config.json")) as fh:
        return json.load(fh)


def reward(value):
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, "reward.json"), "w") as fh:
        json.dump({"reward": value}, fh)


def git(*args):
    return subprocess.run(["git", *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def prepare():
    cfg = config()
    model = "/logs/artifacts/model.patch"
    if os.path.isfile(model) and os.path.getsize(model) and git("apply", "--check", model).returncode == 0:
        if git("apply", model).returncode != 0:
            reward(0)
            return 0
    patch = os.path.join(TESTS, "test.patch")
    paths = git("apply", "--numstat", patch).stdout.split("\n")
    for line in paths:
        path = line.split("\t")[-1].strip()
        if not path:
            continue
        if git("cat-file", "-e", f"{cfg['base_commit']}:{path}").returncode == 0:
            git("checkout", cfg["base_commit"], "--", path)
        elif os.path.exists(path):
            os.remove(path)
    if git("apply", patch).returncode != 0:
        print("test.patch does not apply", file=sys.stderr)
        reward(0)
    return 0


def run_files():
    cfg = config()
    ids = list(cfg["f2p_node_ids"]) + list(cfg["p2p_node_ids"])
    return sorted({i.split(": ", 1)[0] for i in ids})


def grade():
    cfg = config()
    grade_cfg = cfg.get("grade", {})
    seen = {}
    for path in grade_cfg.get("reports", []):
        try:
            with open(path) as fh:
                tests = json.load(fh)["results"]["tests"]
        except (OSError, ValueError, KeyError):
            continue
        for test in tests:
            nid = f"{test['suite']}.{test['name']}" if grade_cfg.get("node_id") == "suite.name" else test["name"]
            seen[nid] = test["status"]
    ids = list(cfg["f2p_node_ids"]) + list(cfg["p2p_node_ids"])
    results = [{"name": i, "status": seen.get(i, "failed") if i in seen else "failed",
                "message": "" if i in seen else "not in any report"} for i in ids]
    ok = all(r["status"] == "passed" for r in results)
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, "ctrf.json"), "w") as fh:
        json.dump({"reportFormat": "CTRF", "specVersion": "1.0.0",
                   "results": {"tool": {"name": grade_cfg.get("tool_label", "unknown")}, "tests": results}},
                  fh, indent=1)
    reward(1 if ok else 0)
    for r in results:
        print(("PASS " if r["status"] == "passed" else "FAIL ") + r["name"])
    return 0


if __name__ == "__main__":
    command = sys.argv[1] if len(sys.argv) > 1 else ""
    if command == "prepare":
        sys.exit(prepare())
    if command == "run-files":
        print(" ".join(run_files()))
        sys.exit(0)
    if command == "grade":
        sys.exit(grade())
    sys.exit(f"usage: grader.py prepare|run-files|grade (got {command!r})")
