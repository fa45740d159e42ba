"""Reading files of a world's repository out of a container, as text."""
from __future__ import annotations

import json
import shlex

from testjack_tui.sandbox.api import WorldRef
from testjack_tui.sandbox.backend import SandboxBackend

_SCRIPT = ("import json,sys\nout={}\nfor p in sys.argv[1:]:\n"
           "    try: out[p]=open(p,encoding='utf-8').read()\n"
           "    except (OSError, UnicodeDecodeError): out[p]=None\nprint(json.dumps(out))\n")


async def read_repo_files(sandbox: SandboxBackend, world: WorldRef, paths: list[str], workdir: str) -> dict[str, str | None]:
    """{repo-relative path: text, or None when the file does not exist}. Runs one command in a
    fresh container of the world; reading runs no code of the repository."""
    if not paths:
        return {}
    cmd = ["sh", "-c", f"cd {shlex.quote(workdir)} && python3 -c {shlex.quote(_SCRIPT)} "
           + " ".join(shlex.quote(p) for p in paths)]
    result = await sandbox.exec(world, cmd, timeout=60)
    text = (result.stdout_head or "") + (result.stdout_tail or "")
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        raise RuntimeError(f"could not read {', '.join(paths)} from {world.name} "
                           f"(exit {result.exit_code})") from None
    return {p: data.get(p) for p in paths}
