"""The machine-readable result of a session, computed from its database alone.

Per task and model: passing (officially), refuted, clean (audited, nothing found), unaudited,
ambiguous (fails only witnesses the ambiguity rule set aside), not_reproducible, excluded (task
not well-formed); the witnesses with their source and requirement; and, per refuted trial, the
witness's runs on both worlds.
"""
from __future__ import annotations

from typing import Any

from . import dedup
from .runner import is_failing
from .store import SessionStore

CATEGORIES = ("refuted", "ambiguous", "clean", "unaudited", "not_reproducible", "excluded")
HEAD = 1500


def _counts() -> dict[str, int]:
    return {"passing": 0, **{c: 0 for c in CATEGORIES}}


def _run_view(run: dict[str, Any] | None, witness: dict[str, Any] | None, status: str) -> dict[str, Any]:
    if run is None:
        return {"status": status}
    view: dict[str, Any] = {"status": status, "world": run["world"], "run": run["key"],
                            "exit_code": run["exit_code"], "timed_out": run["timed_out"],
                            "head": (run["head"] or "")[:HEAD], "tail": (run["tail"] or "")[-HEAD:]}
    if witness is not None:
        path, ids = witness["path"], set(witness.get("test_ids") or [])
        view["tests"] = {node: o for node, o in run["outcomes"].items()
                         if node in ids or node == path or node.startswith(path + "::")}
    return view


def build_summary(store: SessionStore) -> dict[str, Any]:
    meta = store.all_meta()
    config = meta.get("config", {})
    corpus: dict[str, list[dict[str, Any]]] = meta.get("corpus", {})
    checks = store.task_checks()
    trial_checks = store.trial_checks()
    states = store.trial_states()
    task_states = store.task_states()
    witnesses = store.witnesses()
    wruns = store.witness_runs()
    refutations = store.refutations()
    # Only the runs a refutation shows: every run of a big session would not fit in memory.
    runs = store.runs_by_key({key for ref in refutations
                              for key in (ref["model_run"], ref["reference_run"]) if key})
    rounds = store.rounds()

    witness_by_id = {w["id"]: w for w in witnesses}
    canonical = dedup.group(witnesses)
    fails_by_trial: dict[str, list[str]] = {}
    # Per witness listed (its first copy): the trials any copy fails on, and those it refutes.
    copies: dict[str, list[str]] = {}
    for witness in witnesses:
        copies.setdefault(canonical[witness["id"]], []).append(witness["id"])
    fails_on: dict[str, set[str]] = {}
    for wr in wruns:
        if is_failing(wr["status"]):
            fails_by_trial.setdefault(wr["trial_id"], []).append(wr["witness_id"])
            if wr["witness_id"] in canonical:
                fails_on.setdefault(canonical[wr["witness_id"]], set()).add(wr["trial_id"])
    refutes_by_trial: dict[str, list[dict[str, Any]]] = {}
    refutes: dict[str, set[str]] = {}
    for ref in refutations:
        refutes_by_trial.setdefault(ref["trial_id"], []).append(ref)
        if ref["witness_id"] in canonical:
            refutes.setdefault(canonical[ref["witness_id"]], set()).add(ref["trial_id"])

    tasks_out: dict[str, Any] = {}
    totals = _counts()
    models_total: dict[str, dict[str, int]] = {}
    for task_id in sorted(corpus):
        trials = corpus[task_id]
        check = checks.get(task_id)
        models: dict[str, dict[str, int]] = {}
        trials_out: dict[str, Any] = {}
        for t in sorted(trials, key=lambda x: x["id"]):
            if not t.get("official_pass"):
                continue
            tc = trial_checks.get(t["id"])
            st = states.get(t["id"], {})
            refs = refutes_by_trial.get(t["id"], [])
            if tc is not None and not tc["reproduced"]:
                category = "excluded" if tc.get("excluded") else "not_reproducible"
            elif check is not None and not check["well_formed"]:
                category = "excluded"
            elif refs:
                category = "refuted"
            elif any(witness_by_id.get(w, {}).get("classification") == "ambiguous"
                     for w in fails_by_trial.get(t["id"], [])):
                category = "ambiguous"
            elif st.get("audited"):
                category = "clean"
            else:
                category = "unaudited"
            entry: dict[str, Any] = {"model": t.get("model"), "agent": t.get("agent"),
                                     "state": category, "audited": bool(st.get("audited")),
                                     "loop_state": st.get("state")}
            if tc is not None and tc.get("reason"):
                entry["reason"] = tc["reason"]
            if refs:
                entry["refutations"] = []
                for ref in refs:
                    w = witness_by_id.get(ref["witness_id"])
                    entry["refutations"].append({
                        "witness": ref["witness_id"], "requirement": ref["requirement"],
                        "model": _run_view(runs.get(ref["model_run"] or ""), w, ref["model_status"]),
                        "reference": _run_view(runs.get(ref["reference_run"] or ""), w, ref["reference_status"]),
                    })
            ambiguous_fails = [w for w in fails_by_trial.get(t["id"], [])
                               if witness_by_id.get(w, {}).get("classification") == "ambiguous"]
            if ambiguous_fails:
                entry["ambiguous_witnesses"] = sorted(ambiguous_fails)
            trials_out[t["id"]] = entry
            for bucket in (models.setdefault(t.get("model") or "?", _counts()),
                           models_total.setdefault(t.get("model") or "?", _counts()), totals):
                bucket["passing"] += 1
                bucket[category] += 1
        task_witnesses = []
        for w in (x for x in witnesses if x["task_id"] == task_id):
            if canonical[w["id"]] != w["id"]:
                continue  # one copy per witness: listed under its first copy
            task_witnesses.append({
                "id": w["id"], "origin": "task_analysis" if w["source_trial"] is None else "audit",
                "source_trial": w["source_trial"], "requirement": w["requirement"],
                "explicit": w["explicit"], "quote": w["quote"], "path": w["path"],
                "source": w["source"], "test_ids": w["test_ids"], "round": w["round"],
                "classification": w["classification"], "rho": w["rho"], "note": w["note"],
                "fails_on": sorted(fails_on.get(w["id"], ())),
                "refutes": sorted(refutes.get(w["id"], ())),
                "duplicates": [c for c in copies[w["id"]] if c != w["id"]],
            })
        tasks_out[task_id] = {
            "state": task_states.get(task_id, {}).get("state", "pending"),
            "well_formed": None if check is None else check["well_formed"],
            "problems": [] if check is None else check["problems"],
            "vacuous": [] if check is None else check["vacuous"],
            "flaky": [] if check is None else list(check.get("flaky") or []),
            "rounds": [{"round": r["round"], "trial_id": r["trial_id"], "state": r["state"],
                        "witnesses": r["witnesses"], "refuted": r["refuted"]}
                       for r in rounds if r["task_id"] == task_id],
            "models": models, "trials": trials_out, "witnesses": task_witnesses,
        }
    ledger = store.ledger_totals()
    return {
        "session_id": meta.get("session_id"), "state": meta.get("state"),
        "benchmark": config.get("benchmark"), "mode": config.get("mode"), "seed": config.get("seed"),
        "sampler": config.get("sampler"), "rounds": config.get("rounds"), "config": config,
        "usage": {"usd": round(ledger["usd"], 6), "tokens": ledger["tokens"], "llm_calls": ledger["calls"],
                  "estimated": ledger["estimated"], "test_runs": store.runs_counted(),
                  "seconds": round(float(meta.get("elapsed_seconds", 0.0) or 0.0), 1)},
        "totals": totals, "models": models_total, "tasks": tasks_out,
    }


def outcome_view(summary: dict[str, Any]) -> dict[str, Any]:
    """The part of a summary that must not change between two runs with the same seed."""
    return {task_id: {"trials": {tid: t["state"] for tid, t in task["trials"].items()},
                      "witnesses": sorted(w["id"] for w in task["witnesses"]),
                      "rounds": [(r["round"], r["trial_id"]) for r in task["rounds"]]}
            for task_id, task in summary["tasks"].items()}
