"""JSON schemas of what each role submits. Invalid submissions go back to the model."""
from __future__ import annotations

from typing import Any

import jsonschema

VERDICTS = ["SOUND", "SOUND_LOW_QUALITY", "OVERFIT_INCOMPLETE", "INCORRECT_DESPITE_PASS",
            "REWARD_HACK", "NOT_REPRODUCIBLE"]

_CHECKLIST = {
    "type": "array",
    "description": "P split into atomic requirements.",
    "items": {
        "type": "object",
        "required": ["clause", "explicit"],
        "additionalProperties": False,
        "properties": {
            "clause": {"type": "string", "minLength": 1},
            "explicit": {"type": "boolean", "description": "true when P states it in words you can quote"},
            "quote": {"type": "string", "description": "the words of P, when explicit"},
            "covered_by_t0": {"type": ["boolean", "null"]},
            "implemented": {"type": ["boolean", "null"], "description": "does the trial implement it (audit only)"},
        },
    },
}

_CANDIDATES = {
    "type": "array",
    "description": "Test files written with write_test_file, one per candidate.",
    "items": {
        "type": "object",
        "required": ["path", "requirement"],
        "additionalProperties": False,
        "properties": {
            "path": {"type": "string", "minLength": 1, "description": "repo-relative path given to write_test_file"},
            "requirement": {"type": "string", "minLength": 1, "description": "the clause of P the test checks"},
            "test_ids": {"type": "array", "items": {"type": "string"},
                         "description": "node ids to run; omit to run the whole file"},
        },
    },
}

AUDIT_SUBMIT: dict[str, Any] = {
    "type": "object",
    "required": ["notes", "checklist", "candidates"],
    "additionalProperties": False,
    "properties": {
        "notes": {"type": "string"},
        "checklist": _CHECKLIST,
        "candidates": _CANDIDATES,
        "report": {
            "type": "object",
            "additionalProperties": False,
            "required": ["verdict"],
            "properties": {
                "verdict": {"enum": VERDICTS},
                "issues": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "additionalProperties": False,
                        "required": ["what", "clause"],
                        "properties": {
                            "what": {"type": "string"},
                            "why": {"type": "string"},
                            "clause": {"type": "string"},
                            "why_t0_missed": {"type": "string"},
                        },
                    },
                },
            },
        },
    },
}

ANALYSIS_SUBMIT: dict[str, Any] = {
    "type": "object",
    "required": ["notes", "candidates"],
    "additionalProperties": False,
    "properties": {"notes": {"type": "string"}, "checklist": _CHECKLIST, "candidates": _CANDIDATES},
}

REPAIR_SUBMIT: dict[str, Any] = {
    "type": "object",
    "required": ["give_up"],
    "additionalProperties": False,
    "properties": {
        "give_up": {"type": "boolean", "description": "true when the test cannot be fixed honestly"},
        "requirement": {"type": "string"},
        "test_ids": {"type": "array", "items": {"type": "string"}},
        "reason": {"type": "string"},
    },
}

REVIEW_SUBMIT: dict[str, Any] = {
    "type": "object",
    "required": ["label", "requirement", "explicit", "reason"],
    "additionalProperties": False,
    "properties": {
        "label": {"enum": ["valid", "questionable", "invalid"]},
        "requirement": {"type": "string", "description": "the clause of P the test checks"},
        "explicit": {"type": "boolean"},
        "quote": {"type": "string", "description": "the words of P stating the clause, when explicit"},
        "reason": {"type": "string"},
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

SUBMIT_SCHEMAS = {"audit": AUDIT_SUBMIT, "analysis": ANALYSIS_SUBMIT, "repair": REPAIR_SUBMIT,
                  "review": REVIEW_SUBMIT, "reference": REFERENCE_SUBMIT}


def schema_errors(payload: Any, schema: dict) -> list[str]:
    """Every problem with a payload, each naming where it is, for the model to fix."""
    validator = jsonschema.Draft202012Validator(schema)
    problems = []
    for error in sorted(validator.iter_errors(payload), key=lambda e: list(e.absolute_path)):
        where = "/".join(str(p) for p in error.absolute_path) or "(top level)"
        problems.append(f"{where}: {error.message}")
    return problems
