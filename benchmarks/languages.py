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
