"""The deterministic parser: structured text to evidence units, task signature, support set and
outcome (MemTrim 3.1, A.1), with no model call.

What it reads, line by line (every unit points at the exact span it came from):

- directives: `question:` / `query:` (the task signature τ is derived from it), `task:` (an
  explicit τ), `answer:` (the stored outcome when `write` gets none), `support:` (names of the
  entities/attributes the answer depends on; without it every unit counts as support, A.1
  "uncertain cases"), `entity:` / `subject:` (the entity of the following `key: value` lines);
- `key: value` lines with short values (a long value is read as sentences);
- probability statements as in CLADDER's given_info ("The overall probability of X is 52%.",
  "For those who are not X, the probability of Y is 34%.", "P(Y=1 | do(X=1)) = 0.38"): the
  interventional operator is kept with the value, so an observational and an interventional
  value of the same quantity conflict (B.4 case 3);
- state statements ("Highway 5 is closed today", "Route 5 has been shut", "Highway 5 is not
  open" all give `highway 5.status = closed`; A.1 "Canonical Evidence Alignment");
- subject–relation–object statements from a fixed relation lexicon ("X plays for Y",
  "X was founded in 2016 by A and B", "X directly affects Y (Y)", "X is a Y", ...), with
  variable aliases such as "Eating citrus (X)" resolved in later statements;
- code facts anywhere: file paths, symbols, error types and commands (multi-valued keys);
- any other sentence with content becomes one free-text unit keyed by its own wording: it can
  only be shared with an identical sentence or stay memory-only, never conflict.

A question sentence (ending in "?") is the task, not evidence.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from .units import (
    STATUS_GROUPS,
    STATUS_NEGATION,
    EvidenceUnit,
    Key,
    Outcome,
    ParsedInteraction,
    canon_attr,
    canon_entity,
    canon_text,
    content_words,
    ground,
    normalize_value,
    task_signature,
)

_DIRECTIVE = re.compile(r"^(question|query|q|task|answer|a|support|entity|subject)\s*:\s*(.*)$", re.I)
_KV = re.compile(r"^([A-Za-z][\w .()'/-]{0,48}?)\s*:\s+(\S.*)$")
_BULLET = re.compile(r"^\s*(?:[-*•]|\d{1,3}[.)])\s+")
_PRONOUN = {
    "he",
    "she",
    "it",
    "they",
    "this",
    "that",
    "there",
    "these",
    "those",
    "we",
    "i",
    "you",
    "his",
    "her",
    "its",
    "their",
    "which",
    "who",
    "what",
    "here",
}
_ADVERB = r"(?:(?:now|currently|still|also|already|today|again)\s+)?"
_ATTR_TAIL = {
    "status",
    "state",
    "version",
    "owner",
    "date",
    "year",
    "count",
    "price",
    "size",
    "type",
    "name",
    "location",
    "url",
    "path",
    "port",
    "host",
    "value",
    "id",
    "time",
    "color",
    "capital",
    "population",
    "language",
    "country",
    "city",
    "club",
    "team",
}
_CATEGORICAL_ATTRS = re.compile(r"(version|_id$|^id$|port|code|commit|branch|tag)")

# -- probability statements (CLADDER given_info and formal notation) -----------------------------
_PCT = r"(?P<val>\d+(?:\.\d+)?\s*%|0?\.\d+|[01](?:\.0+)?)"
_PROB_NL = re.compile(
    r"^(?:for (?P<cond>.+?),\s*)?the (?:overall )?probability (?:of|that) (?P<ev>.+?) is " + _PCT + r"$", re.I
)
_PROB_FORMAL = re.compile(
    r"P\s*\(\s*(?P<ev>[^|()=]+(?:=\s*[\w.]+)?)\s*(?:\|\s*(?P<cond>(?:[^()]|\([^()]*\))+?))?\s*\)\s*=\s*"
    r"(?P<val>[-+]?\d*\.?\d+\s*%?)"
)
_DO = re.compile(r"do\s*\(\s*([^()]*)\)", re.I)

# -- state statements -----------------------------------------------------------------------------
_STATE_ALT = "|".join(sorted((re.escape(s) for s in STATUS_GROUPS), key=len, reverse=True))
_STATE = re.compile(
    r"^(?P<subj>.{1,80}?)\s+(?:is|are|was|were|has been|have been|had been|remains|remain|stays|"
    r"stay|got|became)\s+"
    + _ADVERB
    + r"(?P<neg>not\s+)?"
    + _ADVERB
    + r"(?P<state>"
    + _STATE_ALT
    + r")\b(?P<rest>.*)$",
    re.I,
)

# -- subject–relation–object lexicon: (phrase regex, attribute, multi-valued, value hint) -----------
RELATIONS: list[tuple[str, str, bool, str | None]] = [
    (
        r"has a direct effect on|directly affects|has an effect on|affects|causes|influences",
        "affects",
        True,
        "entity",
    ),
    (r"plays for|signed with|joined", "plays_for", False, "entity"),
    (r"plays as an?|plays as|plays the position of", "plays_as", False, "categorical"),
    (r"works (?:at|for)|is employed (?:at|by)", "works_for", False, "entity"),
    (r"lives in|resides in", "lives_in", False, "entity"),
    (r"is based in|is headquartered in|is located in", "located_in", False, "entity"),
    (r"was born in", "born_in", False, None),
    (r"is the capital of", "capital_of", False, "entity"),
    (r"is married to", "spouse", False, "entity"),
    (r"is owned by", "owner", False, "entity"),
    (r"is part of|belongs to", "part_of", False, "entity"),
    (r"depends on|requires", "depends_on", True, "entity"),
    (r"imports", "imports", True, "entity"),
    (r"is defined in|lives in file", "defined_in", False, "entity"),
    (r"reports to", "reports_to", False, "entity"),
    (r"is an?", "is_a", True, "categorical"),
]
_REL = [
    (re.compile(r"^(?P<subj>.{1,80}?)\s+" + _ADVERB + r"(?P<rel>" + p + r")\s+(?P<obj>.+)$", re.I), a, m, h)
    for p, a, m, h in RELATIONS
]
_FOUNDED = re.compile(
    r"^(?P<subj>.{1,80}?)\s+(?:was|were) (?:founded|established|created|started)"
    r"(?:\s+in (?P<year>\d{4}))?(?:\s+by (?P<who>.+?))?(?:\s+in (?P<year2>\d{4}))?$",
    re.I,
)
_FOUNDED_CUE = re.compile(r"\b(?:founded|established|created|started)\b")
_STATE_CUE = re.compile(r"\b(?:" + _STATE_ALT.lower() + r")\b")
_REL_CUE = re.compile(r"\s(?:" + "|".join(p for p, _, _, _ in RELATIONS) + r")\s")
_ALIAS = re.compile(r"^(?P<name>.+?)\s*\((?P<sym>[A-Z][A-Za-z0-9]{0,2})\)$")
_OBJ_TAIL = re.compile(r"\s+(?:today|now|for the day|this week|at the moment|currently|again)$", re.I)
_SPLIT_LIST = re.compile(r"\s*,\s*(?:and\s+)?|\s+and\s+")

# -- code facts -----------------------------------------------------------------------------------
_PATH = re.compile(
    r"(?<![\w/.-])((?:\.{0,2}/)?(?:[\w.-]+/)+[\w.-]+\.\w{1,8}|[\w-]+\.(?:py|js|ts|tsx|jsx|go|rs|java|c|h|"
    r"cpp|hpp|rb|php|md|toml|yaml|yml|json|cfg|ini|sh|sql|html|css))(?![\w/])"
)
_ERROR = re.compile(r"\b([A-Z][A-Za-z0-9]*(?:Error|Exception|Warning))\b")
_SYMBOL = re.compile(r"\b(?:def|class|function|fn|func)\s+([A-Za-z_]\w*)|`([A-Za-z_][\w.]*)(?:\(\))?`")
_COMMAND_WORDS = (
    "pytest",
    "python",
    "pip",
    "git",
    "npm",
    "npx",
    "yarn",
    "make",
    "cargo",
    "go ",
    "ls",
    "grep",
    "sed",
    "cat",
    "cd ",
    "bash",
    "sh ",
    "uv ",
    "poetry",
    "tox",
    "docker",
    "mvn",
    "gradle",
    "node",
    "ruff",
    "mypy",
    "find ",
    "rg ",
)
_BACKTICK = re.compile(r"`([^`\n]{2,200})`")
_DOLLAR = re.compile(r"^\$\s+(.+)$")
_MAX_STATEMENT = 400
_CODE_CUE = re.compile(r"[./`]|Error|Exception|Warning|\b(?:def|class|function|fn|func)\s")


_BOUNDARY = re.compile(r"[.!?](?=\s|$)|:(?= [A-Z])")


def _sentences(seg: str, base: int) -> Iterable[tuple[int, int]]:
    """(start, end) offsets of the sentences of `seg` (a '.', '!' or '?' followed by space ends
    one, as does the colon after a long preamble; decimals and paths do not)."""
    start = 0
    for m in _BOUNDARY.finditer(seg):
        i = m.start()
        if seg[i] == ":" and i - start <= 40:
            continue  # a short label ("Weather: sunny") stays in its sentence
        yield from _trimmed(seg, start, i + 1, base)
        start = i + 1
    if start < len(seg):
        yield from _trimmed(seg, start, len(seg), base)


def _trimmed(seg: str, a: int, b: int, base: int) -> Iterable[tuple[int, int]]:
    while a < b and seg[a].isspace():
        a += 1
    while b > a and seg[b - 1].isspace():
        b -= 1
    if b > a:
        yield base + a, base + b


class DeterministicParser:
    """Rule-based parser for structured text (see module docstring). Stateless apart from the
    entity aliases given at construction, so a query and the memories use the same rules."""

    name = "deterministic"

    def __init__(self, aliases: dict[str, str] | None = None) -> None:
        """`aliases` maps surface entity names to canonical ones (applied after `canon_entity`)."""
        self.aliases = {canon_entity(k): canon_entity(v) for k, v in (aliases or {}).items()}

    # -- public ---------------------------------------------------------------------------------
    def parse(self, text: str, answer: str | None = None) -> ParsedInteraction:
        """Parse one interaction (memory text x_m with its stored answer y_m, or a query)."""
        st = _State(self, text)
        st.run()
        units, dropped = ground(text, st.units)
        support = _support(units, st.support_names)
        task = st.task
        if task is None and st.question is not None:
            task = task_signature(st.question)
        ans = answer if answer is not None else st.answer
        outcome = None
        if ans is not None and ans.strip():
            outcome = make_outcome(task or "unspecified_task", ans, st.question)
        return ParsedInteraction(
            units=units, task=task, question=st.question, support=support, outcome=outcome, dropped=dropped
        )

    def equivalent_key(self, key: Key, candidates: list[Key]) -> Key | None:
        """Key-equivalence check (A.1): the deterministic parser only merges keys that its own
        canonicalisation already made identical, so it never merges candidates."""
        return None

    def equivalent_task(self, task: str, candidates: list[str]) -> str | None:
        """Task-signature alignment (A.1): only identical signatures are the same task."""
        return None

    def equivalent_value(self, key: Key, value: object, candidates: list[object]) -> object | None:
        """Value alignment (A.1): values are already normalised; nothing else is merged."""
        return None


def make_outcome(task: str, answer: str, question: str | None = None) -> Outcome:
    """Typed outcome o = (τ, y); short single-line answers are expressible as evidence (A.1)."""
    a = answer.strip()
    vtype, value = normalize_value(a, attribute=task)
    words = a.split()
    expressible = "\n" not in a and "```" not in a and 0 < len(words) <= 12
    return Outcome(task=task, answer=a, value=value, vtype=vtype, expressible=expressible, question=question)


def _support(units: list[EvidenceUnit], names: list[str] | None) -> frozenset[int]:
    """H: every unit when no `support:` line names the support (uncertain counts as support,
    A.1); otherwise the units whose entity, attribute or value matches a named item."""
    if names is None:
        return frozenset(range(len(units)))
    wanted = {canon_entity(n) for n in names if n.strip()} | {canon_attr(n) for n in names if n.strip()}
    out = set()
    for i, u in enumerate(units):
        k = u.key
        if k.entity in wanted or k.attribute in wanted or (isinstance(u.value, str) and u.value in wanted):
            out.add(i)
    return frozenset(out)


class _State:
    """One parse in progress."""

    def __init__(self, parser: DeterministicParser, text: str) -> None:
        self.p = parser
        self.text = text
        self.units: list[EvidenceUnit] = []
        self.task: str | None = None
        self.question: str | None = None
        self.answer: str | None = None
        self.support_names: list[str] | None = None
        self.subject: str = ""
        self.var_alias: dict[str, str] = {}

    def run(self) -> None:
        for m in re.finditer(r"[^\n]+", self.text):
            self.line(m.start(), m.end())

    # -- lines ----------------------------------------------------------------------------------
    def line(self, a: int, b: int) -> None:
        raw = self.text[a:b]
        bm = _BULLET.match(raw)
        off = a + (bm.end() if bm else len(raw) - len(raw.lstrip()))
        seg = self.text[off:b].rstrip()
        if not seg:
            return
        d = _DIRECTIVE.match(seg)
        if d:
            name, val = d.group(1).lower(), d.group(2).strip()
            vstart = off + d.start(2)
            if name in ("question", "query", "q"):
                # the question line may carry given facts before the question itself
                self.question_segment(val, vstart)
            elif name == "task":
                self.task = canon_attr(val) if val else None
            elif name in ("answer", "a"):
                self.answer = val
            elif name == "support":
                self.support_names = [s for s in re.split(r"[,;]", val)]
            else:
                self.subject = self.entity(val)
            return
        dollar = _DOLLAR.match(seg)
        if dollar:
            self.code_unit(
                "command", canon_text(dollar.group(1)), off + dollar.start(1), off + dollar.end(1), "text"
            )
            return
        self.text_segment(off, off + len(seg))

    def question_segment(self, val: str, start: int) -> None:
        sents = list(_sentences(val, start))
        qs = [s for s in sents if self.text[s[1] - 1] == "?"]
        q = qs[-1] if qs else (sents[-1] if sents else None)
        if q is not None:
            self.question = self.text[q[0] : q[1]]
        for s in sents:
            if s != q:
                self.sentence(*s)

    def text_segment(self, a: int, b: int) -> None:
        self.code_facts(a, b)  # code facts anywhere in the line, once
        for s, e in _sentences(self.text[a:b], a):
            if self.text[e - 1] == "?":
                if self.question is None or self.task is None:
                    m = _DIRECTIVE.match(self.text[s:e])
                    self.question = (
                        m.group(2)
                        if m and m.group(1).lower() in ("question", "query", "q")
                        else self.text[s:e]
                    )
                continue
            self.sentence(s, e)

    def key_value(self, key: str, val: str, a: int, b: int) -> None:
        words = key.split()
        entity = self.subject
        attr_words = words
        if len(words) >= 2 and words[-1].casefold() in _ATTR_TAIL:
            entity = self.entity(" ".join(words[:-1]))
            attr_words = words[-1:]
        attr = canon_attr(" ".join(attr_words))
        hint = "categorical" if _CATEGORICAL_ATTRS.search(attr) else None
        vtype, value = normalize_value(val, attribute=attr, hint=hint)
        self.add(Key(entity, attr, vtype), value, val, a, b)

    # -- sentences ------------------------------------------------------------------------------
    def sentence(self, a: int, b: int) -> None:
        s = self.text[a:b]
        body = s[:-1] if s[-1] in ".!" else s
        if len(body) > _MAX_STATEMENT:  # long lines (minified code, logs) only give code facts and text
            if len(content_words(body)) >= 2:
                self.add(Key("", "statement", "text"), canon_text(body), body, a, b, many=True)
            return
        kv = _KV.match(body)
        if (
            kv
            and len(kv.group(1).split()) <= 5
            and len(kv.group(2).split()) <= 8
            and not _PROB_FORMAL.search(body)
            and "//" not in kv.group(1)
        ):
            self.key_value(kv.group(1).strip(), kv.group(2).strip(), a, b)
            return
        low = body.casefold()
        # cheap pre-checks keep long tool outputs fast: each extractor runs only when its cue occurs
        found = (
            (("probab" in low or "p(" in low) and self.probability(body, a, b))
            or (_FOUNDED_CUE.search(low) is not None and self.founded(body, a, b))
            or (_STATE_CUE.search(low) is not None and self.state(body, a, b))
            or (_REL_CUE.search(low) is not None and self.relation(body, a, b))
        )
        if not found and len(content_words(body)) >= 2:
            self.add(Key("", "statement", "text"), canon_text(body), body, a, b, many=True)

    def probability(self, body: str, a: int, b: int) -> bool:
        hits = 0
        for m in _PROB_FORMAL.finditer(body):
            ev = re.sub(r"\s+", "", m.group("ev")).casefold()
            cond_raw = m.group("cond") or ""
            qual = "@do" if _DO.search(cond_raw) else ""
            cond = re.sub(r"\s+", "", _DO.sub(lambda x: x.group(1), cond_raw)).casefold()
            x = _prob_value(m.group("val"))
            if x is None:
                continue
            entity = f"p({ev}|{cond})" if cond else f"p({ev})"
            self.add(
                Key(entity, "probability", "numeric"), f"{x:g}{qual}" if qual else x, m.group("val"), a, b
            )
            hits += 1
        if hits:
            return True
        mn = _PROB_NL.match(body)
        if not mn:
            return False
        x = _prob_value(mn.group("val"))
        if x is None:
            return False
        ev = self.entity(mn.group("ev"))
        cond = mn.group("cond")
        entity = f"{ev} | {self.entity(cond)}" if cond else ev
        self.add(Key(entity, "probability", "numeric"), x, mn.group("val"), a, b)
        return True

    def founded(self, body: str, a: int, b: int) -> bool:
        m = _FOUNDED.match(body)
        if not m or not (m.group("year") or m.group("year2") or m.group("who")):
            return False
        subj = self.subject_of(m.group("subj"), a + m.start("subj"))
        if subj is None:
            return False
        year = m.group("year") or m.group("year2")
        if year:
            self.add(Key(subj, "founded_in", "temporal"), year, year, a, b)
        if m.group("who"):
            for who in _SPLIT_LIST.split(_OBJ_TAIL.sub("", m.group("who"))):
                if who.strip():
                    self.add(Key(subj, "founder", "entity"), self.entity(who), who.strip(), a, b, many=True)
        return True

    def state(self, body: str, a: int, b: int) -> bool:
        m = _STATE.match(body)
        if not m:
            return False
        subj = self.subject_of(m.group("subj"), a + m.start("subj"))
        if subj is None:
            return False
        state = STATUS_GROUPS[m.group("state").casefold()]
        if m.group("neg"):
            if state not in STATUS_NEGATION:
                return False
            state = STATUS_NEGATION[state]
        self.add(Key(subj, "status", "categorical"), state, m.group("state"), a, b)
        return True

    def relation(self, body: str, a: int, b: int) -> bool:
        for rx, attr, many, hint in _REL:
            m = rx.match(body)
            if not m:
                continue
            subj = self.subject_of(m.group("subj"), a + m.start("subj"))
            if subj is None:
                return False
            obj = _OBJ_TAIL.sub("", m.group("obj").strip())
            obj = re.sub(r"^(?:both|either)\s+", "", obj, flags=re.I)
            parts = _SPLIT_LIST.split(obj) if many else [obj]
            added = False
            for part in parts:
                part = part.strip()
                if not part:
                    continue
                name = self.alias_def(part)
                value: str | float | bool
                if hint == "entity":
                    vtype, value = "entity", name
                else:
                    vtype, value = normalize_value(part, attribute=attr, hint=hint)
                    if vtype == "categorical":
                        value = self.var_alias.get(str(value), value)
                self.add(Key(subj, attr, vtype), value, part, a, b, many=many)
                added = True
            return added
        return False

    # -- helpers --------------------------------------------------------------------------------
    def subject_of(self, raw: str, start: int) -> str | None:
        """Canonical subject of a statement (None for pronouns); adds its mention unit."""
        raw = re.sub(r"^(?:now|today|currently|however|also|and|but|so)\s*,?\s+", "", raw.strip(), flags=re.I)
        if not raw or raw.split()[0].casefold() in _PRONOUN or len(raw.split()) > 8:
            return None
        name = self.alias_def(raw)
        # mention unit: the statement is about this entity (3.1 example: (entity, Northstar Robotics))
        pos = self.text.find(raw, start)
        if pos >= 0:
            self.add(Key("", "subject", "entity"), name, raw, pos, pos + len(raw), many=True)
        return name

    def alias_def(self, raw: str) -> str:
        """Canonical name of a phrase; "Eating citrus (X)" also defines the variable alias X."""
        m = _ALIAS.match(raw.strip())
        if m:
            name = self.entity(m.group("name"))
            self.var_alias[m.group("sym").casefold()] = name
            return name
        e = self.entity(raw)
        return self.var_alias.get(e, e)

    def entity(self, raw: str) -> str:
        e = canon_entity(raw)
        return self.p.aliases.get(e, e)

    def code_facts(self, a: int, b: int) -> None:
        seg = self.text[a:b]
        if not _CODE_CUE.search(seg):
            return
        for m in _PATH.finditer(seg):
            self.code_unit("file", m.group(1).removeprefix("./"), a + m.start(1), a + m.end(1))
        for m in _ERROR.finditer(seg):
            self.code_unit("error_type", m.group(1), a + m.start(1), a + m.end(1))
        for m in _SYMBOL.finditer(seg):
            g = 1 if m.group(1) else 2
            name = m.group(g)
            if g == 2 and (name.startswith(_COMMAND_WORDS) or "/" in name):
                continue
            self.code_unit("symbol", name, a + m.start(g), a + m.end(g))
        for m in _BACKTICK.finditer(seg):
            cmd = m.group(1).strip()
            if cmd.startswith(_COMMAND_WORDS) or cmd.split(" ")[0] in {w.strip() for w in _COMMAND_WORDS}:
                self.code_unit("command", canon_text(cmd), a + m.start(1), a + m.end(1), "text")

    def code_unit(self, attr: str, value: str, a: int, b: int, vtype: str = "entity") -> None:
        self.add(Key("code", attr, vtype), value, self.text[a:b], a, b, many=True)

    def add(self, key: Key, value: object, shown: str, a: int, b: int, *, many: bool = False) -> None:
        self.units.append(
            EvidenceUnit(
                key=key,
                value=value,  # type: ignore[arg-type]
                text=shown.strip(),
                start=a,
                end=b,
                span=self.text[a:b],
                many=many,
            )
        )


def _prob_value(raw: str) -> float | None:
    s = raw.strip()
    try:
        x = float(s.rstrip("%").strip())
    except ValueError:
        return None
    if s.endswith("%"):
        x /= 100.0
    if not 0.0 <= x <= 1.0:
        return None
    return round(x, 4)
