"""MemUse Studio: evaluate agent memory at its point of use, from recorded trajectories alone."""

__version__ = "0.1.0"
