"""The session database's tables, its version and the columns added since each table was first
created (engine/store.py opens, migrates and reads it)."""
from __future__ import annotations

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, at REAL, kind TEXT, task_id TEXT, data TEXT);
CREATE TABLE IF NOT EXISTS task_checks (
    task_id TEXT PRIMARY KEY, well_formed INTEGER, problems TEXT, vacuous TEXT, data TEXT);
CREATE TABLE IF NOT EXISTS trial_checks (
    trial_id TEXT PRIMARY KEY, task_id TEXT, reproduced INTEGER, reason TEXT, data TEXT);
CREATE TABLE IF NOT EXISTS worlds (
    name TEXT PRIMARY KEY, task_id TEXT, kind TEXT, trial_id TEXT, image TEXT,
    tampered TEXT, error TEXT, at REAL);
CREATE TABLE IF NOT EXISTS candidates (
    id TEXT PRIMARY KEY, task_id TEXT, trial_id TEXT, path TEXT, source TEXT, requirement TEXT,
    author TEXT, attempt INTEGER, parent TEXT, test_ids TEXT, origin TEXT, at REAL);
CREATE TABLE IF NOT EXISTS runs (
    key TEXT PRIMARY KEY, task_id TEXT, world TEXT, trial_id TEXT, candidate_ids TEXT,
    test_ids TEXT, isolate INTEGER, outcomes TEXT, exit_code INTEGER, timed_out INTEGER,
    head TEXT, tail TEXT, duration REAL, at REAL, same_as TEXT, grader TEXT);
CREATE TABLE IF NOT EXISTS validations (
    candidate_id TEXT, trial_id TEXT, task_id TEXT, reference TEXT, model TEXT, outcome TEXT,
    reference_run TEXT, model_run TEXT, at REAL, reference_of TEXT DEFAULT '',
    PRIMARY KEY (candidate_id, trial_id));
CREATE TABLE IF NOT EXISTS drops (
    candidate_id TEXT PRIMARY KEY, task_id TEXT, trial_id TEXT, reason TEXT, at REAL);
CREATE TABLE IF NOT EXISTS repairs (parent_id TEXT PRIMARY KEY, raw TEXT, at REAL);
CREATE TABLE IF NOT EXISTS verdicts (
    candidate_id TEXT PRIMARY KEY, task_id TEXT, trial_id TEXT, label TEXT, requirement TEXT,
    explicit INTEGER, quote TEXT, reason TEXT, reviewer TEXT, at REAL);
CREATE TABLE IF NOT EXISTS approvals (
    candidate_id TEXT PRIMARY KEY, request_id TEXT, task_id TEXT, counts INTEGER, label TEXT,
    by TEXT, note TEXT, at REAL, reviewer_label TEXT DEFAULT '', decision TEXT DEFAULT '',
    trial_id TEXT, judgement TEXT DEFAULT '{}');
CREATE TABLE IF NOT EXISTS audits (
    task_id TEXT, trial_id TEXT, data TEXT, at REAL, PRIMARY KEY (task_id, trial_id));
CREATE TABLE IF NOT EXISTS witnesses (
    id TEXT PRIMARY KEY, task_id TEXT, source_trial TEXT, requirement TEXT, explicit INTEGER,
    quote TEXT, path TEXT, source TEXT, test_ids TEXT, round INTEGER, label TEXT,
    classification TEXT, rho REAL, note TEXT, at REAL, first_copy TEXT);
CREATE TABLE IF NOT EXISTS witness_runs (
    witness_id TEXT, trial_id TEXT, task_id TEXT, status TEXT, run_key TEXT, at REAL,
    PRIMARY KEY (witness_id, trial_id));
CREATE TABLE IF NOT EXISTS refutations (
    task_id TEXT, trial_id TEXT, witness_id TEXT, requirement TEXT, model_status TEXT,
    reference_status TEXT, model_run TEXT, reference_run TEXT, withdrawn INTEGER DEFAULT 0,
    at REAL, PRIMARY KEY (trial_id, witness_id));
CREATE TABLE IF NOT EXISTS trial_states (
    trial_id TEXT PRIMARY KEY, task_id TEXT, state TEXT, by TEXT, audited INTEGER DEFAULT 0,
    at REAL);
CREATE TABLE IF NOT EXISTS rounds (
    task_id TEXT, round INTEGER, trial_id TEXT, state TEXT, witnesses TEXT, refuted TEXT,
    at REAL, PRIMARY KEY (task_id, round));
CREATE TABLE IF NOT EXISTS task_states (task_id TEXT PRIMARY KEY, state TEXT, reason TEXT, at REAL);
CREATE TABLE IF NOT EXISTS ledger (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, at REAL, role TEXT, model TEXT,
    prompt_tokens INTEGER, completion_tokens INTEGER, usd REAL, estimated INTEGER,
    call_id TEXT, task_id TEXT, trial_id TEXT);
CREATE TABLE IF NOT EXISTS evidence (trial_id TEXT PRIMARY KEY, task_id TEXT, data TEXT, at REAL);
CREATE TABLE IF NOT EXISTS llm_cache (key TEXT PRIMARY KEY, value TEXT NOT NULL, at REAL);
CREATE TABLE IF NOT EXISTS canary_checks (
    key TEXT PRIMARY KEY, task_id TEXT, trial_id TEXT, world TEXT, verdict TEXT, problems TEXT,
    at REAL);
CREATE TABLE IF NOT EXISTS standings (
    trial_id TEXT PRIMARY KEY, task_id TEXT, label TEXT, confidence REAL, data TEXT, at REAL);
CREATE TABLE IF NOT EXISTS proofs (
    trial_id TEXT, task_id TEXT, kind TEXT, key TEXT, data TEXT, at REAL,
    PRIMARY KEY (trial_id, kind, key));
"""

# The schema's version, kept in the database (PRAGMA user_version). Opening a database runs
# the migrations from its version up to this one, in order; a database written by a newer
# TestJack is refused with one line instead of being half-read. Version 0 is a database from
# before versioning: SCHEMA creates any table it lacks, and the migrations add the columns.
SCHEMA_VERSION = 6

# Columns added after a table was first created, by the version that added them:
# (version, table, column, declaration). Rows an older version wrote read as the defaults.
ADDED_COLUMNS = (
    (1, "approvals", "reviewer_label", "TEXT DEFAULT ''"),
    (1, "approvals", "decision", "TEXT DEFAULT ''"),
    (1, "approvals", "trial_id", "TEXT"),
    (3, "approvals", "judgement", "TEXT DEFAULT '{}'"),  # the operator's requirement/explicit/quote
    (4, "witnesses", "first_copy", "TEXT"),  # one copy per witness (dedup.group), decided as stored
    (5, "runs", "same_as", "TEXT"),  # a copy of this earlier run, not a run (oracle.taken_run)
    (5, "validations", "reference_of", "TEXT DEFAULT ''"),  # whose reference run answered it
    (6, "runs", "grader", "TEXT"),  # a test.sh run's reported ids and inputs (records_runs.GraderReport)
)
