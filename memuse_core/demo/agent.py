"""Scripted coding-agent episodes with planted memory use (the demo's ground truth).

For every delivered entry the script decides relevance, novelty and influence up front and then
makes the trajectory show exactly that (MemUse 3.4, A.2.2):

* acted on: the entry's memory-specific content (`Item.hint`: a helper name, a wrong location, a
  check command, a grep pattern) is absent from the task and the prior context, and appears in a
  later action inside the entry's window; the effect follows from later steps: the targeted tests
  pass (improved), fail and the change is reverted (harmed), nothing changes (no effect), or the
  lead is dropped without a check (undetermined);
* selected: a preview or catalog line leads to a full read of the same item (`exp_read`, `cat`);
* referenced: the agent's thought mentions the entry and nothing follows;
* none: no trace anywhere in the episode (an unused entry's hint never appears in any action).

The outcome of an episode comes from the task's difficulty, independent of memory use, which is
how beneficial use lands in failed episodes and harmful use in successful ones (MemUse 4.3).
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from typing import Any

from .emit import EpisodeEmitter, entry_dict
from .memory import CardCorpus, Item, Mem0Store, ProxyStore
from .shell import (
    code_lines,
    git_diff,
    grep_output,
    head_output,
    ls_output,
    repro_output,
    sed_view,
    short,
    test_command,
    test_output,
    test_snippet,
)
from .tasks import Task
from .vocab import MECHANISMS, REPOS

SYSTEM = ("You are a helpful assistant that can interact with a computer shell to solve programming tasks. "
          "Your response must contain exactly one tool call. Work in /testbed; the repository is checked "
          "out there. When you are done, run `echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git add -A && "
          "git diff --cached`.")
SYSTEM_EXTRA = {
    "cards": ("\n\nExperience cards from earlier issues are available. Search them with `exp_search \"<query>\"` "
              "(ten previews) and read one with `exp_read <card_id>`. Search after reproducing the issue and "
              "before editing code."),
    "mem0": ("\n\nYou have a memory tool `mem0_memory` with actions search, add, update and delete. Memories "
             "relevant to the task may be listed below."),
    "proxy": ("\n\nReusable skills live in skills/<name>.md and scene documents in scenes/<name>.md; open them "
              "with `cat` when they look useful."),
    "baseline": "",
}


@dataclass
class Decision:
    """Planted truth for one delivered entry (one row of `planted_truth`)."""

    key: str
    pos: int
    item: Item
    form: str
    relevance: bool
    novelty: str
    influence: str
    effect: str | None = None
    anchor_step: int | None = None
    note: str = ""
    copy: bool = False
    origin: str | None = None
    """Episode that wrote the delivered version (captured at delivery time)."""

    def row(self, episode_id: str, delivery_id: str, broken: bool) -> dict[str, Any]:
        return {"episode_id": episode_id, "delivery_id": delivery_id, "pos": self.pos,
                "namespace": self.item.namespace, "item_id": self.item.item_id, "relevance": self.relevance,
                "novelty": self.novelty, "influence": self.influence, "effect": self.effect,
                "anchor_step": self.anchor_step, "note": self.note, "form": self.form, "copy": self.copy,
                "broken": broken, "origin_episode": self.origin,
                "hint": self.item.hint}


@dataclass
class Use:
    """A planned acted-on use of an entry."""

    decision: Decision
    kind: str
    """`fix` (helper), `decoy`, `check` (skill command), `pattern` (scene grep), `history` (persona)."""


@dataclass
class Episode:
    """What one generated episode produced."""

    truth: list[dict[str, Any]]
    resolved: bool
    found_helper: bool
    cost: float


@dataclass
class Script:
    """Drives one episode (see module docstring)."""

    em: EpisodeEmitter
    task: Task
    rng: random.Random
    config: str
    decisions: list[Decision] = field(default_factory=list)
    uses: list[Use] = field(default_factory=list)
    fixed: bool = False
    found_helper: bool = False
    blocked: set[str] = field(default_factory=set)
    """Hints delivered in this episode whose entries are not acted on: never used in an action."""
    broken: str | None = None
    n_tests: int = 20
    line: int = 100
    force: str | None = None
    """Showcase override: `discover` (find the helper) or `act` (act on the recalled fix, improved)."""

    # -- helpers -----------------------------------------------------------------------------
    def decide(self, key: str, pos: int, item: Item, form: str, influence: str, *, novelty: str | None = None,
               copy: bool = False, note: str = "") -> Decision:
        rel = item.relevant(self.task)
        if novelty is None:
            novelty = "redundant" if item.value in self.task.text or item.value.rstrip(".") in self.task.text else "novel"
        d = Decision(key, pos, item, form, rel, novelty, influence, copy=copy, note=note, origin=item.origin)
        self.decisions.append(d)
        if influence != "acted_on" and item.hint:
            self.blocked.add(item.hint)
        return d

    def bash(self, thought: str, command: str, output: str, exit_code: int = 0, **kw: Any) -> int:
        return self.em.step(thought, command, output, exit_code=exit_code, **kw)

    def run_tests(self, thought: str, failed: int, where: str | None = None, exc: str | None = None) -> int:
        c = self.task.comp
        passed = self.n_tests - failed
        return self.bash(thought, test_command(c), test_output(c, passed, failed, self.rng, where, exc),
                         exit_code=1 if failed else 0)

    # -- phases ------------------------------------------------------------------------------
    def explore(self) -> None:
        c, rng = self.task.comp, self.rng
        pkg = REPOS[c.repo]["pkg"]
        self.bash("Let me look at the repository layout first.", "ls", ls_output(c))
        self.bash(f"The traceback points at {short(c.func)}; let me find its definition.",
                  f"grep -rn \"def {short(c.func)}\" {pkg}/ | head -20",
                  grep_output([(c.file, self.line, f"    def {short(c.func)}(self, value, *args, **kwargs):")]))
        self.bash(f"Let me read {short(c.func)} in {c.file}.", f"sed -n '{self.line},{self.line + 12}p' {c.file}",
                  sed_view(c.func, self.line, rng))
        if rng.random() < 0.6:
            self.bash("Let me see which tests cover this function.",
                      f"grep -rn \"{short(c.func)}\" {c.test_file} | head -10",
                      grep_output([(c.test_file, rng.randrange(20, 900), f"        self.assertEqual({short(c.func)}(x), expected)")
                                   for _ in range(rng.randrange(1, 4))]))

    def reproduce(self) -> None:
        c = self.task.comp
        script = (f"cat > reproduce.py <<'EOF'\nimport sys\nsys.path.insert(0, '.')\n\ndef main():\n"
                  f"    # {self.task.task_id}: call {short(c.func)} with {c.inputs[self.task.variant]}\n    ...\n\n"
                  f"main()\nEOF")
        self.bash("I'll write a small script that reproduces the report.", script, "")
        self.bash("Run it.", "python reproduce.py", repro_output(c, self.line + 8, False), exit_code=1)

    def filler(self, n: int) -> None:
        c, rng = self.task.comp, self.rng
        pkg = REPOS[c.repo]["pkg"]
        for _ in range(n):
            k = rng.randrange(6)
            start = self.line + rng.randrange(-60, 80)
            if k == 0:
                self.bash("Let me look a bit further around this code.", f"sed -n '{start},{start + 12}p' {c.file}",
                          sed_view(c.func, start, rng))
            elif k == 1:
                self.bash(f"Where else is {short(c.func)} called?", f"grep -rn \"{short(c.func)}(\" {pkg}/ | head -20",
                          grep_output([(rng.choice([c.file, c.test_file]), rng.randrange(50, 3000),
                                        f"        {rng.choice(['return', 'value =', 'result ='])} self.{short(c.func)}(value)")
                                       for _ in range(rng.randrange(3, 16))]))
            elif k == 2:
                self.bash("Let me re-run the reproducer.", "python reproduce.py",
                          repro_output(c, self.line + 8, self.fixed), exit_code=0 if self.fixed else 1)
            elif k == 3:
                self.bash("Check the working tree state.", "git status --short",
                          f" M {c.file}\n?? reproduce.py" if self.fixed else "?? reproduce.py")
            elif k == 4:
                self.bash("Let me read the related test case.", f"sed -n '{start},{start + 30}p' {c.test_file}",
                          test_snippet(c, rng))
            else:
                self.bash("Let me check the module's imports.", f"head -30 {c.file}", head_output(rng))

    def mention(self, d: Decision, text: str) -> None:
        """A referenced entry: the next thought mentions it; nothing follows from it."""
        d.anchor_step = self.bash(text, "git status --short", "?? reproduce.py")

    # -- acting on memory --------------------------------------------------------------------
    def act(self, use: Use) -> None:
        d, c, rng = use.decision, self.task.comp, self.rng
        mech = MECHANISMS[c.mechanism]
        hint = d.item.hint or ""
        if use.kind in ("fix", "decoy"):
            path = c.file if use.kind == "fix" else c.decoy_file
            fn = short(hint)
            line = rng.randrange(40, 900)
            d.anchor_step = self.bash(
                f"The {_source(d)} points at `{hint}` in {path}; let me look at it.",
                f"grep -n \"def {fn}\" {path}", grep_output([(path, line, f"    def {fn}(self, value, *args, **kwargs):")]))
            self.bash(f"Reading {fn}.", f"sed -n '{line},{line + 12}p' {path}", sed_view(hint, line, rng))
            if d.effect == "no_effect":
                self.bash(f"`{fn}` already copes with this input, so nothing to change there.",
                          f"sed -n '{self.line},{self.line + 12}p' {c.file}", sed_view(c.func, self.line, rng))
                return
            if d.effect == "undetermined":
                self.bash("This does not obviously explain the traceback; back to the reported function.",
                          f"sed -n '{self.line},{self.line + 12}p' {c.file}", sed_view(c.func, self.line, rng))
                return
            self.bash(f"Apply the change in `{fn}`: {mech.remedy}.",
                      f"sed -i '{line + 8}s/return value.__class__(resolved)/return _rebuild(value, resolved)/' {path}", "")
            if d.effect == "harmed":
                self.run_tests(f"Run the tests after changing {fn}.", failed=min(self.n_tests - 1, 3 + rng.randrange(6)),
                               where=path, exc="AttributeError")
                self.bash(f"The change in {fn} broke more tests than it fixed; reverting it.",
                          f"git checkout -- {path}", "")
                self.blocked.add(hint)
                return
            self.run_tests(f"Run the tests after changing {fn}.", failed=0)
            self.bash(f"The reproducer now passes with the change in `{fn}`.", "python reproduce.py",
                      repro_output(c, self.line, True))
            self.fixed = True
            self.found_helper = use.kind == "fix"
            return
        if use.kind == "check":
            d.anchor_step = self.bash(f"The {_source(d)} suggests a quick check first.", hint,
                                      "15 repr(0.30000000000000004)" if c.mechanism == "float-repr" else
                                      f"{self.n_tests - 1} passed, 1 failed (the reported case)", exit_code=0)
        elif use.kind == "pattern":
            d.anchor_step = self.bash(f"The {_source(d)} recommends searching for this pattern.",
                                      f"grep -rn \"{hint}\" --include=*.py {REPOS[c.repo]['pkg']}/ | head",
                                      grep_output([(c.file, self.line + 6, f"        candidate = {hint}  # suspicious")]))
        else:  # history
            d.anchor_step = self.bash("Following the working principle about line history.",
                                      f"git log -L :{short(c.func)}:{c.file} --oneline | head -20",
                                      f"3f1c2a9 Refactored {short(c.func)}()\n8be04d1 Fixed #{rng.randrange(20000, 34000)} -- "
                                      f"Handled {c.inputs[0]}.")
        if d.effect == "improved":
            self.bash(f"That output confirms {mech.title}; apply the remedy: {mech.remedy}.",
                      f"sed -i '{self.line + 8}s/value.__class__(resolved)/_normalized(value, resolved)/' {c.file}", "")
            self.run_tests("Run the module's tests after the change.", failed=0)
            self.fixed = True
        elif d.effect == "no_effect":
            self.bash("Same result as before; nothing new from that check.", "python reproduce.py",
                      repro_output(c, self.line + 8, self.fixed), exit_code=0 if self.fixed else 1)

    def own_fix(self, resolved: bool) -> None:
        """The agent's own route to a fix (the helper only when no delivered entry names it)."""
        c, rng = self.task.comp, self.rng
        if self.fixed:
            return
        # A failing attempt digs deeper, so it finds the helper more often (and memory keeps it).
        discover = c.helper not in self.blocked and (self.force == "discover" or rng.random() < (0.45 if resolved else 0.8))
        if discover:
            self.bash(f"{short(c.func)} delegates the rebuilding; let me see what it calls.",
                      f"sed -n '{self.line + 6},{self.line + 18}p' {c.file}",
                      "\n".join(line for _, line in code_lines(c.func, self.line + 6, rng, extra=c.helper)))
            self.found_helper = True
        target = c.helper if discover else c.func
        self.bash(f"Fix {short(target)}: {MECHANISMS[c.mechanism].remedy}.",
                  f"sed -i '{self.line + 8}s/return value.__class__(resolved)/return _rebuild(value, resolved)/' {c.file}", "")
        failed = 0 if resolved or rng.random() < 0.6 else 1 + rng.randrange(3)
        self.run_tests("Run the relevant tests.", failed=failed)
        self.fixed = True

    def submit(self, resolved: bool, limits: bool) -> str:
        c = self.task.comp
        if not resolved and self.rng.random() < 0.5:
            self.run_tests("One more run of the wider test module.", failed=1 + self.rng.randrange(2))
        diff = git_diff(c.file, short(c.func), "return value.__class__(resolved)", "return _rebuild(value, resolved)",
                        self.line + 6)
        if limits:
            return diff
        self.bash("The fix is in place; submitting.", "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git add -A && git diff --cached",
                  "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT\n" + diff)
        return diff


def _source(d: Decision) -> str:
    return {"full_card": f"card {d.item.item_id}", "task_recall": "memory", "search_result": "memory search",
            "full_skill": f"skill {d.item.item_id}", "scene_content": f"scene {d.item.item_id}",
            "persona": "persona"}.get(d.form, "memory")


def _pick_effect(rng: random.Random, improved: float, undetermined: float, harmed: float) -> str:
    u = rng.random()
    if u < improved:
        return "improved"
    if u < improved + undetermined:
        return "undetermined"
    if u < improved + undetermined + harmed:
        return "harmed"
    return "no_effect"


# --------------------------------------------------------------------------------------------
# Configuration-specific memory consultation
# --------------------------------------------------------------------------------------------


def _clip(text: str, n: int = 220) -> str:
    return text if len(text) <= n else text[:n] + "..."


def consult_cards(s: Script, corpus: CardCorpus, harm_card: bool) -> None:
    """Agent-directed card search: one search (sometimes an empty one first), then full reads."""
    em, rng, task = s.em, s.rng, s.task
    c = task.comp
    query = f"{short(c.func)} {c.exc} {c.inputs[task.variant]}"
    if rng.random() < 0.12:
        q0 = f"{task.repo} {c.exc} {c.inputs[task.variant]} regression after refactoring"
        sid = em.search("agent", q0, "memgovern", [])
        out = f"exp_search: no experience cards matched \"{q0}\"."
        s.bash("Before editing, let me look for earlier experience with this failure.", f"exp_search \"{q0}\"", out,
               tool="exp_search", args={"query": q0}, memory=("search0", [], "search_preview", sid))
    cards = corpus.search(task, rng, force_decoy=harm_card)
    sid = em.search("agent", query, "memgovern", [{"namespace": it.namespace, "item_id": it.item_id, "version": "1",
                                                  "value": it.preview, "score": round(0.9 - 0.04 * i, 3)}
                                                 for i, it in enumerate(cards)])
    lines, entries = [], []
    for i, it in enumerate(cards):
        lines.append(f"{i + 1}. {_clip(it.preview)}")
        entries.append(entry_dict(it.namespace, it.item_id, it.preview, scheme="card-id", rank=i + 1))
    out = f"Found {len(cards)} experience cards for \"{query}\":\n" + "\n".join(lines)
    s.bash("Let me search the experience cards before editing.", f"exp_search \"{query}\"", out,
           tool="exp_search", args={"query": query}, memory=("search", entries, "search_preview", sid),
           proof=s.broken != "missing_proof")
    # Which previews lead to full reads (selection), and what the full reads do.
    reads: list[tuple[Item, str, str | None]] = []
    for it in cards:
        if it.kind == "fix" and it.comp == c.key and rng.random() < 0.5:
            eff = _pick_effect(rng, 0.82, 0.12, 0.03)
            reads.append((it, "acted_on" if rng.random() < 0.7 else "none", eff))
        elif it.kind == "decoy" and it.comp == c.key and (harm_card or rng.random() < 0.12):
            reads.append((it, "acted_on" if harm_card or rng.random() < 0.5 else "referenced", "harmed"))
        elif rng.random() < 0.06:
            reads.append((it, "referenced" if rng.random() < 0.3 else "none", None))
    read_ids = {it.item_id for it, _, _ in reads}
    pdec = {}
    for i, it in enumerate(cards):
        clipped = len(it.preview) > 220
        pdec[it.item_id] = s.decide("search", i, it, "search_preview", "selected" if it.item_id in read_ids else "none",
                                    note=("clipped preview; " if clipped else "") + ("selected for a full read" if it.item_id in read_ids else ""))
        if it.item_id not in read_ids and it.hint:
            s.blocked.add(it.hint)
    for n, (it, infl, eff) in enumerate(reads):
        out = it.value
        placed = None
        if s.broken == "duplicate" and n == 0:
            out = it.value + "\n\n(retrying: output repeated)\n\n" + it.value
            placed = it.value
        step = s.bash(f"Card {it.item_id} looks related; let me read it in full.", f"exp_read {it.item_id}", out,
                      tool="exp_read", args={"card_id": it.item_id},
                      memory=(f"read{n}", [entry_dict(it.namespace, it.item_id, it.value, scheme="card-id")], "full_card", None),
                      placed=placed)
        pdec[it.item_id].anchor_step = step
        d = s.decide(f"read{n}", 0, it, "full_card", infl, novelty="novel")
        if infl == "acted_on":
            d.effect = eff
            s.uses.append(Use(d, "fix" if it.kind == "fix" else "decoy"))
        elif infl == "referenced":
            s.mention(d, f"Card {it.item_id} ({it.title}) does not match what the reproducer shows; I won't follow it.")


def consult_mem0(s: Script, store: Mem0Store, harm: bool) -> None:
    """Host task recall (system message, every call) plus an occasional agent memory search."""
    em, rng, task = s.em, s.rng, s.task
    recalled = store.recall(task)
    sid = em.search("host", task.text, store.scope(task.repo),
                    [{"namespace": it.namespace, "item_id": it.item_id, "version": str(it.version), "value": it.value,
                      "score": round(0.8 - 0.05 * i, 3)} for i, it in enumerate(recalled)])
    if recalled:
        text = "User Memories:\n" + "\n".join(f"- {it.value}" for it in recalled)
        em.host_block("recall", text, [entry_dict(it.namespace, it.item_id, it.value, version=str(it.version),
                                                  scheme="mem0-uuid") for it in recalled], "task_recall", sid)
        for i, it in enumerate(recalled):
            infl = "none"
            if it.kind == "fix" and it.comp == task.comp.key:
                infl = "acted_on" if rng.random() < 0.42 else ("referenced" if rng.random() < 0.3 else "none")
                if s.force == "act":
                    infl, harm = "acted_on", False
            elif it.relevant(task) and rng.random() < 0.15:
                infl = "referenced"
            d = s.decide("recall", i, it, "task_recall", infl)
            if infl == "acted_on":
                d.effect = "harmed" if harm else _pick_effect(rng, 0.8, 0.15, 0.0)
                if s.force == "act":
                    d.effect = "improved"
                s.uses.append(Use(d, "fix"))
                if d.effect == "harmed":
                    d.note = "stale memory: the helper no longer covers this case"
            if it.origin:
                d.note = (d.note + "; " if d.note else "") + f"written by {it.origin} (resolved={it.origin_resolved})"
    s._recalled = recalled  # type: ignore[attr-defined]


def mem0_tool_search(s: Script, store: Mem0Store) -> None:
    em, task = s.em, s.task
    recalled = getattr(s, "_recalled", [])
    results = store.tool_search(task, recalled)
    query = f"{short(task.comp.func)} {task.comp.exc}"
    sid = em.search("agent", query, store.scope(task.repo),
                    [{"namespace": it.namespace, "item_id": it.item_id, "version": str(it.version), "value": it.value,
                      "score": round(0.6 - 0.07 * i, 3)} for i, it in enumerate(results)])
    payload = {"results": [{"id": it.item_id, "memory": it.value, "score": round(0.6 - 0.07 * i, 3)}
                           for i, it in enumerate(results)]}
    out = json.dumps(payload, ensure_ascii=False, indent=1)
    placed = None
    if s.broken == "duplicate":
        placed = out
        out = out + "\n" + out
    s.bash("Let me search my memory for this failure.", f"mem0_memory search \"{query}\"", out,
           tool="mem0_memory", args={"action": "search", "query": query},
           memory=("msearch", [entry_dict(it.namespace, it.item_id, it.value, version=str(it.version), scheme="mem0-uuid")
                               for it in results], "search_result", sid), placed=placed,
           proof=s.broken != "missing_proof")
    for i, it in enumerate(results):
        is_copy = it in recalled
        s.decide("msearch", i, it, "search_result", "none", novelty="redundant" if is_copy else None, copy=is_copy,
                 note="copy of an entry visible in the task recall" if is_copy else "")


def consult_proxy(s: Script, store: ProxyStore) -> None:
    """Persona, scene index and skill catalog in every call; the agent opens skills and scenes."""
    em, rng, task = s.em, s.rng, s.task
    mech = task.comp.mechanism
    if store.persona is not None:
        p = store.persona
        em.host_block("persona", f"<user-persona>\n{p.value}\n</user-persona>",
                      [entry_dict(p.namespace, p.item_id, p.value, version=str(p.version), scheme="tdai-id")], "persona")
        u = rng.random()
        infl = "acted_on" if u < 0.04 else ("referenced" if u < 0.15 else "none")
        if "git log -L" not in p.value and infl == "acted_on":
            infl = "referenced"
        d = s.decide("persona", 0, p, "persona", infl)
        if infl == "acted_on":
            d.effect = "undetermined"
            s.uses.append(Use(d, "history"))
        elif infl == "referenced":
            s._persona_ref = d  # type: ignore[attr-defined]
    scenes = sorted(store.scenes.values(), key=lambda it: -store.heat.get(it.mech or "", 0))[:5]
    if scenes:
        lines = [f"{it.item_id} ({it.preview})" for it in scenes]
        em.host_block("scenes", "<scene-navigation>\n" + "\n".join(f"- {ln}" for ln in lines) + "\n</scene-navigation>",
                      [entry_dict(it.namespace, it.item_id, ln, version=str(it.version), scheme="tdai-path")
                       for it, ln in zip(scenes, lines)], "scene_index")
    skills = list(store.skills.values())[-10:]
    if skills:
        lines = [f"{it.item_id}: {it.preview}" for it in skills]
        em.host_block("skills", "<available_skills>\n" + "\n".join(f"- {ln}" for ln in lines) + "\n</available_skills>",
                      [entry_dict(it.namespace, it.item_id, ln, version=str(it.version), scheme="tdai-skill")
                       for it, ln in zip(skills, lines)], "skill_catalog")
    s._proxy_reads = []  # type: ignore[attr-defined]
    for i, it in enumerate(scenes):
        sel = it.mech == mech and rng.random() < 0.3
        d = s.decide("scenes", i, it, "scene_index", "selected" if sel else "none", novelty="novel")
        if sel:
            s._proxy_reads.append((d, it, "scene_content"))  # type: ignore[attr-defined]
    for i, it in enumerate(skills):
        sel = (it.mech == mech and rng.random() < 0.55) or rng.random() < 0.04
        d = s.decide("skills", i, it, "skill_catalog", "selected" if sel else "none", novelty="novel")
        if it.origin and it.repo != task.repo:
            d.note = f"cross-repository item from {it.origin}"
        if sel:
            s._proxy_reads.append((d, it, "full_skill"))  # type: ignore[attr-defined]


def proxy_reads(s: Script) -> None:
    rng, task = s.rng, s.task
    for n, (sel, it, form) in enumerate(getattr(s, "_proxy_reads", [])):
        path = it.item_id if form == "scene_content" else f"skills/{it.item_id}.md"
        out, placed = it.value, None
        if s.broken == "duplicate" and n == 0:
            out, placed = it.value + "\n" + it.value, it.value
        step = s.bash(f"Let me open {path}.", f"cat {path}", out,
                      memory=(f"pread{n}", [entry_dict(it.namespace, it.item_id, it.value, version=str(it.version),
                                                        scheme="tdai-skill" if form == "full_skill" else "tdai-path")], form, None),
                      placed=placed, proof=not (s.broken == "missing_proof" and n == 0))
        sel.anchor_step = step
        relevant = it.mech == task.comp.mechanism
        infl = "none"
        if relevant and rng.random() < (0.5 if form == "full_skill" else 0.35):
            infl = "acted_on"
        d = s.decide(f"pread{n}", 0, it, form, infl, novelty="novel")
        if it.origin and it.repo != task.repo:
            d.note = f"cross-repository item from {it.origin} ({it.repo})"
        elif it.origin:
            d.note = f"written by {it.origin}"
        if infl == "acted_on":
            d.effect = _pick_effect(rng, 0.6, 0.3, 0.03)
            s.uses.append(Use(d, "check" if form == "full_skill" else "pattern"))
