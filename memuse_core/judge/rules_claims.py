"""Information quality in the rules judge: relevance, novelty and accuracy (MemUse 3.4
"Information quality", A.2.2 "Relevance", "Accuracy", "Novelty"), as lexical rules over the facts
of `judge.rules_facts`. None of them looks at what the agent did with the entry: relevance and
novelty compare texts, accuracy reads recorded results about the entry's claim.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from ..vocab import Accuracy, Novelty
from .lexicon import has, is_path, prose, sentences, tokens, words
from .rules_facts import EntryFacts, SpanFacts
from .rules_index import in_text
from .trail import StepView

# ---- Relevance --------------------------------------------------------------------------------
_VERBS = (
    "use|set|call|run|add|open|remove|regenerate|compute|pass|fix|catch|fall|stream|retry|restore|"
    "delete|avoid|disable|enable|install|pin|import|replace|switch|wrap|clear|invalidate|flush|close|"
    "reproduce|read|write|return|raise|convert|normalize|escape|quote|sort|strip|lower|upper|keep|"
    "increase|decrease|limit|check|apply|revert|rebuild|rename|move|copy|configure|export|load|parse|"
    "encode|decode|validate|handle|update|change|create|drop|skip|mark|register|prefer|always|never"
)
_IMPERATIVE = re.compile(rf"(?:^|[;:,(]|->|—|\s-\s)\s*(?:then\s+|and\s+|also\s+)?(?:{_VERBS})\b", re.I)
_MODAL = re.compile(
    r"\b(?:must|should|needs?|requires?|have to|has to|instead of|rather than|so that|in order to)\b", re.I
)
_CAUSAL = re.compile(
    r"\b(?:because|comes? from|came from|caused by|causes?|due to|leads? to|leaks?|raises?|the cause|"
    r"results? in|breaks?|crash(?:es)? when|mishandles?|loses|(?:is|are) not (?:handled|recursed into|escaped|closed)|"
    r"(?:is|are) treated as)\b",
    re.I,
)
_CORRECTION = re.compile(r",\s+not\s+\S")
_OTHER_SITUATION = re.compile(
    r"(?<![=\w.(-])(?:19|20)\d\d\b(?![\w.)=])|\bwas (?:replaced|fixed|changed|introduced|removed|caused|reverted)\b|"
    r"\bcame from\b|\bused to\b|\bin (?:release|version|v)\s*\d|\bseen in (?:several|many|other)\b",
    re.I,
)
_REPORTED_FAILURE = re.compile(
    r"\b[A-Z]\w*(?:Error|Exception|Warning)\s+(?:from|in|raised by|raised near|around|near)\s+`?([A-Za-z_][\w.]*\w)|"
    r"`?([A-Za-z_][\w.]*\w)`?\s+(?:raises|mishandles|crashes on|fails (?:for|on|with))\b"
)
"""A failure the entry reports and the code it names: "ValueError from Printer._print", "parse
mishandles empty input"."""
_GENERIC = words(
    "raise raises raised return returns call calls result results handle handles case cases input inputs value values "
    "error errors fail fails failure work works code bug bugs fix fixes change changes expect expected document "
    "documented usual unexpected report reported similar refactoring function method class module file traceback "
    "shape same"
)
"""Words every failure account shares: they name no cause, mechanism or action (A.2.2 "Shared
topics, symptoms, or identifiers alone do not establish that connection")."""
_KEY_LABEL = re.compile(r"\[[\w.:/-]+\]")
"""An entry's own key label (`[card-django-0001]`): a name, not content."""
_CONDITION = re.compile(r"^\s*(?:if|when|whenever|after|once)\b([^,;:]+)[,;:]", re.I)


def relevance(f: SpanFacts, x: EntryFacts) -> tuple[bool, str]:
    """A.2.2 Relevance: "A stated cause, diagnosis, or remedy for the current failure is relevant
    even when incorrect"; "For an account of another failure, the text must supply a shared cause,
    failure mechanism, or applicable action. Shared topics, symptoms, or identifiers alone do not
    establish that connection"; "false otherwise, including uncertain matches".

    Read as text rules: the entry must state an instruction, a requirement or a cause (a clause
    that starts with an action verb, a must/needs/instead-of, a because/comes-from, or an "X, not
    Y" correction); its stated condition ("If ..., ") must match the task or a recorded failure;
    it must share a term with them; and an account of another situation (a dated or past-tense
    account) must share a mechanism word, not only an identifier. Whether the agent used the entry
    plays no part."""
    text = x.text
    sits = f.ep.situation
    sit_words = f.ep.situation_words
    form = _form(text)
    if not form.directive:
        return False, "states no instruction, requirement or cause"
    for cond in form.conditions:
        if not _condition_holds(cond, sits, sit_words):
            return (
                False,
                f"its condition ({cond.strip()!r}) matches neither the task nor a recorded failure",
            )
    shared = (x.content_words(3) & sit_words) | {k for k in x.toks if has(sits, k)}
    if not shared:
        return False, "shares no term with the task or a recorded failure"
    other = form.other_situation or any(
        not any(has(sits, part) for part in (name, *name.split(".")) if len(part) >= 4)
        for name in form.reported
    )
    if other:
        mech = form.mechanism & sit_words - _GENERIC - f.ep.situation_token_words
        if not mech:
            return False, (
                "an account of another situation that shares only identifiers ("
                + ", ".join(sorted(shared)[:3])
                + ") with the current failure"
            )
        return True, "an account of another failure that shares its mechanism (" + ", ".join(
            sorted(mech)[:3]
        ) + ")"
    return True, "states a cause, requirement or remedy that shares " + ", ".join(sorted(shared)[:3])


@dataclass(frozen=True)
class _Form:
    directive: bool
    conditions: tuple[str, ...]
    other_situation: bool
    mechanism: frozenset[str]
    reported: tuple[str, ...]
    """Code locations the entry reports a failure of."""


@lru_cache(maxsize=8192)
def _form(text: str) -> _Form:
    """What an entry's text states, independent of the episode: an instruction, requirement or
    cause; the conditions it sets; whether it recounts another (dated or past) situation, with
    its words outside identifiers."""
    directive = bool(
        _IMPERATIVE.search(text) or _MODAL.search(text) or _CAUSAL.search(text) or _CORRECTION.search(text)
    )
    conds = tuple(m.group(1) for sent in sentences(text) if (m := _CONDITION.match(sent)))
    other = _OTHER_SITUATION.search(text) is not None
    reported = tuple(m.group(1) or m.group(2) for m in _REPORTED_FAILURE.finditer(text))
    mech = words(_strip_tokens(text), 3) if other or reported else frozenset()
    return _Form(directive, conds, other, mech, reported)


def _condition_holds(cond: str, situation: str, sit: frozenset[str]) -> bool:
    return all(w in sit for w in words(cond, 3)) and all(has(situation, k) for k in tokens(cond))


def _strip_tokens(text: str) -> str:
    out = _KEY_LABEL.sub(" ", prose(text))
    for k in sorted(tokens(text), key=len, reverse=True):
        out = out.replace(k, " ")
    return out


# ---- Novelty ---------------------------------------------------------------------------------
REDUNDANT_SHARE = 0.8
"""Share of a claim's content words that the visible prior context must hold (with every
distinctive token of the claim) for the claim to be established."""


def novelty(f: SpanFacts, x: EntryFacts) -> tuple[Novelty | None, str]:
    """A.2.2 Novelty: compared with "the task, user updates, and visible sources in B_S. Earlier
    deliveries count while visible, whereas same-input copies do not establish prior knowledge";
    "confirming when the entry settles an expressed open hypothesis, redundant when its content was
    already established, and novel when that content is absent"; "Expressed uncertainty takes
    precedence over other visible supporting facts." Only the visible prior context counts: steps
    removed from the input are not compared."""
    prior = x.novelty_prior
    toks = x.toks
    ws = x.content_words()
    for h in f.visible_agent_hypotheses:
        common = (words(h) & ws) | {k for k in toks if has(h, k)}
        if common:
            return "confirming", "settles an open hypothesis the agent stated (" + ", ".join(
                sorted(common)[:3]
            ) + ")"
    open_claims = []
    pw: frozenset[str] | None = None
    for claim in claims(x.text):
        missing = {k for k in tokens(claim) if not in_text(prior, k)}
        if missing:
            open_claims.append(", ".join(sorted(missing)[:3]))
            continue
        cw = words(claim)
        if pw is None:
            pw = _prior_words(f, x)
        have = sum(1 for w in cw if w in pw)
        if missing or (cw and have < REDUNDANT_SHARE * len(cw)):
            open_claims.append(", ".join(sorted(missing)[:3]) or f"{len(cw) - have} of {len(cw)} words")
    if not open_claims:
        return "redundant", "the visible prior context already states every claim"
    return "novel", "adds to the visible prior context: " + "; ".join(open_claims[:2])


def _prior_words(f: SpanFacts, x: EntryFacts) -> frozenset[str]:
    """`words(x.novelty_prior)`, from the words of each source with the copies cut out (the
    sources of an episode's spans repeat, so most are known already). The same set: no word or
    backquoted span crosses a line break, and the sources are joined with line breaks; should a
    cut copy straddle two sources, the joined text is read instead."""
    if x.novelty_prior is f.visible:
        return f.visible_words
    srcs = [t for _, t in f.prior_files]
    for c in x.cut:
        srcs = [t.replace(c, " ") if c in t else t for t in srcs]
    if "\n".join(srcs) != x.novelty_prior:
        return words(x.novelty_prior)
    out: set[str] = set()
    for t in srcs:
        out |= words(t)
    return frozenset(out)


_CLAIM_SPLIT = re.compile(r"(?<=[.!?])\s+|;\s+|\n+")


@lru_cache(maxsize=8192)
def claims(text: str) -> tuple[str, ...]:
    """The claims of an entry: its sentences and semicolon-separated clauses ("A multi-claim
    entry is redundant only when every claim was established", A.2.2). Kept per entry text (an
    item is judged in many spans)."""
    return tuple(c for c in (c.strip() for c in _CLAIM_SPLIT.split(text)) if words(c) or tokens(c))


# ---- Accuracy --------------------------------------------------------------------------------
_ABSENCE = re.compile(r"\b(?:missing|absent|lacks?|no longer has|not in|without)\b", re.I)
_QUOTED = re.compile(r"'([^'\n]{2,40})'|\"([^\"\n]{2,40})\"")
STATED_SHARE = 0.8
"""Share of an entry's content words that one recorded result (with the task) must state for the
result to corroborate the entry."""


def accuracy(f: SpanFacts, x: EntryFacts) -> tuple[Accuracy, list[int], str]:
    """A.2.2 Accuracy: "corroborated when evidence confirms the claim, contradicted when it refutes
    the claim, and uncontradicted otherwise". The evidence is recorded results about the claim,
    anywhere in the episode; the entry's observed effect, and who applied it, play no part:

    - contradicted: a read of the file an absence claim names shows the "missing" term; a run of
      the entry's own command reports that what it names does not exist; or, after the entry's
      remedy is applied, the check that failed before shows the same failure;
    - corroborated: after the remedy is applied, a check that exercises it (the task's failing
      test, a re-run of the failing command, a test naming the changed file) passes where it
      failed, or no longer shows the failure the entry names; or a recorded result other than
      memory states the entry's content;
    - otherwise uncontradicted (the claim stays unverified)."""
    toks = x.toks
    absent = _ABSENCE.search(x.text) is not None
    direct = sorted({*(f.ep.reading if absent else []), *f.ep.not_found}, key=lambda s: s.t)
    used = {t for k in x.plain_toks for t in f.ep.in_commands(k)} if direct else set()
    for s in direct:
        why = _refuted_directly(x, s, toks, absent, used)
        if why:
            return "contradicted", [s.t], why
    for r in _realizations(f, x):
        verdict = _checked(f, x, r)
        if verdict is not None:
            return verdict
    t = _stated_at(f, x)
    if t is not None:
        return "corroborated", [t], f"a recorded result states it [S{t}]"
    return "uncontradicted", [], "no recorded result confirms or refutes it"


def _refuted_directly(
    x: EntryFacts, s: StepView, toks: frozenset[str], absent: bool, used: set[int]
) -> str | None:
    """`absent`: the entry claims an absence; `used`: steps whose commands use its plain tokens."""
    if s.reads and absent:
        for paths, terms in _absence_claims(x.text):
            for p in paths:
                if not any(r == p or r.endswith("/" + p) or p.endswith("/" + r) for r in s.reads):
                    continue
                for term in terms:
                    if has(s.saw, term):
                        return (
                            f"the entry says {term!r} is missing from {p}, and reading it shows it [S{s.t}]"
                        )
    if s.missing and s.t in used:
        for name in s.missing:
            if any(has(k, name) for k in toks):
                return f"running its command shows that {name!r} does not exist [S{s.t}]"
    return None


@lru_cache(maxsize=8192)
def _absence_claims(text: str) -> tuple[tuple[tuple[str, ...], tuple[str, ...]], ...]:
    """The sentences of an entry that claim an absence, each as the paths it names and the quoted
    terms it says are missing (read once per entry text, not once per step compared)."""
    out = []
    for sent in sentences(text):
        if _ABSENCE.search(sent):
            paths = tuple(k for k in tokens(sent) if is_path(k))
            terms = tuple(m.group(1) or m.group(2) for m in _QUOTED.finditer(sent))
            out.append((paths, terms))
    return tuple(out)


def _realizations(f: SpanFacts, x: EntryFacts) -> list[StepView]:
    """Steps that apply the entry's content (by anyone): a command that uses one of its
    non-location tokens, or a change whose description or command uses its own words."""
    own = x.content_words(5) - words(f.task, 5)
    hits: set[int] = set()
    for k in x.plain_toks:
        hits.update(f.ep.in_commands(k))
    if own:
        for s in f.ep.changing:
            if own & s.change_words:
                hits.add(s.t)
    out = []
    for t in sorted(hits):
        s = f.steps[t]
        if not s.commands or s.retrieves or (s.reads and not s.changes and not f.ep.is_check(s)):
            continue
        out.append(s)
    return out


def exercising_checks(f: SpanFacts, r: StepView) -> list[StepView]:
    """Later checks that exercise what step `r` did: `r` itself when it is a check run; after a
    change, the task's failing test, a re-run of a check that failed before `r`, or a test that
    names a changed file, until the change is reverted."""
    got = f.ep._exercising.get(r.t)
    if got is None:
        got = f.ep._exercising[r.t] = _exercising(f, r)
    return got


def _exercising(f: SpanFacts, r: StepView) -> list[StepView]:
    if not r.changes and f.ep.is_check(r):
        return [r]
    out = []
    stems = {p.rsplit("/", 1)[-1].rsplit(".", 1)[0] for p in r.edits}
    stems = {s for s in stems if len(s) >= 4}
    until = f.T
    if r.edits:
        for u in f.ep.restoring:
            if u.t > r.t and any(_restores(u, p) for p in r.edits):
                until = u.t - 1  # the change is reverted: later checks no longer exercise it
                break
    for t in range(r.t + 1, until + 1):
        s = f.steps.get(t)
        if s is None or not s.commands or not f.ep.is_check(s):
            continue
        if (
            f.ep.is_task_test(s)
            or f.ep.earlier_failure(s, r.t) is not None
            or (s.test and any(st in s.did for st in stems))
        ):
            out.append(s)
    return out


def _restores(s: StepView, path: str) -> bool:
    from .trail import covers

    return any(covers(path, rv) for rv in s.reverts)


def failed_before(f: SpanFacts, s: StepView, before: int) -> StepView | bool:
    """The earlier failing run of check `s` (before step `before`), or True when the task itself
    says the test it names fails, else False."""
    u = f.ep.earlier_failure(s, before)
    if u is not None:
        return u
    return f.ep.is_task_test(s) and f.ep.task_says_fails


def same_failure(u: StepView, s: StepView) -> bool:
    """Two failing runs show the same failure: both mixed, or both failing with a shared error
    name (or neither naming one)."""
    if u.outcome == "mixed" and s.outcome == "mixed":
        return True
    if u.outcome == "fail" and s.outcome == "fail":
        return bool(u.errors & s.errors) or (not u.errors and not s.errors)
    return False


def _checked(f: SpanFacts, x: EntryFacts, r: StepView) -> tuple[Accuracy, list[int], str] | None:
    for s in exercising_checks(f, r):
        before = failed_before(f, s, r.t if s is not r else s.t)
        if not before:
            continue
        if s.outcome == "pass":
            return "corroborated", [r.t, s.t], f"applied at [S{r.t}], the failing check passes at [S{s.t}]"
        if isinstance(before, StepView):
            named = {k for k in x.toks if has(before.saw, k)} | {e for e in before.errors if has(x.text, e)}
            if named and not any(has(s.saw, k) for k in named):
                return (
                    "corroborated",
                    [before.t, r.t, s.t],
                    (
                        f"applied at [S{r.t}], the failure it names ({', '.join(sorted(named)[:2])}) is gone at [S{s.t}]"
                    ),
                )
            if same_failure(before, s):
                return (
                    "contradicted",
                    [before.t, r.t, s.t],
                    (f"applied at [S{r.t}], the check shows the same failure as [S{before.t}] at [S{s.t}]"),
                )
    return None


def _stated_at(f: SpanFacts, x: EntryFacts) -> int | None:
    """The first recorded result (not memory) that states the entry's content: its distinctive
    non-location tokens, most of its words (with the task), and at least three words the task
    does not."""
    ws = x.content_words()
    if len(ws) < 3:
        return None
    toks = x.plain_toks
    tw = words(f.task)
    need = STATED_SHARE * len(ws)
    slack = len(ws & tw)
    hits = f.ep.result_hits([w[:5] for w in ws], need, slack)
    for t in sorted(hits):
        if hits[t] + slack < need:
            continue  # a bound from word prefixes before the word-level comparison
        s = f.steps[t]
        if not all(has(s.saw, k) for k in toks):
            continue
        rw = words(s.saw)
        if len(ws & (rw - tw)) >= 3 and sum(1 for w in ws if w in rw or w in tw) >= need:
            return t
    return None
