"""Quire: queue-backed AI document workflows."""

__version__ = "0.1.0"
