"""Registers the built-in importers in format-detection order.

Each importer's `sniff` looks only at the first 64 KiB, and the checks exclude each other: a
trajectory sniff refuses any head whose first line is a complete event object (`looks_native`),
mini-swe-agent needs `mini_version`/`trajectory_format`, SWE-agent `.traj` needs `trajectory` +
`history`/`environment` near the top, OpenHands needs `history` events with a `source`, Letta
agent files need top-level `agents` and `blocks`, Reflexion logs their own keys. The native event
log comes last because its check for a truncated first line of a `.jsonl` file is the loosest.
"""

from __future__ import annotations

# isort: off
from . import miniswe  # noqa: F401
from . import sweagent  # noqa: F401
from . import openhands  # noqa: F401
from . import letta  # noqa: F401
from . import reflexion  # noqa: F401
from . import native  # noqa: F401
# isort: on
