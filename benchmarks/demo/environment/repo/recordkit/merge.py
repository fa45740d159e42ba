"""Merging of nested configuration dictionaries.

Configuration is layered: defaults first, then site files, then user overrides. Nested mappings
are merged key by key; every other value in a later layer replaces the earlier one.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def deep_merge(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    """Return a new dict with ``override`` merged into ``base``.

    Keys present in only one input are taken as they are. When both inputs hold a mapping under
    the same key the two mappings are merged recursively; otherwise the value from ``override``
    wins. Neither input is modified.
    """
    result = dict(base)
    for key, value in override.items():
        current = result.get(key)
        if isinstance(current, Mapping) and isinstance(value, Mapping):
            result[key] = deep_merge(current, value)
        else:
            result[key] = value
    return result


def merge_all(*configs: Mapping[str, Any]) -> dict[str, Any]:
    """Merge any number of layers, later layers winning."""
    result: dict[str, Any] = {}
    for config in configs:
        result = deep_merge(result, config)
    return result


def flatten(config: Mapping[str, Any], sep: str = ".") -> dict[str, Any]:
    """Flatten nested mappings into dotted keys: ``{"a": {"b": 1}}`` -> ``{"a.b": 1}``."""
    flat: dict[str, Any] = {}

    def walk(prefix: str, node: Mapping[str, Any]) -> None:
        for key, value in node.items():
            name = f"{prefix}{sep}{key}" if prefix else str(key)
            if isinstance(value, Mapping) and value:
                walk(name, value)
            else:
                flat[name] = value

    walk("", config)
    return flat


def unflatten(flat: Mapping[str, Any], sep: str = ".") -> dict[str, Any]:
    """Inverse of :func:`flatten`. Conflicting keys (``a`` and ``a.b``) raise ``ValueError``."""
    result: dict[str, Any] = {}
    for dotted, value in flat.items():
        parts = dotted.split(sep)
        node = result
        for part in parts[:-1]:
            child = node.setdefault(part, {})
            if not isinstance(child, dict):
                raise ValueError(f"key {dotted!r} conflicts with a value at {part!r}")
            node = child
        if parts[-1] in node and isinstance(node[parts[-1]], dict):
            raise ValueError(f"key {dotted!r} conflicts with a nested section")
        node[parts[-1]] = value
    return result
