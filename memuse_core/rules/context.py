"""The evaluation context of one episode (MemUse 3.3 "Constructing the Evaluation Context", A.1).

`build_episode_context` is pure: EpisodeRecord in, EpisodeContext out. It runs the rules of this
package in order: recording checks, attribution and exposure (`analysis`), injection spans
(`spans`), credit windows (`windows`), eligibility (`eligibility`), prior context and earlier
copies (`prior`), and each span's first outcome class (`outcome`).
"""

from __future__ import annotations

import re

from ..episode import EpisodeRecord
from .analysis import DInfo, analyze_episode
from .eligibility import span_status
from .exposure import ExposureMatch
from .models import DeliveryContext, EntryExposure, EpisodeContext, SpanContext, SpanEntry
from .prior import earlier_copies, prior_sources, removed_steps
from .spans import group_spans
from .windows import credit_windows


def build_episode_context(rec: EpisodeRecord) -> EpisodeContext:
    """The evaluation context of one episode (3.3): recording checks (A.1.3), per-delivery
    attribution and exposure (A.1.1, A.1.2), injection spans (A.1.4) with credit windows (A.1.5),
    eligibility (3.3), volume C_S (A.4.4), prior context B_S and earlier copies (A.1.3, A.2.1)."""
    an = analyze_episode(rec)
    spans = group_spans(an)
    credit_windows(an, spans)
    failed = an.failed_rules()
    dctx: dict[str, DeliveryContext] = {}
    exp_models: dict[tuple[int, int], EntryExposure] = {}

    def exposure_model(k: int, x: ExposureMatch) -> EntryExposure:  # shared by restatements
        m = exp_models.get((k, id(x)))
        if m is None:
            m = exp_models[(k, id(x))] = EntryExposure(
                pos=k,
                exposure=x.exposure,
                exposed_text=x.exposed_text,
                placement_pos=x.placement_pos,
                stage=x.stage,
            )
        return m

    for di in an.infos:
        problem = di.att.problem
        if problem is None and not di.verified and di.placements:
            bad = next(rp for rp in di.placements if not rp.verified)
            problem = f"{bad.rule}: {bad.detail}" if bad.detail else bad.rule
        elif problem is None and not di.placements and di.d.entries:
            problem = "placement_missing"
        if problem is None and di.redacted_without_size:
            problem = "warning: redacted placement without a recorded size counts 0 characters (A.4.4)"
        dctx[di.id] = DeliveryContext(
            delivery_id=di.id,
            episode_id=rec.episode_id,
            consuming_step=di.step,
            attributed=di.att.attributed,
            verified=di.verified,
            chars=di.chars,
            problem=problem,
            entries=[exposure_model(k, x) for k, x in enumerate(di.exposures)],
        )
    out_spans: list[SpanContext] = []
    for s in spans:
        status, reason = span_status(s, an.valid, failed)
        first = s.first
        ids = [d.id for d in s.deliveries]
        for k, d in enumerate(s.deliveries):
            dc = dctx[d.id]
            dc.span_id, dc.restatement = s.span_id, k > 0
        entries = []
        for pos, e in enumerate(first.d.entries):
            x = first.exposures[pos]
            entries.append(
                SpanEntry(
                    pos=pos,
                    namespace=e.namespace,
                    item_id=first.ikeys[pos][1],
                    version=e.version,
                    digest=e.digest,
                    display_key=e.display_key if _shown(e.display_key, first) else None,
                    value=e.value,
                    exposure=x.exposure,
                    exposed_text=x.exposed_text,
                    window=s.windows[pos] if s.windows else None,
                    resident=bool(s.resident[pos]) if s.resident else False,
                    stage=x.stage,
                )
            )
        attributed = s.attributed and s.nonempty
        out_spans.append(
            SpanContext(
                span_id=s.span_id,
                episode_id=rec.episode_id,
                status=status,
                reason=reason,
                first_step=s.first_step,
                last_step=s.last_step,
                delivery_ids=ids,
                restatements=len(ids) - 1,
                chars=s.chars,
                form=first.d.form,
                route=first.d.route,
                placements=list(first.d.placements),
                entries=entries,
                prior_sources=prior_sources(an, first) if attributed else [],
                earlier_copies=earlier_copies(an, first, set(ids)) if s.nonempty else [],
                removed_steps=removed_steps(an, first) if attributed else [],
                task=rec.start.task,
            )
        )
    return EpisodeContext(
        episode_id=rec.episode_id,
        checks=an.checks,
        deliveries=[dctx[di.id] for di in an.infos],
        spans=out_spans,
    )


def _shown(key: str | None, di: DInfo) -> bool:
    """A display key is listed only when a placement exposed it as a standalone identifier
    (A.2.1 "Exposed content")."""
    if not key:
        return False
    pat = re.compile(rf"(?<![\w-]){re.escape(key)}(?![\w-])")
    return any(rp.text and pat.search(rp.text) for rp in di.placements)
