"""The gate of a wrapper started ahead of its turn as a container's main process
(sandbox/main_process.py: GATE_ENV, GATE_OPEN): it says so and waits for SIGUSR1 before anything
of the run's runs. Both wrappers (sandbox/runners/run_wrapper.WRAPPER, sandbox/official.WRAPPER)
start with it."""
from __future__ import annotations

GATE = r"""
import os
if os.environ.pop("TJ_GATE", None):
    import signal
    signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGUSR1])
    os.write(1, b"\x1eTJ-GATE\n")
    signal.sigwait([signal.SIGUSR1])
    # The container's init leaves job-control signals blocked for its child: the run gets
    # the empty mask an exec would have given it.
    signal.pthread_sigmask(signal.SIG_SETMASK, [])
"""
