"""Widgets of the Audit and Report screens; each renders part of a LiveSession or a summary."""
