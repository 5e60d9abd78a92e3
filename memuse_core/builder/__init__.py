"""A small, exact builder of recorded episodes as events, for hand-made test episodes and the demo
generator: `EpisodeBuilder` (`builder.episode`, steps and calls; `builder.memory`, blocks,
searches and deliveries) and `entry`."""

from .episode import EpisodeBuilder
from .memory import entry

__all__ = ["EpisodeBuilder", "entry"]
