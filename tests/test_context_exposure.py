"""Exposure matching (MemUse A.1.2): full / clipped / unknown, the three matching stages, prefix
matching on original and decoded text only, each placement separately."""

from __future__ import annotations

import json

from test_context_helpers import ctx_of

from memuse_core.builder import EpisodeBuilder, entry
from memuse_core.rules.exposure import PlacementText, match_exposure

VALUE = "Call reset_cache() before re-running the migration test."


def m(value, *texts, tool=False):
    return match_exposure(value, [PlacementText(i, t, tool) for i, t in enumerate(texts)])


def test_exposure_full_verbatim() -> None:
    x = m(VALUE, f"Memories:\n- {VALUE}\n")
    assert (x.exposure, x.exposed_text, x.stage, x.placement_pos) == ("full", VALUE, "verbatim", 0)


def test_exposure_clipped_longest_prefix_of_at_least_eight_chars() -> None:
    x = m(VALUE, "Memories:\n- Call reset_cache() before re-ru…")
    assert x.exposure == "clipped"
    assert x.exposed_text == "Call reset_cache() before re-ru"
    assert m(VALUE, "xx Call re…").exposure == "unknown"  # 7-char prefix is too short
    assert m(VALUE, "xx Call res…").exposed_text == "Call res"  # exactly 8


def test_exposure_unknown_when_value_or_text_missing() -> None:
    assert m(None, "anything").exposure == "unknown"
    assert m(VALUE, None).exposure == "unknown"
    assert m(VALUE, "completely unrelated text").exposed_text is None


def test_exposure_json_decoding_up_to_four_levels() -> None:
    value = 'Set "strict": true in the parser config.\nThen rerun.'
    enc = value
    for _ in range(4):
        enc = json.dumps({"result": enc})
    assert value not in enc
    x = m(value, enc)
    assert (x.exposure, x.stage, x.exposed_text) == ("full", "json", value)
    # a fifth level is not decoded
    five = json.dumps({"r": enc})
    assert m(value, five).exposure != "full"


def test_exposure_numbered_line_views_in_tool_results() -> None:
    value = "def reset_cache():\n    _CACHE.clear()\n    return None"
    cat_n = "     7\tdef reset_cache():\n     8\t    _CACHE.clear()\n     9\t    return None\n"
    x = m(value, cat_n, tool=True)
    assert (x.exposure, x.stage) == ("full", "numbered")
    # the same view outside a tool result is not decoded
    assert m(value, cat_n, tool=False).exposure != "full"
    # non-consecutive numbers do not form one run
    gap = "     7\tdef reset_cache():\n     9\t    _CACHE.clear()\n    10\t    return None\n"
    assert m(value, gap, tool=True).exposure != "full"
    # nl leaves blank lines unnumbered; numbering continues after them
    nl_value = "a = 1\n\nb = 2"
    nl_out = "     1\ta = 1\n       \n     2\tb = 2\n"
    assert m(nl_value, nl_out, tool=True).exposure == "full"


def test_exposure_xml_one_entity_decoding_per_text_node() -> None:
    value = "Use a < b && b > c as the guard"
    xml = "<memory><value>Use a &lt; b &amp;&amp; b &gt; c as the guard</value></memory>"
    x = m(value, xml)
    assert (x.exposure, x.stage) == ("full", "xml")
    # double-encoded entities are decoded once only
    double = "<memory><value>Use a &amp;lt; b &amp;amp;&amp;amp; b &amp;gt; c as the guard</value></memory>"
    assert m(value, double).exposure != "full"


def test_exposure_restricted_normalization() -> None:
    value = "Run make test_all before pushing"
    text = "Notes:\n- Run   make test\\_all\n  before pushing"
    x = m(value, text)
    assert (x.exposure, x.stage, x.exposed_text) == ("full", "normalized", value)
    # values with quotes, backslashes, tabs or line breaks are never normalized
    for bad in ('Run "make  test" before', "Run make\ttest before", "Run make\ntest before"):
        spaced = bad.replace(" ", "   ").replace("\t", " ").replace("\n", " ")
        assert m(bad, spaced).exposure != "full"


def test_exposure_prefix_matching_not_on_normalized_text() -> None:
    value = "Run make test_all before pushing to main"
    # the only match of a long prefix is through normalization: not a clipped exposure
    text = "- Run   make   test\\_all before…"
    x = m(value, text)
    assert x.exposure == "unknown"
    # a prefix inside decoded JSON does count
    y = m(value, json.dumps({"v": "Run make test_all before pu"}))
    assert y.exposure == "clipped" and y.exposed_text == "Run make test_all before pu"


def test_exposure_each_placement_separately_never_across_slots() -> None:
    a, b = VALUE[:25], VALUE[25:]
    x = m(VALUE, a, b)
    assert x.exposure == "clipped" and x.exposed_text == a  # never joined into a full match
    y = m(VALUE, "noise", f"x {VALUE} y")
    assert (y.exposure, y.placement_pos) == ("full", 1)


def test_exposure_in_a_built_episode_json_tool_output() -> None:
    b = EpisodeBuilder("exp1")
    value = "The flaky test needs TZ=UTC.\nSet it in tox.ini."
    out = json.dumps({"results": [{"memory": value, "score": 0.8}]})
    b.step("search", "memory search flaky", out, tool_memory=([entry("m1", value)], "search_result"))
    b.step("edit", "vi tox.ini", "")
    ctx = ctx_of(b)
    d = ctx.deliveries[0]
    assert d.entries[0].exposure == "full" and d.entries[0].stage == "json"
    assert ctx.spans[0].entries[0].exposed_text == value


def test_exposure_numbered_view_after_a_long_unnumbered_header() -> None:
    """A.1.2: numbered lines in tool results are decoded wherever the run starts, also after an
    unnumbered header longer than the first 64 characters the matcher glances at."""
    value = "def reset_cache():\n    _CACHE.clear()"
    header = "Showing the file as requested by the user, with line numbers added by the viewer tool:"
    assert len(header) > 64 and not any(c.isdigit() for c in header)
    view = header + "\n     7\tdef reset_cache():\n     8\t    _CACHE.clear()\n"
    x = m(value, view, tool=True)
    assert (x.exposure, x.stage) == ("full", "numbered")
