"""JSON schemas of what each role submits. Invalid submissions go back to the model."""
from __future__ import annotations

import json
from typing import Any

# Limits on rows and characters keep every result within one reply of the usual max_tokens
# (4096) with room to spare: `worst_case_chars` adds them up and a test holds the line. A model
# cut off mid-JSON loses the whole result (agents/runtime.py then asks again, shorter).
SHORT, LINE, QUOTE, ID = 80, 160, 200, 100


def text(limit: int, description: str | None = None, min_length: int = 0) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "string", "maxLength": limit}
    if min_length:
        out["minLength"] = min_length
    if description:
        out["description"] = description
    return out


def ids(limit: int, description: str) -> dict[str, Any]:
    return {"type": "array", "maxItems": limit, "items": text(ID), "description": description}


VERDICTS = ["SOUND", "SOUND_LOW_QUALITY", "OVERFIT_INCOMPLETE", "INCORRECT_DESPITE_PASS",
            "REWARD_HACK", "NOT_REPRODUCIBLE"]

_CHECKLIST = {
    "type": "array", "maxItems": 8,
    "description": "P split into atomic requirements (at most 8: merge the minor ones).",
    "items": {
        "type": "object",
        "required": ["clause", "explicit"],
        "additionalProperties": False,
        "properties": {
            "clause": text(LINE, min_length=1),
            "explicit": {"type": "boolean", "description": "true when P states it in words you can quote"},
            "quote": text(QUOTE, "the words of P, when explicit (the shortest span that says it)"),
            "covered_by_t0": {"type": ["boolean", "null"]},
            "implemented": {"type": ["boolean", "null"], "description": "does the trial implement it (audit only)"},
        },
    },
}

_CANDIDATES = {
    "type": "array", "maxItems": 5,
    "description": "Test files written with write_test_file, one per candidate (at most 5).",
    "items": {
        "type": "object",
        "required": ["path", "requirement"],
        "additionalProperties": False,
        "properties": {
            "path": text(ID, "repo-relative path given to write_test_file", 1),
            "requirement": text(QUOTE, "the clause of P the test checks", 1),
            "test_ids": ids(2, "node ids to run; omit to run the whole file"),
        },
    },
}

T0_MISSED = ["ghost_branch", "vacuous_test", "literal", "untested_input_class", "other"]

_FINDINGS = {
    "type": "array", "maxItems": 3,
    "description": "One entry per problem found, each backed by one of your candidate tests (at most 3).",
    "items": {
        "type": "object",
        "required": ["what", "why", "clause", "witness", "failing_assertion", "t0_missed"],
        "additionalProperties": False,
        "properties": {
            "what": text(LINE, "what the trial gets wrong", 1),
            "why": text(LINE, "why that violates P", 1),
            "clause": text(QUOTE, "the words of P it violates, quoted", 1),
            "witness": text(ID, "path of the candidate test showing it", 1),
            "failing_assertion": text(QUOTE, "the assertion that fails on the trial, and its message", 1),
            "t0_missed": {"enum": T0_MISSED, "description": "why T0 did not catch it"},
            "t0_missed_detail": text(LINE, "the ghost lines, vacuous test, literal or input class"),
        },
    },
}

_PROMPT_SILENT = {
    "type": "array", "maxItems": 2,
    "description": "Points P does not settle that matter for this trial (an open question about P, "
                   "not a defect of the trial): each with or without a test of yours showing where "
                   "the reference and the trial differ.",
    "items": {
        "type": "object",
        "required": ["on", "why"],
        "additionalProperties": False,
        "properties": {
            "on": text(LINE, "what P is silent on, as a requirement", 1),
            "why": text(QUOTE, "why P does not settle it (what it says nearby)", 1),
            "reference": text(LINE, "what the reference does on this point"),
            "witness": text(ID, "path of your candidate test probing it, if any"),
            "clarification": text(QUOTE, "one sentence P could add to settle it"),
        },
    },
}

# "The reference contradicts P here": the reference's own behaviour breaks words of P. Not a
# defect of a trial, and not a reason to bend a test: the task is not well-formed on that point.
_CONTRADICTION = {
    "type": "object",
    "required": ["quote", "claim", "output"],
    "additionalProperties": False,
    "properties": {
        "quote": text(QUOTE, "the words of P the reference breaks, quoted", 1),
        "claim": text(LINE, "what the reference does instead", 1),
        "output": text(QUOTE, "the lines of a run on the reference that show it (as they ran)", 1),
    },
}

AUDIT_SUBMIT: dict[str, Any] = {
    "type": "object",
    "required": ["notes", "checklist", "candidates", "nothing_found", "findings"],
    "additionalProperties": False,
    "properties": {
        "notes": text(500),
        "checklist": _CHECKLIST,
        "candidates": _CANDIDATES,
        "nothing_found": {"type": "boolean",
                          "description": "true when you found no requirement of P that the trial breaks"},
        "findings": _FINDINGS,
        "prompt_silent": _PROMPT_SILENT,
        "reference_contradicts": {"type": "array", "maxItems": 1, "items": _CONTRADICTION,
                                  "description": "where the reference itself breaks P (not a trial's defect)"},
        "verdict": {"enum": VERDICTS, "description": "your opinion only; the engine decides from executed tests"},
    },
}

COVERAGE = ["full", "partial", "none"]

_TRACEABILITY = {
    "type": "array", "maxItems": 8,
    "description": "Requirement <-> T0 matrix: every requirement of P (at most 8 rows: merge the minor "
                   "ones) and the T0 tests that check it.",
    "items": {
        "type": "object",
        "required": ["requirement", "explicit", "t0_tests", "coverage"],
        "additionalProperties": False,
        "properties": {
            "requirement": text(LINE, min_length=1),
            "explicit": {"type": "boolean"},
            "quote": text(LINE, "the words of P, when explicit (the shortest span that says it)"),
            "t0_tests": ids(3, "up to 3 T0 test ids with an assertion that fails without it (the most direct)"),
            "coverage": {"enum": COVERAGE},
            "note": text(SHORT),
        },
    },
}

_FEATURES = {
    "type": "array", "maxItems": 4,
    "description": "Patterns in a trial's patch that should make an auditor look closer (at most 4).",
    "items": {
        "type": "object",
        "required": ["id", "requirement", "pattern", "why_suspicious", "false_positives"],
        "additionalProperties": False,
        "properties": {
            "id": text(40, min_length=1),
            "requirement": text(LINE, min_length=1),
            "pattern": text(SHORT + 40, "what to look for in a diff (a literal, a regular expression or a "
                                        "description)", 1),
            "why_suspicious": text(SHORT + 40, min_length=1),
            "false_positives": text(SHORT + 40, "when the pattern is innocent"),
        },
    },
}

ANALYSIS_SUBMIT: dict[str, Any] = {
    "type": "object",
    "required": ["notes", "candidates", "traceability", "suspicious_features"],
    "additionalProperties": False,
    # No checklist here: the traceability matrix is the analysis's checklist.
    "properties": {"notes": text(500), "candidates": _CANDIDATES,
                   "traceability": _TRACEABILITY, "suspicious_features": _FEATURES},
}

REPAIR_SUBMIT: dict[str, Any] = {
    "type": "object",
    "required": ["give_up"],
    "additionalProperties": False,
    "properties": {
        "give_up": {"type": "boolean", "description": "true when the test cannot be fixed honestly"},
        "reference_contradicts": {**_CONTRADICTION, "description": "with give_up: the test is right and "
                                  "the reference breaks P here"},
        "requirement": text(QUOTE),
        "test_ids": ids(3, "node ids to run; omit to run the whole file"),
        "reason": text(500),
    },
}

CASE_LABELS = ["VALID", "QUESTIONABLE", "INVALID"]
OVERALL = ["KEEP_ALL", "KEEP_SOME", "DROP_ALL", "HUMAN_REVIEW"]

REVIEW_SUBMIT: dict[str, Any] = {
    "type": "object",
    "required": ["label", "requirement", "explicit", "reason", "overall", "cases"],
    "additionalProperties": False,
    "properties": {
        "label": {"enum": ["valid", "questionable", "invalid"],
                  "description": "the candidate as a whole (what you keep of it, if KEEP_SOME)"},
        "requirement": text(QUOTE, "the clause of P the test checks"),
        "explicit": {"type": "boolean"},
        "quote": text(QUOTE, "the words of P stating the clause, when explicit"),
        "reason": text(500),
        "overall": {"enum": OVERALL},
        "cases": {
            "type": "array", "maxItems": 20,
            "description": "One verdict per test case of the candidate (parametrised cases one by one; at most 20).",
            "items": {
                "type": "object",
                "required": ["test_id", "label", "scope", "overfitting", "reason"],
                "additionalProperties": False,
                "properties": {
                    "test_id": text(ID, min_length=1),
                    "label": {"enum": CASE_LABELS},
                    "scope": {"enum": ["in_scope", "out_of_scope"],
                              "description": "does P ask for what this case checks"},
                    "overfitting": {"enum": ["none", "to_reference", "to_patch"],
                                    "description": "does it pin an incidental choice of one implementation"},
                    "requirement": text(SHORT),
                    "reason": text(SHORT + 20),
                },
            },
        },
        "coverage": {
            "type": "array", "maxItems": 4,
            "description": "Requirement <-> coverage matrix: which cases check which requirement of P.",
            "items": {
                "type": "object",
                "required": ["requirement", "test_ids"],
                "additionalProperties": False,
                "properties": {"requirement": text(SHORT), "test_ids": ids(4, "the cases checking it")},
            },
        },
    },
}

REFERENCE_SUBMIT: dict[str, Any] = {
    "type": "object",
    "required": ["files", "notes"],
    "additionalProperties": False,
    "properties": {
        "files": {
            "type": "array", "minItems": 1,
            "description": "Every source file your implementation adds or changes, whole.",
            "items": {"type": "object", "required": ["path", "content"], "additionalProperties": False,
                      "properties": {"path": {"type": "string", "minLength": 1,
                                              "description": "repo-relative path"},
                                     "content": {"type": "string", "description": "the whole new file"}}},
        },
        "notes": {"type": "string", "description": "how you read P where it leaves room"},
    },
}

def worst_case_chars(schema: dict[str, Any]) -> int | None:
    """The longest JSON a payload valid under `schema` can be (None: unbounded)."""
    if "enum" in schema:
        return max(len(json.dumps(v)) for v in schema["enum"])
    kind = schema.get("type")
    kinds = kind if isinstance(kind, list) else [kind]
    if "object" in kinds:
        total = 2
        for key, sub in schema.get("properties", {}).items():
            size = worst_case_chars(sub)
            if size is None:
                return None
            total += len(key) + 6 + size  # "key": value, 
        return total
    if "array" in kinds:
        item = worst_case_chars(schema.get("items", {}))
        if item is None or "maxItems" not in schema:
            return None
        max_items: int = schema["maxItems"]
        return 2 + max_items * (item + 2)
    if "string" in kinds:
        return schema["maxLength"] + 2 if "maxLength" in schema else None
    return 8  # booleans, numbers, null


EXPLAIN_SUBMIT: dict[str, Any] = {
    "type": "object",
    "required": ["why"],
    "additionalProperties": False,
    "properties": {
        "why": text(700, "one paragraph: why these trials fail the witness, in terms of P and the trial's code",
                    1),
    },
}

SUBMIT_SCHEMAS = {"audit": AUDIT_SUBMIT, "analysis": ANALYSIS_SUBMIT, "repair": REPAIR_SUBMIT,
                  "review": REVIEW_SUBMIT, "reference": REFERENCE_SUBMIT, "explain": EXPLAIN_SUBMIT}


def schema_errors(payload: Any, schema: dict[str, Any]) -> list[str]:
    """Every problem with a payload, each naming where it is, for the model to fix."""
    import jsonschema  # ~70 ms of start-up for every CLI process: only a model's reply needs it

    validator = jsonschema.Draft202012Validator(schema)
    problems = []
    for error in sorted(validator.iter_errors(payload), key=lambda e: list(e.absolute_path)):
        where = "/".join(str(p) for p in error.absolute_path) or "(top level)"
        problems.append(f"{where}: {error.message}")
    return problems
