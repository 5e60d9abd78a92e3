"""Figure builders of the app (pure functions).

Invariants: the episode timeline draws one marker per step in a single trace (so 250 steps stay
one trace), every credit window as a bar of one trace whose hover names the entry, the window and
why it ends (A.1.5), anchored actions and observed effects in their colours, deliveries as markers
at consuming steps whose labels never overlap, a legend entry for every kind of mark, no layout
shape but the step cursor, action kinds read from the command (never a code fragment), and
neutralises markup in recorded text shown in hover labels; profile radars use Figure 3's log radial scale with zero shares at the
centre; the delivery-form chart omits forms with no benefit and under 0.1% of tokens.
"""

from __future__ import annotations

import math
import re

from memuse_core import charts as CH
from memuse_core import timeline as TL


def _steps(n: int) -> list[dict]:
    return [
        {
            "step": i,
            "action": f"bash: pytest -k t{i}" if i % 3 else "<script>alert(1)</script>",
            "tools": "bash",
            "exit_code": 1 if i % 7 == 0 else 0,
        }
        for i in range(1, n + 1)
    ]


def _entries() -> list[dict]:
    return [
        {
            "span_id": "e/e-d1",
            "pos": 0,
            "namespace": "n",
            "item_id": "tip",
            "first_step": 3,
            "status": "eligible",
            "window_start": 3,
            "window_end": 9,
            "anchors": [5],
            "effect": "improved",
            "usage_label": "used",
        },
        {
            "span_id": "e/e-d1",
            "pos": 1,
            "namespace": "n",
            "item_id": "persona",
            "first_step": 3,
            "status": "eligible",
            "window_start": 3,
            "window_end": 250,
            "anchors": [],
            "effect": None,
        },
        {
            "span_id": "e/e-d4",
            "pos": 0,
            "namespace": "n",
            "item_id": "tip",
            "first_step": 10,
            "status": "eligible",
            "window_start": 10,
            "window_end": 250,
            "anchors": [12],
            "effect": "harmed",
        },
        {
            "span_id": "e/e-d7",
            "pos": 0,
            "namespace": "n",
            "item_id": "card",
            "first_step": 20,
            "status": "auto_neutral",
            "window_start": None,
            "window_end": None,
            "anchors": [],
            "effect": None,
        },
    ]


def test_drawing_carries_every_mark_legend_and_hover_of_the_figure() -> None:
    """The app draws `drawing(figure)` as SVG: same rows, traces, legend names, hovers and steps."""
    dels = [{"delivery_id": "e-d1", "step": 3, "form": "task_recall"}]
    fig = TL.episode_timeline(_steps(30), _entries(), dels)
    d = TL.drawing(fig)
    assert [r["label"] for r in d["rows"]] == list(fig.layout.yaxis.ticktext)
    assert d["x_range"] == list(fig.layout.xaxis.range) and d["y_range"] == list(fig.layout.yaxis.range)
    assert [t["name"] for t in d["traces"]] == [t.name for t in fig.data]
    steps = d["traces"][0]
    assert steps["x"] == steps["step"] == list(range(1, 31)) and not steps["legend"]
    assert "&lt;script&gt;" in steps["hover"][2] and "<script>" not in steps["hover"][2]
    legend_only = [t for t in d["traces"] if t["kind"] == "markers" and not t["x"]]
    assert legend_only and all(t["legend"] and t["hover"] is None for t in legend_only)
    (bars,) = [t for t in d["traces"] if t["kind"] == "bar"]
    assert bars["y"] == [1, 2, 3] and bars["base"][0] == 2.55
    assert "credit window S3–S9" in bars["hover"][0]
    acted = next(t for t in d["traces"] if t["name"] == TL.LEGEND["acted"])
    assert acted["hover"] is None and acted["step"] == [5, 12]  # drawn, clickable, no hover
    delivery = next(t for t in d["traces"] if t["name"] == TL.LEGEND["delivery"])
    assert delivery["step"] == [3] and delivery["text"] == ["task_recall"]


def test_timeline_one_marker_per_step_windows_as_one_bar_trace() -> None:
    dels = [
        {"delivery_id": "e-d1", "step": 3, "form": "task_recall"},
        {"delivery_id": "e-d2", "step": 4, "form": "task_recall", "restatement": True},
        {"delivery_id": "e-d9", "step": float("nan"), "form": "x"},
    ]
    fig = TL.episode_timeline(_steps(250), _entries(), dels, selected_step=5)
    steps = fig.data[0]
    assert len(steps.x) == 250 and list(steps.customdata[:3]) == [1, 2, 3]
    assert list(steps.marker.symbol).count("x") == len([i for i in range(1, 251) if i % 7 == 0])
    # One bar per entry with a window, in one trace; the resident copy gets a hollow diamond.
    bars = [t for t in fig.data if t.type == "bar"]
    assert len(bars) == 1 and list(bars[0].y) == [1, 2, 3]
    assert [(round(b, 2), round(b + w, 2)) for b, w in zip(bars[0].base, bars[0].x)] == [
        (2.55, 9.45),
        (2.55, 250.45),
        (9.55, 250.45),
    ]
    empty = next(t for t in fig.data if t.name == TL.LEGEND["empty"])
    assert list(empty.x) == [20] and list(empty.y) == [4]
    anchors = next(t for t in fig.data if t.name == TL.LEGEND["anchor"])
    assert list(anchors.x) == [5, 12] and list(anchors.y) == [1, 3] and list(anchors.customdata) == [5, 12]
    improved = next(t for t in fig.data if t.name == TL.LEGEND["improved"])
    harmed = next(t for t in fig.data if t.name == TL.LEGEND["harmed"])
    assert improved.marker.color == TL.EFFECT_COLOURS["improved"] and list(harmed.y) == [3]
    first = next(t for t in fig.data if t.name == TL.LEGEND["delivery"])
    assert list(first.x) == [3.0] and list(first.customdata) == [3]
    assert list(next(t for t in fig.data if t.name == TL.LEGEND["restated"]).x) == [4.0]
    # No annotations; the only shape is the cursor at the selected step.
    assert len(fig.layout.annotations) == 0
    assert [(s.type, s.x0) for s in fig.layout.shapes] == [("line", 5)]
    assert all("<script" not in (h or "") for h in steps.hovertext)
    assert any("&lt;script&gt;" in h for h in steps.hovertext)


def test_timeline_legend_names_every_mark() -> None:
    fig = TL.episode_timeline(
        _steps(30), _entries(), [{"delivery_id": "d", "step": 3, "form": "f"}], selected_step=None
    )
    names = {t.name for t in fig.data if t.showlegend is not False}
    assert {
        "pytest",
        "other",
        TL.LEGEND["failed"],
        TL.LEGEND["window"],
        TL.LEGEND["empty"],
        TL.LEGEND["anchor"],
        TL.LEGEND["acted"],
        TL.LEGEND["improved"],
        TL.LEGEND["harmed"],
        TL.LEGEND["delivery"],
    } <= names
    # The caption explains every legend name in the same words.
    assert all(name in TL.CAPTION for name in TL.LEGEND.values()) and "A.1.5" in TL.CAPTION


def test_window_hover_names_entry_window_and_why_it_ends() -> None:
    fig = TL.episode_timeline(_steps(250), _entries())
    bars = next(t for t in fig.data if t.type == "bar")
    first, persona, later = bars.hovertext
    assert "tip" in first and "S3–S9 (7 steps)" in first
    assert "later copy of this item (span e/e-d4, first consumed at S10)" in first
    assert "episode end" in persona and "does not end a window" in persona
    empty = next(t for t in fig.data if t.name == TL.LEGEND["empty"]).hovertext[0]
    assert "empty window" in empty and "earlier copy" in empty


def test_delivery_labels_never_overlap() -> None:
    dels = [{"delivery_id": f"d{i}", "step": i, "form": "search_preview"} for i in range(1, 61)]
    fig = TL.episode_timeline(_steps(60), [], dels)
    first = next(t for t in fig.data if t.name == TL.LEGEND["delivery"])
    assert len(first.x) == 60  # every delivery keeps its marker (and hover)
    labelled = [x for x, t in zip(first.x, first.text) if t]
    gap = max(2, 60 * TL.LABEL_GAP_SHARE)
    assert len(labelled) > 1 and all(b - a >= gap for a, b in zip(labelled, labelled[1:]))
    assert TL.delivery_labels([1, 2, 3, 10], 20) == [True, False, True, True]


def test_timeline_without_memory_has_no_empty_band() -> None:
    """An episode without deliveries draws its two rows in a short chart with no label room above
    the deliveries row (the general minimum height left an empty band under the step cursor)."""
    bare = TL.episode_timeline(_steps(30))
    dels = [{"delivery_id": "d1", "step": 3, "form": "search_preview"}]
    labelled = TL.episode_timeline(_steps(30), [], dels)
    with_entries = TL.episode_timeline(_steps(30), _entries(), dels)
    assert bare.layout.height < with_entries.layout.height
    assert bare.layout.yaxis.range[1] > labelled.layout.yaxis.range[1]  # less room above the top row


# Commands as mini-swe-agent, SWE-agent and OpenHands record them; the old first-word-after-colon
# rule named the first two `\n" pos` and `' assert`.
REAL_COMMANDS = [
    ("bash", "python - <<'PY'\nprint(\"x:\\n\" pos)\nPY", "python"),
    ("bash", "python -c 'import a; x = 1' && python -c 'a: b' assert", "python"),
    ("bash", "cd /testbed && cat > t.py << 'EOF'\nimport json: x\nEOF", "cat"),
    ("bash", "PYTHONPATH=testbed:$PYTHONPATH pytest -q", "pytest"),
    ("bash", "bash -lc 'python - << \"PY\"\np=1\nPY'", "python"),
    ("bash", "set -e; mkdir -p /testbed/x", "mkdir"),
    ("bash", "sudo timeout 10 /usr/bin/python3 run.py", "python3"),
    ("bash", "bash: nl -ba django/db/models/base.py | sed -n '1,20p'", "nl"),
    ("execute_bash", "execute_bash: ls -l /workspace", "ls"),
    ("str_replace_editor", "str_replace_editor: {'command': 'view'}", "str_replace_editor"),
    ("bash", "' assert x == 1", TL.OTHER_KIND),
    ("bash", '\n" pos', TL.OTHER_KIND),
    ("", "    return exec_bash_cmd(cmd)", TL.NO_TOOL_KIND),
    ("", "", TL.OTHER_KIND),
]


def test_action_kind_reads_the_command_not_code_fragments() -> None:
    got = [TL.action_kind(tools, action) for tools, action, _ in REAL_COMMANDS]
    assert got == [want for _, _, want in REAL_COMMANDS]


def test_radar_log_scale_and_zero_at_centre() -> None:
    """Figure 3's radar (HTML boxes): a vertex's distance from the centre is its share on the log
    scale from 0.001% (centre) to 100% (outer ring); a zero share sits at the centre; group names
    arrive escaped."""
    from app_text import radar_vertices

    from memuse_core.charts import profile as P

    radar = CH.profile_radar(
        {"A <b>": {"relevance": 0.15, "harm": 0.0036, "benefit": 0.0}, "B": {"relevance": 0.0142}}
    )
    assert "<b>" not in radar and "A &lt;b&gt;" in radar
    for t in ("0.001%", "0.01%", "0.1%", "1%", "10%", "100%"):
        assert f">{t}</span>" in radar
    v = radar_vertices(radar)

    def radius(key: str) -> float:
        x, y = v[key]
        return math.hypot(x - P.CENTRE[0], y - P.CENTRE[1])

    scale = P.RADIUS / (math.log10(CH.LOG_MAX_PCT) - math.log10(CH.LOG_MIN_PCT))
    assert math.isclose(radius("A <b> · Relevance: 15%"), scale * (math.log10(15) + 3), abs_tol=0.15)
    assert math.isclose(radius("A <b> · Harm: 0.36%"), scale * (math.log10(0.36) + 3), abs_tol=0.15)
    assert math.isclose(radius("B · Relevance: 1.42%"), scale * (math.log10(1.42) + 3), abs_tol=0.15)
    assert radius("A <b> · Benefit: 0%") < 0.15 and radius("B · Harm: —") < 0.15
    assert v["A <b> · Relevance: 15%"][1] < P.CENTRE[1]  # the first axis points up
    heat = CH.profile_heatmap({"A": {"relevance": 0.15}, "Z": {"relevance": 1.0, "harm": 0.0}})
    cells = re.findall(r'<td style="([^"]*)" title="([^"]*)">([^<]*)</td>', heat)
    by_title = {t: (style, text) for style, t, text in cells}
    assert by_title["A · Relevance: 15%"][1] == "15%"
    assert f"background:{P._shade(P.log_position(0.15, 0.001, 100))}" in by_title["A · Relevance: 15%"][0]
    assert "background:#08306b" in by_title["Z · Relevance: 100%"][0]  # the darkest shade at 100%
    assert "background:#6baed6" in by_title["Z · Harm: 0%"][0]  # the lightest at 0.001% and below
    assert "background" not in by_title["A · Harm: —"][0]  # undefined: no shade


def test_form_chart_omits_tiny_forms_without_benefit() -> None:
    rows = [
        {"group": "g", "form": "full_card", "token_share": 0.125, "beneficial_share": 0.964},
        {"group": "g", "form": "preview", "token_share": 0.0005, "beneficial_share": 0.0},
        {"group": "g", "form": "tiny_but_useful", "token_share": 0.0001, "beneficial_share": 0.01},
    ]
    fig = CH.form_share_chart(rows)
    assert list(fig.data[0].y) == ["full_card", "tiny_but_useful"]
    assert [round(x, 6) for x in fig.data[1].x] == [96.4, 1.0]


def test_shared_lines_flags_prior_passages() -> None:
    out = CH.shared_lines(
        "Use fromisoformat for dates\nshort\nnew advice here", ["we already use fromisoformat for dates"]
    )
    assert out == [("Use fromisoformat for dates", False), ("short", False), ("new advice here", False)]
    out = CH.shared_lines("parse with fromisoformat\nnew advice here", ["x\nparse with fromisoformat\ny"])
    assert out == [("parse with fromisoformat", True), ("new advice here", False)]


def test_form_chart_leaves_an_undefined_share_unplotted_and_its_legend_clear_of_the_axis() -> None:
    """A form whose beneficial share is undefined (no judged entry) gets no diamond, never one at
    0%; the legend sits above the plot, away from the x axis and its title."""
    rows = [
        {"group": "g", "form": "full_card", "token_share": 0.5, "beneficial_share": None},
        {"group": "g", "form": "preview", "token_share": 0.5, "beneficial_share": 0.25},
    ]
    fig = CH.form_share_chart(rows)
    assert list(fig.data[1].x) == [None, 25.0]
    assert fig.layout.legend.y > 1 and fig.layout.legend.yanchor == "bottom"
