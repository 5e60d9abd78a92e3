"""Annotations, case studies, their shareable files, and human-vs-judge agreement.

A user annotates a step, a span (optionally one entry of it) or a memory item with a markdown
note, tags and a human label for each of the five signals (MemUse 3.4: relevance, accuracy,
novelty, influence, observed effect); annotations are collected into a named case study.

A case study exports as one self-contained HTML file (every text escaped, timelines embedded as
plotly figures with the plotly library inline, so no network is needed to open it) and as
Markdown. Both carry the case study's data (a versioned JSON document) so either file imports
back losslessly. Human labels feed a per-signal agreement table with Cohen's kappa.
"""

from __future__ import annotations

import base64
import datetime as dt
import html
import json
import re
import uuid
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from .textsafe import html_text, neutralise
from .vocab import ACCURACY, EFFECT, INFLUENCE, NOVELTY, SIGNALS, UNDETERMINED

CASE_STUDY_FORMAT = 1
"""Version of the exported case-study document; bump and migrate on change."""

SIGNAL_VALUES: dict[str, tuple[str, ...]] = {
    "relevance": ("true", "false"),
    "accuracy": ACCURACY,
    "novelty": (*NOVELTY, UNDETERMINED),
    "influence": (*INFLUENCE, UNDETERMINED),
    "effect": (*EFFECT, UNDETERMINED),
}
"""Human label choices per signal (MemUse A.2.2); undetermined stands for the judge's null."""

TargetKind = Literal["step", "span", "item", "episode"]


class Annotation(BaseModel):
    """A human note on one step, span (entry) or item."""

    annotation_id: str = Field(default_factory=lambda: uuid.uuid4().hex[:12])
    """Stable id (kept through export and import)."""
    target_kind: TargetKind
    """What is annotated."""
    target_id: str
    """`<episode_id>#S<step>` for a step, the span id (`#<pos>` for one entry), or `<namespace>/<item_id>`."""
    episode_id: str | None = None
    """Episode of the target (None for an item)."""
    note: str = ""
    """Markdown note written by the user."""
    tags: list[str] = Field(default_factory=list)
    """Free tags."""
    labels: dict[str, str] = Field(default_factory=dict)
    """Human label per signal (keys from SIGNALS, values from SIGNAL_VALUES)."""
    author: str | None = None
    """Who wrote it."""
    case_study_id: str | None = None
    """Case study it is collected into."""
    created_at: dt.datetime = Field(default_factory=lambda: dt.datetime.now(dt.UTC).replace(tzinfo=None))
    """Creation time (UTC)."""

    def row(self) -> dict[str, Any]:
        """As a store row."""
        return self.model_dump()


class CaseStudy(BaseModel):
    """A named collection of annotations, with what is needed to show it elsewhere."""

    format: int = CASE_STUDY_FORMAT
    """Document format version."""
    case_study_id: str = Field(default_factory=lambda: uuid.uuid4().hex[:12])
    """Stable id."""
    name: str
    """Title."""
    description: str = ""
    """Markdown description."""
    created_at: dt.datetime = Field(default_factory=lambda: dt.datetime.now(dt.UTC).replace(tzinfo=None))
    """Creation time (UTC)."""
    annotations: list[Annotation] = Field(default_factory=list)
    """Collected annotations."""
    excerpts: dict[str, str] = Field(default_factory=dict)
    """Recorded text shown with an annotation (annotation id -> excerpt), escaped on output."""


class CaseStudyError(ValueError):
    """A case-study file that cannot be imported (one clear sentence)."""


def new_annotation(
    target_kind: TargetKind,
    target_id: str,
    *,
    episode_id: str | None = None,
    note: str = "",
    tags: Iterable[str] = (),
    labels: Mapping[str, str | None] | None = None,
    author: str | None = None,
    case_study_id: str | None = None,
) -> Annotation:
    """Build an annotation, dropping empty labels and rejecting unknown signal values."""
    clean: dict[str, str] = {}
    for k, v in (labels or {}).items():
        if v in (None, ""):
            continue
        if k not in SIGNAL_VALUES or v not in SIGNAL_VALUES[k]:
            raise ValueError(f"label `{k}`: {v!r} is not one of {', '.join(SIGNAL_VALUES.get(k, ()))}")
        clean[k] = str(v)
    return Annotation(
        target_kind=target_kind,  # type: ignore[arg-type]
        target_id=target_id,
        episode_id=episode_id,
        note=note,
        tags=[t.strip() for t in tags if t and t.strip()],
        labels=clean,
        author=author,
        case_study_id=case_study_id,
    )


def parse_tags(text: str) -> list[str]:
    """Comma- or space-separated tags."""
    return [t for t in re.split(r"[,\s]+", text or "") if t]


# ---- Export ---------------------------------------------------------------------------------

_DATA_ID = "memuse-case-study"
_MD_MARK = "memuse-case-study:"


def _esc(s: Any) -> str:
    return html_text(s)


def render_markdown(text: str) -> str:
    """A user's markdown (a description, a note) as HTML for the export: CommonMark emphasis,
    code, lists, headings and quotes rendered; raw HTML shown as text; links and images left as
    their literal text (the file references no URL, so opening it never touches the network);
    control and bidi characters made visible first."""
    from markdown_it import MarkdownIt  # lazy: only exports render markdown

    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.disable(["image", "link", "autolink"])
    return md.render(neutralise(text))


def _figure_for_export(spec: dict[str, Any]) -> dict[str, Any]:
    """A figure's JSON laid out for a standalone page: axis labels get the margin they need
    (the app's tight margins clip long row labels outside Streamlit)."""
    layout = dict(spec.get("layout") or {})
    for k in list(layout):
        if k.startswith(("xaxis", "yaxis")) and isinstance(layout[k], dict):
            layout[k] = {**layout[k], "automargin": True}
    if "yaxis" not in layout:
        layout["yaxis"] = {"automargin": True}
    margin = dict(layout.get("margin") or {})
    margin["l"] = max(int(margin.get("l") or 0), 80)
    layout["margin"] = margin
    return {**spec, "layout": layout}


def _doc_json(cs: CaseStudy) -> str:
    # "<" only occurs inside JSON strings; \u003c keeps recorded "</script>" or "<!--" from
    # ever changing how an HTML parser reads the embedding <script> element.
    return cs.model_dump_json().replace("<", "\\u003c")


def export_html(
    cs: CaseStudy, figures: Mapping[str, Any] | None = None, *, plotly_js: str | None = None
) -> str:
    """One self-contained HTML page: escaped text, figures embedded, the data for re-import.

    `figures`: annotation id -> plotly figure (go.Figure or its dict). `plotly_js`: the plotly
    library source to inline (defaults to the installed plotly's bundle); no URL is referenced.
    """
    figures = dict(figures or {})
    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        "<meta http-equiv='Content-Security-Policy' content=\"default-src 'none'; script-src 'unsafe-inline' 'unsafe-eval'; style-src 'unsafe-inline'; img-src data:\">",
        f"<title>{_esc(cs.name)} · MemUse case study</title>",
        "<style>body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}"
        ".ann{border:1px solid #ddd;border-radius:6px;padding:1em;margin:1em 0}"
        ".excerpt{white-space:pre-wrap}.note p:first-child{margin-top:0}"
        ".excerpt{background:#f6f6f6;padding:.6em;font-family:monospace;font-size:90%;max-height:30em;overflow:auto}"
        ".tag{background:#eef;border-radius:4px;padding:0 .4em;margin-right:.3em}"
        "table{border-collapse:collapse}td,th{border:1px solid #ddd;padding:.2em .6em}</style>",
    ]
    if figures:
        if plotly_js is None:
            from plotly.offline import get_plotlyjs  # lazy: only exports with figures need plotly.js

            plotly_js = get_plotlyjs()
        parts.append("<script>" + plotly_js.replace("</script", "<\\/script") + "</script>")
    parts.append("</head><body>")
    parts.append(f"<h1>{_esc(cs.name)}</h1>")
    parts.append(
        f"<p>Case study <code>{_esc(cs.case_study_id)}</code> · {len(cs.annotations)} annotations"
        f" · created {_esc(cs.created_at.isoformat(timespec='seconds'))}</p>"
    )
    if cs.description:
        parts.append(f"<div class='note description'>{render_markdown(cs.description)}</div>")
    for i, a in enumerate(cs.annotations):
        parts.append("<div class='ann'>")
        parts.append(f"<h2>{i + 1}. {_esc(a.target_kind)} <code>{_esc(a.target_id)}</code></h2>")
        if a.tags:
            parts.append("<p>" + "".join(f"<span class='tag'>{_esc(t)}</span>" for t in a.tags) + "</p>")
        if a.labels:
            parts.append(
                "<table><tr>"
                + "".join(f"<th>{_esc(k)}</th>" for k in a.labels)
                + "</tr><tr>"
                + "".join(f"<td>{_esc(v)}</td>" for v in a.labels.values())
                + "</tr></table>"
            )
        if a.note:
            parts.append(f"<div class='note'>{render_markdown(a.note)}</div>")
        ex = cs.excerpts.get(a.annotation_id)
        if ex:
            parts.append(f"<pre class='excerpt'>{_esc(ex)}</pre>")
        fig = figures.get(a.annotation_id)
        if fig is not None:
            spec = _figure_for_export(fig.to_plotly_json() if hasattr(fig, "to_plotly_json") else dict(fig))
            payload = json.dumps(spec, default=_json_default).replace("<", "\\u003c")
            div = f"fig-{i}"
            parts.append(f"<div id='{div}' class='figure' style='height:{_fig_height(spec)}px'></div>")
            parts.append(
                f"<script>(function(){{var f={payload};Plotly.newPlot('{div}',f.data,f.layout,"
                "{staticPlot:false,displaylogo:false});})();</script>"
            )
        parts.append("</div>")
    data = _doc_json(cs)
    parts.append(f"<script type='application/json' id='{_DATA_ID}'>{data}</script>")
    parts.append("</body></html>")
    return "\n".join(parts)


def _fig_height(spec: Mapping[str, Any]) -> int:
    try:
        return int(spec.get("layout", {}).get("height") or 400)
    except (TypeError, ValueError):
        return 400


def _json_default(o: Any) -> Any:
    if hasattr(o, "tolist"):
        return o.tolist()
    if isinstance(o, (dt.date, dt.datetime)):
        return o.isoformat()
    return str(o)


def _md_escape(s: str) -> str:
    """Markdown-inert text: backslash-escape markup characters and neutralise HTML."""
    s = html.escape(s, quote=False)
    return re.sub(r"([\\`*_{}\[\]()#+\-.!|>~])", r"\\\1", s)


def export_markdown(cs: CaseStudy) -> str:
    """The case study as Markdown: notes verbatim (they are the user's markdown), recorded
    excerpts in fenced blocks, and the data in a trailing comment for re-import."""
    out = [
        f"# {_md_escape(cs.name)}",
        "",
        f"Case study `{cs.case_study_id}` · {len(cs.annotations)} annotations",
        "",
    ]
    if cs.description:
        out += [cs.description, ""]
    for i, a in enumerate(cs.annotations):
        out.append(f"## {i + 1}. {a.target_kind} `{a.target_id.replace('`', '')}`")
        out.append("")
        if a.tags:
            out.append("Tags: " + ", ".join(_md_escape(t) for t in a.tags))
            out.append("")
        if a.labels:
            out.append("| " + " | ".join(a.labels) + " |")
            out.append("|" + "---|" * len(a.labels))
            out.append("| " + " | ".join(_md_escape(v) for v in a.labels.values()) + " |")
            out.append("")
        if a.note:
            out += [a.note, ""]
        ex = cs.excerpts.get(a.annotation_id)
        if ex:
            fence = "`" * max(3, _longest_backticks(ex) + 1)
            out += [fence + "text", ex, fence, ""]
    blob = base64.b64encode(_doc_json(cs).encode()).decode()
    out.append(f"<!-- {_MD_MARK}{blob} -->")
    return "\n".join(out) + "\n"


def _longest_backticks(s: str) -> int:
    return max((len(m) for m in re.findall(r"`+", s)), default=0)


# ---- Import ---------------------------------------------------------------------------------


def import_case_study(text: str, *, name: str = "case study file") -> CaseStudy:
    """Read back an exported HTML or Markdown case study (raises CaseStudyError)."""
    raw: str | None = None
    m = re.search(rf"<script type='application/json' id='{_DATA_ID}'>(.*?)</script>", text, re.S)
    if m:
        raw = m.group(1)
    else:
        m = re.search(rf"<!-- {re.escape(_MD_MARK)}([A-Za-z0-9+/=]+) -->", text)
        if m:
            try:
                raw = base64.b64decode(m.group(1)).decode()
            except (ValueError, UnicodeDecodeError) as e:
                raise CaseStudyError(f"{name}: the embedded case-study data is corrupt ({e})") from None
    if raw is None:
        raise CaseStudyError(f"{name}: not a MemUse case-study export (no embedded case-study data)")
    try:
        obj = json.loads(raw)
    except json.JSONDecodeError as e:
        raise CaseStudyError(f"{name}: embedded case-study data is not JSON (line {e.lineno})") from None
    fmt = obj.get("format") if isinstance(obj, dict) else None
    if not isinstance(fmt, int) or fmt > CASE_STUDY_FORMAT:
        raise CaseStudyError(f"{name}: field `format`: unsupported case-study format {fmt!r}")
    try:
        return CaseStudy.model_validate(obj)
    except ValidationError as e:
        first = e.errors()[0]
        loc = ".".join(str(x) for x in first.get("loc", ()))
        raise CaseStudyError(f"{name}: field `{loc}`: {first.get('msg')}") from None


# ---- Human-vs-judge agreement ---------------------------------------------------------------


def judge_value(signal: str, value: Any) -> str | None:
    """A judge's stored signal value in the human label vocabulary (null -> undetermined)."""
    if signal == "relevance":
        if value is None or (isinstance(value, float) and value != value):
            return None
        return "true" if bool(value) else "false"
    if signal == "effect":
        return None if value is None else str(value)
    if value is None or (isinstance(value, float) and value != value):
        return "undetermined" if signal in ("novelty", "influence") else None
    return str(value)


def cohen_kappa(pairs: Iterable[tuple[str, str]]) -> float | None:
    """Cohen's kappa of two raters over paired labels (None when undefined: no pairs, or
    chance agreement of 1 with a single shared category)."""
    pairs = list(pairs)
    n = len(pairs)
    if n == 0:
        return None
    po = sum(a == b for a, b in pairs) / n
    ca, cb = Counter(a for a, _ in pairs), Counter(b for _, b in pairs)
    pe = sum(ca[k] * cb.get(k, 0) for k in ca) / (n * n)
    if pe >= 1.0:
        return None
    return (po - pe) / (1 - pe)


def agreement_table(rows: Iterable[tuple[str, str, str]]) -> list[dict[str, Any]]:
    """Per signal: number of paired labels, raw agreement and Cohen's kappa.

    `rows`: (signal, human label, judge label) triples; pairs with a missing side are skipped.
    """
    by: dict[str, list[tuple[str, str]]] = {s: [] for s in SIGNALS}
    for sig, human, judge in rows:
        if sig in by and human is not None and judge is not None:
            by[sig].append((human, judge))
    out = []
    for sig in SIGNALS:
        ps = by[sig]
        out.append(
            {
                "signal": sig,
                "pairs": len(ps),
                "agreement": (sum(a == b for a, b in ps) / len(ps)) if ps else None,
                "kappa": cohen_kappa(ps),
            }
        )
    return out
