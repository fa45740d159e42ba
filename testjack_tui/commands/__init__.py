"""One module per CLI command group; each has register(app)."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from testjack_tui.model import Benchmark


def load_with_warnings(path: str | Path) -> Benchmark:
    """The benchmark at `path`, with one `warning: skipped ...` line on stderr per task or trial
    the loader could not read (the same lines for every command). Raises InputError."""
    from testjack_tui.benchmarks import load_benchmark  # keeps `--help` fast

    from testjack_tui.safe_text import echo

    bench = load_benchmark(path)
    for skipped in bench.skipped:
        echo(f"warning: skipped {skipped}", err=True)
    return bench
