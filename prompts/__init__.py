"""Prompt templates, one per role, shipped as package data.

A template is Markdown with `{{field}}` placeholders the agents fill in. The line
`=== user ===` splits it: above is the system message (how to work), below is the first
user message (this task's material). Fields marked as trial data are fenced by the caller.
"""
from __future__ import annotations

import re
from importlib import resources

from testjack_tui.errors import InputError

ROLES = ("audit", "reviewer", "task_analysis", "independent_reference", "explainer")
SPLIT = "=== user ==="
_FIELD = re.compile(r"\{\{\s*([a-z_]+)\s*\}\}")


def template_text(role: str) -> str:
    if role not in ROLES:
        raise InputError("prompts", role, f"no template for this role (roles: {', '.join(ROLES)})")
    return resources.files(__name__).joinpath(f"{role}.md").read_text(encoding="utf-8")


def fields_of(role: str) -> set[str]:
    return set(_FIELD.findall(template_text(role)))


def render(role: str, **values: object) -> tuple[str, str]:
    """(system message, first user message) with every placeholder filled."""
    text = template_text(role)
    missing = fields_of(role) - values.keys()
    if missing:
        raise InputError(f"prompts/{role}.md", ", ".join(sorted(missing)), "no value given for these fields")
    # One pass, so a value that happens to contain "{{x}}" is never expanded again.
    filled = _FIELD.sub(lambda m: str(values[m.group(1)]), text)
    system, _, user = filled.partition(SPLIT)
    return system.strip() + "\n", user.strip() + "\n"
