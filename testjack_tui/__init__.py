"""TestJack TUI: re-judge the passing trials of coding-agent benchmarks with witness tests."""
__version__ = "0.1.0"
