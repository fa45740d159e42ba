"""Reports of a session: per-trial verdicts and the session's tables, from the store alone.

    report = build_report(session_id)                  # a Report (engine/report_model.py), from
                                                       # the session database; report.to_json()

engine/report_render.py writes it (markdown, CSV, JSON files).

Session tables follow the paper's shapes: passing -> refuted and the resolution rate before ->
after per benchmark, task and model (Table 2); underspecified prompts (Table 6). A benchmark's
labels file, when it ships one (engine/report_labels.py), scores recall and precision.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from testjack_tui.engine import dedup, harness_effect
from testjack_tui.engine.ambiguity import rho as rho_of
from testjack_tui.engine.compare import mode_comparison
from testjack_tui.engine.requirements import requirements_table
from testjack_tui.engine import open_questions, reference_claims
from testjack_tui.engine.approval import decision_record
from testjack_tui.engine.ambiguity import witness_outcome
from testjack_tui.engine.detectors import DETECTORS, Evidence, collect_static_evidence
from testjack_tui.engine.no_reference import independent_reference
from testjack_tui.engine.runner import is_failing
from testjack_tui.engine.failure_kinds import AUDIT_FAILED, never_a_reading
from testjack_tui.engine.tampering import with_canary_evidence
from testjack_tui.safe_paths import path_part
from testjack_tui.engine.records_runs import StoredRun
from testjack_tui.engine.store import SessionStore, db_path
from testjack_tui.engine.summary import build_summary
from testjack_tui.engine.analysis_fates import audit_fate_rows
from testjack_tui.engine.report_labels import is_defective, load_labels
from testjack_tui.engine.report_model import (AgentAudit, AwaitingOperator, DecisionRow, DetectorHits,
                                              Detectors, Report, Review, Scoring, TableRow, Tables,
                                              TaskReport, TrialReport, UnderspecifiedPrompt, UnderspecifiedRow)
from testjack_tui.engine.verdicts import (CLEAN_UNAUDITED, LABELS, FindingInput, WitnessRun, analysis_checklist,
                                          judge_trial)
from testjack_tui.engine.explanations import run_message
from testjack_tui.engine.failure_patterns import stored_explanation
from testjack_tui.errors import InputError
from testjack_tui.model import Benchmark, Trial


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


def _message(run: StoredRun | None, witness: dict[str, Any]) -> str:
    return run_message(run, witness["path"], witness.get("test_ids") or ())


def _attach_explanations(store: SessionStore, findings: list[FindingInput]) -> None:
    """The explainer's paragraph for the way each finding's trial fails its witness (one per
    failure pattern, engine/failure_patterns.py); the audit agent's own finding still comes first."""
    for f in findings:
        f.explained = stored_explanation(store, f.witness_id, f.model.status, f.model.message)


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
    config = meta.get("config", {}) or {}
    corpus: dict[str, list[dict[str, Any]]] = meta.get("corpus", {}) or {}
    bench = benchmark if benchmark is not None else _load_benchmark(config.get("benchmark"))
    tasks = bench.tasks if bench is not None else {}
    patches = {t.id: t for t in bench.trials} if bench is not None else {}

    witnesses = {w["id"]: w for w in store.witnesses()}
    canonical = dedup.group(store.witnesses())
    wruns = store.witness_runs()
    validations = store.validations()
    # Only the runs a finding quotes (a session holds one per trial and witness, with output).
    runs = store.runs_by_key([wr["run_key"] for wr in wruns if wr.get("run_key")]
                             + [v["reference_run"] for v in validations if v.get("reference_run")])
    reference_runs: dict[tuple[str, str], dict[str, Any]] = {}  # the first, as validations are in time order
    for v in validations:
        if v.get("reference_run"):
            reference_runs.setdefault((v["task_id"], v["candidate_id"]), v)
    approvals = {a["candidate_id"]: a for a in store.approvals()}
    verdicts = {v["candidate_id"]: v for v in store.verdicts()}
    trial_checks = store.trial_checks()
    trial_states = store.trial_states()
    task_states = store.task_states()
    proofs = store.proofs()
    passes_both: dict[str, int] = {}
    for v in validations:
        if v.get("outcome") == "passes_both" and v.get("trial_id"):
            passes_both[v["trial_id"]] = passes_both.get(v["trial_id"], 0) + 1
    # T0's run on each trial's world (no candidate files), for claims that T0 passes there.
    # The first such run is the reproduction check; later ones (harness reverted, mutants) are not.
    t0_runs: dict[str, str] = {}
    for r in store.run_headers():
        if r.trial_id and "/model/" in r.world and not r.candidate_ids:
            t0_runs.setdefault(r.trial_id, r.key)
    runs_of: dict[str, dict[str, dict[str, Any]]] = {}  # trial -> witness -> its latest run
    by_witness: dict[str, dict[str, dict[str, Any]]] = {}  # the same, witness first
    for wr in wruns:
        runs_of.setdefault(wr["trial_id"], {})[wr["witness_id"]] = wr
        by_witness.setdefault(wr["witness_id"], {})[wr["trial_id"]] = wr

    trial_reports: list[TrialReport] = []
    underspecified: list[UnderspecifiedPrompt] = []
    store_approvals = store.approvals()
    awaiting = summary.awaiting_operator
    analysis = {tid: store.get_audit(tid, "analysis") or {} for tid in summary.tasks}
    reviews = structured_reviews(store, verdicts)
    for task_id, task_sum in summary.tasks.items():
        task = tasks.get(task_id)
        # rho's denominator: every passing trial of the task (the session's population)
        passing_models = (meta.get("population") or {}).get(task_id) or \
            {t["id"]: t.get("model") or "?" for t in corpus.get(task_id, []) if t.get("official_pass")}
        # rho details per witness, over the task's passing corpus
        details: dict[str, tuple[float | None, dict[str, Any], tuple[str, ...], bool]] = {}
        for ws in task_sum.witnesses:
            outcomes = {tid: witness_outcome([r["status"]]) for tid, r in by_witness.get(ws.id, {}).items()
                        if tid in passing_models}
            value, per_model, skipping, complete = rho_of(outcomes, passing_models)
            details[ws.id] = (value, per_model, skipping, complete)
            if ws.classification == "ambiguous":
                underspecified.append(UnderspecifiedPrompt(
                    task=task_id, witness=ws.id, requirement=ws.requirement,
                    rho=round(ws.rho if ws.rho is not None else value, 3),
                    models_skipping=list(skipping), models_measured=len(per_model),
                    clarification=ws.note or "", path=ws.path, fails_on=ws.fails_on))
        questions = open_questions.stored(store, task_id)
        for q in questions:
            outcomes = {t: "failed" for t in q.get("fails_on") or []} | {t: "passed" for t in q.get("passes_on") or []}
            q_rho, q_per_model, q_skipping, _ = rho_of(outcomes, passing_models) if outcomes else (None, {}, (), False)
            underspecified.append(UnderspecifiedPrompt(
                task=task_id, witness=q.get("candidate_id") or "", requirement=q.get("requirement") or "",
                rho=round(q_rho, 3) if q_rho is not None else None, models_skipping=list(q_skipping),
                models_measured=len(q_per_model), clarification=q.get("clarification") or "",
                path=q.get("path") or "", fails_on=list(q.get("fails_on") or []), kind="open question",
                said=list(q.get("said") or []), reference=q.get("reference") or ""))
        infos: dict[str, dict[str, Any]] = {}
        for t in corpus.get(task_id, []):
            infos.setdefault(t["id"], t)
        for trial_id, entry in task_sum.trials.items():
            info = infos.get(trial_id, {})
            trial = patches.get(trial_id) or Trial(trial_id, task_id, info.get("agent") or "?",
                                                   info.get("model") or "?", "", True)
            evidence = _stored_evidence(store, trial_id)
            if evidence is None and task is not None and trial.patch:
                evidence = collect_static_evidence(task, trial)
            if evidence is None and proofs.get(trial_id):
                evidence = Evidence(task_id, trial_id)
            if evidence is not None:
                evidence = Evidence.from_dict(harness_effect.attach(
                    evidence.to_dict(), proofs.get(trial_id, [])))
            findings: list[FindingInput] = []
            ambiguous: list[FindingInput] = []
            executed_by = (store.get_evidence(trial_id) or {}).get("executed_by_witness") or {}
            counted: set[str] = set()
            for wid, wr in sorted(runs_of.get(trial_id, {}).items()):
                w = witnesses.get(wid)
                if w is None or not is_failing(wr["status"]) or canonical.get(wid, wid) in counted:
                    continue  # one copy per witness
                counted.add(canonical.get(wid, wid))
                ref_run = _reference_run(reference_runs, w, runs)
                w_rho, w_per_model, w_skipping, _ = details.get(wid, (None, {}, (), False))
                verdict = verdicts.get(wid) or {}
                f = FindingInput(
                    witness_id=wid, path=w["path"], source=w["source"], requirement=w["requirement"],
                    explicit=bool(w["explicit"]), quote=w.get("quote") or "",
                    test_ids=tuple(w.get("test_ids") or ()),
                    reference=WitnessRun(ref_run.get("status", "passed") if ref_run else "passed",
                                         _message(ref_run.get("run") if ref_run else None, w),
                                         ref_run.get("key") if ref_run else None),
                    model=WitnessRun(wr["status"], _message(runs.get(wr.get("run_key") or ""), w),
                                     wr.get("run_key")),
                    klass=_klass(w), rho=w["rho"] if w["rho"] is not None else w_rho,
                    models_skipping=len(w_skipping), models_measured=len(w_per_model),
                    source_trial=w.get("source_trial"), reviewer_reason=verdict.get("reason", ""),
                    replays=tuple((tid, r["status"], r.get("run_key")) for tid, r in sorted(by_witness.get(wid, {}).items())
                                  if tid in passing_models),
                    approved_by=(approvals.get(wid) or {}).get("by", "auto"),
                    executed=frozenset((str(p), int(n)) for p, n in
                                       (executed_by.get(wid) or []) if isinstance(n, int)))
                # A hang, kill or crash refutes whatever the witness's class (failure_kinds).
                (ambiguous if w["classification"] == "ambiguous" and not never_a_reading(wr["status"])
                 else findings).append(f)
            tc = trial_checks.get(trial_id)
            reproduced = None if tc is None else tc.reproduced
            audit = store.get_audit(task_id, trial_id) or {}
            agent_findings = audit.get("findings") or []
            for f in findings:
                mine = _agent_finding(f.witness_id, agent_findings)
                if mine is not None:
                    f.agent = mine
            _attach_explanations(store, findings)
            passed = sum(1 for r in runs_of.get(trial_id, {}).values() if r["status"] == "passed")
            void = _audit_failed(trial_states.get(trial_id), task_states.get(task_id))
            judged = judge_trial(
                trial, findings=findings if entry.state == "refuted" else [],
                ambiguous=ambiguous, evidence=evidence, audited=entry.audited,
                reproduced=reproduced,
                clean_candidates=passes_both.get(trial_id, 0) + _held(analysis.get(task_id)),
                witnesses_passed=passed,
                prompt=task.instruction if task is not None else "", t0_run=t0_runs.get(trial_id),
                vacuous=list(task_sum.vacuous),
                audit_failed=void,
                workdir=task.environment.workdir if task is not None else "/app",
                framework=task.tests.framework if task is not None else None,
                checklist=list(audit.get("checklist") or []) + analysis_checklist(analysis.get(task_id)))
            if entry.state == "excluded":
                judged.justification = "Excluded: " + (entry.reason or "the task is not well-formed") \
                    + ". " + judged.justification
            for finding in judged.findings:
                finding["decision"] = decision_record(approvals.get(finding["witness_id"]))
            report = TrialReport.of(
                judged, state=entry.state, audit_failed=void if judged.label == CLEAN_UNAUDITED else "",
                mutation=(store.get_evidence(trial_id) or {}).get("mutation"),
                agent_audit=AgentAudit(agent_findings, audit.get("nothing_found"), audit.get("notes", ""))
                if audit else None,
                reviews=reviews.get(trial_id, []),
                decisions=trial_decisions(trial_id, store_approvals, verdicts, awaiting),
                open_questions=[{k: q.get(k) for k in ("candidate_id", "requirement", "said", "reference",
                                                       "clarification", "path")}
                                for q in questions if trial_id in (q.get("fails_on") or [])])
            mark_independent(report, independent_reference(store, task_id), store.directory)
            trial_reports.append(report)

    name = meta.get("benchmark_name") or config.get("benchmark")
    audited_tasks = [tid for tid, t in summary.tasks.items() if t.well_formed]
    under_tasks = sorted({u.task for u in underspecified})
    tables = _tables(str(name), trial_reports, corpus)
    # Table 6 shape: per benchmark, underspecified tasks out of the tasks audited.
    tables.underspecified = [UnderspecifiedRow(name, f"{len(under_tasks)} / {len(audited_tasks)}",
                                               ", ".join(under_tasks))]
    out = Report(
        session_id=session_id, benchmark=name, benchmark_path=config.get("benchmark"),
        mode=config.get("mode"), sampler=config.get("sampler"), seed=config.get("seed"),
        rounds=config.get("rounds"), state=meta.get("state"), usage=summary.usage,
        tasks={tid: TaskReport(t.well_formed, t.problems, t.vacuous, t.flaky, t.rounds, t.witnesses,
                               (analysis.get(tid) or {}).get("traceability") or [],
                               _features_with_fates(analysis.get(tid)),
                               list((analysis.get(tid) or {}).get("fates") or []),
                               reference_claims.stored(store, tid), audit_fate_rows(store, tid))
               for tid, t in summary.tasks.items()},
        trials=trial_reports, underspecified_prompts=underspecified,
        decisions=decisions_table(store.approvals(), verdicts),
        awaiting_operator=[AwaitingOperator(a["candidate_id"], a["task_id"], a["label"], a["why"],
                                            case=a["case"], trial_id=a["trial_id"],
                                            reviewer_label=a["reviewer_label"], requirement=a["requirement"])
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


def _features_with_fates(analysis: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The task analysis's suspicious features, each withdrawn one saying which held test
    disproved it (analysis_fates.withdrawn_features)."""
    gone = {str(f.get("id")): f for f in (analysis or {}).get("withdrawn_features") or []}
    return [dict(f, withdrawn=f"disproved: {gone[str(f.get('id'))]['disproved_by']} held on every trial")
            if str(f.get("id")) in gone else dict(f) for f in (analysis or {}).get("suspicious_features") or []]


def _held(analysis: dict[str, Any] | None) -> int:
    """The task analysis's validated tests that held on every trial (each passed on both worlds
    of every trial, so a clean trial counts them among its validated candidates)."""
    return sum(1 for row in (analysis or {}).get("fates") or [] if row.get("held"))


def _audit_failed(trial_state: dict[str, Any] | None, task_state: dict[str, Any] | None) -> str:
    """Why a trial's (or its task's) audit measured nothing (failure_kinds.AUDIT_FAILED), or ""."""
    if (trial_state or {}).get("state") == AUDIT_FAILED:
        return str((trial_state or {}).get("by") or "")
    if (task_state or {}).get("state") == AUDIT_FAILED:
        return str((task_state or {}).get("reason") or "")
    return ""


INDEPENDENT_BAND = 0.6  # verdicts resting on G′ never claim more confidence than this


def mark_independent(trial: TrialReport, record: dict[str, Any] | None, folder: Path) -> None:
    """A verdict on a task audited against an independent implementation G′ (no reference
    solution) says so, and its confidence is scaled into its own, lower band."""
    trial.reference = "benchmark"
    if not record or not record.get("ok"):
        return
    trial.reference = "independent"
    trial.confidence = round(trial.confidence * INDEPENDENT_BAND, 2)
    trial.justification = (trial.justification + " Validated against an independent implementation "
                           "G′ written from the prompt, not the benchmark's reference solution (the task "
                           "has none, or the session ignored it): a weaker oracle. G′: "
                           f"{Path(folder) / 'independent-references' / (path_part(trial.task_id) + '.patch')}.")


def decisions_table(approvals: list[dict[str, Any]], verdicts: dict[str, dict[str, Any]]) -> list[DecisionRow]:
    """Every decision a person took (operator approvals, overrules, judgements), oldest first:
    who decided what about which candidate, against what the reviewer said."""
    out = []
    for a in approvals:
        if a.get("by") != "operator":
            continue
        record = decision_record(a)
        verdict = verdicts.get(a["candidate_id"]) or {}
        out.append(DecisionRow(
            candidate=a["candidate_id"], task=a.get("task_id") or "",
            trial=a.get("trial_id") or verdict.get("trial_id") or "",
            requirement=verdict.get("requirement") or "",
            reviewer_label=record["reviewer_label"] or verdict.get("label") or "",
            decision=record["decision"], label=a.get("label") or "", counts=bool(a.get("counts")),
            by=record["by"], note=record["note"], at=_iso(record["at"])))
    return out


def trial_decisions(trial_id: str, approvals: list[dict[str, Any]], verdicts: dict[str, dict[str, Any]],
                    awaiting: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every decision on a trial's candidates, oldest first: who decided, the reviewer's label
    beside the label that stands, the operator's own judgement; then what still waits."""
    out = []
    for a in approvals:
        verdict = verdicts.get(a["candidate_id"]) or {}
        if (a.get("trial_id") or verdict.get("trial_id")) != trial_id or a.get("by") == "queued":
            continue
        record = decision_record(a)
        out.append({"candidate_id": a["candidate_id"], "case": "", "reviewer": verdict.get("reviewer") or "",
                    "reviewer_label": record["reviewer_label"] or verdict.get("label") or "",
                    "reviewer_reason": verdict.get("reason") or "", "decision": record["decision"],
                    "label": a.get("label") or "", "counts": bool(a.get("counts")), "by": record["by"],
                    "note": record["note"], "operator": record.get("operator") or {}, "at": _iso(record["at"])})
    for w in awaiting:
        if w.get("trial_id") == trial_id:
            out.append({"candidate_id": w["candidate_id"], "case": w.get("case") or "", "reviewer": "",
                        "reviewer_label": w.get("reviewer_label") or "", "reviewer_reason": w.get("why") or "",
                        "decision": "questionable-awaiting", "label": w.get("label") or "", "counts": False,
                        "by": "queued", "note": "waits for the operator", "operator": {}, "at": ""})
    return out


def _iso(at: float | None) -> str:
    if not at:
        return ""
    import datetime

    return datetime.datetime.fromtimestamp(float(at), datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%SZ")


def _chain(candidate_id: str) -> str:
    """A candidate's chain (its repairs and kept subsets share it): the id without .vN / ~rN."""
    return re.sub(r"(\.v\d+)?(~r?\d+)*$", "", candidate_id or "")


def _agent_finding(witness_id: str, agent_findings: list[dict[str, Any]]) -> dict[str, Any] | None:
    for item in agent_findings:
        if item.get("candidate_id") and _chain(item["candidate_id"]) == _chain(witness_id):
            return item
    return None


def structured_reviews(store: SessionStore, verdicts: dict[str, Any]) -> dict[str, list[Review]]:
    """trial id -> the reviewer's structured verdicts (overall, per case) on its candidates."""
    from testjack_tui.engine.approval import review_key

    out: dict[str, list[Review]] = {}
    for cid, v in verdicts.items():
        data = store.get_audit(v.get("task_id") or "", review_key(cid))
        if not data:
            continue
        out.setdefault(v.get("trial_id") or "analysis", []).append(Review(
            candidate_id=cid, label=v.get("label"), overall=data.get("overall", ""),
            cases=data.get("cases") or [], keep=data.get("keep") or [], coverage=data.get("coverage") or []))
    return out


def _stored_evidence(store: SessionStore, trial_id: str) -> Evidence | None:
    data = with_canary_evidence(store, trial_id, store.get_evidence(trial_id))
    return Evidence.from_dict(data) if data else None


def _reference_run(reference_runs: dict[tuple[str, str], dict[str, Any]], w: dict[str, Any],
                   runs: dict[str, StoredRun]) -> dict[str, Any] | None:
    """The witness's passing run on the reference world (from the validations table)."""
    v = reference_runs.get((w["task_id"], w["id"]))
    if v is None:
        return None
    return {"status": v["reference"], "key": v["reference_run"], "run": runs.get(v["reference_run"])}


def _klass(w: dict[str, Any]) -> str:
    if w["classification"] == "ambiguous":
        return "ambiguous"
    return "explicit" if w["explicit"] else "implicit_necessary"


def _tables(benchmark: str, trials: list[TrialReport], corpus: dict[str, list[dict[str, Any]]]) -> Tables:
    refuted = {t.trial_id for t in trials if t.refuted}
    by_task: list[TableRow] = []
    by_model: dict[str, list[int]] = {}
    total = [0, 0, 0]
    for task_id, corpus_trials in sorted(corpus.items()):
        n_all = len(corpus_trials)
        passing = [t for t in corpus_trials if t.get("official_pass")]
        n_ref = sum(1 for t in passing if t["id"] in refuted)
        by_task.append(_table_row(task_id, n_all, len(passing), n_ref))
        for t in corpus_trials:
            m = by_model.setdefault(t.get("model") or "?", [0, 0, 0])
            m[0] += 1
            if t.get("official_pass"):
                m[1] += 1
                m[2] += t["id"] in refuted
        total = [total[0] + n_all, total[1] + len(passing), total[2] + n_ref]
    return Tables(benchmark=[_table_row(benchmark, *total)], tasks=by_task,
                  models=[_table_row(m, *v) for m, v in sorted(by_model.items())])


def _detector_summary(trials: list[TrialReport]) -> Detectors:
    by_name = {}
    for name in DETECTORS:
        hits = [t.trial_id for t in trials if t.detectors.get(name) == "suspicious"]
        by_name[name] = DetectorHits(len(hits), hits)
    return Detectors(by_name, [t.trial_id for t in trials if t.label == "REWARD_HACK"])


def score_against_labels(report: Report, labels: dict[str, dict[str, Any]], corpus: dict[str, Any]) -> Scoring:
    """Recall and precision of our refutations against the benchmark's ground truth."""
    ours = {t.trial_id: t for t in report.trials}
    refuted = {tid for tid, t in ours.items() if t.refuted}
    labelled = {tid for tid in ours if tid in labels}
    defective = {tid for tid in labelled if is_defective(labels[tid])}
    hit = refuted & defective
    n_all = sum(len(v) for v in corpus.values())
    passing = sum(1 for v in corpus.values() for t in v if t.get("official_pass"))
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

