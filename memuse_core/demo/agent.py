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

import random
from dataclasses import dataclass, field
from typing import Any

from .catalog import MECHANISMS, REPOS
from .emit import EpisodeEmitter
from .memory import Item
from .plan import Decision, Use
from .shell import (
    code_lines,
    git_diff,
    grep_output,
    head_output,
    ls_output,
    repro_output,
    short,
    test_command,
    test_output,
    test_snippet,
)
from .tasks import Task


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
    """Showcase override: `discover` (find the helper), `act` (act on the recalled fix, improved) or
    `cross` (read and act on a skill written in another repository, improved)."""
    cross_item: Item | None = None
    recalled: list[Item] = field(default_factory=list)
    """Items of the host task recall (mem0)."""
    persona_ref: Decision | None = None
    """The persona entry when the agent mentions it (proxy)."""
    proxy_reads: list[tuple[Decision, Item, str]] = field(default_factory=list)
    """Selected catalog/index entries with the item and the form of their full read (proxy)."""
    task_named: set[str] = field(default_factory=set)
    """Hints the task text already names (their use follows the task, not memory)."""
    no_repro: bool = False
    """The reproducer is not run again (a change checked only by an unrelated test module)."""

    # -- helpers -----------------------------------------------------------------------------
    def decide(
        self,
        key: str,
        pos: int,
        item: Item,
        form: str,
        influence: str,
        *,
        novelty: str | None = None,
        copy: bool = False,
        note: str = "",
    ) -> Decision:
        rel = item.relevant(self.task)
        if novelty is None:
            novelty = (
                "redundant"
                if item.value in self.task.text or item.value.rstrip(".") in self.task.text
                else "novel"
            )
        if influence == "acted_on" and item.hint and item.hint in self.task.text:
            # The task itself names the hint: the action follows the task, not the entry (A.2.2
            # "An action that simply follows the task instructions ... is explained by that prior
            # source"). The agent still uses the hint (a misleading cue for a lexical judge).
            d = Decision(key, pos, item, form, rel, novelty, "none", copy=copy, origin=item.origin)
            d.note = (note + "; " if note else "") + "the task already names the hint"
            self.decisions.append(d)
            self.task_named.add(item.hint)
            return d
        d = Decision(key, pos, item, form, rel, novelty, influence, copy=copy, note=note, origin=item.origin)
        self.decisions.append(d)
        if influence != "acted_on" and item.hint and item.hint not in self.task_named:
            self.blocked.add(item.hint)
        return d

    def bash(self, thought: str, command: str, output: str, exit_code: int = 0, **kw: Any) -> int:
        return self.em.step(thought, command, output, exit_code=exit_code, **kw)

    def view(self, path: str, name: str, start: int, extra: str = "") -> tuple[str, str]:
        """(command, output) of a numbered code view whose range matches the lines shown."""
        lines = code_lines(name, start, self.rng, extra)
        out = "\n".join(f"{n:6d}\t{line}" for n, line in lines)
        return f"nl -ba {path} | sed -n '{start},{lines[-1][0]}p'", out

    def run_tests(self, thought: str, failed: int, where: str | None = None, exc: str | None = None) -> int:
        c = self.task.comp
        passed = self.n_tests - failed
        return self.bash(
            thought,
            test_command(c),
            test_output(c, passed, failed, self.rng, where, exc),
            exit_code=1 if failed else 0,
        )

    # -- phases ------------------------------------------------------------------------------
    def explore(self) -> None:
        c, rng = self.task.comp, self.rng
        pkg = REPOS[c.repo]["pkg"]
        self.bash("Let me look at the repository layout first.", "ls", ls_output(c))
        self.bash(
            f"The traceback points at {short(c.func)}; let me find its definition.",
            f'grep -rn "def {short(c.func)}" {pkg}/ | head -20',
            grep_output([(c.file, self.line, f"    def {short(c.func)}(self, value, *args, **kwargs):")]),
        )
        self.bash(f"Let me read {short(c.func)} in {c.file}.", *self.view(c.file, c.func, self.line))
        if rng.random() < 0.6:
            self.bash(
                "Let me see which tests cover this function.",
                f'grep -rn "{short(c.func)}" {c.test_file} | head -10',
                grep_output(
                    [
                        (
                            c.test_file,
                            rng.randrange(20, 900),
                            f"        self.assertEqual({short(c.func)}(x), expected)",
                        )
                        for _ in range(rng.randrange(1, 4))
                    ]
                ),
            )

    def reproduce(self) -> None:
        c = self.task.comp
        script = (
            f"cat > reproduce.py <<'EOF'\nimport sys\nsys.path.insert(0, '.')\n\ndef main():\n"
            f"    # {self.task.task_id}: call {short(c.func)} with {c.inputs[self.task.variant]}\n    ...\n\n"
            f"main()\nEOF"
        )
        # every configuration (the baseline too) takes this step as the task's "To reproduce:" asks:
        # its wording comes from the task, so it is no use of a persona delivered beside it (A.2.2)
        self.bash("Following the task's steps, reproduce it first.", script, "")
        self.bash("Run it.", "python reproduce.py", repro_output(c, self.line + 8, False), exit_code=1)

    def filler(self, n: int) -> None:
        c, rng = self.task.comp, self.rng
        pkg = REPOS[c.repo]["pkg"]
        last = -1
        for _ in range(n):
            k = rng.randrange(6)
            if k == last:
                k = (k + 1 + rng.randrange(5)) % 6
            last = k
            start = self.line + rng.randrange(-60, 80)
            if k == 0:
                self.bash("Let me look a bit further around this code.", *self.view(c.file, c.func, start))
            elif k == 1:
                self.bash(
                    f"Where else is {short(c.func)} called?",
                    f'grep -rn "{short(c.func)}(" {pkg}/ | head -20',
                    grep_output(
                        [
                            (
                                rng.choice([c.file, c.test_file]),
                                rng.randrange(50, 3000),
                                f"        {rng.choice(['return', 'value =', 'result ='])} self.{short(c.func)}(value)",
                            )
                            for _ in range(rng.randrange(3, 16))
                        ]
                    ),
                )
            elif k == 2 and not self.no_repro:
                self.bash(
                    "Let me re-run the reproducer.",
                    "python reproduce.py",
                    repro_output(c, self.line + 8, self.fixed),
                    exit_code=0 if self.fixed else 1,
                )
            elif k in (2, 3):
                self.bash(
                    "Check the working tree state.",
                    "git status --short",
                    f" M {c.file}\n?? reproduce.py" if self.fixed else "?? reproduce.py",
                )
            elif k == 4:
                snippet = test_snippet(c, rng)
                self.bash(
                    "Let me read the related test case.",
                    f"sed -n '{start},{start + snippet.count(chr(10))}p' {c.test_file}",
                    snippet,
                )
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
            source = "task" if d.influence == "none" else _source(d)
            step = self.bash(
                f"The {source} points at `{hint}` in {path}; let me look at it.",
                f'grep -n "def {fn}" {path}',
                grep_output([(path, line, f"    def {fn}(self, value, *args, **kwargs):")]),
            )
            if d.influence == "acted_on":
                d.anchor_step = step
            else:
                d.effect = None  # influence none: no effect is assessed (A.2.2)
            self.bash(f"Reading {fn}.", *self.view(path, hint, line))
            # the thought states the remedy of the entry acted on: a decoy card's own strategy, not
            # the mechanism's remedy (that is the fix card's content, A.2.2 allocation)
            remedy = mech.remedy if use.kind == "fix" else "guard the value and coerce it before returning"
            self.bash(
                f"Apply the change in `{fn}`: {remedy}.",
                f"sed -i '{line + 8}s/return value.__class__(resolved)/return _rebuild(value, resolved)/' {path}",
                "",
            )
            if d.effect in ("undetermined", "no_effect"):
                # The check of the change never completes, so its consequence stays unknown
                # (A.2.2 "Undetermined": a blocked attempt without shown benefit or harm).
                d.effect = "undetermined"
                self.bash(
                    f"Run the tests after changing {fn}.",
                    test_command(c),
                    "Command timed out after 60 seconds (the test run did not finish).",
                    exit_code=124,
                )
                return
            if d.effect == "harmed":
                self.run_tests(
                    f"Run the tests after changing {fn}.",
                    failed=min(self.n_tests - 1, 3 + rng.randrange(6)),
                    where=path,
                    exc="AttributeError",
                )
                self.bash(
                    f"The change in {fn} broke more tests than it fixed; reverting it.",
                    f"git checkout -- {path}",
                    "",
                )
                self.blocked.add(hint)
                return
            if d.influence == "acted_on" and rng.random() < 0.25:
                # misleading cue: only an unrelated test module runs after the change and
                # the reproducer is not run again: "a generic pass count ... alone is insufficient"
                # (A.2.2), so the effect stays undetermined
                self.bash(
                    "Run a quick smoke test of the command-line helpers.",
                    f"{REPOS[c.repo]['runner']} tests/test_cli_smoke.py -q",
                    f"{'.' * 12}\n12 passed in {rng.uniform(0.2, 2.0):.2f}s",
                )
                d.effect = "undetermined"
                d.note = (d.note + "; " if d.note else "") + "checked only by an unrelated test module"
                self.no_repro = self.fixed = True
                self.found_helper = use.kind == "fix"
                return
            self.run_tests(f"Run the tests after changing {fn}.", failed=0)
            self.bash(
                f"The reproducer now passes with the change in `{fn}`.",
                "python reproduce.py",
                repro_output(c, self.line, True),
            )
            if d.influence == "acted_on" and rng.random() < 0.3:
                # misleading cue: a scratch file is stashed with a message naming the
                # hint; the memory-shaped change is kept, so this is no revert of it (A.2.2
                # "The harmful consequence must follow the supplied guidance")
                self.bash(
                    "notes.txt is my scratch file, not part of the fix; stash it away.",
                    f"git stash push -u notes.txt -m 'scratch notes on {fn}'",
                    f"Saved working directory and index state On main: scratch notes on {fn}",
                )
            self.fixed = True
            self.found_helper = use.kind == "fix"
            return
        blocked = d.effect == "undetermined"
        if use.kind == "check":
            out = (
                "15 repr(0.30000000000000004)"
                if c.mechanism == "float-repr"
                else f"{self.n_tests - 1} passed, 1 failed (the reported case)"
            )
            d.anchor_step = self.bash(
                f"The {_source(d)} suggests a quick check first.",
                hint,
                _BLOCKED if blocked else out,
                exit_code=124 if blocked else 0,
            )
        elif use.kind == "pattern":
            out = grep_output([(c.file, self.line + 6, "        " + _MATCH.get(c.mechanism, hint))])
            d.anchor_step = self.bash(
                f"The {_source(d)} recommends searching for this pattern.",
                f'grep -rn "{hint}" --include=*.py {REPOS[c.repo]["pkg"]}/ | head',
                _BLOCKED if blocked else out,
                exit_code=124 if blocked else 0,
            )
        else:  # history
            out = (
                f"3f1c2a9 Refactored {short(c.func)}()\n8be04d1 Fixed #{rng.randrange(20000, 34000)} -- "
                f"Handled {c.inputs[0]}."
            )
            d.anchor_step = self.bash(
                "Following the working principle about line history.",
                f"git log -L :{short(c.func)}:{c.file} --oneline | head -20",
                _BLOCKED if blocked else out,
                exit_code=124 if blocked else 0,
            )
        # Undetermined: the attempt was blocked (timeout), so neither benefit nor harm shows (A.2.2).
        if d.effect == "improved":
            self.bash(
                f"That output confirms {mech.title}; apply the remedy: {mech.remedy}.",
                f"sed -i '{self.line + 8}s/value.__class__(resolved)/_normalized(value, resolved)/' {c.file}",
                "",
            )
            self.run_tests("Run the module's tests after the change.", failed=0)
            self.fixed = True
        elif d.effect == "no_effect":
            self.bash(
                "That only repeats what the reproducer already showed; nothing new from it.",
                "git status --short",
                "?? reproduce.py",
            )

    def own_fix(self, resolved: bool) -> None:
        """The agent's own route to a fix (the helper only when no delivered entry names it)."""
        c, rng = self.task.comp, self.rng
        if self.fixed:
            return
        # A failing attempt digs deeper, so it finds the helper more often (and memory keeps it).
        discover = c.helper not in self.blocked and (
            self.force == "discover" or rng.random() < (0.45 if resolved else 0.8)
        )
        if discover:
            self.bash(
                f"{short(c.func)} delegates the rebuilding; let me see what it calls.",
                *self.view(c.file, c.func, self.line, extra=c.helper),
            )
            self.found_helper = True
        target = c.helper if discover else c.func
        self.bash(
            f"Fix {short(target)}: {MECHANISMS[c.mechanism].remedy}.",
            f"sed -i '{self.line + 8}s/return value.__class__(resolved)/return _rebuild(value, resolved)/' {c.file}",
            "",
        )
        failed = 0 if resolved or rng.random() < 0.6 else 1 + rng.randrange(3)
        self.run_tests("Run the relevant tests.", failed=failed)
        self.fixed = True

    def submit(self, resolved: bool, limits: bool) -> str:
        c = self.task.comp
        if not resolved and self.rng.random() < 0.5:
            self.run_tests("One more run of the wider test module.", failed=1 + self.rng.randrange(2))
        diff = git_diff(
            c.file,
            short(c.func),
            "return value.__class__(resolved)",
            "return _rebuild(value, resolved)",
            self.line + 6,
        )
        if limits:
            return diff
        self.bash(
            "The fix is in place; submitting.",
            "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git add -A && git diff --cached",
            "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT\n" + diff,
        )
        return diff


_BLOCKED = "Command timed out after 60 seconds (no output)."
_MATCH = {
    "float-repr": 'value_str = "%.16g" % value',
    "empty-input": "first = values[0]",
    "nested-recursion": "if isinstance(node, CompoundNode):",
    "type-rebuild": "return type(value)(resolved_values)",
    "bytes-str": "if 'b' in mode:",
    "state-leak": "prepared = req.copy()",
    "mro-order": "for base in cls.__mro__:",
    "escaping": "pattern = re.escape(term)",
    "annotation-str": "hints = get_type_hints(obj)",
    "sign-handling": "sign = -1 if text.startswith('-') else 1",
}
"""A line a scene's grep pattern matches, per mechanism."""


def _source(d: Decision) -> str:
    return {
        "full_card": f"card {d.item.item_id}",
        "task_recall": "memory",
        "search_result": "memory search",
        "full_skill": f"skill {d.item.item_id}",
        "scene_content": f"scene {d.item.item_id}",
        "persona": "persona",
    }.get(d.form, "memory")
