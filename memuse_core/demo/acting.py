"""The scripted agent acting on a delivered entry (the demo's planted influence and effect).

`act(script, use)` writes the steps of one planned use (MemUse 3.4, A.2.2): the entry's hint shows
up in an action inside its window (a fix or decoy location, a check command, a grep pattern, a
history lookup), and the steps after it show the planted effect: tests pass (improved), fail and
the change is reverted (harmed), nothing new (no effect), or the check never completes or is only
an unrelated test module (undetermined). An entry the task already names is used as the task says
(influence none). The rest of the episode is `agent.Script`.
"""

from __future__ import annotations

from .agent import Script
from .catalog import MECHANISMS, REPOS
from .plan import Decision, Use
from .shell import grep_output, repro_output, short, test_command


def act(s: Script, use: Use) -> None:
    """Steps acting on one delivered entry as its planted decision says (module docstring)."""
    d, c, rng = use.decision, s.task.comp, s.rng
    mech = MECHANISMS[c.mechanism]
    hint = d.item.hint or ""
    if use.kind in ("fix", "decoy"):
        path = c.file if use.kind == "fix" else c.decoy_file
        fn = short(hint)
        line = rng.randrange(40, 900)
        source = "task" if d.influence == "none" else _source(d)
        step = s.bash(
            f"The {source} points at `{hint}` in {path}; let me look at it.",
            f'grep -n "def {fn}" {path}',
            grep_output([(path, line, f"    def {fn}(self, value, *args, **kwargs):")]),
        )
        if d.influence == "acted_on":
            d.anchor_step = step
        else:
            d.effect = None  # influence none: no effect is assessed (A.2.2)
        s.bash(f"Reading {fn}.", *s.view(path, hint, line))
        # the thought states the remedy of the entry acted on: a decoy card's own strategy, not
        # the mechanism's remedy (that is the fix card's content, A.2.2 allocation)
        remedy = mech.remedy if use.kind == "fix" else "guard the value and coerce it before returning"
        s.bash(
            f"Apply the change in `{fn}`: {remedy}.",
            f"sed -i '{line + 8}s/return value.__class__(resolved)/return _rebuild(value, resolved)/' {path}",
            "",
        )
        if d.effect in ("undetermined", "no_effect"):
            # The check of the change never completes, so its consequence stays unknown
            # (A.2.2 "Undetermined": a blocked attempt without shown benefit or harm).
            d.effect = "undetermined"
            s.bash(
                f"Run the tests after changing {fn}.",
                test_command(c),
                "Command timed out after 60 seconds (the test run did not finish).",
                exit_code=124,
            )
            return
        if d.effect == "harmed":
            s.run_tests(
                f"Run the tests after changing {fn}.",
                failed=min(s.n_tests - 1, 3 + rng.randrange(6)),
                where=path,
                exc="AttributeError",
            )
            s.bash(
                f"The change in {fn} broke more tests than it fixed; reverting it.",
                f"git checkout -- {path}",
                "",
            )
            s.blocked.add(hint)
            return
        if d.influence == "acted_on" and rng.random() < 0.25:
            # misleading cue: only an unrelated test module runs after the change and
            # the reproducer is not run again: "a generic pass count ... alone is insufficient"
            # (A.2.2), so the effect stays undetermined
            s.bash(
                "Run a quick smoke test of the command-line helpers.",
                f"{REPOS[c.repo]['runner']} tests/test_cli_smoke.py -q",
                f"{'.' * 12}\n12 passed in {rng.uniform(0.2, 2.0):.2f}s",
            )
            d.effect = "undetermined"
            d.note = (d.note + "; " if d.note else "") + "checked only by an unrelated test module"
            s.no_repro = s.fixed = True
            s.found_helper = use.kind == "fix"
            return
        s.run_tests(f"Run the tests after changing {fn}.", failed=0)
        s.bash(
            f"The reproducer now passes with the change in `{fn}`.",
            "python reproduce.py",
            repro_output(c, s.line, True),
        )
        if d.influence == "acted_on" and rng.random() < 0.3:
            # misleading cue: a scratch file is stashed with a message naming the
            # hint; the memory-shaped change is kept, so this is no revert of it (A.2.2
            # "The harmful consequence must follow the supplied guidance")
            s.bash(
                "notes.txt is my scratch file, not part of the fix; stash it away.",
                f"git stash push -u notes.txt -m 'scratch notes on {fn}'",
                f"Saved working directory and index state On main: scratch notes on {fn}",
            )
        s.fixed = True
        s.found_helper = use.kind == "fix"
        return
    blocked = d.effect == "undetermined"
    if use.kind == "check":
        out = (
            "15 repr(0.30000000000000004)"
            if c.mechanism == "float-repr"
            else f"{s.n_tests - 1} passed, 1 failed (the reported case)"
        )
        d.anchor_step = s.bash(
            f"The {_source(d)} suggests a quick check first.",
            hint,
            _BLOCKED if blocked else out,
            exit_code=124 if blocked else 0,
        )
    elif use.kind == "pattern":
        out = grep_output([(c.file, s.line + 6, "        " + _MATCH.get(c.mechanism, hint))])
        d.anchor_step = s.bash(
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
        d.anchor_step = s.bash(
            "Following the working principle about line history.",
            f"git log -L :{short(c.func)}:{c.file} --oneline | head -20",
            _BLOCKED if blocked else out,
            exit_code=124 if blocked else 0,
        )
    # Undetermined: the attempt was blocked (timeout), so neither benefit nor harm shows (A.2.2).
    if d.effect == "improved":
        s.bash(
            f"That output confirms {mech.title}; apply the remedy: {mech.remedy}.",
            f"sed -i '{s.line + 8}s/value.__class__(resolved)/_normalized(value, resolved)/' {c.file}",
            "",
        )
        s.run_tests("Run the module's tests after the change.", failed=0)
        s.fixed = True
    elif d.effect == "no_effect":
        s.bash(
            "That only repeats what the reproducer already showed; nothing new from it.",
            "git status --short",
            "?? reproduce.py",
        )


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
