"""Loading, building and comparing the gold cases (see README.md in this folder).

The gold set is written from the MemUse paper, never from the implementation. This module only
moves cases through the product's normal path (event log -> `memuse ingest` -> `memuse build` ->
`memuse judge`) and compares what the store holds with the hand-written expectations. It has its
own copy of the two fixed label rules of MemUse 3.5 ("Usage and triage labels"), used only to
check that every expected file is consistent with itself; the product's copy is never consulted.
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

GOLD_DIR = Path(__file__).resolve().parent
CASES_DIR = GOLD_DIR / "cases"
KNOWN_FAILURES = GOLD_DIR / "known_failures.json"

SIGNALS = ("relevance", "accuracy", "novelty", "influence", "effect")
LABELS = ("usage",)
ANY = "any"
"""A signal the paper leaves genuinely open for this case: not compared (see the entry's `open`)."""


# ---------------------------------------------------------------------------------------------
# Cases
# ---------------------------------------------------------------------------------------------


@dataclass
class Case:
    """One gold case: an episode built from one sentence of the paper and its expectations."""

    name: str
    expected: dict[str, Any]
    module_path: Path

    @property
    def episode_id(self) -> str:
        return str(self.expected["episode"])

    def events(self) -> list[Any]:
        """The episode's events, built by the case module's `episode()`."""
        if str(CASES_DIR) not in sys.path:  # case modules may import shared helpers (`_table4`)
            sys.path.insert(0, str(CASES_DIR))
        spec = importlib.util.spec_from_file_location(f"gold_case_{self.name}", self.module_path)
        assert spec is not None and spec.loader is not None
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return list(mod.episode())

    def judged(self) -> list[dict[str, Any]]:
        """Spans under test with their expected entries."""
        return list(self.expected.get("judged", []))


def load_cases() -> list[Case]:
    """Every case in cases/: `<name>.py` (the episode) next to `<name>.json` (expectations)."""
    out = []
    for js in sorted(CASES_DIR.glob("*.json")):
        py = js.with_suffix(".py")
        if not py.exists():
            raise FileNotFoundError(f"{js}: no episode module {py.name} next to it")
        out.append(Case(js.stem, json.loads(js.read_text(encoding="utf-8")), py))
    return out


def write_log(cases: list[Case], path: Path) -> Path:
    """All cases as one native event log (one run, one episode per case)."""
    from memuse_core.events import EpisodeStart, RunEvent, dump_event

    events = [e for c in cases for e in c.events()]
    # every run the episodes name gets its `run` event (ingest refuses an episode of an unknown run)
    runs = dict.fromkeys(e.run_id for e in events if isinstance(e, EpisodeStart))
    lines = [dump_event(RunEvent(run_id=r, config="gold", label="gold set")) for r in runs]
    lines += [dump_event(e) for e in events]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


# ---------------------------------------------------------------------------------------------
# The product's normal path: CLI commands
# ---------------------------------------------------------------------------------------------


def cli(*args: str) -> str:
    """Run one `memuse` command in this process; returns its output (raises on a non-zero exit)."""
    from typer.testing import CliRunner

    from memuse_core.cli import app

    r = CliRunner().invoke(app, list(args))
    if r.exit_code != 0:
        raise RuntimeError(f"memuse {' '.join(args)} exited {r.exit_code}: {r.output}")
    return r.output


def ingest(db: Path, log: Path) -> None:
    """`memuse ingest` (which builds the evaluation context by default), then `memuse build`."""
    cli("ingest", str(log), "--db", str(db))
    cli("build", "--db", str(db))


def spans(db: Path, episode: str) -> list[dict[str, Any]]:
    """`memuse spans --json` of one episode."""
    return list(json.loads(cli("spans", "--db", str(db), "--episode", episode, "--json"))["spans"])


def stored_assessments(db: Path, judge: str) -> dict[str, dict[str, Any]]:
    """span id -> {"triage", "entries": [...]} of the latest accepted judgment of `judge`."""
    from memuse_core.store import connect

    con = connect(db, read_only=True)
    try:
        rows = con.execute(
            """
            WITH latest AS (
                SELECT span_id, judgment_id,
                       row_number() OVER (PARTITION BY span_id ORDER BY ended_at DESC) AS k
                FROM judgments WHERE judge = ? AND status = 'accepted')
            SELECT a.span_id, a.pos, a.item_id, a.relevance, a.accuracy, a.novelty, a.influence,
                   a.effect, a.usage_label, a.anchors
            FROM assessments a JOIN latest l ON a.judgment_id = l.judgment_id AND l.k = 1
            ORDER BY a.span_id, a.pos
            """,
            [judge],
        ).fetchall()
        verdicts = dict(
            con.execute("SELECT span_id, triage FROM verdicts WHERE judge = ?", [judge]).fetchall()
        )
    finally:
        con.close()
    out: dict[str, dict[str, Any]] = {}
    for span_id, pos, item, rel, acc, nov, inf, eff, usage, anchors in rows:
        s = out.setdefault(span_id, {"triage": verdicts.get(span_id), "entries": []})
        s["entries"].append(
            {
                "pos": pos,
                "item_id": item,
                "relevance": rel,
                "accuracy": acc,
                "novelty": nov,
                "influence": inf,
                "effect": eff,
                "usage": usage,
                "anchors": list(anchors or []),
            }
        )
    return out


def rule_verdicts(db: Path) -> dict[str, str]:
    """span id -> triage of verdicts assigned by a rule without a judge call (A.4.1)."""
    from memuse_core.store import connect

    con = connect(db, read_only=True)
    try:
        return dict(con.execute("SELECT span_id, triage FROM verdicts WHERE judge = 'rule'").fetchall())
    finally:
        con.close()


# ---------------------------------------------------------------------------------------------
# Comparisons
# ---------------------------------------------------------------------------------------------


def structure_mismatches(case: Case, got: list[dict[str, Any]]) -> list[str]:
    """Differences between the paper's span grouping, windows and eligibility and the built ones."""
    want = case.expected["structure"]
    out = []
    if len(got) != len(want):
        out.append(
            f"{case.episode_id}: expected {len(want)} spans "
            f"{[w['deliveries'] for w in want]}, got {[g['deliveries'] for g in got]}"
        )
        return out
    for w, g in zip(want, got):
        tag = f"{case.episode_id} span {w['deliveries']}"
        for k in ("deliveries", "status", "first_step", "last_step"):
            if w[k] != g[k]:
                out.append(f"{tag} {k}: expected {w[k]!r}, got {g[k]!r}")
        ge = g["entries"]
        if len(w["entries"]) != len(ge):
            out.append(f"{tag}: expected {len(w['entries'])} entries, got {len(ge)}")
            continue
        for i, (we, gee) in enumerate(zip(w["entries"], ge)):
            for k in ("item_id", "exposure", "window"):
                if we[k] != gee[k]:
                    out.append(f"{tag} entry {i} {k}: expected {we[k]!r}, got {gee[k]!r}")
    return out


def signal_mismatches(case: Case, got: dict[str, dict[str, Any]], *, anchors: bool = False) -> list[str]:
    """Every expected signal, usage label and triage label that the stored judgment differs from.

    Signals marked "any" are not compared. Anchors are a judge's own citations: compared only with
    `anchors=True` (for the scripted judge, which submits the gold anchors)."""
    out = []
    for span in case.judged():
        sid = span["span"]
        g = got.get(sid)
        if g is None:
            out.append(f"{sid}: no accepted judgment")
            continue
        if g["triage"] != span["triage"]:
            out.append(f"{sid} triage: expected {span['triage']}, got {g['triage']}")
        if len(g["entries"]) != len(span["entries"]):
            out.append(f"{sid}: expected {len(span['entries'])} assessments, got {len(g['entries'])}")
            continue
        for i, (we, ge) in enumerate(zip(span["entries"], g["entries"])):
            for k in (*SIGNALS, *LABELS):
                if we[k] == ANY:
                    continue
                if we[k] != ge[k]:
                    out.append(f"{sid} entry {i} ({we['item_id']}) {k}: expected {we[k]}, got {ge[k]}")
            if anchors and sorted(we.get("anchors", [])) != sorted(ge["anchors"]):
                out.append(
                    f"{sid} entry {i} ({we['item_id']}) anchors: expected {we['anchors']}, got {ge['anchors']}"
                )
    return out


def known_failures(kind: str, case: str) -> list[str]:
    """Recorded disagreements of `kind` (structure / rules / llm) for one case."""
    data = json.loads(KNOWN_FAILURES.read_text(encoding="utf-8"))
    return list(data.get(kind, {}).get(case, []))


# ---------------------------------------------------------------------------------------------
# The paper's label rules (MemUse 3.5), for checking the expected files only
# ---------------------------------------------------------------------------------------------


def paper_usage(influence: str | None, effect: str | None, window_read: bool = True) -> str:
    """3.5: "Acted-on entries are used, unproductive, misused, or unclear when their effects are
    improved, no effect, harmed, or undetermined ... Selected, referenced, and none influence
    yield selected, noted, and ignored. Undetermined influence yields ambiguous after a complete
    read of the credit window and unclear otherwise." """
    if influence == "acted_on":
        return {"improved": "used", "no_effect": "unproductive", "harmed": "misused", None: "unclear"}[effect]
    if influence is None:
        return "ambiguous" if window_read else "unclear"
    return {"selected": "selected", "referenced": "noted", "none": "ignored"}[influence]


def paper_triage(usage: list[str]) -> str:
    """3.5 Eq. (2): negative if some entry is misused, else positive if some is used, else
    unresolved if some is unclear, else neutral."""
    if "misused" in usage:
        return "negative"
    if "used" in usage:
        return "positive"
    if "unclear" in usage:
        return "unresolved"
    return "neutral"


# ---------------------------------------------------------------------------------------------
# The scripted LLM judge: read what Table 5 requires, then submit the gold answer
# ---------------------------------------------------------------------------------------------

_SPAN_LINE = re.compile(r'^Span ("(?:[^"\\]|\\.)*") \(episode ', re.M)
"""The brief's first line names the span as a JSON string (recorded ids are quoted, never raw)."""
_LISTED = re.compile(r"^- (\S+) \((\d+) chars(?:; ([^)]*))?\)$", re.M)


def _first_user(messages: list[dict[str, Any]]) -> str:
    for m in messages:
        if m.get("role") == "user":
            c = m.get("content")
            return c if isinstance(c, str) else ""
    return ""


def scripted_value(entry: dict[str, Any], signal: str) -> Any:
    """The value the scripted judge submits: the expected one, or the listed choice for "any"."""
    v = entry[signal]
    if v == ANY:
        return entry["open"][signal]["scripted"]
    return v


def required_reads(entries: list[dict[str, Any]], windows: list[list[int] | None], T: int) -> set[int]:
    """Steps whose complete read Table 5 (A.3.1) requires beyond the mandatory evidence."""
    steps: set[int] = set()
    for e, w in zip(entries, windows):
        inf, eff = scripted_value(e, "influence"), scripted_value(e, "effect")
        if w is not None and inf in ("selected", "referenced", "none", None):
            steps |= set(range(w[0], w[1] + 1))
        if w is not None and eff is not None:
            steps |= set(range(w[0], T + 1))
        steps |= set(e.get("anchors", [])) | set(e.get("evidence", []))
    return steps


def gold_answer(case_span: dict[str, Any], listed: list[dict[str, Any]]) -> dict[str, Any]:
    """The gold answer for one span, entries numbered as the judge's entry list numbers them."""
    out = []
    for info, e in zip(listed, case_span["entries"]):
        out.append(
            {
                "entry": info["entry"],
                "item_id": info.get("item_id"),
                **{s: scripted_value(e, s) for s in SIGNALS},
                "anchors": e.get("anchors", []),
                "evidence": e.get("evidence", []),
                "notes": e["rationale"],
            }
        )
    return {"assessments": out, "summary": "gold answer", "confidence": 0.8}


def gold_policy(cases: list[Case], *, read: bool = True) -> Any:
    """A reply policy for the scripted server: first read every file that the gold answer's
    claims require (Table 5) and that the first message does not show in full, then answer.
    With `read=False` it answers at once (to show that the coverage checks are live)."""
    from memuse_core.judge.script import listed_entries
    from memuse_core.judge.scripted_server import ScriptedReply, ScriptedToolCall

    spans: dict[str, tuple[Case, dict[str, Any]]] = {}
    for c in cases:
        for s in c.judged():
            spans[s["span"]] = (c, s)

    def policy(body: dict[str, Any], idx: int) -> ScriptedReply:
        msgs = body.get("messages") or []
        user = _first_user(msgs)
        m = _SPAN_LINE.search(user)
        sid = json.loads(m.group(1)) if m is not None else None
        if sid not in spans:
            return ScriptedReply(content="unknown span")
        case, span = spans[sid]
        listed = listed_entries(msgs)
        if idx == 0 and read:
            files = {f.group(1): (f.group(3) or "") for f in _LISTED.finditer(user)}
            structure = next(
                s
                for s in case.expected["structure"]
                if case.episode_id + "/" + s["deliveries"][0] == span["span"]
            )
            windows = [e["window"] for e in structure["entries"]]
            T = int(re.search(r"the episode has (\d+) steps", user).group(1))  # type: ignore[union-attr]
            want: list[str] = []
            needs_prior = any(
                scripted_value(e, "novelty") is not None or scripted_value(e, "influence") == "acted_on"
                for e in span["entries"]
            )
            if needs_prior:
                want += [p for p in files if p.startswith("prior/P")]
            for t in sorted(required_reads(span["entries"], windows, T)):
                p = f"steps/S{t}.md"
                want.append(p)
                refs = files.get(p, "")
                if "references " in refs:
                    want += [r.strip() for r in refs.split("references ", 1)[1].split(",")]
            want += [p for p, flags in files.items() if "mandatory" in flags]
            todo = [p for p in dict.fromkeys(want) if p in files and "counts as read" not in files[p]]
            if todo:
                return ScriptedReply(
                    tool_calls=[
                        ScriptedToolCall(name="read_evidence", arguments={"path": p, "limit": 40000})
                        for p in todo
                    ]
                )
        answer = gold_answer(span, listed)
        return ScriptedReply(tool_calls=[ScriptedToolCall(name="answer", arguments=answer)])

    return policy


# ---------------------------------------------------------------------------------------------
# Self-checks of the expected files and the judgment log
# ---------------------------------------------------------------------------------------------

_ALLOWED = {
    "relevance": (True, False),
    "accuracy": ("corroborated", "contradicted", "uncontradicted"),
    "novelty": ("novel", "confirming", "redundant", None),
    "influence": ("acted_on", "selected", "referenced", "none", None),
    "effect": ("improved", "no_effect", "harmed", None),
}


def expected_problems(case: Case) -> list[str]:
    """Ways an expected file contradicts itself or the paper's fixed rules (3.5, A.3.1)."""
    out = []
    exp = case.expected
    for k in ("episode", "section", "sentence", "structure", "judged"):
        if k not in exp:
            out.append(f"missing key {k!r}")
    struct = {case.episode_id + "/" + s["deliveries"][0]: s for s in exp.get("structure", [])}
    for sid in exp.get("auto_neutral", []):
        if struct.get(sid, {}).get("status") != "auto_neutral":
            out.append(f"{sid}: listed as auto_neutral but its structure says otherwise")
    for span in exp.get("judged", []):
        sid = span["span"]
        s = struct.get(sid)
        if s is None or s["status"] != "eligible":
            out.append(f"{sid}: judged spans must be eligible spans of the structure")
            continue
        if [e["item_id"] for e in s["entries"]] != [e["item_id"] for e in span["entries"]]:
            out.append(f"{sid}: entries differ from the structure's entries")
        usages = []
        for i, (e, se) in enumerate(zip(span["entries"], s["entries"])):
            tag = f"{sid} entry {i}"
            for k in ("paper", "rationale", "usage", "anchors", *SIGNALS):
                if k not in e:
                    out.append(f"{tag}: missing {k!r}")
            for sig, allowed in _ALLOWED.items():
                v = e.get(sig)
                if v == ANY:
                    o = e.get("open", {}).get(sig)
                    if not o or not o.get("why") or o.get("scripted") not in o.get("options", []):
                        out.append(f"{tag}: {sig} is 'any' without open.{sig}.why/options/scripted")
                    elif any(x not in allowed for x in o["options"]):
                        out.append(f"{tag}: open.{sig}.options has a value outside {allowed}")
                elif v not in allowed:
                    out.append(f"{tag}: {sig}={v!r} is not one of {allowed}")
            inf, eff = scripted_value(e, "influence"), scripted_value(e, "effect")
            if inf != "acted_on" and eff is not None:
                out.append(f"{tag}: effect is assessed only for acted-on entries (3.4)")
            if e.get("usage") != ANY and e.get("usage") != paper_usage(inf, eff):
                out.append(f"{tag}: usage {e.get('usage')} != 3.5 rule {paper_usage(inf, eff)}")
            usages.append(paper_usage(inf, eff))
            anchors = e.get("anchors", [])
            if inf in ("acted_on", "selected") and not anchors:
                out.append(f"{tag}: acted-on and selected entries need anchors (3.5)")
            if inf == "none" and anchors:
                out.append(f"{tag}: influence none needs an empty anchor list (3.5)")
            w = se["window"]
            if w is None or any(not (w[0] <= a <= w[1]) for a in anchors):
                out.append(f"{tag}: anchors {anchors} outside the credit window {w} (3.5)")
        if span.get("triage") != ANY and span.get("triage") != paper_triage(usages):
            out.append(f"{sid}: triage {span.get('triage')} != Eq. (2) {paper_triage(usages)}")
    return out


def judgment_log(db: Path, judge: str) -> dict[str, dict[str, Any]]:
    """span id -> status, follow-ups, forced flag, reason and attempt results of its latest judgment."""
    from memuse_core.store import connect

    con = connect(db, read_only=True)
    try:
        rows = con.execute(
            """
            SELECT span_id, status, followups, forced, reason, attempts FROM (
                SELECT *, row_number() OVER (PARTITION BY span_id ORDER BY ended_at DESC) AS k
                FROM judgments WHERE judge = ?) WHERE k = 1
            """,
            [judge],
        ).fetchall()
    finally:
        con.close()
    return {
        r[0]: {
            "status": r[1],
            "followups": r[2],
            "forced": r[3],
            "reason": r[4],
            "attempts": json.loads(r[5]) if isinstance(r[5], str) else r[5],
        }
        for r in rows
    }


def eligible_spans_under_test(db: Path, cases: list[Case]) -> list[str]:
    """Spans under test that the build made eligible (others cannot be judged; they show up as
    "not judged" in the comparisons)."""
    eligible = {s["span_id"] for c in cases for s in spans(db, c.episode_id) if s["status"] == "eligible"}
    return [s["span"] for c in cases for s in c.judged() if s["span"] in eligible]


def run_scripted_llm(
    db: Path, cases: list[Case], concurrency: int = 4, *, read: bool = True, span_ids: list[str] | None = None
) -> None:
    """The real LLM judge loop against the scripted server answering with the gold answers."""
    from memuse_core.judge.result import JudgeSettings
    from memuse_core.judge.runner import run_batch
    from memuse_core.judge.scripted_server import ScriptedServer

    with ScriptedServer(gold_policy(cases, read=read)) as srv:
        settings = JudgeSettings(
            judge="llm", model="scripted", base_url=srv.base_url, inline_chars=0, backoff=0.01, max_calls=4
        )
        ids = span_ids if span_ids is not None else eligible_spans_under_test(db, cases)
        run_batch(db, settings, span_ids=ids, concurrency=concurrency)


def loop_problems(case: Case, log: dict[str, dict[str, Any]]) -> list[str]:
    """Spans under test whose LLM judgment was not accepted at the first answer."""
    out = []
    for s in case.judged():
        j = log.get(s["span"])
        if j is None:
            out.append(f"{s['span']}: not judged")
        elif j["status"] != "accepted" or j["followups"] or j["forced"]:
            out.append(
                f"{s['span']}: status {j['status']}, follow-ups {j['followups']}, forced {j['forced']}"
                f" ({j['reason']})"
            )
    return out
