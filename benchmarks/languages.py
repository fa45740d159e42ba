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

# The test tools a task's own script may run, as commands (not as parts of paths, package or
# reporter names: `jest-junit`, `/logs/vitest.json`, `ts-jest` are no invocation).
_BIN = re.compile(r"(?:\.?/)?(?:[\w.-]+/)*node_modules/\.bin/")
_SCRIPT_TOOLS = (
    ("vitest", re.compile(r"(?<![\w@/.-])vitest(?![\w.-])")),
    ("jest", re.compile(r"(?<![\w@/.-])jest(?![\w.-])")),
    ("mocha", re.compile(r"(?<![\w@/.-])mocha(?![\w.-])")),
    ("node --test", re.compile(r"(?<![\w/.-])node(?:\s+-\S+)*\s+--test(?![\w-])")),
    ("go test", re.compile(r"(?<![\w/.-])go\s+test(?![\w-])")),
    ("cargo nextest", re.compile(r"(?<![\w/.-])cargo\s+nextest(?![\w-])")),
    ("cargo test", re.compile(r"(?<![\w/.-])cargo\s+test(?![\w-])")),
    ("pytest", re.compile(r"(?<![\w/.-])pytest(?![\w.-])")),
)


def framework_of_script(script: str | None, language: str) -> str | None:
    """The test tool a task's own test script runs (the first one it invokes, comments left
    out), or None when it runs none we know. What test.sh runs decides before task.toml's
    metadata: DeepSWE tasks declared `jest` run `npx vitest` (issue 29)."""
    if not script:
        return None
    if language == "python" and _DJANGO_RUNTESTS.search(script):
        return "django"
    text = _BIN.sub("", "\n".join(re.sub(r"(^|\s)#.*", "", line) for line in script.splitlines()))
    found = [(m.start(), name) for name, pattern in _SCRIPT_TOOLS for m in [pattern.search(text)] if m]
    return min(found)[1] if found else None


def same_tool(a: str | None, b: str | None) -> bool:
    """Do two framework names mean the same test tool (`ts-jest` and `jest`, `vitest-junit-to-ctrf`
    and `vitest`)?"""
    def tool(name: str | None) -> str:
        text = str(name or "").strip().lower()
        return framework_of_tool(text) or text
    return tool(a) == tool(b)
