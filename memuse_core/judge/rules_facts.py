"""What the rules judge knows about one span before it rates an entry (MemUse 3.3, A.2.1, A.2.2):
the episode's steps, the visible prior context B_S, the agent's prior decisions and open
possibilities, the failures on record, and, per entry, the text it is judged from and the prior
sources that compete with it.

Built from files the judge has read in full (`judge.rules` reads them through the evidence tools)
and from the package's structure (windows, earlier copies, other deliveries).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .lexicon import has, hedged, is_path, sentences, tokens, words
from .package import EntryInfo, EvidencePackage
from .trail import StepView, runs_tests, same_check, test_targets

_TASK_TEST = re.compile(r"\btest_\w+")
_TASK_FAILS = re.compile(r"\b(?:fail\w*|rais\w*|crash\w*|error\w*|broken|reproduc\w*|exits? with)\b", re.I)
_LIST_MARK = re.compile(r"^\s*(?:[-*•]|\d+\.|\[[^\]\n]{1,40}\])\s*", re.M)


@dataclass
class SpanFacts:
    """Episode- and span-level facts shared by the rules for every entry of the span."""

    pkg: EvidencePackage
    task: str
    steps: dict[int, StepView]
    prior_files: list[tuple[str, str]]
    """(role, text) of every visible source of B_S, in input order."""
    _cache: dict[str, object] = field(default_factory=dict)

    # ---- episode ------------------------------------------------------------------------------
    @property
    def T(self) -> int:
        return self.pkg.T

    @property
    def first(self) -> int:
        return self.pkg.first_step

    def before(self) -> list[StepView]:
        """Steps before the first consuming step (earlier reasoning, commands, results)."""
        return [self.steps[t] for t in range(1, self.first) if t in self.steps]

    def failing(self) -> list[StepView]:
        """Steps whose commands failed (or failed in part) on record."""
        return [s for s in self.steps.values() if s.outcome in ("fail", "mixed")]

    def situation(self) -> str:
        """The task and every recorded failure: what "the current failure" refers to (A.2.2)."""
        got = self._cache.get("situation")
        if got is None:
            got = self._cache["situation"] = "\n".join([self.task, *(s.saw for s in self.failing())])
        return str(got)

    def task_tests(self) -> tuple[frozenset[str], frozenset[str]]:
        """Test files and test names the task itself names."""
        return test_targets(self.task), frozenset(_TASK_TEST.findall(self.task))

    def task_says_fails(self) -> bool:
        return _TASK_FAILS.search(self.task) is not None

    def is_task_test(self, s: StepView) -> bool:
        files, names = self.task_tests()
        if not s.commands:
            return False
        return bool(test_targets(s.did) & files) or any(n in s.did for n in names)

    def earlier_failure(self, s: StepView, before: int) -> StepView | None:
        """The last failing run of the same check as `s` before step `before`."""
        for t in range(before - 1, 0, -1):
            u = self.steps.get(t)
            if u is not None and u.outcome in ("fail", "mixed") and u.commands and same_check(u.did, s.did):
                return u
        return None

    def is_check(self, s: StepView) -> bool:
        """A step that checks the work: a test run, a re-run of a command that failed before, or a
        command the task names."""
        if not s.commands or s.retrieves:
            return False
        if s.test or runs_tests(s.did):
            return True
        if self.earlier_failure(s, s.t) is not None:
            return True
        return any(c.strip() and c.strip() in self.task for c in s.commands)

    # ---- prior context --------------------------------------------------------------------------
    def visible(self) -> str:
        """B_S as text (every visible source, other deliveries included)."""
        got = self._cache.get("visible")
        if got is None:
            got = self._cache["visible"] = "\n".join(t for _, t in self.prior_files)
        return str(got)

    def hypotheses(self) -> list[str]:
        """Open possibilities the agent expressed before delivery (A.2.2): hedged sentences of its
        earlier reasoning. Its memory search queries are open possibilities too (A.2.1)."""
        got = self._cache.get("hyp")
        if got is None:
            out = [x for s in self.before() for x in s.sentences if hedged(x)]
            out += [s.did for s in self.before() if s.retrieves]
            got = self._cache["hyp"] = out
        return list(got)  # type: ignore[call-overload]

    def decisions(self) -> str:
        """What the agent decided or did before delivery: its unhedged sentences and the commands
        it executed (memory queries excluded: they are open possibilities)."""
        got = self._cache.get("dec")
        if got is None:
            parts = [x for s in self.before() for x in s.sentences if not hedged(x)]
            parts += [s.did for s in self.before() if not s.retrieves]
            got = self._cache["dec"] = "\n".join(parts)
        return str(got)

    def records(self) -> str:
        """Earlier results (memory text in them is only referenced, never repeated)."""
        return "\n".join(s.saw for s in self.before())

    def visible_agent_hypotheses(self) -> list[str]:
        """Hedged sentences of the agent that are still visible in B_S (novelty compares with the
        visible context only, A.2.2)."""
        return [x for role, t in self.prior_files if role == "assistant" for x in sentences(t) if hedged(x)]


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
    nonmem_prior: str = ""
    """Task, earlier steps and B_S without any memory text: prior sources that are not memory."""
    competing: str = ""
    """Other memory in the input (other items, and same-item copies not superseded by this one)
    plus co-delivered entries: competing sources (A.2.2 allocation rules)."""

    @property
    def names(self) -> tuple[str, ...]:
        """Identifiers the agent can name the entry by: item id, display key."""
        return tuple(x for x in (self.info.item_id, self.info.display_key) if x and len(x) >= 3)

    def toks(self) -> frozenset[str]:
        return tokens(self.text)

    def content_words(self, minimum: int = 4) -> frozenset[str]:
        return words(self.text, minimum)


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
    visible = f.visible()
    novelty_prior = visible
    nonmem = visible
    competing: list[str] = []
    names = {e.item_id, e.display_key} - {None}
    for om in pkg.other_memory:
        shown = [t for t in om.texts if t in visible]
        if not shown:
            continue  # no longer visible: not in B_S
        for t in shown:
            nonmem = nonmem.replace(t, " ")
        for ns, item, value in om.items:
            same_item = ns == e.namespace and item in names
            piece = value if value and any(value in t for t in shown) else None
            if same_item and om.delivery_id in same_input:
                # identical same-item copies in one input are one source and establish no prior
                # exposure (A.2.1; A.2.2, first allocation rule)
                for t in [piece] if piece else shown:
                    novelty_prior = novelty_prior.replace(t, " ")
                continue
            if same_item and (piece in text if piece else all(_contained(t, text) for t in shown)):
                continue  # shared content belongs to this fuller delivery (second allocation rule)
            competing.append(piece or "\n".join(shown))
    for o in pkg.entries:
        if o.pos != e.pos and o.exposed_text:
            competing.append(o.exposed_text)
    nonmem_prior = "\n".join([f.task, nonmem, f.decisions(), f.records()])
    return EntryFacts(
        info=e,
        text=text,
        shared_placement=shared,
        novelty_prior=novelty_prior,
        nonmem_prior=nonmem_prior,
        competing="\n".join(competing),
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


def in_text(text: str, tok: str) -> bool:
    """`tok` occurs in `text`: as a whole token, or for a path by its file name as well."""
    if has(text, tok):
        return True
    if is_path(tok) and "/" in tok:
        return has(text, tok.rsplit("/", 1)[-1]) and len(tok.rsplit("/", 1)[-1]) >= 6
    return False
