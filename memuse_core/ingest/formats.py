"""Registers the built-in importers, most specific first (format detection order).

Each importer's `sniff` looks only at the first 64 KiB; the checks are mutually exclusive:
native logs have a `type` on their first line, mini-swe-agent has `mini_version` /
`trajectory_format`, SWE-agent `.traj` has `trajectory` + `history`/`environment`, OpenHands has
`history` events with `source`, Letta agent files have top-level `agents` and `blocks`.
"""

from __future__ import annotations

from . import (
    miniswe,  # noqa: F401
    native,  # noqa: F401
)
