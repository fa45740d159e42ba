#!/usr/bin/env python3
"""Verifier helper of TestJack's DeepSWE-layout tasks (our own code, written to DeepSWE's contract).

  grader.py prepare   in $APP_DIR: reset the files /logs/artifacts/model.patch touches to the
                      base commit and apply it (one that does not apply is graded 0 with
                      apply_failed); then reset the files tests/test.patch touches and apply it
  grader.py grade     read the reports config.json's "grade" names and write
                      /logs/verifier/reward.json and ctrf.json

Grading contract: junit ids are classname + "." + name; ctrf ids are suite + "." + name
(node_id = "suite.name") or name; duplicates keep the worst status (passed < skipped <
failed); an id in no report counts as failed; reward 1 iff there are f2p ids, all pass, and
no p2p id fails. Every task carries its own copy (tests/ is all the verifier sees); the copies
under tests/fixtures/deepswe/tasks/*/tests/ and benchmarks/demo/tasks/*/tests/ are identical to
tests/fixtures/deepswe/shared/grader.py (a test checks it).
"""
import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

TESTS = Path(os.environ.get("TESTS_DIR", "/tests"))
OUT = Path(os.environ.get("VERIFIER_DIR", "/logs/verifier"))
APP = Path(os.environ.get("APP_DIR", "/app"))
ARTIFACTS = Path(os.environ.get("ARTIFACTS_DIR", "/logs/artifacts"))
WORST = {"passed": 0, "skipped": 1, "failed": 2}


def config():
    return json.loads((TESTS / "config.json").read_text())


def paths_of(patch_text):
    found = []
    for line in patch_text.splitlines():
        m = re.match(r'^diff --git "?a/(.*?)"? "?b/(.*?)"?$', line)
        name = m.group(2) if m else (line[6:] if line.startswith(("+++ b/", "--- a/")) else None)
        if name and name != "/dev/null" and name not in found:
            found.append(name)
    return found


def git(*args, **kw):
    return subprocess.run(["git", *args], cwd=APP, **kw)


def reset(paths, ref):
    for path in paths:
        if git("checkout", "-q", ref, "--", path, stderr=subprocess.DEVNULL).returncode != 0 \
                and ref == "HEAD" and (APP / path).exists():
            subprocess.run(["rm", "-rf", "--", path], cwd=APP)


def prepare():
    OUT.mkdir(parents=True, exist_ok=True)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    git("config", "--global", "--add", "safe.directory", str(APP))
    patch = ARTIFACTS / "model.patch"
    if patch.exists() and patch.stat().st_size:
        reset(paths_of(patch.read_text(errors="replace")), config()["base_commit"])
        if git("apply", "--whitespace=nowarn", str(patch)).returncode != 0:
            print("[verifier] model.patch does not apply")
            grade(apply_failed=True)
            return
    test_patch = TESTS / "test.patch"
    reset(paths_of(test_patch.read_text(errors="replace")), "HEAD")
    done = git("apply", "--whitespace=nowarn", "--allow-empty", str(test_patch),
               capture_output=True, text=True)
    if done.returncode != 0:
        sys.stderr.write(done.stdout + done.stderr)
        sys.exit(done.returncode)
    inner = APP / "test.sh"
    if inner.exists():
        inner.chmod(inner.stat().st_mode | 0o111)


def status_of(raw):
    raw = str(raw or "").strip().lower()
    return "passed" if raw == "passed" else "skipped" if raw in ("skipped", "pending", "other") else "failed"


def keep(seen, test_id, status, message):
    old = seen.get(test_id)
    if old is None or WORST[status] > WORST[old[0]]:
        seen[test_id] = (status, message)


def read_junit(path, seen, cfg):
    try:
        root = ET.parse(path).getroot()
    except Exception:
        return
    for case in root.iter("testcase"):
        cls = (case.get("classname") or "").strip()
        name = (case.get("name") or "").strip()
        if not name:
            continue
        status, message = "passed", ""
        for child in case:
            tag = child.tag.rsplit("}", 1)[-1]
            if tag in ("failure", "error"):
                status, message = "failed", (child.get("message") or "").strip()
                break
            if tag == "skipped":
                status = "skipped"
        keep(seen, f"{cls}.{name}" if cls else name, status, message)


def read_ctrf(path, seen, cfg):
    try:
        tests = json.loads(Path(path).read_text())["results"]["tests"]
    except Exception:
        return
    for test in tests if isinstance(tests, list) else []:
        name = str(test.get("name") or "").strip()
        suite = test.get("suite")
        suite = (suite[0] if isinstance(suite, list) and suite else suite) or ""
        suite = str(suite).strip()
        if not name:
            continue
        test_id = f"{suite}.{name}" if cfg.get("node_id") == "suite.name" and suite else name
        keep(seen, test_id, status_of(test.get("status")), str(test.get("message") or ""))


def grade(apply_failed=False):
    full = config()
    cfg = full.get("grade", {})
    f2p = list(dict.fromkeys(s.strip() for s in full.get("f2p_node_ids", []) if s.strip()))
    p2p = list(dict.fromkeys(s.strip() for s in full.get("p2p_node_ids", []) if s.strip()))
    seen = {}
    if not apply_failed:
        reader = read_junit if cfg.get("format") == "junit" else read_ctrf
        for report in cfg.get("reports", []):
            reader(report, seen, cfg)
    rows = []
    for bucket, ids in (("p2p", p2p), ("f2p", f2p)):
        for test_id in ids:
            status, message = seen.get(test_id, ("failed", "missing from report"))
            rows.append({"name": f"[{bucket}] {test_id}", "status": status, "message": message})
    f2p_ok = sum(1 for t in f2p if seen.get(t, ("failed",))[0] == "passed")
    p2p_ok = sum(1 for t in p2p if seen.get(t, ("failed",))[0] == "passed")
    p2p_bad = sum(1 for t in p2p if seen.get(t, ("failed",))[0] == "failed")
    reward = 1 if f2p and f2p_ok == len(f2p) and p2p_bad == 0 else 0
    total = len(f2p) + len(p2p)
    result = {"reward": reward, "f2p_total": len(f2p), "f2p_passed": f2p_ok,
              "p2p_total": len(p2p), "p2p_passed": p2p_ok,
              "f2p": f2p_ok / len(f2p) if f2p else 0.0, "p2p": p2p_ok / len(p2p) if p2p else 1.0,
              "partial": (f2p_ok + p2p_ok) / total if total else 0.0}
    if apply_failed:
        result["apply_failed"] = 1
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "ctrf.json").write_text(json.dumps({"reportFormat": "CTRF", "specVersion": "1.0.0", "results": {
        "tool": {"name": cfg.get("tool_label", "unknown")}, "tests": rows}}, indent=1))
    (OUT / "reward.json").write_text(json.dumps(result))
    print(f"F2P {f2p_ok}/{len(f2p)}; P2P {p2p_ok}/{len(p2p)}; reward {reward}")


def main():
    commands = {"prepare": prepare, "grade": grade}
    if len(sys.argv) < 2 or sys.argv[1] not in commands:
        sys.exit("usage: grader.py {prepare|grade}")
    commands[sys.argv[1]]()


if __name__ == "__main__":
    main()
