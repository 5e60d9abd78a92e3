"""Observers find memory text inside recorded prompts (MemUse 3.1, A.1.1; MEMORY-FORMATS.md).

Invariants: each built-in wrapper is found in a small hand-written prompt with one entry per
entry of its block (exposed ids kept, otherwise stable rendered ids); the placement proof names
the host message, its digest and the block's start, and the block text occurs once there; a
block restated on every call yields one delivery per consuming call with identical entries;
user observers load from TOML/JSON and bad configs fail with one line naming the field.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memuse_core.episode import episodes_from_events
from memuse_core.events import (
    EpisodeEnd,
    EpisodeStart,
    MemoryDelivery,
    Message,
    Response,
    ToolCall,
    text_digest,
)
from memuse_core.ingest.base import IngestError
from memuse_core.ingest.common import CallChain
from memuse_core.ingest.observers import BUILTIN, load_observers, observe, scan_message

CASES = {
    "mem0-user-memories": (
        "You are a coding agent.\n\nUser Memories:\n- prefers tabs\n- runs pytest with -x\n\nSolve it.",
        [("prefers tabs", None), ("runs pytest with -x", None)],
    ),
    "mem0-relevant-memories": (
        "Task below.\n### Relevant memories\n- [fact] repo uses poetry [mem0:1a2b3c4d]\n"
        "- [preference] keep diffs small [mem0:99aa88bb]\n\nFix the bug.",
        [("repo uses poetry", "1a2b3c4d"), ("keep diffs small", "99aa88bb")],
    ),
    "relevant-memories": (
        "<relevant-memories>\nMemories that may help:\n- [fact|build] run make before tests\n"
        "- the CI uses py3.11\n</relevant-memories>\nPlease fix the failing test.",
        [("run make before tests", None), ("the CI uses py3.11", None)],
    ),
    "tdai-user-persona": (
        "System.\n<user-persona>\nWorks in small verified steps.\n</user-persona>\n",
        [("Works in small verified steps.", None)],
    ),
    "tdai-scene-navigation": (
        "<scene-navigation>\n- scenes/migrations.md (heat 4): fixing migration order\n"
        "- scenes/flaky.md (heat 1): flaky tests\n</scene-navigation>",
        [
            ("scenes/migrations.md (heat 4): fixing migration order", None),
            ("scenes/flaky.md (heat 1): flaky tests", None),
        ],
    ),
    "tdai-available-skills": (
        "<available_skills>\n- fix-imports: repair broken relative imports\n- run-tests: run the suite\n"
        "</available_skills>",
        [
            ("fix-imports: repair broken relative imports", "fix-imports"),
            ("run-tests: run the suite", "run-tests"),
        ],
    ),
    "tdai-profile-memory": (
        "<tdai_profile_memory>\n## core memory\n- likes Go\n## scene index\n- db.md\n</tdai_profile_memory>",
        [("likes Go", None), ("db.md", None)],
    ),
    "letta-memory-blocks": (
        "Base.\n<memory_blocks>\nThe following memory blocks are currently engaged:\n\n<human>\n"
        "<description>\nthe user\n</description>\n<metadata>\n- chars_current=4\n</metadata>\n<value>\n"
        "Chad\n</value>\n</human>\n\n<persona>\n<description>\nme\n</description>\n<value>\nI am Sam.\n"
        "</value>\n</persona>\n\n</memory_blocks>\nRest.",
        [("Chad", "human"), ("I am Sam.", "persona")],
    ),
    "openhands-extra-info": (
        '<EXTRA_INFO>\nThe following information has been included based on a keyword match for "git".\n'
        "It may or may not be relevant to the user's request.\n\nUse the GitLab API.\n</EXTRA_INFO>",
        [("Use the GitLab API.", None)],
    ),
    "reflexion-memory": (
        "Your memory for the task below:\nTrial 0:\nI searched the wrong cabinet.\nTrial 1:\n"
        "I should open drawer 2 first.\n\nHere is the task:\nput a clean mug on the desk.",
        [("I searched the wrong cabinet.", None), ("I should open drawer 2 first.", None)],
    ),
    "swe-exp-experiences": (
        "Fix issue 12.\nHere are some experiences you can refer to:\n***Experience 1***:\n"
        "Check the migration order first.\n\n***Experience 2***:\nRun the tests with -k.\n\nGood luck.",
        [("Check the migration order first.", None), ("Run the tests with -k.", None)],
    ),
    "swe-bench-cl-experiences": (
        "--- Relevant Past Experiences (top 2) ---\nTask ID: django__django-1\nRelevance: 0.81\n"
        "Fixed by reordering imports.\n\nTask ID: django__django-2\nRelevance: 0.44\nAdded a guard.\n"
        "--- End of Past Experiences ---\nNow solve:",
        [
            ("Task ID: django__django-1\nRelevance: 0.81\nFixed by reordering imports.", "django__django-1"),
            ("Task ID: django__django-2\nRelevance: 0.44\nAdded a guard.", "django__django-2"),
        ],
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_builtin_observer_finds_each_entry(name: str) -> None:
    text, want = CASES[name]
    found = scan_message(Message(role="system", content=text), BUILTIN)
    assert [f.observer.name for f in found] == [name]
    (f,) = found
    assert text.count(f.text) == 1 and text[f.start : f.start + len(f.text)] == f.text
    assert [e.value for e in f.entries] == [v for v, _ in want]
    for e, (value, exposed) in zip(f.entries, want):
        assert e.digest == text_digest(value)
        if exposed is None:
            assert e.id_scheme == "rendered" and e.item_id == f"{name}:{text_digest(value)[:12]}"
        else:
            assert e.item_id == exposed and e.id_scheme != "rendered"
        assert e.value in f.text


def test_no_block_no_entries_and_assistant_text_ignored() -> None:
    assert scan_message(Message(role="user", content="User Memories: none today."), BUILTIN) == []
    said = "User Memories:\n- I made this up"
    assert scan_message(Message(role="assistant", content=said), BUILTIN) == []


def test_duplicated_block_is_not_provable_and_skipped() -> None:
    block = "<user-persona>\nCareful.\n</user-persona>"
    assert scan_message(Message(role="system", content=block + "\n" + block), BUILTIN) == []


def _episode(system: str, n_calls: int, tool_output: str | None = None) -> list:
    ep = "e1"
    chain = CallChain(ep)
    events: list = [EpisodeStart(episode_id=ep, run_id="r", task_id="t")]
    history = [Message(role="system", content=system), Message(role="user", content="Fix it.")]
    for k in range(n_calls):
        tc = ToolCall(id=f"t{k}", name="bash", arguments="{}")
        events.append(chain.call(history, Response(content=f"step {k}", tool_calls=[tc])))
        history.append(Message(role="assistant", content=f"step {k}", tool_calls=[tc]))
        out = tool_output if (tool_output and k == 0) else f"out {k}"
        history.append(Message(role="tool", content=out, tool_call_id=f"t{k}"))
    events.append(EpisodeEnd(episode_id=ep, exit_status="Submitted"))
    return events


def test_restated_block_gives_one_delivery_per_call_with_resolving_proofs() -> None:
    system = "You fix bugs.\n\nUser Memories:\n- the parser lives in src/dates.py\n- use fromisoformat\n"
    events = list(observe(_episode(system, 3)))
    dels = [e for e in events if isinstance(e, MemoryDelivery)]
    assert len(dels) == 3
    assert len({d.consuming_call_id for d in dels}) == 3
    assert all(d.entries == dels[0].entries for d in dels)
    # each delivery directly follows its consuming call
    for i, ev in enumerate(events):
        if isinstance(ev, MemoryDelivery):
            assert getattr(events[i - 1], "call_id", None) == ev.consuming_call_id
    (rec,) = episodes_from_events(events).values()
    for d in rec.deliveries:
        (pl,) = d.placements
        host = rec.call(d.consuming_call_id).messages[pl.proof.message_index].text()
        assert pl.proof.message_index == 0 and pl.slot == "system" and d.route == "host"
        assert text_digest(host) == pl.proof.message_digest
        assert host[pl.proof.start :].startswith(pl.text) and host.count(pl.text) == 1


def test_memory_in_a_tool_result_is_an_agent_route_delivery_from_the_next_call() -> None:
    out = "<relevant-memories>\n- [fact] cache lives in /tmp/c\n</relevant-memories>"
    events = list(observe(_episode("plain system", 3, tool_output=out)))
    dels = [e for e in events if isinstance(e, MemoryDelivery)]
    # the tool message enters the inputs of calls 2 and 3
    assert [d.consuming_call_id for d in dels] == ["e1/c002", "e1/c003"]
    assert all(d.route == "agent" and d.placements[0].slot == "tool_result" for d in dels)
    assert dels[0].placements[0].proof.message_index == 3


def test_recorded_delivery_is_not_observed_twice() -> None:
    system = "X\n<user-persona>\nCareful.\n</user-persona>\n"
    first = list(observe(_episode(system, 1)))
    (d,) = [e for e in first if isinstance(e, MemoryDelivery)]
    recorded = d.model_copy(update={"delivery_id": "mine", "form": "persona-recorded"})
    events = _episode(system, 1)
    events.insert(2, recorded)
    again = [e for e in observe(events) if isinstance(e, MemoryDelivery)]
    assert [x.delivery_id for x in again] == ["mine"]


def test_user_observer_from_toml_and_json(tmp_path: Path) -> None:
    toml = tmp_path / "obs.toml"
    toml.write_text(
        '[[observer]]\nname = "team-notes"\nstart = "<team-notes>"\nend = "</team-notes>"\n'
        'entries = "lines"\nform = "task_recall"\nnamespace = "notes"\n'
        'entry_pattern = "(?P<value>.*?) \\\\(#(?P<id>\\\\d+)\\\\)"\nid_scheme = "note-no"\n'
    )
    obs = load_observers(toml)
    text = "Hi\n<team-notes>\n- deploy on Fridays is banned (#12)\n- ask Ana about auth (#7)\n</team-notes>"
    (f,) = scan_message(Message(role="user", content=text), obs)
    assert [(e.item_id, e.value, e.namespace) for e in f.entries] == [
        ("12", "deploy on Fridays is banned", "notes"),
        ("7", "ask Ana about auth", "notes"),
    ]
    js = tmp_path / "obs.json"
    js.write_text('[{"name": "facts", "start_regex": "^FACTS:", "entries": "lines", "form": "facts"}]')
    (o,) = load_observers(js)
    (f,) = scan_message(Message(role="system", content="a\nFACTS:\n- one\n- two\nrest"), [o])
    assert [e.value for e in f.entries] == ["one", "two"] and f.text == "FACTS:\n- one\n- two"


def test_user_observer_with_block_regex_and_separator(tmp_path: Path) -> None:
    js = tmp_path / "obs.json"
    js.write_text(
        json.dumps(
            {
                "observer": [
                    {
                        "name": "kb",
                        "regex": r"\[KB (?P<n>\d+) hits\]\n(?P<body>.*?)\n\[/KB\]",
                        "entries": "separator",
                        "separator": "\n---\n",
                        "form": "knowledge",
                        "namespace": "kb",
                    }
                ]
            }
        )
    )
    (o,) = load_observers(js)
    text = "Task.\n[KB 2 hits]\nUse uv, not pip.\n---\nTests need DOCKER=1.\n[/KB]\nGo."
    (f,) = scan_message(Message(role="user", content=text), [o])
    assert [e.value for e in f.entries] == ["Use uv, not pip.", "Tests need DOCKER=1."]
    assert f.text == "[KB 2 hits]\nUse uv, not pip.\n---\nTests need DOCKER=1.\n[/KB]"
    assert text[f.start : f.end] == f.text


@pytest.mark.parametrize(
    "body, field",
    [
        ('[[observer]]\nname = "x"\n', "observer[0]"),
        ('[[observer]]\nname = "x"\nstart = "<a>"\nentries = "whole"\n', "observer[0]"),
        (
            '[[observer]]\nname = "x"\nstart = "<a>"\nentry_pattern = "(unclosed"\n',
            "observer[0].entry_pattern",
        ),
        ('[[observer]]\nname = "x"\nstart = "<a>"\ncolour = "red"\n', "observer[0].colour"),
        ('[[observer]]\nname = "x"\nstart = "<a>"\nregex = "a"\n', "observer[0]"),
        ('[[observer]]\nname = "x"\nstart = "<a>"\nentries = "separator"\nend = "</a>"\n', "observer[0]"),
        ('[[observer]\nname = "x"\n', None),
    ],
)
def test_bad_observer_config_is_one_clear_error(tmp_path: Path, body: str, field: str | None) -> None:
    p = tmp_path / "bad.toml"
    p.write_text(body)
    with pytest.raises(IngestError) as ei:
        load_observers(p)
    assert ei.value.field == field
    assert str(ei.value).startswith(str(p)) and "\n" not in str(ei.value)
