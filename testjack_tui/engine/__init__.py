"""The audit engine: the method of DESIGN.md §3. No Textual imports here."""
