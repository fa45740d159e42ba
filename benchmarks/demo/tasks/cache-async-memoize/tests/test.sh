#!/bin/bash
# Official verifier for this task (runs inside the task container, tests/ mounted at /tests).
# 1. restore the files that tests/test.patch touches to the base commit (new files: removed),
# 2. apply tests/test.patch,
# 3. run the fail-to-pass and pass-to-pass tests from tests/config.json with pytest,
# 4. reward 1 when every listed test passed, else 0, written to /logs/verifier/reward.txt.
set -u
TESTS_DIR="${TESTS_DIR:-/tests}"
LOG_DIR="${LOG_DIR:-/logs/verifier}"
mkdir -p "$LOG_DIR"
cd /app || exit 1

BASE=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["base_commit"])' "$TESTS_DIR/config.json")
for path in $(git apply --numstat "$TESTS_DIR/test.patch" | cut -f3); do
    if git cat-file -e "$BASE:$path" 2>/dev/null; then
        git show "$BASE:$path" > "$path"
    else
        rm -f "$path"
    fi
done
if ! git apply --whitespace=nowarn "$TESTS_DIR/test.patch"; then
    echo "test.patch does not apply" >&2
    echo 0 > "$LOG_DIR/reward.txt"
    exit 0
fi

python3 - "$TESTS_DIR/config.json" "$LOG_DIR" <<'PY'
import json
import subprocess
import sys
import xml.etree.ElementTree as ET

config = json.load(open(sys.argv[1]))
log_dir = sys.argv[2]
ids = list(config["f2p_node_ids"]) + list(config["p2p_node_ids"])
junit = f"{log_dir}/junit.xml"
proc = subprocess.run(
    [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rA", f"--junitxml={junit}", *ids],
    stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
)
open(f"{log_dir}/test-stdout.txt", "w").write(proc.stdout)


def node_of(case):
    # junit classname "tests.test_x" (+ ".TestClass") and name "test_y[param]" -> node id
    parts = case.get("classname", "").split(".")
    for cut in range(len(parts), 0, -1):
        path = "/".join(parts[:cut]) + ".py"
        if path in files:
            return "::".join([path, *parts[cut:], case.get("name", "")])
    return None


files = {i.split("::")[0] for i in ids}
outcomes = {}
try:
    for case in ET.parse(junit).getroot().iter("testcase"):
        node = node_of(case)
        if node is None:
            continue
        bad = any(child.tag in ("failure", "error", "skipped") for child in case)
        outcomes[node] = outcomes.get(node, True) and not bad
except (OSError, ET.ParseError):
    pass


def passed(test_id):
    matched = [ok for node, ok in outcomes.items()
               if node == test_id or node.startswith(test_id + "[") or node.startswith(test_id + "::")]
    return bool(matched) and all(matched)


results = {test_id: passed(test_id) for test_id in ids}
json.dump(results, open(f"{log_dir}/results.json", "w"), indent=1)
reward = 1 if all(results.values()) else 0
open(f"{log_dir}/reward.txt", "w").write(f"{reward}\n")
print(f"reward={reward}", *[f"{'PASS' if ok else 'FAIL'} {t}" for t, ok in results.items()], sep="\n")
PY
