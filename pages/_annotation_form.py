"""The annotation form of the step, span and item views: a note, tags and the five human labels,
saved (or queued while the database is busy) as one write, optionally into a case study.
"""

from __future__ import annotations

import os

import streamlit as st

from memuse_core.views import case_studies as cs_view
from memuse_core.views import writes
from pages._reads import cached
from pages._text import md_code
from pages._writes import submit, write_notice


def annotation_form(
    target_kind: cs_view.TargetKind, target_id: str, episode_id: str | None, *, key: str
) -> None:
    """A compact form to annotate a step, span (entry) or item: note, tags, five human labels."""
    write_notice()
    with st.form(f"ann_form_{key}", clear_on_submit=False):
        st.markdown(f"**Annotate {target_kind}** {md_code(target_id)}")
        note = st.text_area("Note (markdown)", key=f"ann_note_{key}")
        tags = st.text_input("Tags (comma separated)", key=f"ann_tags_{key}")
        cols = st.columns(len(cs_view.SIGNAL_VALUES))
        labels: dict[str, str | None] = {}
        for c, (sig, vals) in zip(cols, cs_view.SIGNAL_VALUES.items()):
            labels[sig] = c.selectbox(sig, [None, *vals], key=f"ann_{sig}_{key}")
        names = {c.case_study_id: c.name for c in cached(cs_view.case_studies)}
        case_opts: list[str | None] = [None, *names]
        current = st.session_state.get("cs_pick")
        case = st.selectbox(
            "Add to case study",
            case_opts,
            format_func=lambda c: "—" if c is None else names.get(c, c),
            index=case_opts.index(current) if current in case_opts else 0,
            key=f"ann_case_{key}",
        )
        if st.form_submit_button("Save annotation"):
            ann = cs_view.new_annotation(
                target_kind,
                target_id,
                episode_id=episode_id,
                note=note,
                tags=cs_view.parse_tags(tags),
                labels=labels,
                author=os.environ.get("USER"),
                case_study_id=case,
            )
            if submit(writes.annotation_write(ann)):
                st.success(f"Saved annotation {ann.annotation_id}.")
