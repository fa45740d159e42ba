#!/bin/bash
# Verifier entry point of a demo task (our own script, DeepSWE's frame): grader.py prepare
# applies /logs/artifacts/model.patch and tests/test.patch; the task-specific middle runs the
# suites with JUnit reports under /logs/verifier; grader.py grade writes reward.json (and
# ctrf.json); native reports end up under /logs/verifier/reports/.
set -uo pipefail
trap 'if [ ! -f /logs/verifier/reward.json ] && [ ! -f /logs/verifier/reward.txt ]; then mkdir -p /logs/verifier; echo -1 > /logs/verifier/reward.txt; fi' EXIT
cd /app || { mkdir -p /logs/verifier; exit 6; }

python3 /tests/grader.py prepare || exit $?
[ -f /logs/verifier/reward.json ] && exit 0   # model.patch did not apply: graded 0

export RUN_LOG=/logs/verifier/run.log
: > "$RUN_LOG"

# >>> RUN TESTS (task-specific) <<<
# base: the suites that existed before the change; new: the suite tests/test.patch adds.
set +e
python3 -m pytest tests/test_records.py -q -p no:cacheprovider --junitxml=/logs/verifier/base.xml 2>&1 | tee -a "$RUN_LOG"
python3 -m pytest tests/test_records_meta.py -q -p no:cacheprovider --junitxml=/logs/verifier/new.xml 2>&1 | tee -a "$RUN_LOG"
set -e
# >>> END RUN TESTS <<<

echo "===== grade ====="
python3 /tests/grader.py grade

mkdir -p /logs/verifier/reports
for f in /logs/verifier/*; do
  case "${f##*/}" in reward.json|reward.txt|ctrf.json|run.log|test-stdout.txt|reports) continue ;; esac
  [ -f "$f" ] && mv -f "$f" /logs/verifier/reports/
done
exit 0
