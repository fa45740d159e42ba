"""A session's report as text and files: the session's report.md / .csv, each trial's report.md,
and `write_report`, which writes them (with the JSON of `Report.to_json`) into a folder.

    report = build_report(session_id)                  # engine/report.py
    paths = write_report(report, out_dir, "md")        # per-trial report.json + report.md, and the
                                                       # session's report.md | .json | .csv

Everything here reads a built `Report` (engine/report_model.py) and nothing else.
"""
from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from collections.abc import Mapping, Sequence

from testjack_tui.engine.budget import usd_text
from testjack_tui.engine import reference_claims
from testjack_tui.engine.compare import refusal_line
from testjack_tui.engine.config import Mode
from testjack_tui.engine.records_cands import DecisionKind
from testjack_tui.engine.records_verdict import DecisionRecord
from testjack_tui.engine.standing import iso
from testjack_tui.engine.report_model import Report, TableRow, TaskReport, TrialReport
from testjack_tui.errors import InputError
from testjack_tui.repo_files import source_language as fence_language
from testjack_tui.safe_paths import check_inside, inside
from testjack_tui.safe_text import safe_text

FORMATS = ("md", "json", "csv")


# -- rendering ---------------------------------------------------------------------------------

def _md_table(rows: Sequence[Mapping[str, object]], cols: list[tuple[str, str]]) -> str:
    head = "| " + " | ".join(h for h, _ in cols) + " |\n|" + "---|" * len(cols) + "\n"
    body = ""
    for r in rows:
        cells = []
        for _, key in cols:
            v = r.get(key)
            cells.append("" if v is None else str(v).replace("|", "\\|").replace("\n", " "))
        body += "| " + " | ".join(cells) + " |\n"
    return head + body


def _rate_text(row: TableRow) -> str:
    b, a = row.rate_before, row.rate_after
    return f"{b}% → {a}%" if b is not None else "-"


def rounds_text(report: Report) -> str:
    """The rounds as run: per-trial mode audits each trial once (the rounds setting does not
    apply there); the lightweight loop runs at most the setting per task."""
    run = sum(len(t.rounds) for t in report.tasks.values())
    if report.mode == Mode.PER_TRIAL:
        return f"{run} round(s) run, one per audited trial"
    return f"at most {report.rounds} round(s) per task, {run} run"


def session_markdown(report: Report) -> str:
    out = [f"# TestJack report — session {report.session_id}", "",
           f"Benchmark **{report.benchmark}**, mode {report.mode}, sampler {report.sampler}, "
           f"seed {report.seed}, {rounds_text(report)}; session state: {report.state}.", ""]
    cols = [("", "name"), ("#All", "all"), ("#Passing", "passing"), ("#Refuted", "refuted"),
            ("Refuted (%)", "refuted_pct"), ("Corrected rate", "rate")]
    for table, title in ((report.tables.benchmark, "Benchmark"), (report.tables.tasks, "Per task"),
                         (report.tables.models, "Per model")):
        rows = [dict(r.to_json(), rate=_rate_text(r)) for r in table]
        out += [f"## {title}: passing → refuted", "", _md_table(rows, cols)]
    flaky = [(tid, t.flaky) for tid, t in report.tasks.items() if t.flaky]
    if flaky:
        out += ["## Flaky T0 tests", "", "Outcome differed between two runs of the same world; left "
                "out of well-formedness and reproduction.", ""]
        out += [f"- {tid}: {', '.join(ids)}" for tid, ids in flaky] + [""]
    out += ["## Verdicts", "", _md_table([{"label": k, "n": v} for k, v in report.verdict_counts.items()],
                                        [("verdict", "label"), ("trials", "n")])]
    void = [t for t in report.trials if t.audit_failed]
    if void:
        # A reader of this file alone must not take CLEAN_UNAUDITED for "audited, nothing found".
        out += ["## Audits that could not run", "", "These trials' audits measured nothing (no candidate "
                "could run on the reference world): CLEAN_UNAUDITED, no evidence of soundness, and "
                "`audit` exited 4.", "",
                _md_table([{"task": t.task_id, "trial": t.trial_id, "why": t.audit_failed} for t in void],
                          [("task", "task"), ("trial", "trial"), ("why", "why")])]
    check_rows = [{"task": tid, "clause": i.clause, "p": "explicit" if i.explicit else "implicit",
                   "t0": i.coverage_text(),
                   "impl": f"{sum(i.implemented.values())}/{len(i.implemented)}" if i.implemented else "-",
                   "w": ", ".join(i.witnesses) or "-", "held": ", ".join(i.held) or "-"}
                  for tid, items in report.checklists.items() for i in items]
    if check_rows:
        out += ["## Requirements checklist", "", "Each requirement of P once (the task analysis's and the "
                "audits' statements merged when they share a wording, a quote of P or a witness), whether "
                "T0 covers it, how many audited trials implement it, its witnesses and the task-analysis "
                "tests that held on every trial.", "",
                _md_table(check_rows, [("task", "task"), ("requirement", "clause"), ("in P", "p"),
                                       ("T0 covers", "t0"), ("implemented", "impl"), ("witnesses", "w"),
                                       ("held on every trial", "held")])]
    rows = [{"task": tid, "witness": w.id, "requirement": w.requirement, "class": w.classification,
             "refutes": ", ".join(w.refutes) or "-", "copies": len(w.duplicates) + 1}
            for tid, t in report.tasks.items() for w in t.witnesses]
    if rows:
        out += ["## Witnesses (one copy each) and the trials they refute", "",
                _md_table(rows, [("task", "task"), ("witness", "witness"), ("requirement", "requirement"),
                                 ("class", "class"), ("refutes", "refutes"), ("copies found", "copies")])]
    decisions = report.decisions
    overrules = [d for d in decisions if d.decision == "overruled"]
    out += ["## Operator decisions", ""]
    if decisions:
        out.append(f"{len(decisions)} decision(s) by the operator, {len(overrules)} overruling the reviewer.\n")
        out.append(_md_table([dict(d.to_json(), counts="yes" if d.counts else "no",
                                   reviewer_label="(the operator)" if d.decision == "judged" else d.reviewer_label)
                              for d in decisions],
                             [("candidate", "candidate"), ("trial", "trial"), ("reviewer said", "reviewer_label"),
                              ("decision", "decision"), ("counts", "counts"), ("note", "note"), ("at (UTC)", "at")]))
    elif not any(t.witnesses for t in report.tasks.values()):
        # Nothing reached a decision (e.g. no witness could run): "decided automatically" would
        # claim a judgement that never happened.
        out += ["None: no witness reached a decision, so nothing was decided (automatically or "
                "by the operator).", ""]
    else:
        out += ["None: every verdict was decided automatically (valid verdicts count).", ""]
    out += ["## Underspecified prompts", "",
            _md_table([r.to_json() for r in report.tables.underspecified],
                      [("benchmark", "benchmark"), ("#Tasks", "tasks"), ("tasks", "names")])]
    if report.underspecified_prompts:
        out.append("Implicit requirements most models skip (ρ > 1/2, kind witness) and open questions "
                   "(a discriminating test judged questionable, or P said to be silent): reported as prompt "
                   "defects, they refute no trial.\n")
        out.append(_md_table([dict(u.to_json(), skipping=f"{len(u.models_skipping)}/{u.models_measured}",
                                   differ=", ".join(u.fails_on) or "-", said="; ".join(u.said) or "-")
                              for u in report.underspecified_prompts],
                             [("task", "task"), ("kind", "kind"), ("requirement", "requirement"), ("ρ", "rho"),
                              ("models skipping", "skipping"), ("trials that differ", "differ"),
                              ("who said what", "said"), ("reference", "reference"),
                              ("suggested clarification", "clarification"), ("witness", "witness")]))
    else:
        out += ["None found.", ""]
    out += contradictions_markdown(report)
    out += ["## Detectors", "", _md_table(
        [{"d": k, "n": v.suspicious_trials, "t": ", ".join(v.trials[:8])}
         for k, v in report.detectors.by_name.items()],
        [("detector", "d"), ("suspicious trials", "n"), ("examples", "t")])]
    u = report.usage
    out += ["## Cost", "", f"LLM: {usd_text(u.usd, u.unpriced)} ({u.tokens} tokens, {u.llm_calls} calls"
            + (", some estimated" if u.estimated else "") + f"); runs (tests and commands, as the budget counts them): {u.test_runs}"
            + (f" ({u.same_test_runs} more taken from the same test's earlier run on the same world, "
               "not run again)" if u.same_test_runs else "")
            + f"; wall time: {u.seconds} s.", ""]
    c = report.comparison
    if c is not None and c.refused:
        out += ["## Lightweight loop against per-trial audit", "", refusal_line(c) + ".", ""]
    elif c is not None:
        def pct(v: float | None) -> str:
            return "n/a" if v is None else f"{100 * v:.1f}%"
        out += ["## Lightweight loop against per-trial audit", ""]
        if c.differences:
            out += [f"Compared although the sessions differ (--force): {'; '.join(c.differences)}.", ""]
        out += [
                f"Sessions {c.lightweight_session} (lightweight) and {c.per_trial_session} (per-trial), "
                f"{c.trials} passing trials in both. Recall of the lightweight loop: **{pct(c.recall)}** "
                f"({c.refuted_lightweight} refuted; {c.refuted_per_trial} by per-trial audit) at "
                f"**{pct(c.cost_usd if c.cost_usd is not None else c.cost_test_runs)}** of the cost "
                f"(LLM dollars {pct(c.cost_usd)}, test runs {pct(c.cost_test_runs)}, "
                f"wall time {pct(c.cost_seconds)}).", ""]
        if c.missed:
            out.append("Refuted by per-trial audit only: " + ", ".join(c.missed) + "\n")
    s = report.scoring
    if s is not None:
        out += ["## Against the benchmark's labels", "",
                f"Recall {s.recall}, precision {s.precision} ({s.true_refutations} of "
                f"{s.defective} labelled-defective trials refuted; {s.refuted} refuted in all). "
                f"Corrected rate: ours {s.rate_after_ours}%, from labels {s.rate_after_labels}%. "
                f"Brier score of audited verdicts: {s.brier_audited}.", ""]
        if s.missed:
            out.append("Missed: " + ", ".join(s.missed) + "\n")
        if s.false_refutations:
            out.append("Refuted but labelled sound: " + ", ".join(s.false_refutations) + "\n")
    for tid, task in report.tasks.items():
        if task.traceability:
            out += [f"## Task analysis of {tid}: requirement ↔ T0", "", _md_table(
                [dict(r.to_json(), tests=", ".join(r.t0_tests or ()) or "-") for r in task.traceability],
                [("requirement", "requirement"), ("explicit", "explicit"), ("T0 tests", "tests"),
                 ("coverage", "coverage")])]
        if task.analysis_tests:
            out += [f"Task analysis tests of {tid} (what became of each):", "", _md_table(
                [dict(r.to_json(), versions=", ".join(r.versions)) for r in task.analysis_tests],
                [("test", "path"), ("requirement", "requirement"), ("versions", "versions"), ("what happened", "fate")])]
        out += audit_tests_markdown(tid, task)
        if task.suspicious_features:
            out += [f"Suspicious-patch features for {tid}:", "", _md_table(
                [f.to_json() for f in task.suspicious_features],
                [("id", "id"), ("requirement", "requirement"), ("pattern", "pattern"),
                 ("why suspicious", "why_suspicious"), ("false positives", "false_positives"),
                 ("withdrawn", "withdrawn")])]
    if report.awaiting_operator:
        out += ["## Waiting for the operator (QUESTIONABLE / HUMAN_REVIEW: not counted)", ""]
        out += [f"- `{a.candidate_id}`{f' case `{a.case}`' if a.case else ''} ({a.task_id}"
                f"{f' / {a.trial_id}' if a.trial_id else ''}): {a.label}"
                f"{f' — {a.requirement}' if a.requirement else ''}{f': {a.note}' if a.note else ''}"
                for a in report.awaiting_operator]
        out.append("")
    out += ["## Trials", "", _md_table(
        [{"task": t.task_id, "trial": t.trial_id, "model": t.model, "label": t.label,
          "conf": t.confidence, "n": len(t.findings)} for t in report.trials],
        [("task", "task"), ("trial", "trial"), ("model", "model"), ("verdict", "label"),
         ("confidence", "conf"), ("findings", "n")])]
    return "\n".join(out)


def audit_tests_markdown(task_id: str, task: TaskReport) -> list[str]:
    """The trial auditors' tests of a task and what became of each (repaired, dropped, ...)."""
    if not task.audit_tests:
        return []
    return [f"Audit tests of {task_id} (what became of each):", "", _md_table(
        [dict(r.to_json(), versions=", ".join(r.versions)) for r in task.audit_tests],
        [("test", "path"), ("trial", "trial"), ("requirement", "requirement"), ("versions", "versions"),
         ("what happened", "fate")])]


def contradictions_markdown(report: Report) -> list[str]:
    """The tasks whose reference breaks words of P, as their audits said (with the run)."""
    claims = [(tid, t.reference_contradicts) for tid, t in report.tasks.items() if t.reference_contradicts]
    if not claims:
        return []
    out = ["## The reference contradicts P (the task is not well-formed on these points)", "",
           "An author of a test said the reference itself breaks these words of P; the test was not bent "
           "to fit the reference, and refutes no trial.", ""]
    for tid, items in claims:
        out += [f"{tid}:", ""] + reference_claims.markdown_lines(items) + [""]
    return out


def trial_markdown(t: TrialReport) -> str:
    out = [f"# {t.task_id} / {t.trial_id} — {t.label} (confidence {t.confidence})", "",
           f"Model {t.model}, agent {t.agent}; audited: {'yes' if t.audited else 'no'}.", "",
           t.justification, ""]
    for f in t.findings:
        ex = f.explanations
        out += [f"## {f.id}: {f.requirement}", "",
                f"Witness `{f.witness_id}` ({f.source}, {f.klass}"
                + (f", ρ = {f.rho:.2f}" if f.rho is not None else "") + f"), file `{f.path}`.",
                "", f"- **What is wrong:** {ex['what_is_wrong']}",
                f"- **Why it happens:** {ex['why_it_happens']}",
                f"- **Which clause of P:** {ex['which_clause']}",
                f"- **Why T0 missed it:** {ex['why_t0_missed_it']}", "",
                f"Re-run: `{f.command}` ({f.command_note}).", "",
                decision_line(f.decision), "",
                f"Runs: reference **{f.reference.status}**, model **{f.model.status}**.",
                "", "```", (f.model.message or "").strip()[:1500], "```", "",
                "```" + fence_language(f.path), f.test_source.rstrip(), "```", ""]
        for s in f.tied_signals:
            out.append(f"- structural evidence: {s.detector}/{s.kind} at {s.file}:{s.line}: "
                       f"`{s.excerpt.strip()[:160]}`")
    audit = t.agent_audit
    if audit is not None:
        out += ["## The audit agent's findings (explanations; only executed witnesses count)", ""]
        if audit.nothing_found:
            out += ["The audit agent found nothing wrong with this trial.", ""]
        for item in audit.findings:
            out += [f"- **{item.what}** — {item.why} (P: \"{item.clause}\"); evidence: "
                    f"`{item.witness}` fails with `{item.failing_assertion.strip()[:200]}`; "
                    f"T0 missed it: {item.t0_missed.replace('_', ' ')}"
                    + (f" ({item.t0_missed_detail})" if item.t0_missed_detail else "")]
        out.append("")
    if t.decisions:
        out += ["## Decisions on this trial's candidates", ""]
        for d in t.decisions:
            judgement = "; ".join(f"{k}: {v}" for k, v in d.operator.to_json().items())
            out.append(f"- `{d.candidate_id}`" + (f" case `{d.case}`" if d.case else "")
                       + f": reviewer{' (' + d.reviewer + ')' if d.reviewer else ''} said "
                       f"{d.reviewer_label or '-'}; {d.decision} by {d.by} → {d.label or '-'}"
                       f" ({'counts' if d.counts else 'does not count'})"
                       + (f"; the operator's judgement: {judgement}" if judgement else "")
                       + (f": {d.note}" if d.note else ""))
        out.append("")
    if t.open_questions:
        out += ["## Open questions about P (this trial differs from the reference; nothing refuted)", ""]
        for q in t.open_questions:
            out.append(f"- {q.requirement}" + (f" (`{q.candidate_id}`)" if q.candidate_id else "")
                       + f"; reference: {q.reference or '-'}; " + "; ".join(q.said)
                       + f". Suggested clarification: {q.clarification}")
        out.append("")
    if t.reviews:
        out += ["## Reviewer verdicts per case", ""]
        for r in t.reviews:
            out.append(f"- `{r.candidate_id}`: {r.overall or r.label}"
                       + (f", kept: {', '.join(r.keep)}" if r.keep else ""))
            out += [f"    - {c.label} `{c.test_id}` ({c.scope}, overfitting {c.overfitting}): {c.reason}"
                    for c in r.cases]
        out.append("")
    if t.ambiguous:
        out += ["## Ambiguous witnesses it fails (prompt defects; not counted)", ""]
        out += [f"- `{a.witness_id}`: {a.requirement} (ρ = {a.rho})" for a in t.ambiguous]
        out.append("")
    if t.signals:
        out += ["## Detector signals", ""]
        out += [f"- {s.severity} {s.detector}/{s.kind} at {s.file}:{s.line}: {s.message} "
                f"— `{s.excerpt.strip()[:160]}`" for s in t.signals]
        out.append("")
    g = t.ghost
    if g is not None and g.unmeasured():
        out += ["## Ghost branches", "", f"Not measured: {g.unmeasured()}.", ""]
    elif g is not None:
        # Go and V8 coverage count no branch arms: say what was measured instead of "None%".
        arms = f" and {g.added_branch_pct}% of added branches" if g.added_branch_pct is not None else ""
        out += ["## Ghost branches", "", f"{g.added_line_pct}% of added lines{arms} run under T0"
                f" ({g.measure or 'coverage'}).", ""]
        out += [f"- {x.file}:{x.line}: `{x.code.strip()[:160]}`" for x in g.ghost_lines[:20]]
    mutation = t.mutation
    if mutation is not None:
        out += ["", "## Mutation evidence", "", mutation.to_text(), ""]
    return "\n".join(out) + "\n"


def decision_line(d: DecisionRecord | None) -> str:
    """One sentence: who let a witness count."""
    if d is None or d.decision == DecisionKind.AUTO:
        return "Decision: counted automatically (the reviewer labelled it valid)."
    # "judged": the operator was the reviewer, whose own label is only a placeholder while it waits.
    said = (f" (the reviewer said {d.reviewer_label})"
            if d.reviewer_label and d.decision != DecisionKind.JUDGED else "")
    when = f" at {iso(d.at)}" if d.at else ""
    verb = {DecisionKind.OVERRULED: "OVERRULED by the operator",
            DecisionKind.JUDGED: "judged valid by the operator (as reviewer)",
            DecisionKind.APPROVED: "approved by the operator"}.get(d.decision, str(d.decision))
    return f"Decision: {verb}{said}{when}" + (f": {d.note}" if d.note else ".")


CSV_FIELDS = ("task_id", "trial_id", "model", "agent", "state", "label", "confidence", "refuted",
              "findings", "witnesses", "ambiguous", "structural_signals", "decisions", "open_questions")


def session_csv(report: Report) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=CSV_FIELDS, lineterminator="\n")
    w.writeheader()
    for t in report.trials:
        w.writerow({k: safe_text(v, one_line=True) if isinstance(v, str) else v for k, v in {
                    "task_id": t.task_id, "trial_id": t.trial_id, "model": t.model,
                    "agent": t.agent, "state": t.state, "label": t.label,
                    "confidence": t.confidence, "refuted": int(t.refuted),
                    "findings": len(t.findings),
                    "witnesses": " ".join(f.witness_id for f in t.findings),
                    "ambiguous": " ".join(a.witness_id for a in t.ambiguous),
                    "structural_signals": sum(1 for s in t.signals if s.structural),
                    "decisions": " ".join(
                        f"{d.candidate_id}{'::' + d.case.rsplit('::', 1)[-1] if d.case else ''}:"
                        f"{d.decision}(reviewer {d.reviewer_label or '-'}, stands {d.label or '-'})"
                        for d in t.decisions),
                    "open_questions": " | ".join(q.requirement for q in t.open_questions)}.items()})
    return buf.getvalue()


def write_report(report: Report, out_dir: Path, fmt: str = "md") -> list[Path]:
    """Per-trial report.json + report.md under trials/<task>/<trial>/, then the session report
    in the chosen format (report.md | report.json | report.csv). Returns the files written."""
    if fmt not in FORMATS:
        raise InputError("--format", "format", f"unknown format {fmt!r} (use one of {', '.join(FORMATS)})")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)  # a session without trials writes only here
    written = []
    for t in report.trials:
        d = inside(out_dir, "trials", t.task_id, t.trial_id)
        d.mkdir(parents=True, exist_ok=True)
        (check_inside(out_dir, d / "report.json")).write_text(
            json.dumps(t.to_json(), indent=2, sort_keys=True, default=str))
        (check_inside(out_dir, d / "report.md")).write_text(safe_text(trial_markdown(t)))
        written += [d / "report.json", d / "report.md"]
    target = check_inside(out_dir, out_dir / f"report.{fmt}")
    if fmt == "json":
        target.write_text(json.dumps(report.to_json(), indent=2, sort_keys=True, default=str))
    elif fmt == "csv":
        target.write_text(session_csv(report))
    else:
        target.write_text(safe_text(session_markdown(report)))
    written.append(target)
    return written
