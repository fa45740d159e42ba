"""The audit engine: the method (see docs/architecture.md). No Textual imports here."""
