"""Recording real runs: the pass-through recorder, the memory bridge and adapters (MemUse 3.2, A.1.1).

* `Recorder` writes the event log; `RecordingProxy` / `serve` put it behind an OpenAI-compatible
  HTTP endpoint (`memuse record proxy`).
* `Bridge` is the API a Python host uses to annotate episodes, memory changes, searches and
  deliveries (`placement` builds a placement with its proof).
* `memuse_core.record.adapters` holds the mini-swe-agent host adapter and the Mem0 provider adapter
  (they import their libraries lazily; install requirements-recording.txt to use them).
"""

from .bridge import Bridge, entry_dict, placement
from .proxy import RecordingProxy, serve, wait_until_up
from .proxy_handler import parse_route
from .recorder import AnnotationError, Recorder

__all__ = [
    "Bridge",
    "Recorder",
    "RecordingProxy",
    "AnnotationError",
    "entry_dict",
    "placement",
    "parse_route",
    "serve",
    "wait_until_up",
]
