"""Case studies: exports escape every recorded text, carry their data for a lossless import, and
human-vs-judge agreement uses Cohen's kappa.

Invariants: an exported HTML file contains no live markup from notes, tags or excerpts and
references no URL (no network needed); HTML and Markdown exports import back to the same
document; kappa matches hand-computed values and is undefined when chance agreement is 1.
"""

from __future__ import annotations

import json
import re

import plotly.graph_objects as go
import pytest

from memuse_core import casestudy as CS

XSS = "<script>alert('x')</script><img src=x onerror=alert(1)>[link](http://evil.example) <!-- </script>"


def _doc() -> CS.CaseStudy:
    a1 = CS.new_annotation(
        "span",
        "ep1/ep1-d1#0",
        episode_id="ep1",
        note=f"Agent followed it. {XSS}",
        tags=["harm", XSS],
        labels={"relevance": "true", "influence": "acted_on", "effect": "harmed"},
    )
    a2 = CS.new_annotation("step", "ep1#S3", episode_id="ep1", note="step note")
    doc = CS.CaseStudy(name=f"Wrong component {XSS}", description="desc", annotations=[a1, a2])
    doc.excerpts[a1.annotation_id] = f"recorded output {XSS}"
    return doc


def test_html_export_is_inert_and_offline() -> None:
    doc = _doc()
    fig = go.Figure(go.Scatter(x=[1, 2], y=[0, 0], hovertext=[XSS, "b"]))
    html = CS.export_html(doc, {doc.annotations[0].annotation_id: fig}, plotly_js="/* plotly */")
    body = html.split("<body>", 1)[1]
    # No recorded markup survives as markup; the only <script> tags are ours.
    assert "<img" not in body
    assert body.count("<script") == len(
        re.findall(r"<script(?: type='application/json' id='memuse-case-study')?>", body)
    )
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in body
    assert "<!--" not in body
    # Offline: no http(s) URL is referenced by any src/href attribute.
    assert not re.search(r"(src|href)\s*=\s*['\"]?https?:", html)


def test_html_and_markdown_round_trip() -> None:
    doc = _doc()
    for text in (CS.export_html(doc, plotly_js=""), CS.export_markdown(doc)):
        back = CS.import_case_study(text)
        assert back.model_dump() == doc.model_dump()


def test_markdown_export_escapes_titles_and_fences_excerpts() -> None:
    doc = _doc()
    md = CS.export_markdown(doc)
    first = md.splitlines()[0]
    assert "<script>" not in first and "\\[link\\]" in first
    assert "```text\nrecorded output" in md


def test_import_rejects_foreign_files() -> None:
    with pytest.raises(CS.CaseStudyError, match="not a MemUse case-study export"):
        CS.import_case_study("<html><body>hello</body></html>", name="x.html")
    bad = CS.export_markdown(_doc()).replace('"format":1', '"format":99')
    with pytest.raises(CS.CaseStudyError):
        CS.import_case_study(bad.replace("memuse-case-study:", "memuse-case-study:!!"), name="y.md")


def test_labels_are_validated() -> None:
    with pytest.raises(ValueError, match="influence"):
        CS.new_annotation("span", "s", labels={"influence": "maybe"})
    a = CS.new_annotation("span", "s", labels={"influence": "none", "effect": None})
    assert a.labels == {"influence": "none"}


def test_cohen_kappa_hand_values() -> None:
    # po = 3/4; rater A: a,a,b,b; rater B: a,b,b,b -> pe = (2*1 + 2*3)/16 = 1/2 -> kappa = 1/2
    assert CS.cohen_kappa([("a", "a"), ("a", "b"), ("b", "b"), ("b", "b")]) == pytest.approx(0.5)
    assert CS.cohen_kappa([("a", "a"), ("b", "b")]) == pytest.approx(1.0)
    assert CS.cohen_kappa([("a", "b"), ("b", "a")]) == pytest.approx(-1.0)
    assert CS.cohen_kappa([("a", "a"), ("a", "a")]) is None
    assert CS.cohen_kappa([]) is None


def test_agreement_table_per_signal() -> None:
    rows = [
        ("relevance", "true", "true"),
        ("relevance", "false", "true"),
        ("relevance", "false", "false"),
        ("influence", "acted_on", "acted_on"),
        ("effect", "harmed", None),
    ]
    t = {r["signal"]: r for r in CS.agreement_table(rows)}
    assert t["relevance"]["pairs"] == 3 and t["relevance"]["agreement"] == pytest.approx(2 / 3)
    # po = 2/3; human true1 false2; judge true2 false1 -> pe = (1*2 + 2*1)/9 = 4/9 -> kappa = 0.4
    assert t["relevance"]["kappa"] == pytest.approx(0.4)
    assert t["effect"]["pairs"] == 0 and t["effect"]["kappa"] is None
    assert CS.judge_value("novelty", None) == "undetermined" and CS.judge_value("relevance", False) == "false"


def test_html_export_renders_markdown_of_notes_safely_and_gives_labels_room() -> None:
    a = CS.new_annotation(
        "step", "ep1#S3", episode_id="ep1", note=f"**Key** step:\n\n- read `x`\n- {XSS}\x1b[2J"
    )
    doc = CS.CaseStudy(name="n", description="# Why\n\n*harmful* card", annotations=[a])
    fig = go.Figure(go.Scatter(x=[1], y=[1]))
    fig.update_layout(margin={"l": 10}, yaxis={"ticktext": ["item-with-a-long-name"], "tickvals": [1]})
    html = CS.export_html(doc, {a.annotation_id: fig}, plotly_js="/* plotly */")
    body = html.split("<body>", 1)[1]
    assert "<h1>Why</h1>" in body and "<em>harmful</em>" in body
    assert "<strong>Key</strong>" in body and "<li>read <code>x</code></li>" in body
    assert "<img" not in body and "&lt;script&gt;" in body and "\x1b" not in body and "␛[2J" in body
    assert not re.search(r"(src|href)\s*=\s*['\"]?https?:", html)
    spec = json.loads(re.search(r"var f=(\{.*?\});Plotly", body, re.S).group(1))
    assert spec["layout"]["yaxis"]["automargin"] is True and spec["layout"]["margin"]["l"] >= 80
