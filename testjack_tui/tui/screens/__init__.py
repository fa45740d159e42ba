"""The TUI's screens: Benchmarks → Selection → Audit → Report, plus help and dialogs."""
