"""Performance measurements with their baselines, side by side: `python -m tests.perf [--quick]`."""
