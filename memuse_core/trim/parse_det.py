"""The deterministic parser: text to evidence units, task signature, support set and typed
outcome (MemTrim 3.1, A.1) with no model call. The grammar it applies, line by line and sentence
by sentence, is documented in `grammar`; every unit points at the exact span it came from.

`outcome.finish_parse` completes its result (support set, the answer's fact key, the units that
restate the answer), as it does the LLM parser's.
"""

from __future__ import annotations

import re

from . import facts as F
from . import grammar as G
from . import questions as Q
from .normalize import (
    STATUS_GROUPS,
    STATUS_NEGATION,
    canon_attr,
    canon_entity,
    canon_text,
    content_words,
    normalize_value,
    task_signature,
)
from .outcome import finish_parse, make_outcome
from .units import EvidenceUnit, Key, ParsedInteraction, ground


class DeterministicParser:
    """Rule-based parser (grammar in `grammar`). Stateless apart from the entity aliases given at
    construction, so a query and the memories go through the same rules."""

    name = "deterministic"

    def __init__(self, aliases: dict[str, str] | None = None) -> None:
        """`aliases` maps surface entity names to canonical ones (applied after `canon_entity`)."""
        self.aliases = {canon_entity(k): canon_entity(v) for k, v in (aliases or {}).items()}

    def parse(self, text: str, answer: str | None = None) -> ParsedInteraction:
        """Parse one interaction (memory text x_m with its stored answer y_m, or a query)."""
        st = _State(self, text)
        st.run()
        units, dropped = ground(text, st.units)
        task = st.task
        if task is None and st.question is not None:
            task = task_signature(st.question)
        ans = answer if answer is not None else st.answer
        outcome = None
        if ans is not None and ans.strip():
            outcome = make_outcome(task or "unspecified_task", ans, st.question)
        p = ParsedInteraction(units=units, task=task, question=st.question, outcome=outcome, dropped=dropped)
        return finish_parse(
            p, support=st.support_names, support_from="line", last_subject=st.last_subject or None
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
        self.last_subject: str = ""
        self.var_alias: dict[str, str] = {}

    def run(self) -> None:
        for m in re.finditer(r"[^\n]+", self.text):
            self.line(m.start(), m.end())

    # -- lines ----------------------------------------------------------------------------------
    def line(self, a: int, b: int) -> None:
        raw = self.text[a:b]
        bm = G.BULLET.match(raw)
        off = a + (bm.end() if bm else len(raw) - len(raw.lstrip()))
        sp = G.SPEAKER.match(self.text[off:b])
        if sp:
            off += sp.end()
        seg = self.text[off:b].rstrip()
        if not seg:
            return
        d = G.DIRECTIVE.match(seg)
        if d:
            name, val = d.group(1).lower(), d.group(2).strip()
            vstart = off + d.start(2)
            if name in ("question", "query", "q"):
                self.question_segment(val, vstart)  # it may carry given facts before the question
            elif name == "task":
                self.task = canon_attr(val) if val else None
            elif name in ("answer", "a"):
                self.answer = val
            elif name == "support":
                self.support_names = [s for s in re.split(r"[,;]", val)]
            else:
                self.subject = self.entity(val)
            return
        dollar = G.DOLLAR.match(seg)
        if dollar:
            self.code_unit(
                "command", canon_text(dollar.group(1)), off + dollar.start(1), off + dollar.end(1), "text"
            )
            return
        self.text_segment(off, off + len(seg))

    def question_segment(self, val: str, start: int) -> None:
        sents = list(G.sentences(val, start))
        qs = [s for s in sents if self.text[s[1] - 1] == "?"]
        q = qs[-1] if qs else (sents[-1] if sents else None)
        if q is not None:
            self.ask(*q)
        for s in sents:
            if s != q:
                self.sentence(*s)

    def text_segment(self, a: int, b: int) -> None:
        self.code_facts(a, b)  # code facts anywhere in the line, once
        for s, e in G.sentences(self.text[a:b], a):
            if self.text[e - 1] == "?":
                if self.question is None or self.task is None:
                    m = G.DIRECTIVE.match(self.text[s:e])
                    if m and m.group(1).lower() in ("question", "query", "q"):
                        self.question = m.group(2)
                    else:
                        self.ask(s, e)
                continue
            self.sentence(s, e)

    def ask(self, a: int, b: int) -> None:
        """A question sentence: the task; a leading clause set off by a comma is evidence
        ("I live in Bergen, what should I cook?")."""
        q = self.text[a:b]
        cut = None
        for m in Q.QUESTION_CLAUSE.finditer(q):
            cut = m
        if cut is not None:
            lead = Q.LEAD_CONNECTOR.match(q)
            fs = a + (lead.end() if lead else 0)
            if fs < a + cut.start():
                self.sentence(fs, a + cut.start())
            self.question = q[cut.end() :]
        else:
            self.question = q

    def key_value(self, key: str, val: str, a: int, b: int) -> None:
        words = key.split()
        entity = self.subject
        attr_words = words
        if len(words) >= 2 and words[-1].casefold() in G.ATTR_TAIL:
            entity = self.entity(" ".join(words[:-1]))
            attr_words = words[-1:]
        attr = canon_attr(" ".join(attr_words))
        hint = "categorical" if G.CATEGORICAL_ATTRS.search(attr) else None
        vtype, value = normalize_value(val, attribute=attr, hint=hint)
        self.add(Key(entity, attr, vtype), value, val, a, b)

    # -- sentences ------------------------------------------------------------------------------
    def sentence(self, a: int, b: int) -> None:
        s = self.text[a:b]
        body = s[:-1] if s[-1] in ".!" else s
        if len(body) > G.MAX_STATEMENT:
            if len(content_words(body)) >= 2:
                self.add(Key("", "statement", "text"), canon_text(body), body, a, b, many=True)
            return
        kv = G.KV.match(body)
        if (
            kv
            and len(kv.group(1).split()) <= 5
            and len(kv.group(2).split()) <= 8
            and not G.PROB_FORMAL.search(body)
            and "//" not in kv.group(1)
        ):
            self.key_value(kv.group(1).strip(), kv.group(2).strip(), a, b)
            return
        low = body.casefold()
        # cheap cues keep long tool outputs fast: each extractor runs only when its cue occurs
        found = (
            (("probab" in low or "p(" in low) and self.probability(body, a, b))
            or ("observ" in low and self.observed(body, a, b))
            or (" causes " in low and self.rule(body, a, b))
            or (G.FOUNDED_CUE.search(low) is not None and self.founded(body, a, b))
            or (F.personal_cue(low) and self.personal(body, a, b))
            or (G.STATE_CUE.search(low) is not None and self.state(body, a, b))
            or (G.REL_CUE.search(low) is not None and self.relation(body, a, b))
        )
        if not found and len(content_words(body)) >= 2:
            self.add(Key("", "statement", "text"), canon_text(body), body, a, b, many=True)

    def personal(self, body: str, a: int, b: int) -> bool:
        facts = F.personal_facts(body)
        if not facts:
            return False
        for attr, val, hint, many in facts:
            vtype, value = normalize_value(val, attribute=attr, hint=hint)
            self.add(Key(F.USER, attr, vtype), value, val, a, b, many=many)
        return True

    def probability(self, body: str, a: int, b: int) -> bool:
        hits = 0
        for m in G.PROB_FORMAL.finditer(body):
            ev = re.sub(r"\s+", "", m.group("ev")).casefold()
            cond_raw = m.group("cond") or ""
            qual = "@do" if G.DO.search(cond_raw) else ""
            cond = re.sub(r"\s+", "", G.DO.sub(lambda x: x.group(1), cond_raw)).casefold()
            x = G.prob_value(m.group("val"))
            if x is None:
                continue
            entity = f"p({ev}|{cond})" if cond else f"p({ev})"
            self.add(
                Key(entity, "probability", "numeric"), f"{x:g}{qual}" if qual else x, m.group("val"), a, b
            )
            hits += 1
        if hits:
            return True
        mn = G.PROB_NL.match(body)
        if not mn:
            return False
        x = G.prob_value(mn.group("val"))
        if x is None:
            return False
        ev = self.entity(mn.group("ev"))
        cond = mn.group("cond")
        entity = f"{ev} | {self.entity(cond)}" if cond else ev
        self.add(Key(entity, "probability", "numeric"), x, mn.group("val"), a, b)
        return True

    def observed(self, body: str, a: int, b: int) -> bool:
        found = G.observations(body)
        if not found:
            return False
        for subj, attr, val in found:
            if attr == "status":
                state = STATUS_GROUPS[val.removeprefix("not ").casefold()]
                if val.startswith("not "):
                    state = STATUS_NEGATION.get(state, "not " + state)
                self.add(Key(self.entity(subj), "status", "categorical"), state, val, a, b)
            else:
                vtype, value = normalize_value(
                    val, attribute=attr, hint="boolean" if val == "yes" else "text"
                )
                self.add(Key(self.entity(subj), attr, vtype), value, val, a, b)
        return True

    def rule(self, body: str, a: int, b: int) -> bool:
        found = G.cause_rule(body)
        if found is None:
            return False
        effect, rule = found
        self.add(Key(self.entity(effect), "caused_by", "categorical"), canon_text(rule), rule, a, b)
        return True

    def founded(self, body: str, a: int, b: int) -> bool:
        m = G.FOUNDED.match(body)
        if not m or not (m.group("year") or m.group("year2") or m.group("who")):
            return False
        subj = self.subject_of(m.group("subj"), a + m.start("subj"))
        if subj is None:
            return False
        year = m.group("year") or m.group("year2")
        if year:
            self.add(Key(subj, "founded_in", "temporal"), year, year, a, b)
        if m.group("who"):
            for who in F.SPLIT_LIST.split(G.OBJ_TAIL.sub("", m.group("who"))):
                if who.strip():
                    self.add(Key(subj, "founder", "entity"), self.entity(who), who.strip(), a, b, many=True)
        return True

    def state(self, body: str, a: int, b: int) -> bool:
        m = G.STATE.match(body)
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
        for rx, attr, many, hint in G.REL:
            m = rx.match(body)
            if not m:
                continue
            subj = self.subject_of(m.group("subj"), a + m.start("subj"))
            if subj is None:
                return False
            obj = G.OBJ_TAIL.sub("", m.group("obj").strip())
            obj = re.sub(r"^(?:both|either)\s+", "", obj, flags=re.I)
            parts = F.SPLIT_LIST.split(obj) if many else [obj]
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
        if not raw or raw.split()[0].casefold() in G.PRONOUNS or len(raw.split()) > 8:
            return None
        name = self.alias_def(raw)
        self.last_subject = name
        # mention unit: the statement is about this entity (3.1 example: (entity, Northstar Robotics))
        pos = self.text.find(raw, start)
        if pos >= 0:
            self.add(Key("", "subject", "entity"), name, raw, pos, pos + len(raw), many=True)
        return name

    def alias_def(self, raw: str) -> str:
        """Canonical name of a phrase; "Eating citrus (X)" also defines the variable alias X."""
        m = G.ALIAS.match(raw.strip())
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
        if not G.CODE_CUE.search(seg):
            return
        for m in G.PATH.finditer(seg):
            self.code_unit("file", m.group(1).removeprefix("./"), a + m.start(1), a + m.end(1))
        for m in G.ERROR.finditer(seg):
            self.code_unit("error_type", m.group(1), a + m.start(1), a + m.end(1))
        for m in G.SYMBOL.finditer(seg):
            g = 1 if m.group(1) else 2
            name = m.group(g)
            if g == 2 and (name.startswith(G.COMMAND_STARTS) or "/" in name):
                continue
            self.code_unit("symbol", name, a + m.start(g), a + m.end(g))
        for m in G.BACKTICK.finditer(seg):
            cmd = m.group(1).strip()
            if cmd.startswith(G.COMMAND_STARTS) or cmd.split(" ")[0] in G.COMMAND_HEADS:
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
