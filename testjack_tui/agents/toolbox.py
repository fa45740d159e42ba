"""The tools a role may call, as OpenAI function schemas, and their dispatch onto WorldTools.

What each role may see is decided here, not in the prompt: the task-analysis role and the
reviewer only reach the null world (never G, never a trial); only the audit role sees the
trial's diff and the evidence, and it reaches the reference world only through `run_tests` and
`probe_reference` (a sealed world: no file reads, probes that only call its code, G's code
withheld from their output; see `sealed`). Output is fenced as data and cut into pages of at most
MAX_OUTPUT characters at line ends; the first page says how many there are and `read_more`
returns the others, so nothing is lost in a cut.
"""
from __future__ import annotations

import json
import posixpath
import re
from dataclasses import dataclass, field
from typing import Any, Callable

from testjack_tui.engine.roles import BudgetExceeded, WorldTools

from .schemas import SUBMIT_SCHEMAS, schema_errors
from .sealed import SEALED_WORLDS
from .untrusted import Fence

MAX_OUTPUT = 12_000
MAX_SOURCE = 100_000
MAX_TIMEOUT = 300.0


@dataclass(frozen=True)
class RoleAccess:
    worlds: tuple[str, ...]
    diff: bool = False
    evidence: bool = False
    run: bool = True
    write: bool = True
    sealed: tuple[str, ...] = ()  # worlds where only run_tests is allowed
    probe: bool = False  # may run a probe on the sealed reference world and see its output

    @property
    def readable(self) -> tuple[str, ...]:
        return tuple(w for w in self.worlds if w not in self.sealed)


ACCESS = {
    "audit": RoleAccess(worlds=("null", "reference", "model"), diff=True, evidence=True,
                        sealed=tuple(sorted(SEALED_WORLDS)), probe=True),
    "task_analysis": RoleAccess(worlds=("null",)),
    "reviewer": RoleAccess(worlds=("null",), run=False, write=False),
    # Sees the failure and the trial's diff in its request; reads the repo before any change.
    "explainer": RoleAccess(worlds=("null",), run=False, write=False),
}


@dataclass
class ToolResult:
    text: str
    error: bool = False
    submitted: dict[str, Any] | None = None


Check = Callable[[dict[str, Any], "Toolbox"], list[str]]


@dataclass
class Toolbox:
    role: str
    tools: WorldTools
    fence: Fence
    phase: str  # which submit schema applies: audit | analysis | repair | review
    checks: dict[str, Check] = field(default_factory=dict)  # extra checks per phase
    max_output: int = MAX_OUTPUT
    files: dict[str, str] = field(default_factory=dict)  # candidate files written so far
    written_in_phase: set[str] = field(default_factory=set)
    pages: dict[str, list[str]] = field(default_factory=dict)  # long outputs, for read_more
    # Files every test run gets besides the agent's own (confirmed witnesses it may re-run).
    support_files: dict[str, str] = field(default_factory=dict)

    @property
    def access(self) -> RoleAccess:
        return ACCESS[self.role]

    def set_phase(self, phase: str) -> None:
        self.phase = phase
        self.written_in_phase = set()

    # ----- schemas -------------------------------------------------------------------------
    def submit_schema(self) -> dict[str, Any]:
        return SUBMIT_SCHEMAS[self.phase]

    def schemas(self) -> list[dict[str, Any]]:
        def world_arg(worlds: tuple[str, ...]) -> dict[str, Any]:
            names = {"null": "null = repo before any change",
                     "reference": "reference = with the reference solution (tests only; its code is withheld)",
                     "model": "model = with the trial's patch"}
            return {"type": "string", "enum": list(worlds),
                    "description": ", ".join(names.get(w, w) for w in worlds)}
        world = world_arg(self.access.readable)
        test_world = world_arg(self.access.worlds)
        specs: list[tuple[str, str, dict[str, Any], list[str] | None]] = []  # required None: props are the schema
        if self.access.run:
            specs.append(("run", "Run a shell command (sh) in a container of the world (cwd = repo root, no network; "
                          "state persists within this session; `python` runs python3; the repo root and its src/ "
                          "are on PYTHONPATH, so its package imports from any directory).",
                          {"world": world, "command": {"type": "string"},
                           "timeout": {"type": "number", "description": "seconds, at most 300"}},
                          ["world", "command"]))
        specs.append(("read_file", "Read a file of the repo in a world.",
                      {"world": world, "path": {"type": "string"}}, ["world", "path"]))
        specs.append(("list_files", "List files under a directory of the repo in a world.",
                      {"world": world, "path": {"type": "string"}}, ["world"]))
        if self.access.run:
            specs.append(("run_tests", "Run tests by id in a world, with your candidate files in place (a file "
                          "path, a node id, or a T0 id as the official tests list it); returns one "
                          "outcome per test, under the id you gave.",
                          {"world": test_world,
                           "test_ids": {"type": "array", "items": {"type": "string"}, "minItems": 1}},
                          ["world", "test_ids"]))
        if self.access.probe and "reference" in self.access.sealed:
            specs.append(("probe_reference", "Run a short command in the reference world and see its output, to "
                          "learn what the reference does on an input (e.g. `python -c` calling its API). It "
                          "calls the reference's code; it may not read it: lines of that code are withheld "
                          "from the output and commands that read its files are refused. Counts as a run.",
                          {"command": {"type": "string"},
                           "timeout": {"type": "number", "description": "seconds, at most 300"}},
                          ["command"]))
        specs.append(("read_more", "Another page of a long tool output (its first page names the ref).",
                      {"ref": {"type": "string"}, "page": {"type": "integer", "minimum": 1}},
                      ["ref", "page"]))
        specs.append(("view_official_tests", "Show the official tests T0: the test patch and the test ids it grades.",
                      {}, []))
        if self.access.diff:
            specs.append(("view_diff", "Show the trial's patch (untrusted data).", {}, []))
        if self.access.evidence:
            specs.append(("view_evidence", "Show the deterministic evidence collected by the engine.", {}, []))
        if self.access.write:
            specs.append(("write_test_file", "Create or replace a candidate test file (repo-relative path).",
                          {"path": {"type": "string"}, "source": {"type": "string"}}, ["path", "source"]))
        specs.append(("submit", "Hand in your result; it is checked against a schema and returned to you if invalid.",
                      SUBMIT_SCHEMAS[self.phase], None))
        out = []
        for name, description, props, required in specs:
            params = props if required is None else {
                "type": "object", "properties": props, "required": required, "additionalProperties": False}
            out.append({"type": "function", "function": {"name": name, "description": description,
                                                          "parameters": params}})
        return out

    # ----- dispatch ------------------------------------------------------------------------
    async def call(self, name: str, arguments: str) -> ToolResult:
        try:
            args = json.loads(arguments) if arguments.strip() else {}
        except json.JSONDecodeError as exc:
            return ToolResult(f"error: the arguments of {name!r} are not valid JSON ({exc.msg} at "
                              f"position {exc.pos}); call the tool again with a JSON object.", error=True)
        if not isinstance(args, dict):
            return ToolResult(f"error: the arguments of {name!r} must be a JSON object.", error=True)
        handler = getattr(self, f"_tool_{name}", None)
        if handler is None or name not in {s["function"]["name"] for s in self.schemas()}:
            known = ", ".join(s["function"]["name"] for s in self.schemas())
            return ToolResult(f"error: no tool named {name!r} here (tools: {known}).", error=True)
        try:
            result: ToolResult = await handler(**args)  # a _tool_* method, found by name
            return result
        except BudgetExceeded:
            raise  # the session pauses; resuming continues within a raised limit
        except TypeError as exc:
            return ToolResult(f"error: bad arguments for {name!r}: {exc}", error=True)
        except Exception as exc:  # a tool failure is information for the model, not a crash
            return ToolResult(f"error: {name} failed: {type(exc).__name__}: {exc}", error=True)

    def _world(self, world: object, tests: bool = False) -> str | None:
        return world if isinstance(world, str) and world in (self.access.worlds if tests else self.access.readable) \
            else None

    def _deny_world(self, world: object, tests: bool = False) -> ToolResult:
        if not tests and world in self.access.sealed:
            return ToolResult(f"error: the {world} world holds the reference solution; this role may only "
                              f"run tests there (run_tests), never read it or run commands in it "
                              f"(available here: {', '.join(self.access.readable)}).", error=True)
        return ToolResult(f"error: world {world!r} is not available to this role "
                          f"(available: {', '.join(self.access.worlds if tests else self.access.readable)}).",
                          error=True)

    def _data(self, text: str, source: str) -> ToolResult:
        pages = paginate(text, self.max_output)
        if len(pages) == 1:
            return ToolResult(self.fence.wrap(text, source))
        ref = f"out{len(self.pages) + 1}"
        self.pages[ref] = pages
        while len(self.pages) > KEPT_OUTPUTS:
            self.pages.pop(next(iter(self.pages)))
        return ToolResult(self.fence.wrap(pages[0], source) + "\n" + _page_note(ref, 1, len(pages)))

    async def _tool_read_more(self, ref: str, page: int) -> ToolResult:
        pages = self.pages.get(ref)
        if pages is None:
            known = ", ".join(self.pages) or "none"
            return ToolResult(f"error: no long output named {ref!r} is kept (kept: {known}).", error=True)
        if not isinstance(page, int) or not 1 <= page <= len(pages):
            return ToolResult(f"error: {ref} has pages 1 to {len(pages)}.", error=True)
        return ToolResult(self.fence.wrap(pages[page - 1], f"{ref} page {page}") + "\n"
                          + _page_note(ref, page, len(pages)))

    async def _tool_run(self, world: str, command: str, timeout: float = 60) -> ToolResult:
        if not self._world(world):
            return self._deny_world(world)
        timeout = max(1.0, min(float(timeout), MAX_TIMEOUT))
        # The command is echoed inside the fence exactly as it ran (a label is one sanitised line).
        output = await self.tools.run(world, command, timeout)
        return self._data(f"$ {command}\n{output}", f"{world} world: a command and its output")

    async def _tool_probe_reference(self, command: str, timeout: float = 60) -> ToolResult:
        probe = getattr(self.tools, "probe", None)
        if probe is None:
            return ToolResult("error: probes on the reference are not available in this session.", error=True)
        timeout = max(1.0, min(float(timeout), MAX_TIMEOUT))
        output = await probe("reference", command, timeout, "\n".join({**self.support_files, **self.files}.values()))
        return self._data(f"$ {command}\n{output}", "reference world: a probe and its output")

    async def _tool_read_file(self, world: str, path: str) -> ToolResult:
        if not self._world(world):
            return self._deny_world(world)
        return self._data(await self.tools.read_file(world, path), f"{world} world: {path}")

    async def _tool_list_files(self, world: str, path: str = ".") -> ToolResult:
        if not self._world(world):
            return self._deny_world(world)
        return self._data(await self.tools.list_files(world, path), f"{world} world: ls {path}")

    async def _tool_run_tests(self, world: str, test_ids: list[str]) -> ToolResult:
        if not self._world(world, tests=True):
            return self._deny_world(world, tests=True)
        if not test_ids or not all(isinstance(t, str) and t for t in test_ids):
            return ToolResult("error: test_ids must be a non-empty list of node ids.", error=True)
        files = {**self.support_files, **self.files}
        result = await self.tools.run_tests(world, list(test_ids), files or None)
        return self._data(result, f"{world} world: tests")

    async def _tool_view_official_tests(self) -> ToolResult:
        return self._data(self.tools.official_tests(), "official tests T0")

    async def _tool_view_diff(self) -> ToolResult:
        return self._data(self.tools.diff(), "trial patch")

    async def _tool_view_evidence(self) -> ToolResult:
        return self._data(self.tools.evidence(), "engine evidence")

    async def _tool_write_test_file(self, path: str, source: str) -> ToolResult:
        problem = check_test_path(path)
        if problem:
            return ToolResult(f"error: {problem}", error=True)
        if not isinstance(source, str) or not source.strip():
            return ToolResult("error: source is empty.", error=True)
        if len(source) > MAX_SOURCE:
            return ToolResult(f"error: source is longer than {MAX_SOURCE} characters.", error=True)
        path = posixpath.normpath(path)
        self.files[path] = source
        self.written_in_phase.add(path)
        writer = getattr(self.tools, "write_candidate", None)
        if writer is not None:
            await writer(path, source)
        return ToolResult(f"wrote {path} ({len(source.splitlines())} lines).")

    async def _tool_submit(self, **payload: Any) -> ToolResult:
        problems = schema_errors(payload, SUBMIT_SCHEMAS[self.phase])
        if not problems and self.phase in self.checks:
            problems = self.checks[self.phase](payload, self)
        if problems:
            listed = "\n".join(f"- {p}" for p in problems[:20])
            return ToolResult(f"error: submission rejected, fix these and call submit again:\n{listed}", error=True)
        return ToolResult("submission accepted.", submitted=payload)


KEPT_OUTPUTS = 20


def _page_note(ref: str, page: int, total: int) -> str:
    if page < total:
        return (f"[page {page} of {total} of output {ref}; call read_more with ref {ref!r} and "
                f"page {page + 1} for more]")
    return f"[page {page} of {total} of output {ref}: the end]"


def paginate(text: str, limit: int) -> list[str]:
    """Pages of at most `limit` characters, cut at line ends (an overlong line is split)."""
    if len(text) <= limit:
        return [text]
    pages, current = [], ""
    for line in text.splitlines(keepends=True):
        while len(line) > limit:
            if current:
                pages.append(current)
                current = ""
            pages.append(line[:limit])
            line = line[limit:]
        if len(current) + len(line) > limit:
            pages.append(current)
            current = ""
        current += line
    if current:
        pages.append(current)
    return [p.rstrip("\n") for p in pages]


def check_test_path(path: object) -> str | None:
    if not isinstance(path, str) or not path.strip():
        return "path is empty"
    if path.startswith("/") or re.match(r"^[A-Za-z]:", path):
        return f"path {path!r} must be relative to the repo root"
    norm = posixpath.normpath(path)
    if norm.startswith("..") or norm == ".":
        return f"path {path!r} leaves the repo"
    return None


def candidates_written(payload: dict[str, Any], box: Toolbox) -> list[str]:
    """Every submitted candidate must name a file written in this session, once."""
    problems = []
    seen: set[str] = set()
    for i, item in enumerate(payload.get("candidates", [])):
        path = posixpath.normpath(item["path"])
        if path not in box.files:
            problems.append(f"candidates/{i}/path: {item['path']!r} was not written with write_test_file")
        if path in seen:
            problems.append(f"candidates/{i}/path: {item['path']!r} is listed twice; use one file per candidate")
        seen.add(path)
    return problems
