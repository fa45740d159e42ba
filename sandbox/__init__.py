"""Containers for TestJack: the podman service, images, worlds, exec and test runs.

Knows nothing of LLMs or the UI.
"""
