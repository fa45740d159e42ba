"""Operator candidates in every language a task's runner takes (issue 29.1): the kind comes from
the file's name and must be what the task's runner takes; a file that is no test says so in one
line; where it goes by default is the runner's place (beside T0's tests, tests/*.rs...)."""
from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import ROOT
from testjack_tui.cli import app
from testjack_tui.commands.operator_input import default_repo_path, read_candidates
from testjack_tui.errors import InputError

GO = ROOT / "tests" / "fixtures" / "golang"
TS = ROOT / "tests" / "fixtures" / "typescript"
RUST = ROOT / "tests" / "fixtures" / "rust"

GO_TEST = '''package textkit

import "testing"

// Underscores are separators like any other character.
func TestTJUnderscore(t *testing.T) {
	if got := Slugify("a_b"); got != "a-b" {
		t.Errorf("got %q", got)
	}
}
'''
TS_TEST = '''// decodes + as a space in keys and values
import { describe, expect, it } from "vitest";
import { parseQuery } from "../src/query";

describe("plus", () => {
  it("decodes + as a space", () => {
    expect(parseQuery("a+b=c+d")).toEqual({ "a b": "c d" });
  });
});
'''
RS_TEST = "use roman::to_roman;\n\n#[test]\nfn zero_is_rejected() {\n    assert!(to_roman(0).is_none());\n}\n"


@pytest.mark.parametrize("name,framework,t0,expected", [
    ("sep.go", "go test", ("slug/slug_test.go", "README.md"), "slug/sep_tj_test.go"),
    ("sep_test.go", "go test", (), "sep_test.go"),
    ("plus.ts", "vitest", ("test/query.test.ts",), "test/plus.tj.test.ts"),
    ("x.test.ts", "jest", ("src/__tests__/a.test.ts",), "src/__tests__/x.test.ts"),
    ("x.mjs", "node --test", (), "test/x.tj.test.mjs"),
    # the repo's testMatch/include takes `*.spec.*` only: the witness is named like T0's files
    ("nan.js", "jest", ("lib/clamp.spec.js",), "lib/nan.tj.spec.js"),
    ("zero.rs", "cargo test", ("src/lib.rs",), "tests/tj_zero.rs"),
    ("where.py", "pytest", (), "tests/test_tj_where.py"),
])
def test_the_default_path_is_the_runners_place(name, framework, t0, expected):
    assert default_repo_path(Path(name), framework, t0) == expected


def test_each_kind_is_checked_for_a_test_and_keeps_its_leading_comment(tmp_path):
    for name, source in (("u.go", GO_TEST), ("plus.ts", TS_TEST), ("zero.rs", RS_TEST)):
        (tmp_path / name).write_text(source)
    got = read_candidates([tmp_path / "u.go", tmp_path / "plus.ts", tmp_path / "zero.rs"], None, None)
    assert [c.requirement for c in got] == ["Underscores are separators like any other character.",
                                            "decodes + as a space in keys and values", "the operator's test zero.rs"]
    for name, source, says in (("x.go", "package x\n", "func TestX(t *testing.T)"),
                               ("x.ts", "export const a = 1;\n", "it(...) or test(...)"),
                               ("x.rs", "fn main() {}\n", "#[test]"),
                               ("x.rb", "puts 1\n", "not a test file"),
                               ("x.py", "def test_x(:\n", "line 1")):
        (tmp_path / name).write_text(source)
        with pytest.raises(InputError, match="--candidate") as err:
            read_candidates([tmp_path / name], None, None)
        assert says in str(err.value) and "\n" not in str(err.value)
    with pytest.raises(InputError, match="not a .go file"):
        read_candidates([tmp_path / "u.go"], ["slug/u_test.py"], None)


# A file that fits is syntax-checked in a null world of its task (two containers): a podman test,
# on a podman lane (tests/conftest.py), not among the pure tests beside both lanes.
FITS = pytest.mark.podman


@pytest.mark.parametrize("bench,name,source,fits", [
    pytest.param(TS, "plus.ts", TS_TEST, True, marks=FITS), (TS, "u.go", GO_TEST, False),
    pytest.param(GO, "u.go", GO_TEST, True, marks=FITS), (GO, "plus.ts", TS_TEST, False),
    pytest.param(RUST, "zero.rs", RS_TEST, True, marks=FITS), (RUST, "u.go", GO_TEST, False),
])
def test_the_tasks_runner_decides_what_it_takes(tmp_path, bench, name, source, fits):
    """A TypeScript witness for a vitest task is read as TypeScript, not parsed as Python; a Go
    file for a Rust task is refused in one line naming the runner."""
    file = tmp_path / name
    file.write_text(source)
    result = CliRunner().invoke(app, ["audit", str(bench), "--agent", "operator", "--candidate", str(file),
                                      "--headless", "--auto-approve", "--reviewer", "scripted"])
    assert result.exit_code == 2 and len(result.output.strip().splitlines()) == 1, result.output
    if fits:  # it passes the file checks and stops at the scripted reviewer (no recording for it)
        assert "recorded review" in result.output, result.output
    else:
        assert f"{name}: --candidate: task " in result.output and "runner" in result.output, result.output
