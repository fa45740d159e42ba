"""Records inside the engine, JSON only at its edges (docs/architecture.md, "Records and JSON
edges"): the count of `dict[str, Any]` in testjack_tui/engine/ may only fall. Whoever types a
record lowers CEILING to the new count; nobody raises it."""
import re
from pathlib import Path

ENGINE = Path(__file__).resolve().parent.parent / "testjack_tui" / "engine"
CEILING = 1
UNTYPED = re.compile(r"\b[dD]ict\[\s*str\s*,\s*(?:typing\.)?Any\s*\]")


def counts() -> dict[str, int]:
    out = {}
    for path in sorted(ENGINE.rglob("*.py")):
        n = len(UNTYPED.findall(path.read_text()))
        if n:
            out[str(path.relative_to(ENGINE))] = n
    return out


def test_untyped_dicts_in_the_engine_only_fall():
    found = counts()
    total = sum(found.values())
    per_file = ", ".join(f"{name} {n}" for name, n in sorted(found.items(), key=lambda kv: -kv[1]))
    assert total <= CEILING, (f"{total} `dict[str, Any]` in engine/ (ceiling {CEILING}): {per_file}. "
                              "Give the value a record; only a JSON object crossing a file or process "
                              "boundary is a records.JsonObject")


def test_the_json_edge_has_one_name():
    """`JsonObject` is defined once (engine/records.py); nobody re-aliases `dict[str, Any]` under
    another name to slip past the count."""
    aliases = [f"{path.relative_to(ENGINE)}: {line.strip()}" for path in sorted(ENGINE.rglob("*.py"))
               for line in path.read_text().splitlines()
               if re.match(r"\s*\w+\s*(?::\s*TypeAlias\s*)?=\s*[dD]ict\[\s*str\s*,\s*(?:typing\.)?Any\s*\]\s*(#.*)?$", line)]
    assert aliases == ["records.py: JsonObject: TypeAlias = dict[str, Any]"], aliases
