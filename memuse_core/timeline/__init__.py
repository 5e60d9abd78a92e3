"""The episode timeline (MemUse 4.3, Figure 4 style) and what it needs to explain itself: the
figure (`figure`), action kinds read from recorded commands (`actions`), and credit-window
explanations (`windows`, A.1.5). No Streamlit here: the app and the case-study export call it."""

from .actions import NO_TOOL_KIND, OTHER_KIND, SHELL_TOOLS, action_kind, command_name
from .drawing import drawing
from .figure import (
    ANCHOR_COLOUR,
    DRAWN_EFFECTS,
    EFFECT_COLOURS,
    LABEL_GAP_SHARE,
    LEGEND,
    MAX_KINDS,
    WINDOW_FILL,
    delivery_labels,
    episode_timeline,
    mark_step,
)
from .windows import CAPTION, anchor_steps, entry_label, window_reason

__all__ = [
    "ANCHOR_COLOUR",
    "CAPTION",
    "DRAWN_EFFECTS",
    "EFFECT_COLOURS",
    "LABEL_GAP_SHARE",
    "LEGEND",
    "MAX_KINDS",
    "NO_TOOL_KIND",
    "OTHER_KIND",
    "SHELL_TOOLS",
    "WINDOW_FILL",
    "action_kind",
    "anchor_steps",
    "command_name",
    "delivery_labels",
    "drawing",
    "entry_label",
    "episode_timeline",
    "mark_step",
    "window_reason",
]
