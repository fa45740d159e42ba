#!/bin/bash
# Verifier entrypoint, in the DeepSWE frame: `grader.py prepare` (model patch and test patch),
# run the suite with a machine-readable reporter into /logs/verifier, `grader.py grade`
# (reward.json + ctrf.json from the reports named in config.json's "grade").
set -uo pipefail
trap 'if [ ! -f /logs/verifier/reward.json ] && [ ! -f /logs/verifier/reward.txt ]; then mkdir -p /logs/verifier; echo -1 > /logs/verifier/reward.txt; fi' EXIT
log() { echo "[verifier] $*"; }
cd /app || { mkdir -p /logs/verifier; exit 6; }

python3 /tests/grader.py prepare || exit $?
[ -f /logs/verifier/reward.json ] && exit 0   # model.patch didn't apply -> graded 0

export RUN_LOG=/logs/verifier/run.log
: > "$RUN_LOG" 2>/dev/null || true

# >>> RUN TESTS (task-specific) <<<
require_cmd() { command -v "$1" >/dev/null 2>&1 || { log "ERROR: missing $1; PATH=$PATH"; exit 127; }; }
require_cmd node
set +e
# The suite is every test file config.json's ids name (a strengthened config.json adds files).
FILES=$(python3 /tests/grader.py run-files) || exit 5
node --test --test-reporter=/tests/ctrf_reporter.mjs --test-reporter-destination=/logs/verifier/node-ctrf.json \
  $FILES >>"$RUN_LOG" 2>&1
set -e
# >>> END RUN TESTS <<<

echo "===== raw suite output: run.log ====="
cat "$RUN_LOG" 2>/dev/null
echo "===== grade ====="
python3 /tests/grader.py grade
log "reward.json=$(cat /logs/verifier/reward.json 2>/dev/null)"
