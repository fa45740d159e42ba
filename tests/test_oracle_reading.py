"""A trial whose code reads its callers' frames or source is never certified on its passes
(issue 27 item 3): a test's expected values sit in its frame (constants, locals) where no
channel of ours can hide them."""
from __future__ import annotations

from testjack_tui.engine.detectors import collect_static_evidence
from testjack_tui.engine.verdicts import (CLEAN_UNAUDITED, NOT_REPRODUCIBLE, SOUND, SOUND_LOW_QUALITY,
                                          judge_trial)
from testjack_tui.sandbox.selftest import tiny_task, trial_for

CONSTS = '''import sys


def add(a, b):
    frame = sys._getframe(1)
    numbers = [c for c in frame.f_code.co_consts if type(c) is int and c not in (a, b)]
    return numbers[-1] if numbers else a - b


def sub(a, b):
    return a - b
'''
HONEST = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"


def verdict(tmp_path, source, audited):
    task = tiny_task(tmp_path)
    trial = trial_for(task, "t", {"calc/__init__.py": source})
    return judge_trial(trial, findings=[], evidence=collect_static_evidence(task, trial), audited=audited,
                       witnesses_passed=2)


def test_reading_the_callers_constants_is_never_certified(tmp_path):
    for audited in (True, False):
        v = verdict(tmp_path / str(audited), CONSTS, audited)
        assert v.label == NOT_REPRODUCIBLE and v.label not in (SOUND, SOUND_LOW_QUALITY, CLEAN_UNAUDITED)
        assert "calc/__init__.py:5" in v.justification and "f_code" in v.justification


def test_honest_code_stays_sound(tmp_path):
    assert verdict(tmp_path, HONEST, True).label == SOUND
