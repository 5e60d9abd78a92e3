"""Which steps of an episode hold a piece of text (the lookups behind MemUse A.2.2's "a command uses
the entry's content", "the agent names it" and "a recorded result states it" in the rules judge).

`StepIndex` joins each kind of step text (executed commands, the agent's text, lowercased results)
of an episode once and answers "which steps contain X" from one scan of the joined text per
distinct X; the spans of an episode share the answers. A lookup gives exactly the steps a scan of
every step's own text gives: the joined texts separate steps with a NUL, which no looked-up text
contains (a match never spans two steps).
"""

from __future__ import annotations

from bisect import bisect_right

from .lexicon import has, is_path
from .trail import StepView


def in_text(text: str, tok: str) -> bool:
    """`tok` occurs in `text`: as a whole token, or for a path by its file name as well."""
    if has(text, tok):
        return True
    if "/" in tok and is_path(tok):
        name = tok.rsplit("/", 1)[-1]
        return len(name) >= 6 and has(text, name)
    return False


class _Joined:
    """Texts of some steps joined with NULs, and where each step's text starts."""

    def __init__(self, parts: list[tuple[int, str]]) -> None:
        self.text = "\x00".join(x for _, x in parts)
        self.starts: list[int] = []
        at = 0
        for _, x in parts:
            self.starts.append(at)
            at += len(x) + 1
        self.steps = [t for t, _ in parts]

    def step_at(self, i: int) -> int:
        """The index (in `steps`) of the step whose text holds position `i`."""
        return bisect_right(self.starts, i) - 1

    def holding(self, probe: str) -> set[int]:
        """The steps whose text contains `probe` (a plain substring without NUL), from one scan:
        after a hit the scan goes on at the next step's start."""
        found: set[int] = set()
        text, starts, last = self.text, self.starts, len(self.starts) - 1
        i = text.find(probe) if self.steps else -1
        while i >= 0:
            k = self.step_at(i)
            found.add(self.steps[k])
            if k == last:
                break  # the last step (an empty probe would be found at its end forever)
            i = text.find(probe, starts[k + 1])
        return found


class StepIndex:
    """The steps of one episode, looked up by the text their commands, agent text and results
    contain."""

    def __init__(self, steps: dict[int, StepView]) -> None:
        self.steps = steps
        order = [s for _, s in sorted(steps.items())]
        self._cmd = _Joined([(s.t, s.did) for s in order if s.commands])
        self._said = _Joined([(s.t, s.said) for s in order if s.said])
        self._saw = _Joined([(s.t, s.saw_low) for s in order if s.saw.strip() and not s.retrieves])
        self._in_cmd: dict[str, tuple[int, ...]] = {}
        self._in_said: dict[str, frozenset[int]] = {}
        self._in_saw: dict[str, frozenset[int]] = {}

    def in_commands(self, tok: str) -> tuple[int, ...]:
        """Steps whose executed commands use `tok` (`in_text`), from one scan of all commands per
        probe (the token, and a path's file name)."""
        got = self._in_cmd.get(tok)
        if got is None:
            probes = [tok]
            if "/" in tok and is_path(tok) and len(tok.rsplit("/", 1)[-1]) >= 6:
                probes.append(tok.rsplit("/", 1)[-1])
            found = {t for p in probes for t in self._cmd.holding(p)}
            got = tuple(sorted(t for t in found if in_text(self.steps[t].did, tok)))
            self._in_cmd[tok] = got
        return got

    def in_said(self, probe: str) -> frozenset[int]:
        """Steps whose agent text contains `probe` (a plain substring), from one scan."""
        got = self._in_said.get(probe)
        if got is None:
            got = self._in_said[probe] = frozenset(self._said.holding(probe))
        return got

    def in_results(self, probe: str) -> frozenset[int]:
        """Steps (not memory retrievals) whose lowercased results contain `probe`, from one scan."""
        got = self._in_saw.get(probe)
        if got is None:
            got = self._in_saw[probe] = frozenset(self._saw.holding(probe))
        return got

    def result_hits(self, probes: list[str], need: float, slack: int) -> dict[int, int]:
        """step -> how many of `probes` (non-empty, without NUL) its lowercased results contain
        (`in_results`), exact for every step where that count plus `slack` reaches `need`; a step
        that cannot reach it may be counted short or left out.

        The probes are looked up in the whole episode only while a step that holds none of them
        yet could still reach `need`; after that only the steps that still can are read."""
        hits: dict[int, int] = {}
        left = len(probes)
        rest = iter(probes)
        for p in rest:
            for t in self.in_results(p):
                hits[t] = hits.get(t, 0) + 1
            left -= 1
            if left + slack < need:
                break  # a step without a hit so far can no longer reach `need`
        alive = [t for t in sorted(hits) if hits[t] + left + slack >= need]
        for p in rest:
            left -= 1
            for t in alive:
                if p in self.steps[t].saw_low:
                    hits[t] += 1
            alive = [t for t in alive if hits[t] + left + slack >= need]
            if not alive:
                break
        return hits
