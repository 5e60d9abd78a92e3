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
`Script` holds the episode's state and writes its own phases; the steps of acting on an entry are
`acting.act`, the consultation of each memory system `consult`.
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
