"""The rules judge: a deterministic, offline judge over the same package, tools, contract and checks
as the LLM judge (DESIGN.md "Judging"). It is labelled "rules" everywhere.

It reads through `read_evidence` (so the coverage ledger certifies what it cites): the prior
sources, the steps before the span, and every step from the first consuming step to the episode
end. Its evidence is lexical (MemUse A.2.2 applied to identifiers):

* memory-specific content: identifiers, paths, values and commands in the entry's exposed text that
  no prior source (task, visible input, earlier steps) states;
* acted_on: such a token appears in an executed action (tool-call arguments) inside the credit
  window; the anchors are those steps. Tokens shared with a co-delivered entry are ambiguous;
* selected: the only use is the retrieval, right before a later recorded delivery of the same item;
* referenced: such a token, the item id or the display key appears only in the agent's text;
* novelty: redundant when every distinctive token (or, without any, nearly every content word) is
  already in the prior context; confirming when the agent had raised it as an open question;
* effect: a later test run after a memory-shaped edit that passes (improved), a later retreat from
  the memory-named location (harmed), otherwise undetermined.
"""

from __future__ import annotations

import re
import time
from functools import lru_cache

from ..rules.judgment import Attempt, EntryAssessment, JudgeAnswer, JudgmentResult, verdict_for
from .package import EntryInfo, EvidencePackage, choose_inline, step_path
from .result import JudgeSettings
from .tools import EvidenceTools
from .validate import check_answer, mandatory_chars

_TOKEN_RES = [
    re.compile(r"`([^`\n]{3,80})`"),  # quoted code / commands
    re.compile(r"[\w.-]*[\w-]+/[\w./-]+|[\w-]+\.(?:py|js|ts|rs|go|java|rb|cfg|toml|ya?ml|json|ini|txt|md)\b"),
    re.compile(r"(?<!\w)_*[A-Za-z][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+(?!-\w)"),  # dotted names
    re.compile(r"(?<![\w-])_*[A-Za-z][A-Za-z0-9]*_[A-Za-z0-9_]+(?![\w-])"),  # snake_case, _private_name
    re.compile(r"(?<!\w)_+[A-Za-z][A-Za-z0-9]{3,}(?!\w)"),  # _private
    re.compile(r"(?<!\w)_*[a-z]+[A-Z][A-Za-z0-9]*|\b[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*"),  # camel/CapWords
    re.compile(r"(?<![\w-])--?[a-zA-Z][\w-]{1,}"),  # flags
    re.compile(r"\b\d+\.\d+(?:\.\d+)*\b|\b\d{3,}\b"),  # values
    re.compile(r"(?<![\w-])[a-z]+(?:-[a-z0-9]+){1,}(?![\w-])"),  # kebab ids (card-x-0001)
]
_DISTINCT = re.compile(r"_|[a-z][A-Z]")
_IDENT = re.compile(r"_*[A-Za-z][\w.]*(?:_|[a-z][A-Z])[\w.]*")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_]{3,}")
_HEDGE = re.compile(
    r"\?|\bmaybe\b|\bmight\b|\bperhaps\b|\bnot sure\b|\bwhether\b|\bpossibly\b|\bsuspect\b", re.I
)
_TEST = re.compile(
    r"\b(pytest|tox|unittest|nosetests|runtests|make test|npm test|go test|cargo test)\b|\btests?/", re.I
)
_PASS = re.compile(r"\b\d+ passed\b|\bOK\b|\ball tests pass", re.I)
_FAIL = re.compile(r"\b\d+ failed\b|\bFAILED\b|\bTraceback\b|\bError\b")
_EDIT = re.compile(r"\b(sed -i|patch|apply_patch|str_replace|cat >|tee |perl -pi|write_file|edit)\b", re.I)
_RETREAT = re.compile(
    r"\b(git checkout|git restore|git stash|revert|undo|red herring|dead end|wrong (?:place|file|lead)|"
    r"not the (?:cause|problem)|does ?n[o']t help|back out)\b",
    re.I,
)
_STOP = {
    "self",
    "none",
    "true",
    "false",
    "return",
    "import",
    "from",
    "class",
    "def",
    "with",
    "that",
    "this",
    "when",
    "then",
    "else",
    "file",
    "files",
    "test",
    "tests",
    "error",
    "value",
    "memory",
    "memories",
}


def _word(c: str) -> bool:
    """`c` is a regex word character (`\\w` on str: alphanumeric or underscore)."""
    return c.isalnum() or c == "_"


def has(text: str, k: str) -> bool:
    """`k` occurs in `text` as a whole token (not inside a longer identifier, path part or id).

    The same test as the pattern `(?<![\\w-])k(?![\\w]|-\\w)`, done with `str.find` and a look at
    the neighbouring characters: a regex scan of a long step text costs far more than the find,
    and this runs for every distinctive token against every step of every span."""
    i = text.find(k)
    if i < 0 or not k:
        return False
    n, end = len(k), len(text)
    while i >= 0:
        if i == 0 or not (_word(text[i - 1]) or text[i - 1] == "-"):
            j = i + n
            if j >= end:
                return True
            c = text[j]
            if not _word(c) and not (c == "-" and j + 1 < end and _word(text[j + 1])):
                return True
        i = text.find(k, i + 1)
    return False


@lru_cache(maxsize=4096)
def tokens(text: str) -> frozenset[str]:
    """Distinctive tokens (identifiers, paths, values, commands) of a text."""
    out: set[str] = set()
    for rx in _TOKEN_RES:
        for m in rx.finditer(text):
            t = (m.group(1) if m.groups() else m.group(0)).strip().strip(".,;:()[]'\"")
            if len(t) >= 4 and t.lower() not in _STOP:
                out.add(t)
                if "." in t and "/" not in t and " " not in t:
                    # a qualified name is also used by its parts (`Printer._print_Mul` -> `_print_Mul`)
                    out.update(p for p in t.split(".") if len(p) >= 4 and _DISTINCT.search(p))
    return frozenset(out)


@lru_cache(maxsize=4096)
def words(text: str) -> frozenset[str]:
    return frozenset(w.lower() for w in _WORD.findall(text) if w.lower() not in _STOP)


class _Step:
    """A step record split into the agent's text, its executed actions and its results."""

    __slots__ = ("t", "said", "did", "saw")

    def __init__(self, t: int, parts: tuple[str, str, str]) -> None:
        self.t = t
        self.said, self.did, self.saw = parts


@lru_cache(maxsize=8192)
def _split_step(text: str) -> tuple[str, str, str]:
    parts = re.split(r"^## (Reasoning|Response|Tool calls|Results)\s*$", text, flags=re.M)
    sec: dict[str, str] = {}
    for i in range(1, len(parts) - 1, 2):
        sec[parts[i]] = sec.get(parts[i], "") + parts[i + 1]
    return (
        sec.get("Reasoning", "") + "\n" + sec.get("Response", ""),
        sec.get("Tool calls", ""),
        sec.get("Results", ""),
    )


class _Reader:
    """Reads whole files through the tools (every page goes through the ledger)."""

    def __init__(self, tools: EvidenceTools, log: list[str]) -> None:
        self.tools, self.log = tools, log

    def full(self, path: str) -> str:
        text = self.tools.pkg.files[path]
        if not self.tools.file_complete(path):
            self.log += [f"{path}@{off}" for off in self.tools.read_whole(path, round_no=1)]
        return text  # the pages read above concatenate to exactly this text

    def step(self, t: int) -> _Step:
        for p in self.tools.pkg.step_files(t)[1:]:
            self.full(p)
        return _Step(t, _split_step(self.full(step_path(t))))


def judge_rules(
    pkg: EvidencePackage, settings: JudgeSettings | None = None, res: JudgmentResult | None = None
) -> JudgmentResult:
    """Judge one span with the rules judge (deterministic; no network)."""
    settings = settings or JudgeSettings(judge="rules")
    res = res or JudgmentResult(span_id=pkg.span_id)
    res.episode_id, res.judge, res.model = pkg.episode_id, "rules", None
    res.settings, res.prompt_hash = settings.public(), "rules-v1"
    res.mandatory_chars = mandatory_chars(pkg)
    tools = EvidenceTools(pkg)
    tools.mark_inline(choose_inline(pkg, 0))
    log: list[str] = []
    rd = _Reader(tools, log)
    prior_files = [rd.full(p) for p in pkg.prior_paths()] + [rd.full("task.md")]
    before = [rd.step(t) for t in range(1, pkg.first_step)]
    after = {t: rd.step(t) for t in range(pkg.first_step, pkg.T + 1)}
    # Membership is tested by substring in these texts: the prior context is never tokenised.
    task_text = rd.full("task.md")
    prior_toks = "\n".join([*prior_files, *(s.said + "\n" + s.did + "\n" + s.saw for s in before)])
    prior_words = prior_toks.lower()
    hedged = "\n".join(line for s in before for line in s.said.splitlines() if _HEDGE.search(line))
    ent_toks = {e.pos: tokens(e.exposed_text or "") for e in pkg.entries}
    assessments = []
    for e in pkg.entries:
        others: set[str] = set()
        for o in pkg.entries:
            if o.pos != e.pos:
                others |= ent_toks[o.pos]
        assessments.append(
            _assess(pkg, e, ent_toks[e.pos], others, prior_toks, prior_words, task_text, hedged, after)
        )
    answer = JudgeAnswer(assessments=assessments, summary=_summary(assessments), confidence=0.5)
    chk = check_answer(pkg, tools, answer)
    res.tool_calls = tools.reads + tools.searches
    res.transcript = {"tool_log": log, "coverage": tools.ledger.snapshot()}
    res.attempts.append(
        Attempt(
            call=0,
            accepted=chk.ok,
            violations=[v.to_dict() for v in chk.violations],
            answer=answer.model_dump(),
        )
    )
    res.ended_at = time.time()
    if chk.ok:
        res.status, res.answer, res.window_read = "accepted", answer, chk.window_read
        verdict_for(res)
    else:
        res.status = "error"
        res.reason = "rules answer failed its own checks: " + "; ".join(v.message for v in chk.violations[:3])
    return res


def _assess(
    pkg: EvidencePackage,
    e: EntryInfo,
    toks: frozenset[str],
    others: set[str],
    prior_toks: str,
    prior_words: str,
    task_text: str,
    hedged: str,
    after: dict[int, _Step],
) -> EntryAssessment:
    notes: list[str] = []
    if e.exposed_text is None:
        return EntryAssessment(
            entry=e.pos,
            item_id=e.item_id,
            relevance=False,
            accuracy="uncontradicted",
            novelty=None,
            influence=None,
            effect=None,
            notes="rules: exposure unknown, the entry's own text cannot be "
            "separated from the placement; novelty and influence undetermined",
        )
    specific = {t for t in toks if not has(prior_toks, t)}
    quotes = _quote_probes(e.exposed_text, prior_toks)
    exclusive = {t for t in specific if t not in others}
    ids = {x for x in (e.item_id,) if x and len(x) >= 4 and not has(prior_toks, x)}
    # Novelty (A.2.2): distinctive tokens first, content words as a fallback.
    if toks:
        novelty = (
            "redundant"
            if not specific
            else ("confirming" if all(has(hedged, k) for k in specific) else "novel")
        )
    else:
        ws = words(e.exposed_text)
        novelty = "redundant" if ws and sum(w in prior_words for w in ws) >= 0.9 * len(ws) else "novel"
    # Influence inside the credit window.
    anchors: list[int] = []
    evidence: list[int] = []
    influence: str | None = "none"
    if e.window is None:
        notes.append("empty credit window: no action can be credited")
    else:
        ws_, we = e.window
        handoff = {s - 1 for _, s, _ in e.later_deliveries if ws_ <= s - 1 <= we}
        acted: list[int] = []
        selected: list[int] = []
        shared: list[int] = []
        said: list[int] = []
        keys = specific | ids
        strong = exclusive | ids
        for t in range(ws_, we + 1):
            st = after.get(t)
            if st is None:
                continue
            # hot loop: a substring test before the call (most keys are absent from most steps)
            text_did, text_said = st.did, st.said
            used = {k for k in keys if k in text_did and has(text_did, k)}
            if used & strong:
                (selected if t in handoff else acted).append(t)
            elif used:
                shared.append(t)
            elif (
                any(k in text_said and has(text_said, k) for k in keys)
                or (e.item_id and has(text_said, e.item_id))
                or any(q in text_said for q in quotes)
            ):
                said.append(t)
        if acted:
            influence, anchors = "acted_on", acted[:5]
            notes.append(
                "an action uses memory-specific content absent from the prior sources at "
                + ", ".join(f"[S{t}]" for t in acted[:5])
            )
        elif selected:
            influence, anchors = "selected", selected[:3]
            notes.append(
                "retrieval of a fuller recorded delivery of the same item at "
                + ", ".join(f"[S{t}]" for t in selected[:3])
            )
        elif shared:
            influence, evidence = None, shared[:5]
            notes.append(
                "actions use content that co-delivered entries also state: attribution undetermined at "
                + ", ".join(f"[S{t}]" for t in shared[:5])
            )
        elif said:
            influence, evidence = "referenced", said[:5]
            notes.append(
                "mentioned without an attributable action at " + ", ".join(f"[S{t}]" for t in said[:5])
            )
        else:
            notes.append(f"no reference, selection or attributable action in S{ws_}-S{we}")
    # Relevance (A.2.2): use of memory-specific content, or an identifier (not a bare path or
    # number) that the task itself names; shared files alone do not establish it.
    relevance = bool(influence == "acted_on" or any(_IDENT.fullmatch(k) and has(task_text, k) for k in toks))
    effect, accuracy = None, "uncontradicted"
    if influence == "acted_on":
        effect, ev = _effect(anchors, specific | ids, after, pkg.T)
        evidence += [t for t in ev if t not in evidence]
        if effect == "improved":
            accuracy = "corroborated"
        elif effect == "harmed":
            accuracy = "contradicted"
        notes.append(
            f"effect {effect or 'undetermined'}" + (f" ({', '.join(f'[S{t}]' for t in ev)})" if ev else "")
        )
    notes.insert(0, f"rules judge: {len(specific)} memory-specific token(s); novelty {novelty}")
    return EntryAssessment.model_validate(
        {
            "entry": e.pos,
            "item_id": e.item_id,
            "relevance": relevance,
            "accuracy": accuracy,
            "novelty": novelty,
            "influence": influence,
            "effect": effect,
            "anchors": anchors,
            "evidence": evidence,
            "notes": "; ".join(notes),
        }
    )


def _effect(
    anchors: list[int], keys: set[str], after: dict[int, _Step], T: int
) -> tuple[str | None, list[int]]:
    """Observed effect from later records (A.2.2 "Observed effect"), or undetermined.

    harmed: after the first anchor the agent retreats from the memory-named target (revert, "wrong
    place", "not the cause") in a step that names it; improved: the first test run after a
    memory-shaped edit (an edit whose step names the memory-specific content) passes."""
    a = min(anchors)

    def names(st: _Step) -> bool:
        return any(has(st.did, k) or has(st.said, k) for k in keys)

    edit = None
    for t in range(a, T + 1):
        st = after.get(t)
        if st is None:
            continue
        if t > a and names(st) and (_RETREAT.search(st.did) or _RETREAT.search(st.said)):
            return "harmed", [t]
        if edit is None and _EDIT.search(st.did) and names(st):
            edit = t
    if edit is None:
        return None, []
    for t in range(edit + 1, T + 1):
        st = after.get(t)
        if st is not None and _TEST.search(st.did + " " + st.said):
            if _PASS.search(st.saw) and not _FAIL.search(st.saw):
                return "improved", [edit, t]
            return None, [edit, t]
    return None, [edit]


def _quote_probes(text: str, prior: str, n: int = 24) -> list[str]:
    """Opening words of each line of the entry: found verbatim in the agent's text, they quote it."""
    out = []
    for line in text.splitlines():
        line = line.strip().lstrip("-*• ").strip()
        if len(line) >= n:
            probe = line[:n]
            if probe not in prior:
                out.append(probe)
    return out


def _summary(assessments: list[EntryAssessment]) -> str:
    parts = [
        f"entry {a.entry}: {a.influence or 'undetermined'}" + (f"/{a.effect}" if a.effect else "")
        for a in assessments
    ]
    return "rules judge (lexical evidence): " + ", ".join(parts)
