"""In-app links: every page's URL path, building a deep link, and reading one back.

A deep link is the page's path with query parameters (`./span?span=…&step=12`). Pages render
them as table links and rationale citations; a click is caught in the browser and comes back
as (page path, query string), which `parse_link` turns into a page and its parameters so the app
switches page in the same session (pages/_nav.py). The same URL pasted into a fresh browser
restores the view, because every page reads its state from these parameters.
"""

from __future__ import annotations

from typing import Literal
from urllib.parse import parse_qs, urlencode

from .common import ViewModel

PageKey = Literal[
    "overview",
    "episodes",
    "timeline",
    "transcript",
    "search",
    "span",
    "lineage",
    "cases",
    "compare",
    "judge",
    "trim",
]
"""The app's pages."""

URL_PATHS: dict[PageKey, str] = {
    "overview": "",
    "episodes": "episodes",
    "timeline": "timeline",
    "transcript": "transcript",
    "search": "search",
    "span": "span",
    "lineage": "lineage",
    "cases": "case_studies",
    "compare": "compare",
    "judge": "judge_runs",
    "trim": "memtrim",
}
"""URL path of each page (the Overview is the default page, served at the app's root)."""

SCOPE_PARAMS = ("configs", "runs")
"""Query parameters of the sidebar scope, carried by every page's URL."""


class AppLink(ViewModel):
    """A parsed in-app link."""

    page: PageKey
    """Target page."""
    params: dict[str, list[str]]
    """Query parameters (a list per key: keys may repeat)."""

    def first(self, key: str) -> str | None:
        """The first value of a parameter (None when absent)."""
        v = self.params.get(key)
        return v[0] if v else None


def page_of_path(path: str) -> PageKey | None:
    """The page served at a URL path relative to the app root (`span`, `/span/`, ``)."""
    p = path.strip("/")
    return next((k for k, v in URL_PATHS.items() if v == p), None)


def url(page: PageKey, **params: object) -> str:
    """A relative deep link `./<path>?k=v…` (None and "" values dropped, lists repeated)."""
    clean: list[tuple[str, str]] = []
    for k, v in params.items():
        if v is None or v == "":
            continue
        if isinstance(v, list | tuple):
            clean += [(k, str(x)) for x in v]
        else:
            clean.append((k, str(v)))
    qs = urlencode(clean)
    path = URL_PATHS[page]
    return f"./{path}?{qs}" if qs else f"./{path}"


def parse_link(path: str, query: str) -> AppLink | None:
    """An in-app link from its path (relative to the app root) and query string; None when the
    path is not one of the app's pages."""
    page = page_of_path(path)
    if page is None:
        return None
    params = parse_qs(query.lstrip("?"), keep_blank_values=False)
    return AppLink(page=page, params={k: list(v) for k, v in params.items()})
