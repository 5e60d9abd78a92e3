"""What the rules judge knows before it rates an entry (MemUse 3.3, A.2.1, A.2.2): the episode's
steps and recorded failures (`EpisodeFacts`, shared by the spans of an episode), the visible prior
context B_S with the agent's prior decisions and open possibilities (`SpanFacts`), and, per entry,
the text it is judged from and the prior sources that compete with it (`EntryFacts`).

Built from files the judge has read in full (`judge.rules` reads them through the evidence tools)
and from the package's structure (windows, earlier copies, other deliveries).
"""

from __future__ import annotations

import re
from collections import OrderedDict
from dataclasses import dataclass, field
from functools import cached_property
from typing import cast

from .lexicon import hedged, is_path, sentences, tokens, tokens_of_parts, words, words_of_parts
from .package import EntryInfo, EvidencePackage
from .rules_index import StepIndex, in_text
from .trail import StepView, lower, runs_tests, same_check, test_targets

_TASK_TEST = re.compile(r"\btest_\w+")
_TASK_FAILS = re.compile(r"\b(?:fail\w*|rais\w*|crash\w*|error\w*|broken|reproduc\w*|exits? with)\b", re.I)
_LIST_MARK = re.compile(r"^\s*(?:[-*•]|\d+\.|\[[^\]\n]{1,40}\])\s*", re.M)


class EpisodeFacts(StepIndex):
    """The steps of one episode and what they show, independent of the span judged."""

    def __init__(self, task: str, steps: dict[int, StepView]) -> None:
        super().__init__(steps)
        self.task = task
        self.T = max(steps, default=0)
        self._check: dict[int, bool] = {}
        self._same_fails: dict[int, list[StepView]] = {}
        self.failing = [s for _, s in sorted(steps.items()) if s.outcome in ("fail", "mixed") and s.commands]
        self._situation_parts = [task, *(s.saw for s in self.failing if not s.retrieves)]
        self.situation = "\n".join(self._situation_parts)
        """The task and every recorded failure: what "the current failure" refers to (A.2.2). A
        memory retrieval's output recounts stored failures, not the current one."""
        self.task_files = test_targets(task)
        self.task_names = frozenset(_TASK_TEST.findall(task))
        self.task_says_fails = _TASK_FAILS.search(task) is not None
        self._task_test: dict[int, bool] = {}
        self._exercising: dict[int, list[StepView]] = {}
        self.reading = [s for _, s in sorted(steps.items()) if s.reads]
        self.not_found = [s for _, s in sorted(steps.items()) if s.missing]
        self.changing = [s for _, s in sorted(steps.items()) if s.change_words]
        self.restoring = [s for _, s in sorted(steps.items()) if s.reverts]

    @cached_property
    def situation_words(self) -> frozenset[str]:
        return words_of_parts(self._situation_parts, 3)

    @cached_property
    def situation_token_words(self) -> frozenset[str]:
        """Words that occur in the situation only as parts of identifiers, paths or commands."""
        toks = tokens_of_parts(self._situation_parts)
        rest = self.situation
        for k in sorted(toks, key=len, reverse=True):
            rest = rest.replace(k, " ")
        return words(" ".join(toks), 3) - words(rest, 3)

    def is_task_test(self, s: StepView) -> bool:
        """The step runs a test the task names."""
        got = self._task_test.get(s.t)
        if got is None:
            got = self._task_test[s.t] = bool(s.commands) and (
                bool(test_targets(s.did) & self.task_files) or any(n in s.did for n in self.task_names)
            )
        return got

    def earlier_failure(self, s: StepView, before: int) -> StepView | None:
        """The last failing run of the same check as `s` before step `before`."""
        runs = self._same_fails.get(s.t)
        if runs is None:
            runs = self._same_fails[s.t] = (
                [u for u in self.failing if u.t != s.t and same_check(u.did, s.did)] if s.commands else []
            )
        got = None
        for u in runs:
            if u.t >= before:
                break
            got = u
        return got

    def is_check(self, s: StepView) -> bool:
        """A step that checks the work: a test run, a re-run of a command that failed before, or a
        command the task names."""
        got = self._check.get(s.t)
        if got is None:
            got = self._check[s.t] = (
                bool(s.commands)
                and not s.retrieves
                and (
                    s.test
                    or runs_tests(s.did)
                    or self.earlier_failure(s, s.t) is not None
                    or any(c.strip() and c.strip() in self.task for c in s.commands)
                )
            )
        return got


_EPISODES: OrderedDict[tuple[object, ...], EpisodeFacts] = OrderedDict()


def episode_facts(task: str, steps: dict[int, StepView]) -> EpisodeFacts:
    """The facts of an episode, shared by every span judged from the same step records (a small
    cache: a batch judges the spans of an episode one after another)."""
    key = (task, *(id(s) for _, s in sorted(steps.items())))
    got = _EPISODES.get(key)
    if got is None:
        got = _EPISODES[key] = EpisodeFacts(task, steps)
        while len(_EPISODES) > 32:
            _EPISODES.popitem(last=False)
    return got


@dataclass
class SpanFacts:
    """Span-level facts shared by the rules for every entry of the span."""

    pkg: EvidencePackage
    ep: EpisodeFacts
    prior_files: list[tuple[str, str]]
    """(role, text) of every visible source of B_S, in input order."""
    _cache: dict[str, object] = field(default_factory=dict)

    @property
    def task(self) -> str:
        return self.ep.task

    @property
    def steps(self) -> dict[int, StepView]:
        return self.ep.steps

    @property
    def T(self) -> int:
        return self.pkg.T

    @property
    def first(self) -> int:
        return self.pkg.first_step

    @cached_property
    def before(self) -> list[StepView]:
        """Steps before the first consuming step (earlier reasoning, commands, results)."""
        return [self.steps[t] for t in range(1, self.first) if t in self.steps]

    @cached_property
    def visible(self) -> str:
        """B_S as text (every visible source, other deliveries included)."""
        return "\n".join(t for _, t in self.prior_files)

    @cached_property
    def hypotheses(self) -> list[str]:
        """Open possibilities the agent expressed before delivery (A.2.2): hedged sentences of its
        earlier reasoning. Its memory search queries are open possibilities too (A.2.1)."""
        out = [x for s in self.before for x in s.sentences if hedged(x)]
        return out + [s.did for s in self.before if s.retrieves]

    @cached_property
    def decisions(self) -> str:
        """What the agent decided or did before delivery: its unhedged sentences and the commands
        it executed (memory queries excluded: they are open possibilities)."""
        parts = [x for s in self.before for x in s.sentences if not hedged(x)]
        return "\n".join(parts + [s.did for s in self.before if not s.retrieves])

    @cached_property
    def visible_agent_hypotheses(self) -> list[str]:
        """Hedged sentences of the agent still visible in B_S (novelty compares with the visible
        context only, A.2.2)."""
        return [x for role, t in self.prior_files if role == "assistant" for x in sentences(t) if hedged(x)]

    @cached_property
    def _nonmem_visible(self) -> list[str]:
        """The sources of B_S without any memory text."""
        out = []
        texts = [t for om in self.pkg.other_memory for t in om.texts]
        for _, src in self.prior_files:
            for t in texts:
                if t in src:
                    src = src.replace(t, " ")
            out.append(src)
        return out

    @cached_property
    def nonmem_prior(self) -> str:
        """Prior sources that are not memory: the task, earlier reasoning, commands and results, and
        B_S without any memory text."""
        return "\n".join([self.task, *self._nonmem_visible, self.decisions, *(s.saw for s in self.before)])

    @cached_property
    def nonmem_low(self) -> str:
        """`nonmem_prior.lower()`, joined from the lowercased parts (the task's and the results'
        are kept per text): lowercasing maps each character alone except a capital sigma, whose
        form depends on the letters around it, and a line break ends that context as the end of
        a text does."""
        parts = [lower(self.task), *(v.lower() for v in self._nonmem_visible), self.decisions.lower()]
        return "\n".join(parts + [s.saw_low for s in self.before])

    @cached_property
    def hypothesis_text(self) -> str:
        return "\n".join(self.hypotheses)

    @cached_property
    def visible_words(self) -> frozenset[str]:
        """Content words of B_S (per source, so the spans of an episode share the work)."""
        out: set[str] = set()
        for _, src in self.prior_files:
            out |= words(src)
        return frozenset(out)


@dataclass
class EntryFacts:
    """One entry: the text it is judged from and the prior sources that compete with it."""

    info: EntryInfo
    text: str
    """Exposed text, or the placement text when exposure is unknown (3.3: judged from it)."""
    shared_placement: bool = False
    """The text is a placement shared with other entries of unknown exposure."""
    novelty_prior: str = ""
    """B_S without same-input copies of the same item (A.2.1, A.2.2 Novelty)."""
    cut: tuple[str, ...] = ()
    """The copy texts cut out of B_S to give `novelty_prior`, in the order they were cut."""
    competing_parts: list[str] = field(default_factory=list)
    """Other memory in the input (other items, and same-item copies not superseded by this one)
    plus co-delivered entries: competing sources (A.2.2 allocation rules)."""

    @cached_property
    def names(self) -> tuple[str, ...]:
        """Identifiers the agent can name the entry by: item id, display key."""
        return tuple(x for x in (self.info.item_id, self.info.display_key) if x and len(x) >= 3)

    @cached_property
    def toks(self) -> frozenset[str]:
        return tokens(self.text)

    @cached_property
    def plain_toks(self) -> list[str]:
        """Tokens that are not locations (a claim's content rather than where it applies)."""
        return [k for k in self.toks if not is_path(k)]

    def content_words(self, minimum: int = 4) -> frozenset[str]:
        return words(self.text, minimum)

    @cached_property
    def competing(self) -> str:
        return "\n".join(self.competing_parts)


def entry_facts(f: SpanFacts, e: EntryInfo) -> EntryFacts:
    """The text of entry `e` and its prior sources, allocated by A.2.2's three rules."""
    pkg = f.pkg
    shared = False
    if e.exposed_text is not None:
        text = e.exposed_text
    else:
        # Unknown exposure: the entry is judged from the placement text the agent saw (3.3, A.2.1),
        # less what the other (known) entries of the delivery exposed.
        text = "\n".join(pkg.placement_texts)
        for o in pkg.entries:
            if o.pos != e.pos and o.exposed_text:
                text = text.replace(o.exposed_text, " ")
        text = _LIST_MARK.sub("", text).strip()
        shared = sum(1 for o in pkg.entries if o.exposed_text is None) > 1
    same_input = {d for d, vis, _ in e.copies if vis == "same_input"}
    visible = f.visible
    novelty_prior = visible
    cut: list[str] = []
    competing: list[str] = []
    names = {e.item_id, e.display_key} - {None}
    shown_of = cast("list[list[str]] | None", f._cache.get("shown"))  # per span, not per entry
    if shown_of is None:  # the texts of each other delivery that B_S shows
        shown_of = f._cache["shown"] = [[t for t in om.texts if t in visible] for om in pkg.other_memory]
    pieces_of = cast("list[list[str | None]] | None", f._cache.get("pieces"))
    if pieces_of is None:  # per span: the item values each other delivery shows in B_S
        pieces_of = f._cache["pieces"] = [
            [value if value and any(value in t for t in shown) else None for _, _, value in om.items]
            if shown
            else []
            for om, shown in zip(pkg.other_memory, shown_of, strict=True)
        ]
    for om, shown, pieces in zip(pkg.other_memory, shown_of, pieces_of, strict=True):
        if not shown:
            continue  # no longer visible: not in B_S
        for (ns, item, _), piece in zip(om.items, pieces, strict=True):
            same_item = ns == e.namespace and item in names
            if same_item and om.delivery_id in same_input:
                # identical same-item copies in one input are one source and establish no prior
                # exposure (A.2.1; A.2.2, first allocation rule)
                for t in [piece] if piece else shown:
                    novelty_prior = novelty_prior.replace(t, " ")
                    cut.append(t)
                continue
            if same_item and (piece in text if piece else all(_contained(t, text) for t in shown)):
                continue  # shared content belongs to this fuller delivery (second allocation rule)
            competing.append(piece or "\n".join(shown))
    for o in pkg.entries:
        if o.pos != e.pos and o.exposed_text:
            competing.append(o.exposed_text)
    return EntryFacts(
        info=e,
        text=text,
        shared_placement=shared,
        novelty_prior=novelty_prior,
        cut=tuple(cut),
        competing_parts=competing,
    )


def _contained(copy_text: str, target: str) -> bool:
    """Every line of a copy's placement, without list markers, labels and a trailing ellipsis,
    occurs in the target's text (the copy adds nothing to it)."""
    for line in _LIST_MARK.sub("", copy_text).splitlines():
        line = line.strip().rstrip("…").rstrip(".").strip()
        if line.lower().startswith(("preview:", "hit:")):
            line = line.split(":", 1)[1].strip()
        if line and line not in target:
            return False
    return True


__all__ = ["EntryFacts", "EpisodeFacts", "SpanFacts", "entry_facts", "episode_facts", "in_text"]
