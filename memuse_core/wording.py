"""Counted nouns in messages: "1 episode", "2 episodes" (never "1 episodes")."""

from __future__ import annotations


def plural(n: int, noun: str, many: str | None = None) -> str:
    """`n` and `noun`, the noun in the plural unless `n` is 1 (`many` for irregular plurals);
    thousands separated."""
    return f"{n:,} {noun if n == 1 else (many or noun + 's')}"
