"""Does the `cluster` sampler beat uniform? A simulation with a perfect auditor.

The labels play the auditor (never the sampler): auditing a defective trial yields a witness
that refutes exactly the active trials of its mode_group; auditing a sound one yields nothing
and the trial leaves the active set as clean. Both samplers see only what the engine sees:
diffs, the reference patch, detector evidence and audit/replay outcomes.

Measured over many seeds, per population:
- rounds to refute every planted defect (median; lower is better);
- recall after 3 rounds per task (mean share of defective trials refuted; higher is better).
Populations: the bundled demo benchmark (if present) and a synthetic task (5 failure modes over
100 trials, 30% defective, unequal mode sizes) generated afresh for every seed.

    python tests/perf/sampling_sim.py [--quick]       # prints the table; exit 1 on FAIL
    run(quick) -> list[dict]                           # for the perf runner
"""
from __future__ import annotations

import argparse
import random
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from testjack_tui.engine.sampling import SamplerContext, SamplerState, make_sampler  # noqa: E402
from testjack_tui.model import Environment, OfficialTests, Reference, Task, Trial  # noqa: E402

ROUNDS_TARGET = 0.7  # ours <= 0.7 x uniform's median rounds
RECALL_TARGET = 1.2  # ours >= 1.2 x uniform's recall after 3 rounds
SEEDS, QUICK_SEEDS = 200, 40


@dataclass
class Population:
    """One task's passing trials plus the hidden truth the simulated auditor uses."""

    task: Task
    trials: list[Trial]
    mode: dict[str, str | None]  # trial id -> mode_group (None: sound)


# -- the simulated lightweight loop -----------------------------------------------------------

class OracleBound:
    """Not a sampler anyone can use: it reads the labels. It audits one trial of each remaining
    failure mode, biggest first, so its rounds are the lower bound any sampler can reach."""

    name = "oracle-bound"

    def __init__(self, pop: Population):
        self.pop = pop

    def pick(self, active: list[Trial], state: SamplerState) -> Trial:
        sizes: dict[str, int] = {}
        for t in active:
            if self.pop.mode[t.id]:
                sizes[self.pop.mode[t.id]] = sizes.get(self.pop.mode[t.id], 0) + 1
        if not sizes:
            return sorted(active, key=lambda t: t.id)[0]
        best = max(sorted(sizes), key=lambda m: sizes[m])
        return next(t for t in sorted(active, key=lambda t: t.id) if self.pop.mode[t.id] == best)


def simulate(pop: Population, sampler_name: str, seed: int, max_rounds: int | None = None,
             ) -> tuple[int, list[int]]:
    """(rounds until every defect is refuted, defective refuted after each round)."""
    evidence = {}
    if sampler_name == "oracle-bound":
        sampler = OracleBound(pop)
    else:
        sampler = make_sampler(sampler_name, pop.task, seed, SamplerContext(list(pop.trials), evidence))
    active = list(pop.trials)
    state = SamplerState(round=1)
    defective_left = {t.id for t in pop.trials if pop.mode[t.id]}
    refuted_defective = 0
    history: list[int] = []
    rounds = 0
    while defective_left and active and (max_rounds is None or rounds < max_rounds):
        rounds += 1
        state.round = rounds
        chosen = sampler.pick(active, state)
        state.audited.append(chosen.id)
        group = pop.mode[chosen.id]
        if group is None:
            state.clean.append(chosen.id)
            active = [t for t in active if t.id != chosen.id]
        else:
            wid = f"w{rounds}"
            state.witnesses.append({"id": wid, "requirement": group, "source_trial": chosen.id})
            hit = [t.id for t in active if pop.mode[t.id] == group]
            for t in active:
                state.runs_by_trial.setdefault(t.id, {})[wid] = "failed" if t.id in hit else "passed"
            state.refuted.extend(hit)
            refuted_defective += len(hit)
            defective_left -= set(hit)
            active = [t for t in active if t.id not in hit]
        history.append(refuted_defective)
    return rounds, history


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


# -- the demo benchmark, through the real loader ----------------------------------------------

def demo_populations() -> list[Population] | None:
    demo = ROOT / "benchmarks" / "demo"
    labels_path = demo / "labels.json"
    if not labels_path.exists():
        return None
    from benchmarks import load_benchmark
    from testjack_tui.engine.report import is_defective, load_labels

    bench = load_benchmark(demo)
    labels = load_labels(labels_path)
    pops = []
    for task_id, task in sorted(bench.tasks.items()):
        passing = bench.passing(task_id)
        truth = {}
        for t in passing:
            info = labels.get(t.id, {})
            truth[t.id] = (info.get("mode_group") or info.get("label")) if is_defective(info) else None
        if any(truth.values()):
            pops.append(Population(task, passing, truth))
    return pops or None


# -- measurement -----------------------------------------------------------------------------

def measure(populations_for_seed, seeds: int) -> dict[str, dict[str, float]]:
    out = {}
    for name in ("uniform", "cluster", "oracle-bound"):
        rounds, recalls = [], []
        for seed in range(seeds):
            pops = populations_for_seed(seed)
            total_rounds, refuted3, defective = 0, 0, 0
            for pop in pops:
                r, history = simulate(pop, name, seed)
                total_rounds += r
                defective += sum(1 for m in pop.mode.values() if m)
                refuted3 += history[min(3, len(history)) - 1] if history else 0
            rounds.append(total_rounds)
            recalls.append(refuted3 / defective if defective else 1.0)
        out[name] = {"median_rounds": statistics.median(rounds), "recall3": statistics.mean(recalls)}
    return out


def rows_for(label: str, m: dict[str, dict[str, float]]) -> list[dict]:
    ours_r, base_r = m["cluster"]["median_rounds"], m["uniform"]["median_rounds"]
    ours_c, base_c = m["cluster"]["recall3"], m["uniform"]["recall3"]
    r_ratio = ours_r / base_r if base_r else 0.0
    c_ratio = ours_c / base_c if base_c else float("inf")
    bound_r, bound_c = m["oracle-bound"]["median_rounds"], m["oracle-bound"]["recall3"]
    return [
        # Context, not a target: what a sampler that knew the labels would reach.
        {"name": f"{label}: label-knowing lower bound (rounds | recall@3)",
         "ours": bound_r, "baseline": base_r, "ratio": round(bound_r / base_r, 3) if base_r else 0.0,
         "target": f"recall@3 {round(bound_c, 3)}", "status": "INFO"},
        {"name": f"{label}: median rounds to refute all defects", "ours": ours_r, "baseline": base_r,
         "ratio": round(r_ratio, 3), "target": f"<= {ROUNDS_TARGET}",
         "status": "PASS" if r_ratio <= ROUNDS_TARGET else "FAIL",
         "note": f"a sampler that knew the labels needs {bound_r} ({round(bound_r / base_r, 3) if base_r else '-'}x)"},
        {"name": f"{label}: recall after 3 rounds per task", "ours": round(ours_c, 3),
         "baseline": round(base_c, 3), "ratio": round(c_ratio, 3), "target": f">= {RECALL_TARGET}",
         "status": "PASS" if c_ratio >= RECALL_TARGET else "FAIL",
         "note": f"a sampler that knew the labels reaches {round(bound_c, 3)}"},
    ]


def run(quick: bool = False) -> list[dict]:
    seeds = QUICK_SEEDS if quick else SEEDS
    rows = rows_for("synthetic (100 trials, 5 modes)",
                    measure(lambda seed: [synthetic_population(seed)], seeds))
    demo = demo_populations()
    if demo is not None:
        rows += rows_for("demo benchmark", measure(lambda seed: demo, seeds))
    else:
        rows.append({"name": "demo benchmark", "ours": None, "baseline": None, "ratio": None,
                     "target": "-", "status": "SKIP (benchmarks/demo/labels.json not found)"})
    return rows


def print_table(rows: list[dict]) -> None:
    header = ("name", "ours", "baseline", "ratio", "target", "status", "note")
    widths = [max(len(str(r.get(h, ""))) for r in rows + [dict(zip(header, header))]) for h in header]
    for r in [dict(zip(header, header))] + rows:
        print("  ".join(str(r.get(h, "")).ljust(w) for h, w in zip(header, widths)).rstrip())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help=f"{QUICK_SEEDS} seeds instead of {SEEDS}")
    args = parser.parse_args(argv)
    rows = run(args.quick)
    print_table(rows)
    return 1 if any(r["status"] == "FAIL" for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
