"""The Ray sandbox backend: worlds and test runs on the nodes of a Ray cluster.

`pip install 'testjack-tui[ray]'` installs Ray; nothing here imports it before a backend is
entered, so the default install never needs it.
"""
from .backend import SLOT_RESOURCE, RayBackend

__all__ = ["RayBackend", "SLOT_RESOURCE"]
