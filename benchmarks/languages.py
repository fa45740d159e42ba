"""Language names as tasks spell them, and the test runner we assume when a task does not say."""
from __future__ import annotations

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
