"""Figure builders of the app (pure functions).

Invariants: the episode timeline draws one marker per step in a single trace (so 250 steps stay
one trace), one shaded band per entry whose credit window is set, anchored actions and observed
effects in their colours, delivery arrows at consuming steps, and neutralises markup in recorded
text shown in hover labels; profile radars use Figure 3's log radial scale with zero shares at the
centre; the delivery-form chart omits forms with no benefit and under 0.1% of tokens.
"""

from __future__ import annotations

import math

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


def test_timeline_windows_anchors_effects_and_arrows() -> None:
    entries = [
        {
            "span_id": "e/e-d1",
            "pos": 0,
            "item_id": "tip",
            "window_start": 3,
            "window_end": 9,
            "anchors": [5],
            "effect": "improved",
            "usage_label": "used",
        },
        {
            "span_id": "e/e-d1",
            "pos": 1,
            "item_id": "persona",
            "window_start": 3,
            "window_end": 250,
            "anchors": [],
            "effect": None,
        },
        {
            "span_id": "e/e-d4",
            "pos": 0,
            "item_id": "card",
            "window_start": None,
            "window_end": None,
            "anchors": [12],
            "effect": "harmed",
        },
    ]
    dels = [
        {"delivery_id": "e-d1", "step": 3, "form": "task_recall"},
        {"delivery_id": "e-d2", "step": 4, "form": "task_recall", "restatement": True},
        {"delivery_id": "e-d9", "step": float("nan"), "form": "x"},
    ]
    fig = TL.episode_timeline(_steps(250), entries, dels, selected_step=5)
    steps = fig.data[0]
    assert len(steps.x) == 250 and list(steps.customdata[:3]) == [1, 2, 3]
    assert list(steps.marker.symbol).count("x") == len([i for i in range(1, 251) if i % 7 == 0])
    rects = [s for s in fig.layout.shapes if s.type == "rect"]
    assert [(r.x0, r.x1) for r in rects] == [(2.55, 9.45), (2.55, 250.45)]
    anchors = next(t for t in fig.data if t.name == "anchored action")
    assert list(anchors.x) == [5, 12] and list(anchors.y) == [1, 3]
    effects = next(t for t in fig.data if t.name == "observed effect")
    assert list(effects.marker.color) == [TL.EFFECT_COLOURS["improved"], TL.EFFECT_COLOURS["harmed"]]
    assert [a.x for a in fig.layout.annotations] == [3.0]
    restated = next(t for t in fig.data if t.name == "restated delivery")
    assert list(restated.x) == [4.0]
    many = TL.episode_timeline(
        _steps(250), [], [{"delivery_id": f"d{i}", "step": i, "form": "f"} for i in range(1, 251)]
    )
    assert len(many.layout.annotations) == TL.MAX_ARROWS
    assert len(next(t for t in many.data if t.name == "restated delivery").x) == 250 - TL.MAX_ARROWS
    assert all("<script" not in (h or "") for h in steps.hovertext)
    assert any("&lt;script&gt;" in h for h in steps.hovertext)


def test_radar_log_scale_and_zero_at_centre() -> None:
    fig = CH.profile_radar(
        {"A": {"relevance": 0.15, "harm": 0.0036, "benefit": 0.0}, "B": {"relevance": 0.0142}}
    )
    ax = fig.layout.polar.radialaxis
    assert ax.type == "log" and list(ax.range) == [-3, 2]
    a = fig.data[0]
    assert a.r[0] == 15.0 and a.r[CH.AXES.index("benefit")] == CH.LOG_MIN_PCT
    assert math.isclose(a.r[CH.AXES.index("harm")], 0.36)
    heat = CH.profile_heatmap({"A": {"relevance": 0.15}})
    assert heat.data[0].text[0][0] == "15%" and heat.data[0].z[0][0] == math.log10(15)


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
