"""Registers the built-in importers, most specific first (format detection order)."""

from __future__ import annotations

from . import native  # noqa: F401
