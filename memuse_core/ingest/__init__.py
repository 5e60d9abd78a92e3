"""Importers: native event logs, agent trajectories (mini-swe-agent, SWE-agent, OpenHands, Letta)
and observers that find memory text inside recorded prompts."""

from .base import IngestError, IngestResult, detect, expand_paths, importers, ingest_path, register

# isort: off
from . import formats  # noqa: F401  (registers the built-in importers, after `base`)
# isort: on

__all__ = ["IngestError", "IngestResult", "detect", "expand_paths", "importers", "ingest_path", "register"]
