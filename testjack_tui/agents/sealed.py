"""The reference solution G stays out of an agent's sight.

An audit needs the reference world to check that a candidate passes on G, so an agent may run
tests there; it may not read, list or run commands in it (`toolbox.RoleAccess.sealed` keeps
those tools away, `SandboxTools` refuses them again below the toolbox). What a test run on G
prints goes back with every line of G's own code withheld — its added lines and its solve
script — so neither a traceback through G nor a test that makes G's source its failure message
shows G; the same goes for the reference run's output a repair is shown (`LLMAuditAgent.repair`).
Repairs still see what G *does*: outcomes, assertion lines and the values compared. A probe
(`probe_reference`) shows what G prints for a command that calls it; one that names a file G
changes or runs a file reader is refused (`probe_refusal`), and its output is withheld like a
test run's.

The worlds an agent may read (null, model) lose their git history beyond HEAD when an agent
opens them: an environment image cloned with later commits (where the upstream fix lives)
would otherwise hand the fix over through `git log --all`; and a model world's copies of G's
harness files (kept for the engine's witness runs) are removed. Only the agent's own container
changes; snapshots and every run the engine counts keep what the evaluator sees.
"""
from __future__ import annotations

import re

from testjack_tui.diffs import parse_diff
from testjack_tui.model import Task

SEALED_WORLDS = frozenset({"reference"})
WITHHELD = "[reference code withheld]"
_MARGIN = re.compile(r"\s*(?:[E>]\s+)?")  # pytest's own margin (`E   `, `>   `) stays
MIN_SECRET = 8  # shorter lines (`pass`, `return x`) are everyone's code, not G's

# Run in an agent's own container of a world it may read. The snapshot keeps G's versions of
# the harness files a trial changed (for the engine's witness runs, which restore them); an
# agent's runs never restore, so they go. Refs that HEAD does not contain point at commits after
# the task's base: drop them and the reflog, then the objects only they reached. Ancestors of
# HEAD (the task's own past) stay.
FORGET_FUTURE = r'''rm -rf -- "${TJ_HARNESS:-/tmp/tj/harness}" 2>/dev/null
git rev-parse --git-dir >/dev/null 2>&1 || exit 0
head=$(git rev-parse HEAD 2>/dev/null) || exit 0
dropped=0
for ref in $(git for-each-ref --format='%(refname)'); do
  git merge-base --is-ancestor "$ref" "$head" 2>/dev/null && continue
  git update-ref -d "$ref" && dropped=$((dropped + 1))
done
git stash clear 2>/dev/null
git reflog expire --expire=now --all 2>/dev/null
[ "$dropped" -eq 0 ] || git gc -q --prune=now 2>/dev/null
echo "forgot $dropped refs"
'''


def reference_lines(task: Task) -> frozenset[str]:
    """G's own lines (stripped): what G adds, and its solve script (with any patch it embeds).
    Lines T0's test patch also has are public and stay visible."""
    lines: set[str] = set()
    for fd in parse_diff(task.reference.patch):
        lines.update(line.text.strip() for line in fd.added)
    for line in (task.reference.solve_script or "").splitlines():
        lines.add(line.strip())
        if line.startswith("+") and not line.startswith("+++"):
            lines.add(line[1:].strip())
    public = {line.text.strip() for fd in parse_diff(task.tests.test_patch) for line in fd.added}
    return frozenset(s for s in lines - public if len(s) >= MIN_SECRET)


def withhold(text: str, secret: frozenset[str], visible: str = "") -> str:
    """text with every line that carries one of G's lines replaced by WITHHELD. Lines of
    `visible` (the agent's own test files) are the agent's, never withheld."""
    mine = {line.strip() for line in visible.splitlines()}
    secret = frozenset(s for s in secret if s not in mine)
    if not secret:
        return text
    out = []
    for line in text.splitlines():
        if any(s in line for s in secret):
            margin = _MARGIN.match(line)
            out.append((margin.group(0) if margin else "") + WITHHELD)
        else:
            out.append(line)
    return "\n".join(out)


# Commands that print files rather than run code: a probe asks what G does, never what it is.
_READERS = re.compile(r"(?:^|[\s;|&(`$])(?:cat|head|tail|less|more|sed|awk|grep|egrep|fgrep|rg|find|ls|tar|"
                      r"cp|mv|base64|xxd|od|hexdump|strings|diff|git|vi|vim|nano|tac|nl|cut|sort|uniq|wc|"
                      r"python[\d.]*\s+-m\s+(?:tarfile|zipfile|base64|inspect|pydoc))(?=$|[\s;|&)`])")


def probe_refusal(command: str, task: Task) -> str:
    """Why a probe on the reference world is refused ("" when it may run): it names a file G
    changes, or runs a file reader. What gets through still has G's lines withheld from its
    output (`withhold`); this only keeps the obvious ways of reading G out."""
    for fd in parse_diff(task.reference.patch):
        path = fd.path
        if path and (path in command or (len(path.rsplit("/", 1)[-1]) > 3 and path.rsplit("/", 1)[-1] in command
                                        and path.rsplit("/", 1)[-1] != "__init__.py")):
            return (f"a probe calls the reference's code and may not read it: {path} is a file the reference "
                    "changes (call its functions instead)")
    m = _READERS.search(command)
    if m:
        return (f"a probe runs the reference's code; {m.group(0).strip()!r} reads files (call the code, e.g. "
                "`python -c` importing it, and print what it returns)")
    return ""
