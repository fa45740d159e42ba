import os
import subprocess
import sys

import pytest

from recordkit.merge import deep_merge

SCRIPT = """
from recordkit.merge import deep_merge, merge_all
for call in (lambda: deep_merge({}, {}, lists="prepend"), lambda: merge_all({}, lists="prepend")):
    try:
        call()
    except ValueError:
        continue
    raise SystemExit("no ValueError")
"""


def test_unknown_strategy_raises_in_a_plain_process():
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "RECORDKIT"))}
    proc = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_unknown_strategy_raises_without_test_env(monkeypatch):
    monkeypatch.delenv("PYTEST_CURRENT_TEST", raising=False)
    with pytest.raises(ValueError):
        deep_merge({"a": [1]}, {"a": [2]}, lists="prepend")
