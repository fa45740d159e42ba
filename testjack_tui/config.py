"""The user's configuration: LLM endpoint profiles, the model each role uses, and prices.

Lives at `paths.config_dir()/config.toml`. Read and written with tomlkit so comments the
user wrote survive when the app saves the file. With no file, one profile named "default"
is built from OPENAI_API_KEY / OPENAI_BASE_URL / TESTJACK_MODEL.

    [profiles.default]
    base_url = "https://api.openai.com/v1"
    api_key_env = "OPENAI_API_KEY"      # the key is read from this variable, never stored
    model = "gpt-4.1"
    max_tokens = 4096
    temperature = 0.0
    timeout = 120                       # seconds without a byte of reply before a retry
    concurrency = 4

    [roles]
    audit = "default"
    reviewer = "default"
    task_analysis = "default"

    [pricing."gpt-4.1"]
    input_per_mtok = 2.0
    output_per_mtok = 8.0

    [sandbox]
    backend = "ray"            # where worlds and test runs go: "local" (default) or "ray"
    ray_address = "auto"       # the Ray cluster (ray://HOST:10001, HOST:6379, auto)
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from testjack_tui import paths
from testjack_tui.errors import InputError
from testjack_tui.numbers import number

if TYPE_CHECKING:
    import tomlkit  # ~40 ms of start-up: imported where a config file is read or written

ROLES = ("audit", "reviewer", "task_analysis")
DEFAULT_BASE_URL = "https://api.openai.com/v1"
DEFAULT_MODEL = "gpt-4.1"


@dataclass
class Profile:
    """One OpenAI-compatible endpoint and the model to ask for there."""

    name: str
    base_url: str = DEFAULT_BASE_URL
    api_key_env: str = "OPENAI_API_KEY"
    model: str = DEFAULT_MODEL
    max_tokens: int = 4096
    temperature: float = 0.0
    timeout: float = 120.0
    max_retries: int = 4
    retry_backoff: float = 1.0  # seconds before the first retry; doubles each time
    concurrency: int = 4  # requests in flight at once on this profile, all roles together
    # How a role hands in its result: "json_schema" (response_format with the result's JSON
    # schema), "tool" (a submit tool call), or "auto" (json_schema, falling back to the tool
    # when the endpoint rejects response_format).
    structured_output: str = "auto"

    def api_key(self) -> str:
        # Local servers (vLLM, Ollama, llama.cpp) accept any key; the client insists on one.
        return os.environ.get(self.api_key_env, "") or "not-needed"

    @property
    def label(self) -> str:
        return f"{self.model} @ {self.name}"


@dataclass(frozen=True)
class Price:
    input_per_mtok: float
    output_per_mtok: float

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        return (prompt_tokens * self.input_per_mtok + completion_tokens * self.output_per_mtok) / 1e6


@dataclass
class Config:
    profiles: dict[str, Profile] = field(default_factory=dict)
    roles: dict[str, str] = field(default_factory=dict)  # role -> profile name
    pricing: dict[str, Price] = field(default_factory=dict)  # model -> price
    backend: str = "local"  # [sandbox] backend: the default for new sessions
    ray_address: str | None = None  # [sandbox] ray_address
    path: Path | None = None
    document: tomlkit.TOMLDocument | None = None  # the parsed file, kept to preserve comments

    def profile(self, name: str) -> Profile:
        if name not in self.profiles:
            known = ", ".join(sorted(self.profiles)) or "none"
            raise InputError(self.path or config_path(), f"profiles.{name}",
                             f"no such profile (known: {known})")
        return self.profiles[name]

    def profile_for_role(self, role: str) -> Profile:
        return self.profile(self.roles.get(role) or "default")

    def price(self, model: str) -> Price | None:
        return self.pricing.get(model)


def config_path() -> Path:
    return paths.config_dir() / "config.toml"


def _env_profile() -> Profile:
    return Profile(
        name="default",
        base_url=os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL,
        model=os.environ.get("TESTJACK_MODEL") or DEFAULT_MODEL,
    )


# setting -> (type, range kind in testjack_tui/numbers.py)
_NUMBER_FIELDS = {"max_tokens": (int, "tokens"), "temperature": (float, "temperature"),
                  "timeout": (float, "llm_timeout"), "max_retries": (int, "retries"),
                  "retry_backoff": (float, "backoff"), "concurrency": (int, "concurrency")}
_TEXT_FIELDS = ("base_url", "api_key_env", "model", "structured_output")
STRUCTURED_OUTPUT = ("auto", "json_schema", "tool")


def _parse_profile(path: Path, name: str, table: Any) -> Profile:
    base = _env_profile() if name == "default" else Profile(name=name)
    values: dict[str, Any] = {"name": name}
    for key, raw in dict(table).items():
        where = f"profiles.{name}.{key}"
        if key in _TEXT_FIELDS:
            if not isinstance(raw, str) or not raw:
                raise InputError(path, where, "must be a non-empty string")
            if key == "structured_output" and raw not in STRUCTURED_OUTPUT:
                raise InputError(path, where, f"must be one of {', '.join(STRUCTURED_OUTPUT)}")
            values[key] = str(raw)
        elif key in _NUMBER_FIELDS:
            kind, limits = _NUMBER_FIELDS[key]
            value = number(raw, path, where, limits)
            if kind is int and int(value) != value:
                raise InputError(path, where, "must be a whole number")
            values[key] = kind(value)
        else:
            raise InputError(path, where, "unknown setting")
    merged = {f.name: getattr(base, f.name) for f in fields(Profile)}
    merged.update(values)
    return Profile(**merged)


def load_config(path: Path | None = None) -> Config:
    """Read the config file (or build defaults when it does not exist)."""
    path = path or config_path()
    config = Config(path=path)
    if path.exists():
        import tomlkit
        from tomlkit.exceptions import TOMLKitError

        try:
            document = tomlkit.parse(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError) as exc:
            raise InputError(path, None, f"cannot read: {exc}") from None
        except (TOMLKitError, ValueError, RecursionError) as exc:
            raise InputError(path, None, f"not valid TOML: {exc}") from None
        config.document = document
        profiles = document.get("profiles", {})
        if not hasattr(profiles, "items"):
            raise InputError(path, "profiles", "must be a table")
        for name, table in profiles.items():
            if not hasattr(table, "items"):
                raise InputError(path, f"profiles.{name}", "must be a table")
            config.profiles[str(name)] = _parse_profile(path, str(name), table)
        roles = document.get("roles", {})
        for role, profile in dict(roles).items():
            if role not in ROLES:
                raise InputError(path, f"roles.{role}", f"unknown role (roles: {', '.join(ROLES)})")
            if not isinstance(profile, str):
                raise InputError(path, f"roles.{role}", "must be a profile name")
            config.roles[role] = str(profile)
        for model, table in dict(document.get("pricing", {})).items():
            where = f'pricing."{model}"'
            try:
                config.pricing[str(model)] = Price(
                    number(table["input_per_mtok"], path, f"{where}.input_per_mtok", "price"),
                    number(table["output_per_mtok"], path, f"{where}.output_per_mtok", "price"))
            except (KeyError, TypeError):
                raise InputError(path, f'pricing."{model}"',
                                 "needs numbers input_per_mtok and output_per_mtok") from None
        _parse_sandbox(path, document.get("sandbox", {}), config)
    if "default" not in config.profiles:
        config.profiles["default"] = _env_profile()
    for role, profile in config.roles.items():
        if profile not in config.profiles:
            raise InputError(path, f"roles.{role}", f"names profile {profile!r}, which is not defined")
    return config


def _parse_sandbox(path: Path, table: Any, config: Config) -> None:
    from testjack_tui.sandbox.backend import BACKENDS

    if not hasattr(table, "items"):
        raise InputError(path, "sandbox", "must be a table")
    for key, value in dict(table).items():
        if key == "backend":
            if value not in BACKENDS:
                raise InputError(path, "sandbox.backend", f"must be one of {', '.join(BACKENDS)}, got {value!r}")
            config.backend = str(value)
        elif key == "ray_address":
            if not isinstance(value, str) or not value.strip():
                raise InputError(path, "sandbox.ray_address", "must be a non-empty string")
            config.ray_address = str(value)
        else:
            raise InputError(path, f"sandbox.{key}", "unknown key (keys: backend, ray_address)")


def _profile_table(profile: Profile, table: Any = None) -> Any:
    import tomlkit

    table = table if table is not None else tomlkit.table()
    defaults = Profile(name=profile.name)
    for f in fields(Profile):
        if f.name == "name":
            continue
        value = getattr(profile, f.name)
        # Keep the file short: write what differs from the defaults, or what was there already.
        if f.name in table or value != getattr(defaults, f.name) or f.name in ("base_url", "model"):
            table[f.name] = value
    return table


def save_config(config: Config, path: Path | None = None) -> Path:
    """Write the config, updating the parsed document in place so comments are kept."""
    import tomlkit

    path = path or config.path or config_path()
    document = config.document if config.document is not None else tomlkit.document()
    if "profiles" not in document:
        document["profiles"] = tomlkit.table(is_super_table=True)
    profiles = document["profiles"]
    for name in list(profiles.keys()):
        if name not in config.profiles:
            del profiles[name]
    for name, profile in config.profiles.items():
        if name in profiles:
            _profile_table(profile, profiles[name])
        else:
            profiles[name] = _profile_table(profile)
    if config.roles:
        if "roles" not in document:
            document["roles"] = tomlkit.table()
        for role, name in config.roles.items():
            document["roles"][role] = name
    if config.pricing:
        if "pricing" not in document:
            document["pricing"] = tomlkit.table(is_super_table=True)
        for model, price in config.pricing.items():
            entry = document["pricing"].get(model)
            if entry is None:
                entry = tomlkit.table()
                document["pricing"][model] = entry
            entry["input_per_mtok"] = price.input_per_mtok
            entry["output_per_mtok"] = price.output_per_mtok
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(tomlkit.dumps(document))
    config.document = document
    config.path = path
    return path
