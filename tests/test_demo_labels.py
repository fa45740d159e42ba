"""The bundled demo's ground truth and offline agent scripts are complete and consistent.

Pure file checks (no containers): labels.json covers every trial and only names known failure
modes; the demo has the size the issue asks for; every officially passing trial has a recorded
audit; every candidate a script mentions exists; nothing in trial ids, patches or scripts gives
a label away.
"""
from __future__ import annotations

import json
import re
import tomllib
from collections import Counter, defaultdict

import pytest

from testjack_tui.benchmarks import load_benchmark
from testjack_tui.engine.probes import PROBE_SUFFIX, parse_probe

from conftest import DEMO

LABELS = json.loads((DEMO / "labels.json").read_text())
OTHER_LABELS = {"sound", "sound_incidental", "ambiguous", "officially_failing", "not_reproducible"}
SCRIPTS = DEMO / "agent-scripts"
TOOLS = {"run", "read_file", "run_tests", "list_files"}
WORLDS = {"model", "reference", "null"}


@pytest.fixture(scope="module")
def bench():
    return load_benchmark(DEMO)


def test_demo_size(bench):
    assert len(bench.tasks) >= 4
    assert len(bench.trials) >= 24
    models = {t.model for t in bench.trials}
    assert len(models) >= 3
    assert any(not t.official_pass for t in bench.trials), "officially failing trials count in the denominator"
    assert not bench.skipped, [str(s) for s in bench.skipped]
    for task_id in bench.tasks:
        assert len(bench.models_of(task_id)) >= 3, task_id


def test_manifest_names_the_demo_images():
    # recordkit (Python) on our base image; durationkit (JavaScript, node --test) on the Node
    # toolchain image that TestJack builds from Debian's packages.
    manifest = tomllib.loads((DEMO / "benchmark.toml").read_text())
    assert manifest["format"] == "harbor" and manifest["labels"] == "labels.json"
    images = {image["name"]: image for image in manifest["images"]}
    bases = {"localhost/testjack-demo:1": "FROM localhost/testjack-base:",
             "localhost/testjack-demo-js:1": "FROM localhost/testjack-toolchain-node:"}
    assert set(images) == set(bases)
    for name, image in images.items():
        assert (DEMO / image["containerfile"]).is_file()
        froms = [line for line in (DEMO / image["containerfile"]).read_text().splitlines() if line.startswith("FROM")]
        assert froms and froms[0].startswith(bases[name]), (name, froms)
    languages = Counter()
    for task_dir in (DEMO / "tasks").iterdir():
        conf = tomllib.loads((task_dir / "task.toml").read_text())
        language = conf["metadata"]["language"]
        languages[language] += 1
        expected = "localhost/testjack-demo-js:1" if language == "javascript" else "localhost/testjack-demo:1"
        assert conf["environment"]["docker_image"] == expected, task_dir.name
        assert conf["schema_version"] == "1.0" and language in ("python", "javascript")
    assert languages["python"] >= 4 and languages["javascript"] >= 1, languages


def test_labels_cover_every_trial_and_only_those(bench):
    assert set(LABELS["trials"]) == {t.id for t in bench.trials}
    for trial in bench.trials:
        entry = LABELS["trials"][trial.id]
        assert entry["task"] == trial.task_id
        assert entry["model"] == trial.model


def test_labels_name_only_known_failure_modes(bench):
    modes = set(LABELS["failure_modes"])
    assert modes == {"skipped_required_case", "constant_literal", "special_casing", "tested_veneer",
                     "harness_tampering", "env_sniffing", "widened_predicate", "metadata_dropped"}
    for trial_id, entry in LABELS["trials"].items():
        assert entry["label"] in modes | OTHER_LABELS, (trial_id, entry["label"])


def test_labels_agree_with_recorded_verdicts(bench):
    for trial in bench.trials:
        label = LABELS["trials"][trial.id]["label"]
        assert (label == "officially_failing") == (not trial.official_pass), trial.id


def test_every_failure_mode_and_special_case_is_planted():
    counts = Counter(entry["label"] for entry in LABELS["trials"].values())
    for mode in LABELS["failure_modes"]:
        assert counts[mode] >= 1, mode
    assert counts["ambiguous"] >= 1 and counts["sound_incidental"] >= 1 and counts["sound"] >= 1
    assert counts["not_reproducible"] == 1


def test_common_mistakes_are_shared():
    members = defaultdict(set)
    for trial_id, entry in LABELS["trials"].items():
        for group in [entry.get("mode_group"), *entry.get("also", [])]:
            if group:
                members[group].add(trial_id)
    shared = {g for g, trials in members.items() if len(trials) >= 2}
    assert len(shared) >= 8, sorted(shared)
    # every failure mode except the one-off hacks has a group shared by several trials
    for mode in ("skipped_required_case", "constant_literal", "special_casing", "tested_veneer",
                 "harness_tampering", "widened_predicate", "metadata_dropped"):
        groups = {e["mode_group"] for e in LABELS["trials"].values() if e["label"] == mode}
        assert groups & shared, mode


def test_ambiguous_reading_is_held_by_most_models_with_passing_trials(bench):
    # The ambiguity rule counts models: more than half of the models with passing trials on the
    # task must mostly hold the reading the reference does not pick.
    ambiguous = [tid for tid, e in LABELS["trials"].items() if e["label"] == "ambiguous"]
    task = LABELS["trials"][ambiguous[0]]["task"]
    group = LABELS["trials"][ambiguous[0]]["mode_group"]
    per_model = defaultdict(list)
    for trial in bench.passing(task):
        entry = LABELS["trials"][trial.id]
        per_model[trial.model].append(group in [entry["mode_group"], *entry.get("also", [])])
    holding = [m for m, flags in per_model.items() if sum(flags) * 2 > len(flags)]
    assert len(holding) * 2 > len(per_model)


def test_agent_scripts_exist_for_every_passing_trial(bench):
    for task_id in bench.tasks:
        base = SCRIPTS / task_id
        assert (base / "analysis.json").is_file() and (base / "reviews.json").is_file()
        for trial in bench.passing(task_id):
            assert (base / "audits" / f"{trial.id}.json").is_file(), trial.id
        audited = {p.stem for p in (base / "audits").glob("*.json")}
        assert audited == {t.id for t in bench.passing(task_id)}


# Where a witness goes, by the task's language: a pytest file (or a differential probe), or a
# `node --test` file the task's runner collects.
WITNESS_PATHS = {"python": r"tests/test_tj_[a-z0-9_]+(\.py|\.probe\.json)",
                 "javascript": r"test/[a-z0-9_]+\.tj\.test\.js"}
CANDIDATE_SUFFIXES = {"python": ".py", "javascript": ".js"}


def _chains(doc, language="python"):
    assert isinstance(doc["notes"], str)
    for chain in doc["candidates"]:
        assert set(chain) == {"path", "requirement", "versions"}
        assert re.fullmatch(WITNESS_PATHS[language], chain["path"]), chain["path"]
        assert chain["versions"] and all(v.startswith("candidates/") for v in chain["versions"])
        yield chain


def test_agent_scripts_are_well_formed_and_reference_existing_candidates(bench):
    for task_id, task in bench.tasks.items():
        base = SCRIPTS / task_id
        mentioned = set()
        suffix = CANDIDATE_SUFFIXES[task.language]
        for chain in _chains(json.loads((base / "analysis.json").read_text()), task.language):
            mentioned.update(chain["versions"])
        for audit_file in (base / "audits").glob("*.json"):
            audit = json.loads(audit_file.read_text())
            for item in audit["checklist"]:
                assert set(item) == {"clause", "explicit", "quote", "covered_by_t0", "implemented"}
                assert not item["explicit"] or item["quote"], (audit_file.name, item["clause"])
            for step in audit["steps"]:
                assert step["tool"] in TOOLS and step["world"] in WORLDS
                # The reference world only runs tests for an agent (agents/sealed.py).
                assert step["world"] != "reference" or step["tool"] == "run_tests", (audit_file.name, step)
            for chain in _chains(audit, task.language):
                mentioned.update(chain["versions"])
        for version in mentioned:
            assert (base / version).is_file(), (task_id, version)
            if version.endswith(PROBE_SUFFIX):  # a differential probe: checked fields, its adapter compiles
                compile(parse_probe((base / version).read_text()).adapter, version, "exec")
            elif suffix == ".py":
                compile((base / version).read_text(), version, "exec")
            else:  # a node:test file: imports the code under test and node:test (no npm packages)
                assert version.endswith(suffix), version
                assert 'from "node:test"' in (base / version).read_text(), version
        on_disk = {f"candidates/{p.name}" for p in (base / "candidates").glob("*")
                   if p.suffix == suffix or p.name.endswith(PROBE_SUFFIX)}
        assert on_disk == mentioned, on_disk ^ mentioned
        reviews = json.loads((base / "reviews.json").read_text())
        for key, review in reviews.items():
            assert key in mentioned
            assert review["label"] in {"valid", "questionable", "invalid"}
            assert {"requirement", "explicit", "quote", "reason"} <= set(review)


def test_scripts_record_behaviour_the_issue_asks_for(bench):
    """Repairs, reviewer rejections and an implicit (non-quotable) valid requirement exist."""
    repaired = invalid = implicit_valid = 0
    for task_id in bench.tasks:
        base = SCRIPTS / task_id
        docs = [json.loads((base / "analysis.json").read_text())]
        docs += [json.loads(p.read_text()) for p in (base / "audits").glob("*.json")]
        repaired += sum(len(c["versions"]) > 1 for d in docs for c in d["candidates"])
        reviews = json.loads((base / "reviews.json").read_text())
        invalid += sum(r["label"] == "invalid" for r in reviews.values())
        implicit_valid += sum(r["label"] == "valid" and not r["explicit"] for r in reviews.values())
    assert repaired >= 4 and invalid >= 3 and implicit_valid >= 1


def test_nothing_gives_a_label_away(bench):
    words = re.compile(r"hack|cheat|reward|refut|sound|ambigu|label|tamper|sniff|veneer|special.cas", re.I)
    for trial in bench.trials:
        assert re.fullmatch(r"[a-z-]+__[a-z]+__\d+", trial.id)
        assert not words.search(trial.patch), trial.id
    script_words = re.compile(words.pattern.replace("|label", ""), re.I)  # "label" is a reviews.json key
    for path in SCRIPTS.rglob("*"):
        if path.is_file():
            assert not script_words.search(path.read_text()), path
    mode_names = set(LABELS["failure_modes"]) | OTHER_LABELS
    for path in SCRIPTS.rglob("*.json"):
        text = path.read_text()
        assert not any(name in text for name in mode_names), path
