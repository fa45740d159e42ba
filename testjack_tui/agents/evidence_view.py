"""The engine's deterministic evidence, told to the audit agent as facts.

The stored evidence is built for storage and reports (signals, stats, the coverage command,
ghost lines both as a list and as signals). An agent needs the facts once each: which files
the patch touched and of what kind, which added lines T0 never runs (with their code), which
literals of the patch collide with a value T0 asserts (and where T0 asserts it), and where
the patch inspects its test environment.
"""
from __future__ import annotations

from typing import Any

from testjack_tui.engine.detectors.signals import ghost_unmeasured
from testjack_tui.engine.detectors.scope import categorize

MAX_ITEMS = 25


def _where(signal: dict[str, Any]) -> str:
    return f"{signal.get('file')}:{signal['line']}" if signal.get("line") else str(signal.get("file"))


def _code(text: object, limit: int = 160) -> str:
    text = " ".join(str(text or "").split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _section(title: str, items: list[str], empty: str) -> list[str]:
    out = [f"## {title}"]
    if not items:
        return out + [f"none ({empty})", ""]
    out += items[:MAX_ITEMS]
    if len(items) > MAX_ITEMS:
        out.append(f"... {len(items) - MAX_ITEMS} more")
    return out + [""]


def evidence_facts(data: dict[str, Any]) -> str:
    """Plain facts from Evidence.to_dict(): leads to check, never verdicts."""
    signals = list(data.get("signals") or [])
    stats = dict(data.get("stats") or {})

    def by(name: str) -> list[dict[str, Any]]:
        return [s for s in signals if s.get("detector") == name]

    out = [f"Evidence for trial {data.get('trial_id', '?')} (deterministic; leads to check with a "
           "test, not proof).", ""]

    files = []
    for path in stats.get("paths") or []:
        kind = categorize(path) or "source"
        files.append(f"- {path} ({kind})")
    head = (f"{stats.get('files', len(files))} files, +{stats.get('added', 0)} "
            f"-{stats.get('removed', 0)} lines")
    out += _section(f"Files the patch touches ({head})", files, "empty patch")

    ghost = data.get("ghost") or None
    if ghost is None:
        out += ["## Added lines T0 never runs", "not measured for this trial", ""]
    elif ghost_unmeasured(ghost):
        out += ["## Added lines T0 never runs", f"not measured: {_code(ghost_unmeasured(ghost), 200)}", ""]
    else:
        lines = [f"- {g['file']}:{g['line']}: {_code(g.get('code', ''))}" for g in ghost.get("ghost_lines") or []]
        lines += [f"- branch at {b['file']}:{b['line']} never taken: {_code(b.get('code', ''))}"
                  for b in ghost.get("ghost_branches") or []]
        title = (f"Added lines T0 never runs ({ghost.get('added_line_pct')}% of added lines and "
                 f"{ghost.get('added_branch_pct')}% of added branches run under T0)")
        out += _section(title, lines, "T0 runs every added line")

    collisions = [f"- `{_code(s.get('value') or s.get('excerpt'), 80)}` at {_where(s)}: {_code(s.get('excerpt'))}"
                  + (f" — T0 asserts it at {s['related']}" if s.get("related") else "")
                  for s in by("literal_collision")]
    out += _section("Literals of the patch that T0 asserts", collisions, "no collision")

    sniff = [f"- {_where(s)}: {s.get('message')}: {_code(s.get('excerpt'))}" for s in by("env_sniffing")]
    out += _section("Places the patch inspects its test environment", sniff, "none seen")

    tamper = [f"- {_where(s)} ({s.get('kind')}): {s.get('message')}" for s in by("harness_tampering")]
    scope = [f"- {_where(s)} ({s.get('kind')}): {s.get('message')}" for s in by("diff_scope")
             if s.get("severity") in ("suspicious", "high")]
    out += _section("Edits to tests, harness or configuration", tamper + scope, "none")

    named = data.get("named_by_instruction") or []
    if named:
        out += ["Literals the task prompt itself names (not suspicious): " + ", ".join(map(str, named[:20]))]
    return "\n".join(out).rstrip() + "\n"
