"""Language names as tasks spell them, and the test runner we assume when a task does not say."""
from __future__ import annotations

import re

ALIASES = {"py": "python", "js": "javascript", "ts": "typescript", "golang": "go", "rs": "rust"}
FRAMEWORKS = {"python": "pytest", "javascript": "jest", "typescript": "jest", "go": "go test",
              "rust": "cargo test", "java": "junit"}


def normalize_language(value: object, default: str = "python") -> str:
    name = str(value or default).strip().lower() or default
    return ALIASES.get(name, name)


def default_framework(language: str) -> str:
    return FRAMEWORKS.get(language, language)


# DeepSWE names the reporter in config.json's grade.tool_label; it tells the test tool.
TOOL_HINTS = (("vitest", "vitest"), ("jest", "jest"), ("mocha", "mocha"), ("node:test", "node --test"),
              ("node-test", "node --test"), ("node --test", "node --test"), ("nextest", "cargo nextest"),
              ("cargo", "cargo test"), ("go-ctrf", "go test"), ("go test", "go test"), ("pytest", "pytest"))


def framework_of_tool(label: object) -> str | None:
    text = str(label or "").lower()
    return next((framework for hint, framework in TOOL_HINTS if hint in text), None)


# A Python task's own script that runs Django's test runner (Harbor tasks converted from SWE-bench
# run the harness's `./tests/runtests.py --verbosity 2 --settings=... <labels>`): witnesses must
# run the same way, not under pytest.
_DJANGO_RUNTESTS = re.compile(r"(^|[\s/;&|(])(python3?\s+)?(\./)?tests/runtests\.py\b", re.MULTILINE)


def framework_of_script(script: str | None, language: str) -> str | None:
    """The framework a task's own test script shows, when its metadata names none."""
    if language == "python" and script and _DJANGO_RUNTESTS.search(script):
        return "django"
    return None
