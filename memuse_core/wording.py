"""Counted nouns in messages: "1 episode", "2 episodes", "3 entries" (never "1 episodes")."""

from __future__ import annotations


def plural(n: int, noun: str, many: str | None = None) -> str:
    """`n` and `noun`, the noun in the plural unless `n` is 1 (`many` for irregular plurals; a
    noun ending in a consonant and y takes -ies); thousands separated."""
    if n == 1:
        return f"{n:,} {noun}"
    if many is None:
        many = noun[:-1] + "ies" if noun.endswith("y") and noun[-2:-1] not in "aeiou" else noun + "s"
    return f"{n:,} {many}"
