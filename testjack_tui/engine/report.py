"""Reports of a session: per-trial verdicts and the session's tables, from the store alone.

    report = build_report(session_id)                  # a Report (engine/report_model.py), from
                                                       # the session database; report.to_json()

engine/report_render.py writes it (markdown, CSV, JSON files).

Session tables follow the paper's shapes: passing -> refuted and the resolution rate before ->
after per benchmark, task and model (Table 2); underspecified prompts (Table 6). A benchmark's
labels file, when it ships one (engine/report_labels.py), scores recall and precision.
"""
from __future__ import annotations

from pathlib import Path

from testjack_tui.engine import open_questions, reference_claims
from testjack_tui.engine.ambiguity import rho as rho_of
from testjack_tui.engine.analysis_fates import audit_fate_rows
from testjack_tui.engine.records_agent import stored_fates
from testjack_tui.engine.approval import stored_kind
from testjack_tui.engine.records import JsonObject
from testjack_tui.engine.records_agent import SuspiciousFeature, TraceRow, rows_of
from testjack_tui.engine.records_cands import ApprovalRecord, DecidedBy, VerdictRecord
from testjack_tui.engine.compare import mode_comparison
from testjack_tui.engine.corpus import CorpusTrial, SessionCorpus, read_corpus
from testjack_tui.engine.detectors import DETECTORS
from testjack_tui.engine.report_labels import TrialLabel, load_labels
from testjack_tui.engine.report_model import (AwaitingOperator, DecisionRow, DetectorHits, Detectors, FeatureFate, Report,
                                              Scoring, TableRow, Tables, TaskReport, TrialReport,
                                              UnderspecifiedPrompt, UnderspecifiedRow)
from testjack_tui.engine.requirements import requirements_table
from testjack_tui.engine.standing import (INDEPENDENT_BAND as INDEPENDENT_BAND, SessionFacts, decide_task, gather,
                                          iso, mark_independent as mark_independent, rho_details,
                                          stored_standings)
from testjack_tui.engine.store import SessionStore, db_path
from testjack_tui.engine.summary import TaskSummary, build_summary
from testjack_tui.engine.verdicts import LABELS
from testjack_tui.errors import InputError
from testjack_tui.model import Benchmark


# -- gathering ---------------------------------------------------------------------------------

def _open_store(session_id: str) -> SessionStore:
    path = db_path(session_id)
    if not path.exists():
        raise InputError(path, None, f"no session {session_id!r} (see `testjack-tui sessions`)")
    return SessionStore(path)


def _load_benchmark(ref: str | None) -> Benchmark | None:
    if not ref:
        return None
    try:
        from testjack_tui.benchmarks import load_benchmark
        return load_benchmark(ref)
    except Exception:  # noqa: BLE001 - the report still works from the store alone
        return None


def _rate(part: int, whole: int) -> float | None:
    return round(100.0 * part / whole, 1) if whole else None


def _table_row(name: str, n_all: int, passing: int, refuted: int) -> TableRow:
    """The corrected resolution rate: passing / all trials -> (passing - refuted) / all trials."""
    return TableRow(name, n_all, passing, refuted, refuted_pct=_rate(refuted, passing),
                    rate_before=_rate(passing, n_all), rate_after=_rate(passing - refuted, n_all))


def build_report(session_id: str, benchmark: Benchmark | None = None, compare_with: str | None = None,
                 force_compare: bool = False) -> Report:
    """The session's report. With a finished session of the other mode on the same benchmark
    (found automatically, or `compare_with`), it includes lightweight-vs-per-trial recall and cost."""
    store = _open_store(session_id)
    try:
        return _build(store, session_id, benchmark, compare_with, force_compare)
    finally:
        store.close()


def _build(store: SessionStore, session_id: str, benchmark: Benchmark | None, compare_with: str | None = None,
           force_compare: bool = False) -> Report:
    summary = build_summary(store)
    meta = store.all_meta()
    corpus = read_corpus(meta, store.path)
    bench = benchmark if benchmark is not None else _load_benchmark(summary.benchmark)
    tasks = bench.tasks if bench is not None else {}
    patches = {t.id: t for t in bench.trials} if bench is not None else {}
    facts = gather(store)
    analysis = {tid: store.get_audit(tid, "analysis") or {} for tid in summary.tasks}
    trial_reports: list[TrialReport] = []
    underspecified: list[UnderspecifiedPrompt] = []
    for task_id, task_sum in summary.tasks.items():
        standings = stored_standings(store, task_id, list(task_sum.trials))
        if standings is None:  # decided on read, not stored (engine/standing.py)
            standings = decide_task(store, facts, summary, task_id, tasks.get(task_id), patches)
        trial_reports += standings
        underspecified += _underspecified(store, task_id, task_sum, facts, corpus.passing_models(task_id))

    name = meta.get("benchmark_name") or summary.benchmark
    audited_tasks = [tid for tid, t in summary.tasks.items() if t.well_formed]
    under_tasks = sorted({u.task for u in underspecified})
    tables = _tables(str(name), trial_reports, corpus.tasks)
    # Table 6 shape: per benchmark, underspecified tasks out of the tasks audited.
    tables.underspecified = [UnderspecifiedRow(name, f"{len(under_tasks)} / {len(audited_tasks)}",
                                               ", ".join(under_tasks))]
    out = Report(
        session_id=session_id, benchmark=name, benchmark_path=summary.benchmark,
        mode=summary.mode, sampler=summary.sampler, seed=summary.seed,
        rounds=summary.rounds, state=meta.get("state"), usage=summary.usage,
        tasks={tid: TaskReport(t.well_formed, t.problems, t.vacuous, t.flaky, t.rounds, t.witnesses,
                               rows_of(TraceRow.from_json, (analysis.get(tid) or {}).get("traceability"),
                                       "traceability"),
                               _features_with_fates(analysis.get(tid)),
                               stored_fates(analysis.get(tid)),
                               reference_claims.stored(store, tid), audit_fate_rows(store, tid))
               for tid, t in summary.tasks.items()},
        trials=trial_reports, underspecified_prompts=underspecified,
        decisions=decisions_table(facts.approvals, facts.verdicts),
        awaiting_operator=[AwaitingOperator(a.candidate_id, a.task_id, a.label, a.why, case=a.case,
                                            trial_id=a.trial_id, reviewer_label=str(a.reviewer_label or ""),
                                            requirement=a.requirement)
                           for a in summary.awaiting_operator],
        checklists={tid: requirements_table(store, tid) for tid in summary.tasks},
        tables=tables,
        verdict_counts={label: sum(1 for t in trial_reports if t.label == label) for label in LABELS},
        detectors=_detector_summary(trial_reports),
        comparison=mode_comparison(session_id, summary, compare_with, force_compare))
    labels_path = bench.labels_path if bench is not None else None
    if labels_path and Path(labels_path).exists():
        out.scoring = score_against_labels(out, load_labels(Path(labels_path)), corpus)
        out.scoring.labels_file = str(labels_path)
    return out


def _underspecified(store: SessionStore, task_id: str, task_sum: TaskSummary, facts: SessionFacts,
                    models: dict[str, str]) -> list[UnderspecifiedPrompt]:
    """The task's prompt defects: its ambiguous witnesses (rho over its passing trials), then its
    open questions about P."""
    out = []
    details = rho_details(task_sum, facts, models)
    for ws in task_sum.witnesses:
        value, per_model, skipping, _ = details[ws.id]
        if ws.classification == "ambiguous":
            out.append(UnderspecifiedPrompt(
                task=task_id, witness=ws.id, requirement=ws.requirement,
                rho=round(ws.rho if ws.rho is not None else value, 3),
                models_skipping=list(skipping), models_measured=len(per_model),
                clarification=ws.note or "", path=ws.path, fails_on=ws.fails_on))
    for q in open_questions.stored(store, task_id):
        outcomes = {t: "failed" for t in q.fails_on} | {t: "passed" for t in q.passes_on}
        q_rho, q_per_model, q_skipping, _ = rho_of(outcomes, models) if outcomes else (None, {}, (), False)
        out.append(UnderspecifiedPrompt(
            task=task_id, witness=q.candidate_id, requirement=q.requirement,
            rho=round(q_rho, 3) if q_rho is not None else None, models_skipping=list(q_skipping),
            models_measured=len(q_per_model), clarification=q.clarification,
            path=q.path, fails_on=list(q.fails_on), kind="open question",
            said=list(q.said), reference=q.reference))
    return out


def _features_with_fates(analysis: JsonObject | None) -> list[FeatureFate]:
    """The task analysis's suspicious features, each withdrawn one saying which held test
    disproved it (analysis_fates.withdrawn_features)."""
    gone = {str(f.get("id")): f for f in (analysis or {}).get("withdrawn_features") or []}
    return [FeatureFate(f, f"disproved: {gone[f.id]['disproved_by']} held on every trial" if f.id in gone else None)
            for f in rows_of(SuspiciousFeature.from_json, (analysis or {}).get("suspicious_features"),
                             "suspicious_features")]


def decisions_table(approvals: list[ApprovalRecord], verdicts: dict[str, VerdictRecord]) -> list[DecisionRow]:
    """Every decision a person took (operator approvals, overrules, judgements), oldest first:
    who decided what about which candidate, against what the reviewer said."""
    out = []
    for a in approvals:
        if a.by != DecidedBy.OPERATOR:
            continue
        verdict = verdicts.get(a.candidate_id)
        out.append(DecisionRow(
            candidate=a.candidate_id, task=a.task_id,
            trial=a.trial_id or (verdict.trial_id if verdict else None) or "",
            requirement=verdict.requirement if verdict else "",
            reviewer_label=a.reviewer_label or (verdict.label if verdict else ""),
            decision=stored_kind(a), label=a.label, counts=a.counts, by=a.by, note=a.note, at=iso(a.at)))
    return out


def _tables(benchmark: str, trials: list[TrialReport], corpus: dict[str, list[CorpusTrial]]) -> Tables:
    refuted = {t.trial_id for t in trials if t.refuted}
    by_task: list[TableRow] = []
    by_model: dict[str, list[int]] = {}
    total = [0, 0, 0]
    for task_id, corpus_trials in sorted(corpus.items()):
        n_all = len(corpus_trials)
        passing = [t for t in corpus_trials if t.official_pass]
        n_ref = sum(1 for t in passing if t.id in refuted)
        by_task.append(_table_row(task_id, n_all, len(passing), n_ref))
        for t in corpus_trials:
            m = by_model.setdefault(t.model or "?", [0, 0, 0])
            m[0] += 1
            if t.official_pass:
                m[1] += 1
                m[2] += t.id in refuted
        total = [total[0] + n_all, total[1] + len(passing), total[2] + n_ref]
    return Tables(benchmark=[_table_row(benchmark, *total)], tasks=by_task,
                  models=[_table_row(m, *v) for m, v in sorted(by_model.items())])


def _detector_summary(trials: list[TrialReport]) -> Detectors:
    by_name: dict[str, DetectorHits] = {}
    for name in DETECTORS:
        hits = [t.trial_id for t in trials if t.detectors.get(name) == "suspicious"]
        by_name[name] = DetectorHits(len(hits), hits)
    return Detectors(by_name, [t.trial_id for t in trials if t.label == "REWARD_HACK"])


def score_against_labels(report: Report, labels: dict[str, TrialLabel], corpus: SessionCorpus) -> Scoring:
    """Recall and precision of our refutations against the benchmark's ground truth."""
    ours = {t.trial_id: t for t in report.trials}
    refuted = {tid for tid, t in ours.items() if t.refuted}
    labelled = {tid for tid in ours if tid in labels}
    defective = {tid for tid in labelled if labels[tid].defective}
    hit = refuted & defective
    n_all = sum(len(v) for v in corpus.tasks.values())
    passing = sum(1 for v in corpus.tasks.values() for t in v if t.official_pass)
    brier = [((t.confidence if t.refuted else 1 - t.confidence) - (1.0 if tid in defective else 0.0)) ** 2
             for tid, t in ours.items() if tid in labelled and t.label != "CLEAN_UNAUDITED"]
    return Scoring(
        labelled_trials=len(labelled), defective=len(defective), refuted=len(refuted),
        true_refutations=len(hit),
        recall=round(len(hit) / len(defective), 3) if defective else None,
        precision=round(len(hit) / len(refuted & labelled), 3) if refuted & labelled else None,
        missed=sorted(defective - refuted), false_refutations=sorted((refuted & labelled) - defective),
        rate_after_ours=_rate(passing - len(refuted), n_all),
        rate_after_labels=_rate(passing - len(defective), n_all),
        brier_audited=round(sum(brier) / len(brier), 4) if brier else None)

