"""Witness runs with T0's own build options (issue 36.1, beyond pytest): a Go package whose test
helpers carry `//go:build integration` (T0's test.sh runs `go test -tags integration`) and a
Rust crate whose `limits` module is behind a cargo feature (T0 runs `cargo test --features
limits`). Without the same options a witness that uses them does not compile: `error` on the
reference world, and it would be dropped.

tests/fixtures/repo-configs: each image is the language fixture's with the repo changed that
way (one more commit); the task is the fixture's own with that image and its test.sh given the
option. Real podman: the witness passes on the reference world and fails on the planted defect,
and the launcher says, before any code of the repo runs, which options it took from T0."""
from __future__ import annotations

import asyncio
import dataclasses

import pytest

from conftest import ROOT
from testjack_tui.sandbox.podman_conf import podman
from testjack_tui.sandbox.runners.base import config_notes

pytestmark = [pytest.mark.podman, pytest.mark.timeout(1800)]

FIXTURES = ROOT / "tests" / "fixtures"

GO_WITNESS = '''package textkit

import "testing"

// The issue: "Every run of other characters (... underscores ...) becomes a single -".
func TestTJSlugifySeparators(t *testing.T) {
	for in, want := range separatorCases() {
		if got := Slugify(in); got != want {
			t.Errorf("Slugify(%q) = %q, want %q", in, got, want)
		}
	}
}
'''
RUST_WITNESS = '''use numerals::{limits::MAX, to_roman};

// The issue: "for any `n` outside `1..=3999` it returns `None`".
#[test]
fn above_the_range_has_no_numeral() {
    assert_eq!(to_roman(MAX + 1), None);
}

#[test]
fn top_of_the_range() {
    assert_eq!(to_roman(MAX).as_deref(), Some("MMMCMXCIX"));
}
'''
# (fixture, task, defect trial, variant folder, image, (T0 command, with the option), witness path,
#  witness, the note the launcher prints)
CASES = {
    "go": ("golang", "slugify-separators", "slugify-separators__orca__3", "go-tags", "localhost/tj-fixture-gotags:1",
           ("go test -json -count=1", "go test -json -count=1 -tags integration"), "separators_tj_test.go",
           GO_WITNESS, "go test -tags=integration: T0's build tags, for every witness run"),
    "rust": ("rust", "roman-numerals", "roman-numerals__lumen__2", "cargo-features", "localhost/tj-fixture-cargofeatures:1",
             ("cargo test --no-fail-fast --offline", "cargo test --no-fail-fast --offline --features limits"),
             "tests/tj_limits.rs", RUST_WITNESS, "cargo test --features=limits: T0's features, for every witness run"),
}


async def _runs(language: str) -> dict:
    from testjack_tui.benchmarks import load_benchmark
    from testjack_tui.sandbox import Sandbox

    fixture, task_id, defect, variant, image, (old, new), path, witness, _ = CASES[language]
    loaded = load_benchmark(FIXTURES / fixture)
    base, trial = loaded.tasks[task_id], next(t for t in loaded.trials if t.id == defect)
    folder = FIXTURES / "repo-configs" / variant
    script = base.tests.run_script or ""
    assert old in script
    task = dataclasses.replace(
        base, environment=dataclasses.replace(base.environment, image=image, containerfile=folder / "Containerfile",
                                              context=folder),
        tests=dataclasses.replace(base.tests, run_script=script.replace(old, new)))
    runs = {}
    async with Sandbox(session=f"tj-build-config-{language}", concurrency=1) as sb:
        await sb.prepare(base, "null")  # the fixture's own image first: the variant is built FROM it
        # ... by the name the fixture's manifest gives it (`[[images]] name`), which a build of
        # ours never tags (sandbox/images.py): give our build that name, as a user's registry would.
        named = base.environment.image or ""
        if podman("image", "exists", named, check=False).returncode != 0:
            podman("tag", await sb.env_image(base), named)
        for name, world in (("reference", await sb.prepare(task, "reference")),
                            ("model", await sb.prepare(task, "model", trial))):
            runs[name] = await sb.run_tests(world, [path], files={path: witness}, timeout=900)
    return runs


@pytest.mark.parametrize("language", list(CASES))
def test_a_witness_is_built_with_t0s_own_build_options(language):
    path, note = CASES[language][6], CASES[language][8]
    runs = asyncio.run(_runs(language))
    reference, model = runs["reference"], runs["model"]
    assert reference.outcomes[path].status == "passed", reference.outcomes[path].message[-2000:]
    assert model.outcomes[path].status == "failed", model.outcomes[path].message[-2000:]
    assert config_notes(reference.exec.stdout_head or "") == [note], reference.exec.stdout_head[-2000:]
