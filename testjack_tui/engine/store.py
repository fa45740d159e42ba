"""A session's durable record: one SQLite database (WAL) per session.

Every step is committed as it completes, so a session killed at any point (kill -9 included)
resumes without redoing stored work: test runs, audits, repairs, reviews, approvals and LLM
responses are looked up here before anything is executed or asked again.

Layout: `paths.sessions_dir()/<id>/session.db`, agent transcripts in `<id>/transcripts/*.jsonl`.
"""
from __future__ import annotations

import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any, Iterable, cast

from testjack_tui import paths
from testjack_tui.errors import InputError
from testjack_tui.safe_paths import id_problem

from . import dedup

from .records_standing import (RefutationRow, RoundRow, RunOutcome, Standing, TaskLoopState, TaskStateRow,
                               TrialLoopState, TrialStateRow, WitnessClassification, WitnessRow, WitnessRunRow,
                               refutation_of, round_of, standing_columns, standing_of, task_state_of,
                               trial_state_of, witness_columns, witness_of, witness_run_of)

from .records_cands import (ApprovalRecord, CandidateRecord, DecidedBy, DecisionKind, DropRecord,
                            ValidationOutcome, ValidationRecord, VerdictRecord,
                            candidate_to_dict, candidate_from_dict)
from .roles import Candidate, CandidateAuthor, OperatorJudgement, ReviewLabel, ReviewVerdict

from .records_runs import (AuditRow, CanaryCheck, CanaryVerdict, JsonObject, LedgerEntry, LedgerTotals,
                           GraderReport, Proof, ProofKind, RunHeader, StoredRun, TaskCheckRow, TrialCheckRow,
                           WorldKindName, WorldRow)
from .records import member, member_or_none
from .store_schema import ADDED_COLUMNS, SCHEMA, SCHEMA_VERSION as SCHEMA_VERSION


def session_dir(session_id: str) -> Path:
    problem = id_problem(session_id) or ("has a '/'" if "/" in session_id else None)
    if problem:
        raise InputError("session", "id", problem)
    return paths.sessions_dir() / session_id


def session_ref(ref: str) -> str:
    """The session a command names: its id, or the folder an `audit --out` wrote (its
    `summary.json` names the session), since that folder is what a user has at hand.
    An unknown name comes back as given, for the caller's own "no session" line."""
    if not id_problem(ref) and "/" not in ref and (paths.sessions_dir() / ref / "session.db").exists():
        return ref
    summary = Path(ref) / "summary.json"
    try:
        named = json.loads(summary.read_text(encoding="utf-8")).get("session_id") if summary.is_file() else None
    except (OSError, ValueError, AttributeError):
        named = None
    if isinstance(named, str) and not id_problem(named) and "/" not in named \
            and (paths.sessions_dir() / named / "session.db").exists():
        return named
    return ref


def db_path(session_id: str) -> Path:
    return session_dir(session_id) / "session.db"


def _dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def _loads(text: str | None, default: Any = None) -> Any:
    if text is None or text == "":
        return default
    return json.loads(text)


class SessionStore:
    """Thread-safe access to one session's database. Each write is its own transaction."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.RLock()
        self._db = sqlite3.connect(str(self.path), check_same_thread=False, isolation_level=None,
                                   timeout=30)
        self._db.row_factory = sqlite3.Row
        with self._lock:
            self._db.execute("PRAGMA journal_mode=WAL")
            # NORMAL in WAL mode: a committed step survives the process being killed.
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._migrate()

    def _migrate(self) -> None:
        version = self._db.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            self._db.close()
            raise InputError(self.path, "user_version", f"written by a newer TestJack (schema {version}; "
                                                        f"this one reads up to {SCHEMA_VERSION})")
        self._db.executescript(SCHEMA)
        for added_in, table, column, declaration in ADDED_COLUMNS:
            if added_in <= version:
                continue
            have = {r["name"] for r in self._db.execute(f"PRAGMA table_info({table})")}
            if column not in have:
                self._db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {declaration}")
        if version < 4:
            self._regroup()
        if version != SCHEMA_VERSION:
            self._db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    # -- plumbing -----------------------------------------------------------------------------
    @classmethod
    def for_session(cls, session_id: str) -> "SessionStore":
        return cls(db_path(session_id))

    @property
    def directory(self) -> Path:
        return self.path.parent

    def transcripts_dir(self) -> Path:
        path = self.directory / "transcripts"
        path.mkdir(parents=True, exist_ok=True)
        return path

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def _exec(self, sql: str, args: Iterable[Any] = ()) -> None:
        with self._lock:
            self._db.execute(sql, tuple(args))

    def _rows(self, sql: str, args: Iterable[Any] = ()) -> list[sqlite3.Row]:
        with self._lock:
            return self._db.execute(sql, tuple(args)).fetchall()

    def _row(self, sql: str, args: Iterable[Any] = ()) -> sqlite3.Row | None:
        rows = self._rows(sql, args)
        return rows[0] if rows else None

    def _totals(self, sql: str) -> sqlite3.Row:
        """The one row of an aggregate query (COUNT, SUM: always one row)."""
        return self._rows(sql)[0]

    # -- meta ---------------------------------------------------------------------------------
    def set_meta(self, key: str, value: Any) -> None:
        self._exec("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, _dumps(value)))

    def get_meta(self, key: str, default: Any = None) -> Any:
        row = self._row("SELECT value FROM meta WHERE key = ?", (key,))
        return _loads(row["value"]) if row else default

    def all_meta(self) -> JsonObject:
        return {r["key"]: _loads(r["value"]) for r in self._rows("SELECT key, value FROM meta")}

    # -- events -------------------------------------------------------------------------------
    def add_event(self, at: float, kind: str, task_id: str | None, data: JsonObject) -> None:
        """`data`: the event's own JSON (Event.to_dict, read back by tui/live_state.event_from_dict)."""
        self._exec("INSERT INTO events(at, kind, task_id, data) VALUES (?, ?, ?, ?)",
                   (at, kind, task_id, _dumps(data)))

    def events(self, kinds: Iterable[str] | None = None) -> list[JsonObject]:
        rows = self._rows("SELECT seq, data FROM events ORDER BY seq")
        wanted = set(kinds) if kinds else None
        out = []
        for row in rows:
            data = _loads(row["data"], {})
            if wanted is None or data.get("kind") in wanted:
                out.append(data)
        return out

    # -- LLM response cache (used by the agents so a resumed session never repeats a call) ---
    def get_llm_response(self, key: str) -> str | None:
        """The stored response text (JSON) for a call key, or None if never stored."""
        row = self._row("SELECT value FROM llm_cache WHERE key = ?", (key,))
        return row["value"] if row else None

    def put_llm_response(self, key: str, value: str | JsonObject) -> None:
        """Store a call's response. A str is stored as given; anything else as JSON text."""
        text = value if isinstance(value, str) else _dumps(value)
        self._exec("INSERT OR REPLACE INTO llm_cache(key, value, at) VALUES (?, ?, ?)",
                   (key, text, time.time()))

    # -- task checks and worlds ---------------------------------------------------------------
    def put_task_check(self, check: TaskCheckRow) -> None:
        data = {"passing_trials": list(check.passing_trials),
                "regression_guards": list(check.regression_guards), "flaky": list(check.flaky)}
        self._exec("INSERT OR REPLACE INTO task_checks(task_id, well_formed, problems, vacuous, data) VALUES (?, ?, ?, ?, ?)",
                   (check.task_id, int(check.well_formed), _dumps(list(check.problems)),
                    _dumps(list(check.vacuous)), _dumps(data)))

    def task_checks(self) -> dict[str, TaskCheckRow]:
        out = {}
        for r in self._rows("SELECT * FROM task_checks"):
            data = _loads(r["data"], {})  # a row from before a field was written lacks it
            out[r["task_id"]] = TaskCheckRow(
                r["task_id"], bool(r["well_formed"]), tuple(_loads(r["problems"], [])),
                tuple(_loads(r["vacuous"], [])), tuple(data.get("passing_trials") or ()),
                tuple(data.get("regression_guards") or ()), tuple(data.get("flaky") or ()))
        return out

    def put_trial_check(self, check: TrialCheckRow) -> None:
        data = {"model": check.model, "agent": check.agent, "official_pass": check.official_pass,
                "reward": check.reward, "excluded": check.excluded, "tampered": list(check.tampered)}
        self._exec("INSERT OR REPLACE INTO trial_checks(trial_id, task_id, reproduced, reason, data) VALUES (?, ?, ?, ?, ?)",
                   (check.trial_id, check.task_id, int(check.reproduced), check.reason, _dumps(data)))

    def trial_checks(self) -> dict[str, TrialCheckRow]:
        out = {}
        for r in self._rows("SELECT * FROM trial_checks"):
            data = _loads(r["data"], {})
            out[r["trial_id"]] = TrialCheckRow(
                r["trial_id"], r["task_id"], bool(r["reproduced"]), r["reason"] or "",
                model=data.get("model") or "", agent=data.get("agent") or "",
                official_pass=bool(data.get("official_pass")), reward=data.get("reward"),
                excluded=bool(data.get("excluded")), tampered=tuple(data.get("tampered") or ()))
        return out

    def put_world(self, name: str, task_id: str, kind: WorldKindName | str, trial_id: str | None,
                  image: str, tampered: Iterable[str] = (), error: str = "") -> None:
        self._exec("INSERT OR REPLACE INTO worlds(name, task_id, kind, trial_id, image, tampered, error, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                   (name, task_id, str(WorldKindName(kind)), trial_id, image, _dumps(list(tampered)),
                    error, time.time()))

    def worlds(self) -> list[WorldRow]:
        return [WorldRow(r["name"], r["task_id"], member(WorldKindName, r["kind"], self.path, "worlds.kind"), r["trial_id"], r["image"] or "",
                         tuple(_loads(r["tampered"], [])), r["error"] or "", r["at"] or 0.0)
                for r in self._rows("SELECT * FROM worlds ORDER BY at")]

    # -- candidates, runs, validations --------------------------------------------------------
    def put_candidate(self, c: Candidate, task_id: str, trial_id: str | None) -> None:
        self._exec("INSERT OR IGNORE INTO candidates(id, task_id, trial_id, path, source, requirement, author, attempt, parent, test_ids, origin, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                   (c.id, task_id, trial_id, c.path, c.source, c.requirement, c.author, c.attempt,
                    c.parent, _dumps(list(c.test_ids)), c.origin, time.time()))

    def candidate(self, candidate_id: str) -> CandidateRecord | None:
        row = self._row("SELECT * FROM candidates WHERE id = ?", (candidate_id,))
        return _candidate_row(row) if row else None

    def candidates(self, task_id: str | None = None) -> list[CandidateRecord]:
        if task_id is None:
            rows = self._rows("SELECT * FROM candidates ORDER BY at")
        else:
            rows = self._rows("SELECT * FROM candidates WHERE task_id = ? ORDER BY at", (task_id,))
        return [_candidate_row(r) for r in rows]

    def get_run(self, key: str) -> StoredRun | None:
        row = self._row("SELECT * FROM runs WHERE key = ?", (key,))
        return _run_row(row) if row else None

    def put_run(self, run: StoredRun) -> None:
        self._exec("INSERT OR REPLACE INTO runs(key, task_id, world, trial_id, candidate_ids, test_ids, isolate, outcomes, exit_code, timed_out, head, tail, duration, at, same_as, grader) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                   (run.key, run.task_id, run.world, run.trial_id, _dumps(list(run.candidate_ids)),
                    _dumps(list(run.test_ids)), int(run.isolate), _dumps(run.outcomes), run.exit_code,
                    int(run.timed_out), run.head, run.tail, run.duration, time.time(), run.same_as,
                    None if run.grader is None else _dumps({"inputs": run.grader.inputs, "ids": list(run.grader.ids)})))

    def put_canary_check(self, check: CanaryCheck) -> None:
        """What a run's canaries showed (sandbox/canaries.py), when not "ok"."""
        self._exec("INSERT OR REPLACE INTO canary_checks(key, task_id, trial_id, world, verdict, problems, at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                   (check.key, check.task_id, check.trial_id, check.world, str(check.verdict),
                    _dumps(list(check.problems)), time.time()))

    def canary_checks(self, trial_id: str | None = None, key: str | None = None) -> list[CanaryCheck]:
        sql, args = "SELECT * FROM canary_checks", []
        if trial_id is not None:
            sql, args = sql + " WHERE trial_id = ?", [trial_id]
        elif key is not None:
            sql, args = sql + " WHERE key = ?", [key]
        return [CanaryCheck(r["key"], r["task_id"], r["trial_id"], r["world"], member(CanaryVerdict, r["verdict"], self.path, "canary_checks.verdict"),
                            tuple(_loads(r["problems"], [])), r["at"] or 0.0)
                for r in self._rows(sql + " ORDER BY at", args)]

    def runs(self, task_id: str | None = None) -> list[StoredRun]:
        if task_id is None:
            rows = self._rows("SELECT * FROM runs ORDER BY at")
        else:
            rows = self._rows("SELECT * FROM runs WHERE task_id = ? ORDER BY at", (task_id,))
        return [_run_row(r) for r in rows]

    def run_headers(self) -> list[RunHeader]:
        """Every run without its outcomes and output (key, task, world, trial, candidates), in
        time order: what a scan over a whole session needs."""
        rows = self._rows("SELECT key, task_id, world, trial_id, candidate_ids, at FROM runs ORDER BY at")
        return [RunHeader(r["key"], r["task_id"], r["world"] or "", r["trial_id"],
                          tuple(_loads(r["candidate_ids"], [])), r["at"] or 0.0) for r in rows]

    def graded_runs(self, task_id: str) -> dict[str, GraderReport]:
        """key -> what the grader reported, for the task's runs of its own test.sh that kept it."""
        rows = self._rows("SELECT key, grader FROM runs WHERE task_id = ? AND grader IS NOT NULL", (task_id,))
        return {r["key"]: report for r in rows if (report := _grader(r["grader"])) is not None}

    def runs_by_key(self, keys: Iterable[str]) -> dict[str, StoredRun]:
        """key -> run, for these keys only (unknown keys are left out)."""
        wanted, out = sorted(set(keys)), {}
        for i in range(0, len(wanted), 500):  # SQLite's bound-parameter limit
            chunk = wanted[i:i + 500]
            for r in self._rows(f"SELECT * FROM runs WHERE key IN ({', '.join('?' * len(chunk))})", chunk):
                out[r["key"]] = _run_row(r)
        return out

    def put_validation(self, v: ValidationRecord) -> None:
        self._exec("INSERT OR REPLACE INTO validations(candidate_id, trial_id, task_id, reference, model, outcome, reference_run, model_run, at, reference_of) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                   (v.candidate_id, v.trial_id, v.task_id, v.reference, v.model, v.outcome,
                    v.reference_run, v.model_run, time.time(), v.reference_of))

    def validations(self, task_id: str | None = None) -> list[ValidationRecord]:
        sql = "SELECT * FROM validations" + (" WHERE task_id = ?" if task_id else "") + " ORDER BY at"
        return [ValidationRecord(r["candidate_id"], r["trial_id"] or "", r["task_id"], r["reference"] or "",
                                 r["model"] or "", member(ValidationOutcome, r["outcome"], self.path,
                                                          "validations.outcome"),
                                 r["reference_run"], r["model_run"], r["at"], r["reference_of"] or "")
                for r in self._rows(sql, (task_id,) if task_id else ())]

    def put_drop(self, d: DropRecord) -> None:
        self._exec("INSERT OR REPLACE INTO drops(candidate_id, task_id, trial_id, reason, at) VALUES (?, ?, ?, ?, ?)",
                   (d.candidate_id, d.task_id, d.trial_id, d.reason, time.time()))

    def drops(self) -> list[DropRecord]:
        return [DropRecord(r["candidate_id"], r["task_id"], r["trial_id"], r["reason"] or "", r["at"])
                for r in self._rows("SELECT * FROM drops ORDER BY at")]

    def put_repair(self, parent_id: str, repaired: Candidate | None) -> None:
        """The author's answer to a repair request, as the author wrote it (None: gave up)."""
        self._exec("INSERT OR REPLACE INTO repairs(parent_id, raw, at) VALUES (?, ?, ?)",
                   (parent_id, None if repaired is None else _dumps(candidate_to_dict(repaired)), time.time()))

    def get_repair(self, parent_id: str) -> tuple[bool, Candidate | None]:
        """(stored?, the repaired candidate as authored, or None when the author gave up)."""
        row = self._row("SELECT raw FROM repairs WHERE parent_id = ?", (parent_id,))
        if row is None:
            return False, None
        raw = _loads(row["raw"])
        return True, None if raw is None else candidate_from_dict(raw)

    # -- role outputs -------------------------------------------------------------------------
    def put_audit(self, task_id: str, key: str, data: JsonObject) -> None:
        """A role's answer under `key` (see AuditRow), as its module shaped it."""
        self._exec("INSERT OR REPLACE INTO audits(task_id, trial_id, data, at) VALUES (?, ?, ?, ?)",
                   (task_id, key, _dumps(data), time.time()))

    def get_audit(self, task_id: str, key: str) -> JsonObject | None:
        row = self._row("SELECT data FROM audits WHERE task_id = ? AND trial_id = ?",
                        (task_id, key))
        found: JsonObject | None = _loads(row["data"]) if row else None
        return found

    def put_evidence(self, task_id: str, trial_id: str, data: JsonObject) -> None:
        """A trial's static evidence (Evidence.to_dict, with the loop's own additions)."""
        self._exec("INSERT OR REPLACE INTO evidence(trial_id, task_id, data, at) VALUES (?, ?, ?, ?)",
                   (trial_id, task_id, _dumps(data), time.time()))

    def get_evidence(self, trial_id: str) -> JsonObject | None:
        row = self._row("SELECT data FROM evidence WHERE trial_id = ?", (trial_id,))
        found: JsonObject | None = _loads(row["data"]) if row else None
        return found

    def put_proof(self, task_id: str, trial_id: str, kind: ProofKind, key: str, data: JsonObject) -> None:
        """Executed proof that a trial games its tests (see engine.verdicts.PROOF_KINDS):
        "harness_effect" from the restore-and-rerun of T0, "canary" from the hostile-trials
        canaries. One row per (trial, kind, key); storing it again replaces it."""
        self._exec("INSERT OR REPLACE INTO proofs (trial_id, task_id, kind, key, data, at) "
                   "VALUES (?, ?, ?, ?, ?, ?)",
                   (trial_id, task_id, str(kind), key, _dumps(dict(data, kind=str(kind))), time.time()))

    def proofs(self, trial_id: str | None = None) -> dict[str, list[Proof]]:
        """trial id -> its stored proofs (oldest first)."""
        sql = "SELECT * FROM proofs" + (" WHERE trial_id = ?" if trial_id else "") + " ORDER BY at"
        out: dict[str, list[Proof]] = {}
        for r in self._rows(sql, (trial_id,) if trial_id else ()):
            out.setdefault(r["trial_id"], []).append(Proof(
                r["trial_id"], r["task_id"], member(ProofKind, r["kind"], self.path, "proofs.kind"), r["key"], _loads(r["data"], {}),
                r["at"] or 0.0))
        return out

    def audits(self) -> list[AuditRow]:
        return [AuditRow(r["task_id"], r["trial_id"], _loads(r["data"], {}), r["at"] or 0.0)
                for r in self._rows("SELECT * FROM audits ORDER BY at")]

    def put_verdict(self, v: ReviewVerdict, task_id: str, trial_id: str | None) -> None:
        self._exec("INSERT OR REPLACE INTO verdicts(candidate_id, task_id, trial_id, label, requirement, explicit, quote, reason, reviewer, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                   (v.candidate_id, task_id, trial_id, v.label, v.requirement, int(v.explicit),
                    v.quote, v.reason, v.reviewer, time.time()))

    def _verdict(self, row: sqlite3.Row) -> VerdictRecord:
        return VerdictRecord(row["candidate_id"], row["task_id"], row["trial_id"],
                             member(ReviewLabel, row["label"], self.path, "verdicts.label"),
                             row["requirement"] or "", bool(row["explicit"]), row["quote"] or "",
                             row["reason"] or "", row["reviewer"] or "", row["at"])

    def get_verdict(self, candidate_id: str) -> VerdictRecord | None:
        row = self._row("SELECT * FROM verdicts WHERE candidate_id = ?", (candidate_id,))
        return self._verdict(row) if row else None

    def verdicts(self) -> list[VerdictRecord]:
        return [self._verdict(r) for r in self._rows("SELECT * FROM verdicts ORDER BY at")]

    def put_approval(self, a: ApprovalRecord) -> None:
        """Who decided what: the reviewer's label, the label that stands, the decision
        (see approval.decision_kind) and the operator's own judgement of the requirement."""
        self._exec("INSERT OR REPLACE INTO approvals(candidate_id, request_id, task_id, counts, label, "
                   "by, note, at, reviewer_label, decision, trial_id, judgement) "
                   "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                   (a.candidate_id, a.request_id, a.task_id, int(a.counts), a.label, a.by, a.note, a.at,
                    a.reviewer_label or "", a.decision or "", a.trial_id, _dumps(a.judgement.to_json())))

    def _approval(self, row: sqlite3.Row) -> ApprovalRecord:
        """A stored approval; the columns an older version lacked read empty (ADDED_COLUMNS)."""
        return ApprovalRecord(
            row["candidate_id"], row["request_id"] or "", row["task_id"] or "", bool(row["counts"]),
            member(ReviewLabel, row["label"], self.path, "approvals.label"),
            member(DecidedBy, row["by"], self.path, "approvals.by"), row["note"] or "",
            member_or_none(ReviewLabel, row["reviewer_label"], self.path, "approvals.reviewer_label"),
            member_or_none(DecisionKind, row["decision"], self.path, "approvals.decision"), row["trial_id"],
            OperatorJudgement.from_json(_loads(row["judgement"], {}) or {}), row["at"])

    def get_approval(self, candidate_id: str) -> ApprovalRecord | None:
        row = self._row("SELECT * FROM approvals WHERE candidate_id = ?", (candidate_id,))
        return self._approval(row) if row else None

    def approvals(self) -> list[ApprovalRecord]:
        return [self._approval(r) for r in self._rows("SELECT * FROM approvals ORDER BY at")]

    # -- witnesses, refutations, trial states, rounds (typed rows: engine/records_standing.py) ---
    def put_witness(self, w: WitnessRow) -> None:
        with self._lock:
            self._exec("INSERT OR REPLACE INTO witnesses(id, task_id, source_trial, requirement, explicit, quote, "
                       "path, source, test_ids, round, label, classification, rho, note, at) "
                       "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", (*witness_columns(w), time.time()))
            self._regroup(w.task_id)

    def _regroup(self, task_id: str | None = None) -> None:
        """Each witness names its first copy (dedup.group), decided as stored: no reader regroups.
        Only rows whose first copy changed are written (an unset one reads as the witness itself)."""
        witnesses = self.witnesses(task_id)
        stored = {w.id: w.first_copy for w in witnesses}
        for wid, first in dedup.group(witnesses).items():
            if stored.get(wid) != first:
                self._exec("UPDATE witnesses SET first_copy = ? WHERE id = ?", (first, wid))

    def set_witness_class(self, witness_id: str, classification: WitnessClassification, rho: float | None,
                          note: str) -> None:
        self._exec("UPDATE witnesses SET classification = ?, rho = ?, note = ? WHERE id = ?",
                   (str(classification), rho, note, witness_id))

    def witnesses(self, task_id: str | None = None) -> list[WitnessRow]:
        sql = "SELECT * FROM witnesses" + (" WHERE task_id = ?" if task_id else "") + " ORDER BY at"
        return [witness_of(r, f"{self.path} (witnesses)") for r in self._rows(sql, (task_id,) if task_id else ())]

    def put_witness_run(self, witness_id: str, trial_id: str, task_id: str, status: RunOutcome,
                        run_key: str | None) -> None:
        self._exec("INSERT OR REPLACE INTO witness_runs(witness_id, trial_id, task_id, status, run_key, at) VALUES (?, ?, ?, ?, ?, ?)",
                   (witness_id, trial_id, task_id, str(status), run_key, time.time()))

    def witness_runs(self, task_id: str | None = None) -> list[WitnessRunRow]:
        sql = "SELECT * FROM witness_runs" + (" WHERE task_id = ?" if task_id else "")
        return [witness_run_of(r, f"{self.path} (witness_runs)") for r in self._rows(sql, (task_id,) if task_id else ())]

    def put_refutation(self, task_id: str, trial_id: str, witness_id: str, requirement: str,
                       model_status: RunOutcome, reference_status: RunOutcome, model_run: str | None,
                       reference_run: str | None) -> None:
        self._exec("INSERT OR REPLACE INTO refutations(task_id, trial_id, witness_id, requirement, model_status, reference_status, model_run, reference_run, withdrawn, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, ?)",
                   (task_id, trial_id, witness_id, requirement, str(model_status), str(reference_status),
                    model_run, reference_run, time.time()))

    def withdraw_refutation(self, trial_id: str, witness_id: str) -> None:
        self._exec("UPDATE refutations SET withdrawn = 1 WHERE trial_id = ? AND witness_id = ?", (trial_id, witness_id))

    def refutations(self, task_id: str | None = None, include_withdrawn: bool = False) -> list[RefutationRow]:
        sql = ("SELECT * FROM refutations WHERE 1=1" + (" AND task_id = ?" if task_id else "")
               + ("" if include_withdrawn else " AND withdrawn = 0") + " ORDER BY at")
        return [refutation_of(r, f"{self.path} (refutations)") for r in self._rows(sql, (task_id,) if task_id else ())]

    def set_trial_state(self, trial_id: str, task_id: str, state: TrialLoopState, by: str = "",
                        audited: bool | None = None) -> None:
        with self._lock:
            row = self._row("SELECT audited FROM trial_states WHERE trial_id = ?", (trial_id,))
            was = bool(row["audited"]) if row else False
            self._exec("INSERT OR REPLACE INTO trial_states(trial_id, task_id, state, by, audited, at) VALUES (?, ?, ?, ?, ?, ?)",
                       (trial_id, task_id, str(state), by, int(was if audited is None else audited), time.time()))

    def trial_states(self) -> dict[str, TrialStateRow]:
        return {r["trial_id"]: trial_state_of(r, f"{self.path} (trial_states)") for r in self._rows("SELECT * FROM trial_states")}

    def put_round(self, task_id: str, round_no: int, trial_id: str, state: str,
                  witnesses: list[str], refuted: list[str]) -> None:
        self._exec("INSERT OR REPLACE INTO rounds(task_id, round, trial_id, state, witnesses, refuted, at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                   (task_id, round_no, trial_id, state, _dumps(witnesses), _dumps(refuted), time.time()))

    def rounds(self, task_id: str | None = None) -> list[RoundRow]:
        sql = "SELECT * FROM rounds" + (" WHERE task_id = ?" if task_id else "") + " ORDER BY task_id, round"
        return [round_of(r) for r in self._rows(sql, (task_id,) if task_id else ())]

    def set_task_state(self, task_id: str, state: TaskLoopState, reason: str = "") -> None:
        self._exec("INSERT OR REPLACE INTO task_states(task_id, state, reason, at) VALUES (?, ?, ?, ?)",
                   (task_id, str(state), reason, time.time()))

    def task_states(self) -> dict[str, TaskStateRow]:
        return {r["task_id"]: task_state_of(r, f"{self.path} (task_states)") for r in self._rows("SELECT * FROM task_states")}

    def put_standing(self, s: Standing) -> None:
        self._exec("INSERT OR REPLACE INTO standings(trial_id, task_id, label, confidence, data, at) "
                   "VALUES (?, ?, ?, ?, ?, ?)", (*standing_columns(s), time.time()))

    def standings(self, task_id: str) -> dict[str, Standing]:
        return {r["trial_id"]: standing_of(r, f"{self.path} (standings)")
                for r in self._rows("SELECT * FROM standings WHERE task_id = ?", (task_id,))}

    def drop_standings(self, task_id: str) -> None:
        """A task's audit starts (again): its trials' standings are decided anew when it ends."""
        self._exec("DELETE FROM standings WHERE task_id = ?", (task_id,))

    # -- ledger -------------------------------------------------------------------------------
    def add_ledger(self, role: str, model: str, prompt_tokens: int, completion_tokens: int,
                   usd: float, estimated: bool, call_id: str, task_id: str,
                   trial_id: str | None) -> None:
        self._exec("INSERT INTO ledger(at, role, model, prompt_tokens, completion_tokens, usd, "
                   "estimated, call_id, task_id, trial_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                   (time.time(), role, model, prompt_tokens, completion_tokens, usd,
                    int(estimated), call_id, task_id, trial_id))

    def ledger(self) -> list[LedgerEntry]:
        return [LedgerEntry(int(r["seq"]), r["at"] or 0.0, r["role"] or "", r["model"] or "",
                            int(r["prompt_tokens"] or 0), int(r["completion_tokens"] or 0),
                            float(r["usd"] or 0.0), bool(r["estimated"]), r["call_id"] or "",
                            r["task_id"] or "", r["trial_id"])
                for r in self._rows("SELECT * FROM ledger ORDER BY seq")]

    def ledger_totals(self) -> LedgerTotals:
        row = self._totals("SELECT COALESCE(SUM(prompt_tokens + completion_tokens), 0) AS tokens, "
                        "COALESCE(SUM(usd), 0) AS usd, COALESCE(MAX(estimated), 0) AS estimated, "
                        "COUNT(*) AS calls FROM ledger")
        return LedgerTotals(tokens=int(row["tokens"]), usd=float(row["usd"]),
                            estimated=bool(row["estimated"]), calls=int(row["calls"]))

    def largest_prompt(self) -> int:
        row = self._totals("SELECT COALESCE(MAX(prompt_tokens), 0) AS n FROM ledger")
        return int(row["n"])

    def counts(self) -> dict[str, int]:
        """The session's headline numbers, as the header, `sessions` and the report label them:
        confirmed witnesses, refuted trials (distinct, refutations not withdrawn), finished
        rounds, and decisions the operator took (of them overrules)."""
        row = self._totals(
            "SELECT (SELECT COUNT(*) FROM witnesses) AS witnesses, "
            "(SELECT COUNT(DISTINCT trial_id) FROM refutations WHERE withdrawn = 0) AS refuted, "
            "(SELECT COUNT(*) FROM rounds WHERE state = 'done') AS rounds, "
            "(SELECT COUNT(*) FROM approvals WHERE by = 'operator') AS decisions, "
            "(SELECT COUNT(*) FROM approvals WHERE decision = 'overruled') AS overrules")
        return {k: int(row[k]) for k in ("witnesses", "refuted", "rounds", "decisions", "overrules")}

    def count_runs(self) -> int:
        row = self._totals("SELECT COUNT(*) AS n FROM runs WHERE same_as IS NULL")  # a copy ran nothing
        return int(row["n"])

    def count_copied_runs(self) -> int:
        """Runs answered by an earlier run of the same test on the same world (oracle.taken_run)."""
        return int(self._totals("SELECT COUNT(*) AS n FROM runs WHERE same_as IS NOT NULL")["n"])

    def runs_counted(self) -> int:
        """Executions counted against the run budget: the stored test runs plus every command
        an agent or detector ran (recorded as they are reserved). The one count of "runs" the
        gauge, `sessions` and the report all show."""
        return max(self.count_runs(), int(self.get_meta("test_runs_reserved", 0) or 0))


def _candidate_row(row: sqlite3.Row) -> CandidateRecord:
    return CandidateRecord(row["id"], row["task_id"], row["trial_id"], row["path"], row["source"] or "",
                           row["requirement"] or "", cast(CandidateAuthor, row["author"]), row["attempt"] or 1,
                           row["parent"], tuple(_loads(row["test_ids"], [])), row["origin"] or "", row["at"])


def _run_row(row: sqlite3.Row) -> StoredRun:
    return StoredRun(row["key"], row["task_id"], row["world"] or "", row["trial_id"],
                     tuple(_loads(row["candidate_ids"], [])), tuple(_loads(row["test_ids"], [])),
                     bool(row["isolate"]), _loads(row["outcomes"], {}), row["exit_code"],
                     bool(row["timed_out"]), row["head"] or "", row["tail"] or "",
                     row["duration"] or 0.0, row["at"] or 0.0, row["same_as"], _grader(row["grader"]))


def _grader(text: str | None) -> GraderReport | None:
    data = _loads(text)
    if not isinstance(data, dict):
        return None
    return GraderReport(str(data.get("inputs") or ""), tuple(str(i) for i in data.get("ids") or ()))
