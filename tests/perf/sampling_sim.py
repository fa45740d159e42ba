"""Does the `cluster` sampler beat uniform? A simulation of the lightweight loop with a perfect auditor.

Faithful to the real loop (testjack_tui/engine/loop.py):
- Task analysis (T1) runs first and is replayed on every passing trial; the trials it refutes
  never enter the sampling. For the demo, what T1 refutes is read from a real session
  (tests/perf/demo_t1.json, produced by `--extract-t1`, see that file's "about"), not from labels;
  only reproducible trials (the real loop's corpus) are simulated. The synthetic task has no T1.
- The sampler is built exactly as the loop builds it: SamplerContext with the corpus and the
  static detector evidence of every trial (computed at task start), and each round it gets a
  SamplerState with the refuted / clean / audited trials, the witnesses and their replay runs.
- The labels play the auditor and nothing else: auditing a defective trial yields one witness per
  failure mode it has (its mode_group plus the groups in "also"), which refutes every active
  trial having that mode; a mode that is only ever an ambiguous reading of the prompt yields a
  witness that fails its trials on replay but refutes none (the ambiguity rule); auditing a
  sound trial yields nothing. An audited trial that is not refuted leaves the active set as clean.
Two label-knowing samplers give context (INFO rows, never targets): `oracle-bound` (the fewest
rounds and the most refuted after 3 rounds any sampler can reach, see exact_bounds) and `detectors-bound` (knows the labels but can tell trials
apart only by their detector evidence, uniform within a class): how far detector evidence can
take any sampler.

Measured over many seeds, per population:
- rounds to refute every planted defect left after T1 (median, summed over the tasks; lower is better);
- recall after 3 rounds per task (share of defective trials refuted; higher is better), counting
  what T1 refuted (the loop's recall) -- and, as INFO, the sampler's share of what T1 left.
Populations: the bundled demo benchmark (if present); our second labelled benchmark
(tests/fixtures/fmtkit-labelled: three tasks, 28 passing trials each by four models, four failure
modes per task, labels checked on real runs by tests/test_labelled_fmtkit_e2e.py; no T1 fixture,
so the loop without task analysis); the small shipkit benchmark (tests/fixtures/shipkit-labelled:
one task, 8 passing trials, no T1: context, too small for a sampler to show) and a synthetic task
(5 failure modes over 100 trials, 30% defective, unequal mode sizes) generated afresh for every
seed. The label-knowing bound is exact (exhaustive search over
failure-mode sets) wherever the population allows; a target it cannot reach is reported with the
bound and not gated.

    python tests/perf/sampling_sim.py [--quick]         # prints the table; exit 1 on FAIL
    python tests/perf/sampling_sim.py --extract-t1 DB   # rewrite demo_t1.json from a session store
    run(quick) -> list[dict]                             # for the perf runner
"""
from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from testjack_tui.engine.detectors import collect_static_evidence  # noqa: E402
from testjack_tui.engine.samplers import model_record  # noqa: E402
from testjack_tui.engine.samplers import SAMPLERS  # noqa: E402
from testjack_tui.engine.sampling import SampledWitness, SamplerContext, SamplerState, Samplers  # noqa: E402
from testjack_tui.model import Environment, OfficialTests, Reference, Task, Trial  # noqa: E402

ROUNDS_TARGET = 0.7  # ours <= 0.7 x uniform's median rounds
RECALL_TARGET = 1.2  # ours >= 1.2 x uniform's recall after 3 rounds
SEEDS, QUICK_SEEDS = 200, 40
T1_FIXTURE = Path(__file__).with_name("demo_t1.json")
from testjack_tui.engine.runner import FAILING  # noqa: E402  (the engine's one witness-fails rule)


@dataclass
class Population:
    """One task's corpus (reproducible passing trials), what T1 did, and the hidden truth."""

    task: Task
    trials: list[Trial]
    mode: dict[str, str | None]  # trial id -> mode_group (None: not defective); truth, auditor only
    also: dict[str, tuple[str, ...]] = field(default_factory=dict)  # further modes a trial has
    # Readings of an underspecified prompt a trial takes (ambiguous: witnessed, never refuting).
    readings: dict[str, tuple[str, ...]] = field(default_factory=dict)
    refuting: set[str] | None = None  # modes whose witnesses refute (None: every mode)
    # What T1 did, as the engine saw it: its confirmed refuting witnesses and their replay runs.
    t1_witnesses: list[SampledWitness] = field(default_factory=list)
    t1_runs: dict[str, dict[str, str]] = field(default_factory=dict)
    # Per model, over the whole benchmark: share of its trials flagged by static evidence, as
    # the session computes it at start (samplers.model_record); None: over this task alone.
    model_record: dict[str, float] | None = None
    _static: dict[str, dict] | None = None

    def modes_of(self, trial_id: str) -> set[str]:
        """The failure modes an audit of this trial can witness (empty: nothing to find)."""
        if not self.mode.get(trial_id):
            return set()
        modes = {self.mode[trial_id], *self.also.get(trial_id, ())}
        return modes if self.refuting is None else modes & self.refuting

    def witnessed(self, trial_id: str) -> set[str]:
        """Every mode a perfect audit of the trial turns into a witness, refuting or not."""
        return self.modes_of(trial_id) | set(self.readings.get(trial_id, ()))

    def defective(self) -> set[str]:
        return {t.id for t in self.trials if self.mode.get(t.id)}

    def t1_refuted(self) -> set[str]:
        return {tid for tid, runs in self.t1_runs.items()
                if any(status in FAILING for status in runs.values())}

    def static_evidence(self) -> dict[str, dict]:
        """What the loop computes for every trial at task start (no containers)."""
        if self._static is None:
            self._static = {t.id: collect_static_evidence(self.task, t).to_dict() for t in self.trials}
        return self._static

    def models(self) -> dict[str, float]:
        if self.model_record is None:
            self.model_record = model_record(self.static_evidence(), {t.id: t.model for t in self.trials})
        return self.model_record


# -- the simulated lightweight loop -----------------------------------------------------------

class OracleBound:
    """Not a sampler anyone can use: it reads the labels. Each round it audits the trial whose
    witnesses refute the most defective active trials, so its rounds are (near) the lower bound
    any sampler can reach."""

    name = "oracle-bound"

    def __init__(self, pop: Population):
        self.pop = pop

    def pick(self, active: list[Trial], state: SamplerState) -> Trial:
        def gain(t: Trial) -> int:
            modes = self.pop.modes_of(t.id)
            return sum(1 for x in active if modes & self.pop.modes_of(x.id))

        return max(sorted(active, key=lambda t: t.id), key=gain)


class DetectorsBound:
    """Not a sampler anyone can use either: it knows the labels, but may tell trials apart only
    by what the detectors say about them (the kinds of signals of low severity and above, and
    whether the trial already fails a known non-refuting witness). Each round it picks the class
    of identical detector evidence whose audit refutes the most defective trials on average, and
    a trial uniformly within it. So it is what the best sampler reaches when the detectors are
    all it can tell trials apart by: diff similarity would have to do the rest."""

    name = "detectors-bound"

    def __init__(self, pop: Population, seed: int):
        self.pop = pop
        self.rng = random.Random(f"{seed}:{pop.task.id}:detectors-bound")
        self.kinds = {tid: frozenset((sig["detector"], sig["kind"]) for sig in ev.get("signals", [])
                                     if sig.get("severity") != "info")
                      for tid, ev in pop.static_evidence().items()}

    def pick(self, active: list[Trial], state: SamplerState) -> Trial:
        classes: dict[tuple, list[Trial]] = {}
        for t in sorted(active, key=lambda t: t.id):
            runs = state.runs_by_trial.get(t.id, {})
            explained = any(status in FAILING for status in runs.values())
            classes.setdefault((self.kinds.get(t.id, frozenset()), explained), []).append(t)

        def gain(t: Trial) -> int:
            modes = self.pop.modes_of(t.id)
            return sum(1 for x in active if modes & self.pop.modes_of(x.id))

        best = max(sorted(classes, key=repr),
                   key=lambda k: sum(gain(t) for t in classes[k]) / len(classes[k]))
        return self.rng.choice(classes[best])


@dataclass
class SimResult:
    rounds: int  # rounds until every defect was refuted (or the active set ran out)
    history: list[int]  # defective trials refuted (T1 included) after each round
    t1: int  # defective trials T1 refuted before round 1
    defective: int  # defective trials in the corpus

    def refuted_after(self, rounds: int) -> int:
        return self.history[min(rounds, len(self.history)) - 1] if self.history else self.t1


def simulate_loop(pop: Population, sampler_name: str, seed: int, max_rounds: int | None = None,
                  samplers: Samplers = SAMPLERS) -> SimResult:
    if sampler_name == "oracle-bound":
        sampler = OracleBound(pop)
    elif sampler_name == "detectors-bound":
        sampler = DetectorsBound(pop, seed)
    else:
        ctx = SamplerContext(trials=list(pop.trials), evidence={}, static_evidence=pop.static_evidence(),
                             model_record=pop.models())
        sampler = samplers.make(sampler_name, pop.task, seed, ctx)
    t1_refuted = pop.t1_refuted()
    state = SamplerState(round=1, refuted=sorted(t1_refuted),
                         witnesses=list(pop.t1_witnesses),
                         runs_by_trial={tid: dict(runs) for tid, runs in pop.t1_runs.items()},
                         evidence={})
    active = [t for t in pop.trials if t.id not in t1_refuted]
    defective = pop.defective()
    refuted_defective = len(defective & t1_refuted)
    t1 = refuted_defective
    left = {t.id for t in active} & defective
    history: list[int] = []
    rounds = 0
    while left and active and (max_rounds is None or rounds < max_rounds):
        rounds += 1
        state.round = rounds
        chosen = sampler.pick(active, state)
        state.audited.append(chosen.id)
        refuting = pop.modes_of(chosen.id)
        hit: set[str] = set()
        for n, mode in enumerate(sorted(pop.witnessed(chosen.id))):
            wid = f"w{rounds}.{n}"
            state.witnesses.append({"id": wid, "requirement": mode, "source_trial": chosen.id})
            failing = {t.id for t in active if mode in pop.witnessed(t.id)}
            for t in active:  # replay on the active set
                state.runs_by_trial.setdefault(t.id, {})[wid] = "failed" if t.id in failing else "passed"
            if mode in refuting:  # an ambiguous witness fails trials but refutes none
                hit |= failing
        if hit:
            state.refuted.extend(sorted(hit))
        else:
            state.clean.append(chosen.id)
        refuted_defective += len(hit & left)
        left -= hit
        active = [t for t in active if t.id not in hit and t.id != chosen.id]
        history.append(refuted_defective)
    return SimResult(rounds, history, t1, len(defective))


def exact_bounds(pop: Population) -> tuple[int, int] | None:
    """(fewest rounds that refute every defect T1 left, most defective trials refuted -- T1's
    included -- after 3 rounds) for a sampler that knows the labels, by exhaustive search over
    the distinct failure-mode sets of the defective trials left: auditing a trial refutes every
    active trial sharing one of its modes, auditing a sound one refutes nothing, so only which
    mode sets get audited matters. None when the search is too big or a defect cannot be refuted
    at all (then the greedy simulation stands in)."""
    from itertools import combinations

    t1 = pop.t1_refuted()
    left = [t.id for t in pop.trials if t.id not in t1 and pop.mode.get(t.id)]
    modes = {tid: pop.modes_of(tid) for tid in left}
    if any(not m for m in modes.values()):
        return None
    sets = sorted({frozenset(m) for m in modes.values()}, key=sorted)
    if len(sets) > 16:
        return None

    def covered(combo) -> int:
        union = frozenset().union(*combo)
        return sum(1 for m in modes.values() if m & union)

    fewest = next((k for k in range(len(sets) + 1)
                   if any(covered(c) == len(left) for c in combinations(sets, k))), len(sets))
    most = max((covered(c) for c in combinations(sets, min(3, len(sets)))), default=0)
    return fewest, len(pop.defective() & t1) + most


def oracle_result(pop: Population, seed: int) -> SimResult:
    """The label-knowing bound as a SimResult: exact where exact_bounds can search, otherwise
    the greedy OracleBound's simulated run."""
    exact = exact_bounds(pop)
    if exact is None:
        return simulate_loop(pop, "oracle-bound", seed)
    rounds, refuted3 = exact
    t1 = len(pop.defective() & pop.t1_refuted())
    # Only rounds and recall after 3 rounds are read from a bound's result.
    return SimResult(rounds, [refuted3] * max(3, rounds), t1, len(pop.defective()))


def simulate(pop: Population, sampler_name: str, seed: int, max_rounds: int | None = None,
             ) -> tuple[int, list[int]]:
    """(rounds until every defect is refuted, defective refuted after each round)."""
    result = simulate_loop(pop, sampler_name, seed, max_rounds)
    return result.rounds, result.history


# -- a synthetic task: parse a duration like "1h30m" ------------------------------------------

_SOUND_STYLES = {
    "regex": [
        "import re",
        "_UNITS = {'s': 1, 'm': 60, 'h': 3600, 'd': 86400}",
        "_PART = re.compile(r'(\\d+)([smhd])')",
        "def parse_duration(text):",
        "    text = text.strip().lower()",
        "    if not text:",
        "        raise ValueError('empty duration')",
        "    total, pos = 0, 0",
        "    for m in _PART.finditer(text):",
        "        if m.start() != pos:",
        "            raise ValueError('bad duration')",
        "        total += int(m.group(1)) * _UNITS[m.group(2)]",
        "        pos = m.end()",
        "    if pos != len(text):",
        "        raise ValueError('bad duration')",
        "    return total",
    ],
    "scan": [
        "SECONDS = dict(s=1, m=60, h=60 * 60, d=24 * 60 * 60)",
        "def parse_duration(text):",
        "    text = text.strip().lower()",
        "    if text == '':",
        "        raise ValueError('empty duration')",
        "    number, seconds = '', 0",
        "    for ch in text:",
        "        if ch.isdigit():",
        "            number += ch",
        "        elif ch in SECONDS and number:",
        "            seconds += int(number) * SECONDS[ch]",
        "            number = ''",
        "        else:",
        "            raise ValueError(f'unexpected {ch!r}')",
        "    if number:",
        "        raise ValueError('number without unit')",
        "    return seconds",
    ],
    "split": [
        "import re",
        "FACTORS = {'d': 86400, 'h': 3600, 'm': 60, 's': 1}",
        "def parse_duration(text):",
        "    cleaned = text.strip().lower()",
        "    if not re.fullmatch(r'(\\d+[dhms])+', cleaned):",
        "        raise ValueError(f'invalid duration {text!r}')",
        "    pairs = re.findall(r'(\\d+)([dhms])', cleaned)",
        "    return sum(int(n) * FACTORS[u] for n, u in pairs)",
    ],
}

# How each failure mode changes a style's code: (substring to find, replacement lines).
_MODES = {
    "no_days": {"regex": ("'h': 3600, 'd': 86400}", ["_UNITS = {'s': 1, 'm': 60, 'h': 3600}"]),
                "scan": ("d=24 * 60 * 60)", ["SECONDS = dict(s=1, m=60, h=60 * 60)"]),
                "split": ("FACTORS = {", ["FACTORS = {'h': 3600, 'm': 60, 's': 1}"])},
    "case_sensitive": {"regex": ("text = text.strip().lower()", ["    text = text.strip()"]),
                       "scan": ("text = text.strip().lower()", ["    text = text.strip()"]),
                       "split": ("cleaned = text.strip().lower()", ["    cleaned = text.strip()"])},
    "accepts_garbage": {"regex": ("if pos != len(text):", ["    pass  # trailing text ignored"]),
                        "scan": ("if number:", ["    if False:"]),
                        "split": ("re.fullmatch", ["    if not re.search(r'\\d+[dhms]', cleaned):"])},
    "hard_coded": {s: ("def parse_duration", ["def parse_duration(text):",
                                              "    if text == '1h30m':",
                                              "        return 5400"]) for s in ("regex", "scan", "split")},
    "sniffs_pytest": {s: ("def parse_duration", ["import os",
                                                 "def parse_duration(text):",
                                                 "    if 'PYTEST_CURRENT_TEST' not in os.environ:",
                                                 "        return int(text.rstrip('s') or 0)"])
                      for s in ("regex", "scan", "split")},
}
_MODE_SIZES = (12, 8, 5, 3, 2)  # 30 defective of 100, unequal

# Equivalent rewrites any trial (sound or not) may use: incidental differences that make sound
# trials deviate from their group's consensus too, so "different" is not "defective".
_ALTERNATES = {
    "regex": [("text = text.strip().lower()", "    text = text.lower().strip()"),
              ("if not text:", "    if len(text) == 0:"),
              ("total, pos = 0, 0", "    total = 0\n    pos = 0"),
              ("pos = m.end()", "        pos += len(m.group(0))")],
    "scan": [("if text == '':", "    if not text:"),
             ("number += ch", "            number = number + ch"),
             ("for ch in text:", "    for ch in list(text):"),
             ("raise ValueError('number without unit')", "        raise ValueError('missing unit')")],
    "split": [("pairs = re.findall", "    pairs = [(m.group(1), m.group(2)) for m in re.finditer(r'(\\d+)([dhms])', cleaned)]"),
              ("return sum(", "    total = sum(int(n) * FACTORS[u] for n, u in pairs)\n    return total"),
              ("import re", "import re as _re\nre = _re")],
}

_NOISE = [
    '    """Return the number of seconds in a duration string."""',
    "# helper added while exploring",
    "__all__ = ['parse_duration']",
    "MAX_SECONDS = 10 ** 9",
    "def _check(value):",
    "    return value >= 0",
    "log = None",
    "VERSION = '0.2'",
]
_RENAMES = [("total", "acc"), ("total", "result"), ("seconds", "secs"), ("number", "digits"),
            ("text", "value"), ("cleaned", "norm"), ("pairs", "parts")]

TEST_PATCH = (
    "diff --git a/tests/test_duration.py b/tests/test_duration.py\nnew file mode 100644\n"
    "--- /dev/null\n+++ b/tests/test_duration.py\n@@ -0,0 +1,6 @@\n"
    "+from durations import parse_duration\n"
    "+def test_basic():\n"
    "+    assert parse_duration('1h30m') == 5400\n"
    "+def test_seconds():\n"
    "+    assert parse_duration('45s') == 45\n"
    "+    assert parse_duration(' 2m ') == 120\n"
)


def _as_patch(lines: list[str], path: str = "durations.py") -> str:
    body = "".join("+" + line + "\n" for line in lines)
    return (f"diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n"
            f"@@ -0,0 +1,{len(lines)} @@\n" + body)


def _variant(rng: random.Random, style: str, mode: str | None) -> list[str]:
    lines = list(_SOUND_STYLES[style])
    if mode:
        needle, replacement = _MODES[mode][style]
        at = next(i for i, line in enumerate(lines) if needle in line)
        lines[at:at + 1] = replacement
    for needle, rewrite in _ALTERNATES[style]:
        at = next((i for i, line in enumerate(lines) if needle in line), None)
        if at is not None and rng.random() < 0.35:
            lines[at:at + 1] = rewrite.split("\n")
    for old, new in rng.sample(_RENAMES, rng.randint(0, 3)):
        lines = [line.replace(old, new) for line in lines]
    for extra in rng.sample(_NOISE, rng.randint(0, 4)):
        lines.insert(rng.randint(0, len(lines)), extra)
    if rng.random() < 0.5:  # something only this trial does (a log line, a guard, a constant)
        lines.insert(rng.randint(0, len(lines)), f"LIMIT_{rng.randint(0, 999)} = {rng.randint(2, 10**6)}")
    return lines


def synthetic_population(seed: int, n: int = 100) -> Population:
    rng = random.Random(f"synthetic:{seed}")
    task = Task(id="durations", instruction="Add parse_duration(text) to durations.py: it accepts "
                "sequences like 1h30m of numbers with units d, h, m, s, case-insensitive, "
                "ignoring surrounding whitespace, and raises ValueError for anything else.",
                environment=Environment(image="synthetic"),
                reference=Reference(patch=_as_patch(_SOUND_STYLES["regex"])),
                tests=OfficialTests(test_patch=TEST_PATCH, fail_to_pass=("tests/test_duration.py",),
                                    test_files=("tests/test_duration.py",)))
    modes: list[str | None] = []
    for mode, size in zip(_MODES, _MODE_SIZES):
        modes += [mode] * size
    modes += [None] * (n - len(modes))
    rng.shuffle(modes)
    styles = list(_SOUND_STYLES)
    trials, truth = [], {}
    for i, mode in enumerate(modes):
        # Models prefer some styles; sound trials spread over all three.
        style = rng.choices(styles, weights=(5, 3, 2))[0]
        tid = f"s{seed}-t{i:03d}"
        trials.append(Trial(id=tid, task_id=task.id, agent="sim", model=f"model-{i % 6}",
                            patch=_as_patch(_variant(rng, style, mode)), official_pass=True))
        truth[tid] = mode
    return Population(task, trials, truth)


# -- the demo benchmark, through the real loader and the recorded T1 outcome -------------------

def extract_t1(db_path: str | Path, out: Path = T1_FIXTURE) -> dict:
    """Write the T1 fixture from a finished lightweight session's store (see its "about")."""
    import sqlite3

    con = sqlite3.connect(str(db_path))
    meta = {k: json.loads(v) for k, v in con.execute("select key, value from meta")}
    fixture: dict = {
        "about": ("What task analysis (T1) did on the demo, read from the store of a real lightweight "
                  "session with the scripted agents, never from labels.json: the reproducible trials "
                  "per task (the loop's corpus), T1's confirmed witnesses, their class (ambiguity "
                  "rule) and their replay status on every trial. Produced by `TESTJACK_HOME=/tmp/h "
                  ".venv/bin/testjack-tui audit benchmarks/demo --headless --auto-approve --agent "
                  "scripted --seed 0 --out /tmp/x` then `python tests/perf/sampling_sim.py "
                  "--extract-t1 /tmp/h/data/sessions/<id>/session.db`. T1 runs before any sampling, "
                  "so it depends on neither the sampler nor the seed; regenerate it when the demo's "
                  "agent scripts change."),
        "session": meta.get("session_id"),
        "tasks": {},
    }
    tasks = fixture["tasks"]
    for task_id, trial_id, reproduced in con.execute(
            "select task_id, trial_id, reproduced from trial_checks order by task_id, trial_id"):
        entry = tasks.setdefault(task_id, {"reproducible": [], "not_reproducible": [], "t1_witnesses": {}})
        entry["reproducible" if reproduced else "not_reproducible"].append(trial_id)
    for wid, task_id, cls, requirement in con.execute(
            "select id, task_id, classification, requirement from witnesses "
            "where source_trial is null order by id"):
        tasks[task_id]["t1_witnesses"][wid] = {"requirement": requirement, "class": cls, "runs": {}}
    for wid, task_id, trial_id, status in con.execute(
            "select witness_id, task_id, trial_id, status from witness_runs order by witness_id, trial_id"):
        w = tasks.get(task_id, {}).get("t1_witnesses", {}).get(wid)
        if w is not None:
            w["runs"][trial_id] = status
    con.close()
    out.write_text(json.dumps(fixture, indent=1) + "\n")
    return fixture


def load_t1(path: Path = T1_FIXTURE) -> dict | None:
    return json.loads(path.read_text()) if path.exists() else None


SHIPKIT = ROOT / "tests" / "fixtures" / "shipkit-labelled"
FMTKIT = ROOT / "tests" / "fixtures" / "fmtkit-labelled"


def demo_populations(t1: bool = True) -> list[Population] | None:
    """One population per demo task with defects. t1=False: the loop without task analysis."""
    return labelled_populations(ROOT / "benchmarks" / "demo", (load_t1() or {"tasks": {}}) if t1 else None)


def labelled_populations(root: Path, fixture: dict | None) -> list[Population] | None:
    """One population per task with defects of a labelled benchmark; `fixture`: what T1 did
    (see extract_t1), None for a loop without task analysis."""
    labels_path = root / "labels.json"
    if not labels_path.exists():
        return None
    from testjack_tui.benchmarks import load_benchmark
    from testjack_tui.engine.report_labels import TrialLabel, load_labels

    bench = load_benchmark(root)
    labels = load_labels(labels_path)
    t1 = fixture is not None
    fixture = fixture or {"tasks": {}}
    # A mode that only non-defective trials have as theirs (an ambiguous reading) never refutes,
    # even where a defective trial has it too ("also").
    primary = {info.mode_group for info in labels.values() if info.defective}
    # (Sound and failing trials may name a mode group too, e.g. "sound": that is no reading.)
    benign_only = {info.mode_group for info in labels.values()
                   if not info.defective and info.label in ("ambiguous", "underspecified")}
    benign_only -= primary | {None}
    refuting = primary | {m for info in labels.values() if info.defective for m in info.also}
    refuting -= benign_only | {None}
    pops = []
    for task_id, task in sorted(bench.tasks.items()):
        recorded = fixture["tasks"].get(task_id, {})
        passing = bench.passing(task_id)
        if recorded.get("reproducible"):  # the real loop's corpus: reproducible passing trials
            keep = set(recorded["reproducible"])
            passing = [t for t in passing if t.id in keep]
        truth, also, readings = {}, {}, {}
        for t in passing:
            info = labels.get(t.id, TrialLabel("", False))
            truth[t.id] = (info.mode_group or info.label) if info.defective else None
            also[t.id] = info.also
            mine = [info.mode_group, *info.also]
            readings[t.id] = tuple(m for m in mine if m in benign_only)
        witnesses, runs = [], {}
        if t1:
            for wid, w in sorted(recorded.get("t1_witnesses", {}).items()):
                if w.get("class", "refutes") != "refutes":
                    continue  # an ambiguous T1 witness refutes nothing
                witnesses.append(SampledWitness(wid, w.get("requirement", ""), None))
                for trial_id, status in w.get("runs", {}).items():
                    if trial_id in truth:
                        runs.setdefault(trial_id, {})[wid] = status
        if any(truth.values()):
            pops.append(Population(task, passing, truth, also, readings,
                                   refuting | {m for m in truth.values() if m}, witnesses, runs))
    # As the session computes it: every passing trial of every task, before any audit.
    evidence, model_of = {}, {}
    for task_id, task in bench.tasks.items():
        for t in bench.passing(task_id):
            evidence[t.id] = collect_static_evidence(task, t).to_dict()
            model_of[t.id] = t.model
    record = model_record(evidence, model_of)
    for pop in pops:
        pop.model_record = record
    return pops or None


# -- measurement -----------------------------------------------------------------------------

SAMPLERS = ("uniform", "cluster", "oracle-bound", "detectors-bound")


def measure(populations_for_seed, seeds: int, samplers=SAMPLERS) -> dict[str, dict[str, float]]:
    # Each seed's populations are made once and read by every sampler (a simulation only reads a
    # population): their static evidence, most of the work, is computed once per seed, not per sampler.
    populations = [populations_for_seed(seed) for seed in range(seeds)]
    out = {}
    for name in samplers:
        rounds, recalls, shares = [], [], []
        for seed in range(seeds):
            total_rounds, refuted3, defective, t1, left = 0, 0, 0, 0, 0
            for pop in populations[seed]:
                r = oracle_result(pop, seed) if name == "oracle-bound" else simulate_loop(pop, name, seed)
                total_rounds += r.rounds
                defective += r.defective
                refuted3 += r.refuted_after(3)
                t1 += r.t1
                left += r.defective - r.t1
            rounds.append(total_rounds)
            recalls.append(refuted3 / defective if defective else 1.0)
            shares.append((refuted3 - t1) / left if left else 1.0)
        out[name] = {"median_rounds": statistics.median(rounds), "mean_rounds": statistics.mean(rounds),
                     "recall3": statistics.mean(recalls), "sampler_recall3": statistics.mean(shares)}
    return out


def rows_for(label: str, m: dict[str, dict[str, float]], known_miss: str = "", context: str = "") -> list[dict]:
    """The rows of one population. known_miss: why a reachable target is still missed (a
    recorded miss: reported, gated by the full run only). context: why this population's
    figures are no target (its rows are INFO, with that reason first in the note)."""
    ours_r, base_r = m["cluster"]["median_rounds"], m["uniform"]["median_rounds"]
    ours_c, base_c = m["cluster"]["recall3"], m["uniform"]["recall3"]
    r_ratio = ours_r / base_r if base_r else 0.0
    c_ratio = ours_c / base_c if base_c else float("inf")
    bound_r, bound_c = m["oracle-bound"]["median_rounds"], m["oracle-bound"]["recall3"]
    bound_ratio = round(bound_r / base_r, 3) if base_r else 0.0
    rows = [
        # Context, not a target: what a sampler that knew the labels would reach.
        {"name": f"{label}: label-knowing lower bound (rounds | recall@3)",
         "ours": bound_r, "baseline": base_r, "ratio": bound_ratio,
         "target": f"recall@3 {round(bound_c, 3)}", "status": "INFO"},
        # Context: the best a sampler can do when detector evidence is all that tells trials apart.
        {"name": f"{label}: label-knowing, detectors-only bound (rounds | recall@3)",
         "ours": m["detectors-bound"]["median_rounds"], "baseline": base_r,
         "ratio": round(m["detectors-bound"]["median_rounds"] / base_r, 3) if base_r else 0.0,
         "target": f"recall@3 {round(m['detectors-bound']['recall3'], 3)}", "status": "INFO"},
        {"name": f"{label}: median rounds to refute all defects", "ours": ours_r, "baseline": base_r,
         "ratio": round(r_ratio, 3), "target": f"<= {ROUNDS_TARGET}",
         "status": "PASS" if r_ratio <= ROUNDS_TARGET else "FAIL",
         # Physically out of reach when even the label-knowing bound (computed above, by exhaustive
         # search where the population allows) misses the target: reported, not gated.
         **({"gate": False, "gate_reason": (f"out of reach: a sampler that knew the labels needs "
                                            f"{bound_ratio}x ({bound_r} vs {base_r} rounds)")}
            if base_r and bound_ratio > ROUNDS_TARGET else {}),
         "note": (f"means {round(m['cluster']['mean_rounds'], 2)} vs {round(m['uniform']['mean_rounds'], 2)}; "
                  f"a sampler that knew the labels needs {bound_r} ({bound_ratio}x)")},
        {"name": f"{label}: recall after 3 rounds per task", "ours": round(ours_c, 3),
         "baseline": round(base_c, 3), "ratio": round(c_ratio, 3), "target": f">= {RECALL_TARGET}",
         "status": "PASS" if c_ratio >= RECALL_TARGET else "FAIL",
         **({"gate": False, "gate_reason": (f"out of reach: a sampler that knew the labels gets "
                                            f"{round(bound_c / base_c, 3)}x")}
            if base_c and bound_c / base_c < RECALL_TARGET else
            {"gate": False, "gate_reason": f"{known_miss} (label-knowing: {round(bound_c / base_c, 3)}x)"}
            if known_miss and c_ratio < RECALL_TARGET and base_c else {}),
         "note": (f"a sampler that knew the labels reaches {round(bound_c, 3)} "
                  f"({round(bound_c / base_c, 3) if base_c else '-'}x: the most any sampler can get)")},
    ]
    ours_s, base_s = m["cluster"]["sampler_recall3"], m["uniform"]["sampler_recall3"]
    if ours_s != ours_c or base_s != base_c:
        rows.append({"name": f"{label}: share of T1's leftovers refuted in 3 rounds", "ours": round(ours_s, 3),
                     "baseline": round(base_s, 3), "ratio": round(ours_s / base_s, 3) if base_s else None,
                     "target": "-", "status": "INFO",
                     "note": f"the sampler's own part; label-knowing: {round(m['oracle-bound']['sampler_recall3'], 3)}"})
    if context:
        rows = [r if r["status"] == "INFO" else
                {k: v for k, v in r.items() if k not in ("gate", "gate_reason")}
                | {"status": "INFO", "note": f"context ({context}); {r['note']}"} for r in rows]
    return rows


def _population_rows(label: str, root: Path, pops: list[Population] | None, seeds: int,
                     context: str = "") -> list[dict]:
    if pops is None:
        return [{"name": label, "ours": None, "baseline": None, "ratio": None, "target": "-",
                 "status": f"SKIP ({root / 'labels.json'} not found)"}]
    return rows_for(label, measure(lambda seed: pops, seeds), context=context)


def run(quick: bool = False) -> list[dict]:
    seeds = QUICK_SEEDS if quick else SEEDS
    rows = rows_for("synthetic (100 trials, 5 modes)",
                    measure(lambda seed: [synthetic_population(seed)], seeds))
    label = "demo after T1" if load_t1() else "demo (no T1 fixture)"
    rows += _population_rows(label, ROOT / "benchmarks" / "demo", demo_populations(), seeds)
    # Our labelled benchmarks have no T1 fixture: the sampler starts from every passing trial.
    rows += _population_rows("fmtkit (labelled, 3 tasks x 28, no T1)", FMTKIT,
                             labelled_populations(FMTKIT, None), seeds)
    # 8 trials whose defects share three witnesses (labels.json "also", checked on real runs by
    # test_labelled_benchmark_e2e.py), so uniform already refutes most within 3 rounds.
    rows += _population_rows("shipkit (labelled, no T1)", SHIPKIT, labelled_populations(SHIPKIT, None),
                             seeds, context="8 trials: too few to tell samplers apart, see fmtkit")
    return rows


def print_table(rows: list[dict]) -> None:
    header = ("name", "ours", "baseline", "ratio", "target", "status", "note")
    widths = [max(len(str(r.get(h, ""))) for r in rows + [dict(zip(header, header))]) for h in header]
    for r in [dict(zip(header, header))] + rows:
        print("  ".join(str(r.get(h, "")).ljust(w) for h, w in zip(header, widths)).rstrip())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help=f"{QUICK_SEEDS} seeds instead of {SEEDS}")
    parser.add_argument("--extract-t1", metavar="SESSION_DB",
                        help="rewrite tests/perf/demo_t1.json from a finished session's store and exit")
    args = parser.parse_args(argv)
    if args.extract_t1:
        extract_t1(args.extract_t1)
        print(f"wrote {T1_FIXTURE}")
        return 0
    rows = run(args.quick)
    print_table(rows)
    return 1 if any(r["status"] == "FAIL" for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
