"""Use and consequence in the rules judge: influence and observed effect (MemUse 3.4
"Attribution", "Observed effect", A.2.2 "Influence", "Observed effect"), as lexical and structural
rules over the facts of `judge.rules_facts`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..vocab import Effect, Influence, Novelty
from .lexicon import RERUN, credits_memory, has, has_stem, hedged, mentions
from .rules_claims import exercising_checks, failed_before, same_failure
from .rules_facts import EntryFacts, SpanFacts
from .rules_index import in_text
from .trail import StepView, command_key, covers, lower

_QUOTE_CHARS = 24


@dataclass
class Use:
    """The influence found for one entry, with the steps behind it."""

    influence: Influence | None = "none"
    anchors: list[int] = field(default_factory=list)
    evidence: list[int] = field(default_factory=list)
    note: str = ""


def _origin(x: EntryFacts, f: SpanFacts, k: str, word: bool = False) -> str:
    """Where a piece of the entry's content was stated before the first consuming step:
    `prior` (task, decisions, executed commands, results, non-memory input), `competing` (other
    memory in the input), `open` (an open possibility), or `memory` (only this entry)."""
    if word:
        if has_stem(f.nonmem_prior, k, f.nonmem_low):
            return "prior"
        if has_stem(x.competing, k, lower(x.competing)):
            return "competing"
        return "open" if has_stem(f.hypothesis_text, k, lower(f.hypothesis_text)) else "memory"
    if in_text(f.nonmem_prior, k):
        return "prior"
    if in_text(x.competing, k):
        return "competing"
    return "open" if any(in_text(h, k) for h in f.hypotheses) else "memory"


def influence(f: SpanFacts, x: EntryFacts, nov: Novelty | None) -> Use:
    """A.2.2 Influence, inside the credit window only ("action anchors must fall inside the credit
    window of the entry"):

    - acted on: an executed command uses content only the entry supplies (a token no prior source
      states: task, earlier reasoning, commands, queries, results; other memory in the input is a
      competing source, while same-input copies of the item and content a fuller delivery of it
      shares are not, A.2.2 allocation rules), a change whose own description uses the entry's
      words, or a step that explicitly credits memory for its action (unless the action carries
      out a decision recorded before delivery: "A mention that merely confirms an existing plan
      remains referenced");
    - selected: the only use is retrieving the item's fuller recorded delivery by its identifier;
    - undetermined: the action uses content that a competing source or an open possibility also
      states, or the entry settles an open hypothesis and the agent does not credit it;
    - referenced: the agent names the entry (id, key, distinctive token, a quote) without an
      attributable action;
    - none: the whole window read, none of these.
    Routine actions (running the task's tests, reading the file the task names) use no detail
    only memory supplies, so they establish nothing."""
    e = x.info
    if e.window is None:
        return Use("none", note="empty credit window: no action can be credited")
    ws, we = e.window
    toks = [k for k in x.toks if len(k) >= 4]
    used_in = {k: [t for t in f.ep.in_commands(k) if ws <= t <= we] for k in toks}
    # where each token was stated before delivery, for the tokens an action or the agent's text
    # uses (the others need no origin)
    origin = {k: _origin(x, f, k) for k in toks if used_in[k] or f.ep.in_said(k)}
    own_words = x.content_words(5)
    worigin: dict[str, str] = {}
    handoff = {s - 1 for _, s, _ in e.later_deliveries if ws <= s - 1 <= we}
    by_step: dict[int, set[str]] = {}
    for k in toks:
        for t in used_in[k]:
            by_step.setdefault(t, set()).add(origin[k])
    generic = len(f.pkg.entries) == 1  # "the memory" names this entry only when it is the only one
    probes = [k for k in toks if origin.get(k) == "memory"] + [
        ln[:_QUOTE_CHARS]
        for ln in (z.strip().lstrip("-*• ") for z in x.text.splitlines())
        if len(ln) >= _QUOTE_CHARS
    ]
    names = x.names
    talk: set[int] = set()  # steps whose text may credit or name the entry
    for probe in ("emor", "ecall", "card", *names, *probes):
        talk.update(f.ep.in_said(probe))
    cands = set(by_step) | handoff | talk
    cands |= {s.t for s in f.ep.changing if own_words & s.change_words}
    acted: list[int] = []
    credited: list[int] = []
    selected: list[int] = []
    shared: list[int] = []
    said: list[int] = []
    for t in sorted(c for c in cands if ws <= c <= we):
        s = f.steps.get(t)
        if s is None:
            continue
        if t in handoff and s.commands and any(has(s.did, n) for n in names):
            selected.append(t)
            continue
        used = set(by_step.get(t, ()))
        if s.change_words:
            for w in own_words & s.change_words:
                if w not in worigin:
                    worigin[w] = _origin(x, f, w, word=True)
                used.add(worigin[w])
        if "memory" in used and not s.retrieves:
            acted.append(t)
        elif used & {"competing", "open"}:
            shared.append(t)
        if t not in talk:
            continue
        if s.commands and not s.retrieves and any(credits_memory(z, names, generic) for z in s.sentences):
            if _carries_out_decision(f, s):
                said.append(t)
            elif selected and t > selected[0]:
                # the credit names the item after its fuller delivery was selected: shared
                # content "is assigned to a selected fuller delivery" (A.2.2, second rule)
                said.append(t)
            elif t not in acted:
                credited.append(t)
        if any(mentions(z, names) or _quotes(z, x, origin) for z in s.sentences):
            said.append(t)
    if x.shared_placement and acted:
        shared, acted = sorted(set(shared + acted)), []
    if nov == "confirming" and acted and not credited:
        return Use(
            None,
            anchors=acted[:5],
            note=_steps("the entry settles an open hypothesis; the action at", acted) + " may follow either",
        )
    acted = sorted(set(acted + credited))
    if acted:
        return Use(
            "acted_on",
            anchors=acted[:5],
            note=_steps("an action uses content only the entry supplies, or credits it, at", acted),
        )
    if selected:
        return Use(
            "selected",
            anchors=selected[:3],
            note=_steps("its only use retrieves the item's fuller delivery at", selected),
        )
    if shared:
        return Use(
            None,
            evidence=shared[:5],
            note=_steps(
                "an action uses content a competing source or an open possibility also states, at", shared
            ),
        )
    if said:
        return Use(
            "referenced",
            evidence=sorted(set(said))[:5],
            note=_steps("the agent names it without an attributable action at", sorted(set(said))),
        )
    return Use("none", note=f"no reference, selection or attributable action in S{ws}-S{we}")


def _steps(what: str, ts: list[int]) -> str:
    return what + " " + ", ".join(f"[S{t}]" for t in ts[:5])


def _quotes(sentence: str, x: EntryFacts, origin: dict[str, str]) -> bool:
    if any(origin.get(k) == "memory" and has(sentence, k) for k in origin):
        return True
    for line in x.text.splitlines():
        line = line.strip().lstrip("-*• ")
        if len(line) >= _QUOTE_CHARS and line[:_QUOTE_CHARS] in sentence:
            return True
    return False


def _carries_out_decision(f: SpanFacts, s: StepView) -> bool:
    """The step's command was stated or run before delivery (a prior decision)."""
    dec = f.decisions
    return any(command_key(c) and command_key(c) in command_key(dec) for c in s.commands)


# ---- Observed effect ---------------------------------------------------------------------------
def effect(f: SpanFacts, x: EntryFacts, use: Use) -> tuple[Effect | None, list[int], str]:
    """A.2.2 Observed effect of the anchored actions, followed to the episode end:

    - harmed: the anchored change is abandoned (a later step restores what it changed), or the
      anchored action discards work the agent did before it (a restore covering an earlier edit,
      which the agent then has to redo or finds gone). "Agent-invented identifiers, typos,
      unavailable tools, and unrelated environment failures alone do not establish memory-caused
      harm": a failed run alone is not harm. Harm takes precedence over benefit;
    - improved: the anchored change is kept and a later check that exercises it (the task's failing
      test, a re-run of the command that failed, a test naming the changed file) passes where it
      failed; a memory-named location that was read counts when a later step uses what it showed.
      "Successful execution, a generic pass count, or submission alone is insufficient";
    - no effect: the anchored action is a re-run, announced before delivery, of a check whose
      result it leaves unchanged: it made no difference and added no work;
    - otherwise undetermined."""
    if use.influence != "acted_on":
        return None, [], ""
    anchors = sorted(use.anchors)
    for a in anchors:
        s = f.steps[a]
        why = _harm(f, s)
        if why:
            return "harmed", why[0], why[1]
    for a in anchors:
        s = f.steps[a]
        got = _benefit(f, s)
        if got:
            return "improved", got[0], got[1]
    for a in anchors:
        s = f.steps[a]
        if _no_difference(f, s):
            return (
                "no_effect",
                [a],
                f"the re-run at [S{a}] that the agent had announced shows the same result",
            )
    return None, [], "no recorded result establishes the consequence"


def _harm(f: SpanFacts, a: StepView) -> tuple[list[int], str] | None:
    if a.reads and not a.changes and not a.retrieves and not f.ep.is_check(a):
        # a memory-named location that was read: harm when the first change that uses what it
        # showed is abandoned ("The harmful consequence must follow the supplied guidance")
        u = _first_use(f, a, changed=True)
        if u is not None and u.edits:
            got = _harm(f, u)
            if got and got[1].startswith("the change at"):
                return [a.t, *got[0]], f"what [S{a.t}] showed is used at [S{u.t}]; " + got[1]
        return None
    for t in range(a.t + 1, f.T + 1):
        u = f.steps.get(t)
        if u is None:
            continue
        hit = [p for p in a.edits if any(covers(p, rv) for rv in u.reverts)]
        if hit:
            return [a.t, t], f"the change at [S{a.t}] to {hit[0]} is abandoned: restored at [S{t}]"
    for rv in a.reverts:
        for t in range(a.t - 1, 0, -1):
            u = f.steps.get(t)
            if u is None:
                continue
            lost = [p for p in u.edits if covers(p, rv)]
            if lost and _redone_or_missed(f, a, u):
                return [
                    t,
                    a.t,
                ], f"the restore at [S{a.t}] discards the agent's earlier change to {lost[0]} [S{t}]"
    return None


def _redone_or_missed(f: SpanFacts, a: StepView, u: StepView) -> bool:
    """Lost work on record: the agent redoes the discarded change later, or a later check fails
    and the agent notes the change is gone."""
    keys = {command_key(c) for c in u.commands}
    for t in range(a.t + 1, f.T + 1):
        s = f.steps.get(t)
        if s is None:
            continue
        if keys & {command_key(c) for c in s.commands}:
            return True
        if any(w in s.said.lower() for w in ("is gone", "was lost", "reverted my", "wiped", "discarded")):
            return True
    return False


def _benefit(f: SpanFacts, a: StepView) -> tuple[list[int], str] | None:
    if a.retrieves:
        return None
    if a.reads and not a.changes and not f.ep.is_check(a):
        return _finding_used(f, a)
    if any(
        any(covers(p, rv) for rv in f.steps[t].reverts)
        for p in a.edits
        for t in range(a.t + 1, f.T + 1)
        if t in f.steps
    ):
        return None  # not kept
    for s in exercising_checks(f, a):
        before = failed_before(f, s, a.t if s is not a else s.t)
        if before and s.outcome == "pass":
            return [a.t, s.t], f"kept, the failing check passes at [S{s.t}]"
    return None


def _first_use(f: SpanFacts, a: StepView, changed: bool = False) -> StepView | None:
    """The first later step that names a location the read step `a` read (a change to it when
    `changed`; a restore of it is no use of what the read showed)."""
    for s in _uses(f, a):
        if not changed or s.edits:
            return s
    return None


def _uses(f: SpanFacts, a: StepView) -> list[StepView]:
    names = {p.rsplit("/", 1)[-1] for p in a.reads if len(p.rsplit("/", 1)[-1]) >= 5}
    out = []
    for t in range(a.t + 1, f.T + 1):
        s = f.steps.get(t)
        if s is not None and any(has(s.said, n) or has(s.did, n) for n in names):
            out.append(s)
    return out


def _finding_used(f: SpanFacts, a: StepView) -> tuple[list[int], str] | None:
    for s in _uses(f, a):
        t = s.t
        if any(covers(p, rv) for p in s.edits for u in f.steps.values() if u.t > t for rv in u.reverts):
            continue  # an abandoned change is no kept use
        for c in exercising_checks(f, s) if s.edits else []:
            before = failed_before(f, c, s.t)
            if before and c.outcome == "pass":
                return [
                    a.t,
                    t,
                    c.t,
                ], f"what [S{a.t}] showed is used at [S{t}]; the failing check passes at [S{c.t}]"
    return None


def _no_difference(f: SpanFacts, a: StepView) -> bool:
    if a.changes or not f.ep.is_check(a):
        return False
    before = f.ep.earlier_failure(a, f.first)
    if before is None or not same_failure(before, a):
        return False
    return any(RERUN.search(z) and not hedged(z) for s in f.before for z in s.sentences)


__all__ = ["Use", "effect", "influence"]
