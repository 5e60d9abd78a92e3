"""Same-session navigation: in-app links are caught in the browser and switch page in Python, and
a page can ask the browser to scroll to one of its elements.

Streamlit opens a markdown link or a table link (`LinkColumn`) in a new tab, which is a new
session: the sidebar scope and the judge settings are lost, the app starts from scratch and
lands at the top of the page. `link_catcher()` (mounted once per run by app.py) is a small
`st.components.v2` component without an iframe: it listens for clicks on links whose path is
one of the app's pages (and for the `window.open` a table link calls), cancels the browser's
navigation and sends (path, query) back; app.py then calls `navigate`, i.e. `st.switch_page`
with the link's query parameters. A click with a modifier key (Ctrl/Cmd/Shift, middle button)
on a markdown link keeps the browser's behaviour (a new tab on purpose). Streamlit's own page
links (sidebar, `st.page_link`) already switch in-session and are left alone.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from memuse_core.views import links

_CATCHER_JS = """
export default function (component) {
  const { data, setTriggerValue } = component;
  const w = window;
  const nav = (w.__memuseNav = w.__memuseNav || { seq: 0 });
  nav.trigger = setTriggerValue;
  nav.pages = data.pages;
  // The app's root path: the current path without the current page's url path.
  const here = location.pathname.replace(/\\/+$/, "");
  nav.root = data.current && here.endsWith("/" + data.current)
    ? here.slice(0, here.length - data.current.length - 1)
    : here;
  if (nav.installed) return;
  nav.installed = true;
  const target = (href) => {
    let u;
    try { u = new URL(href, location.href); } catch (e) { return null; }
    if (u.origin !== location.origin) return null;
    const p = u.pathname.replace(/\\/+$/, "");
    if (p !== nav.root && !p.startsWith(nav.root + "/")) return null;
    const rest = p.slice(nav.root.length).replace(/^\\/+/, "");
    if (!nav.pages.includes(rest)) return null;
    return { path: rest, query: u.search };
  };
  const go = (t) => {
    nav.seq += 1;
    nav.trigger("navigate", { path: t.path, query: t.query, seq: nav.seq });
  };
  document.addEventListener("click", (e) => {
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    const a = e.target && e.target.closest ? e.target.closest("a[href]") : null;
    if (!a) return;
    if (a.closest('[data-testid="stSidebarNav"], [data-testid="stPageLink"], [data-testid="stPageLink-NavLink"]')) return;
    const t = target(a.getAttribute("href"));
    if (!t) return;
    e.preventDefault();
    e.stopPropagation();
    go(t);
  }, true);
  // A table link (st.dataframe LinkColumn) opens its URL with window.open(url, "_blank").
  const open = w.open;
  w.open = function (url) {
    const t = typeof url === "string" ? target(url) : null;
    if (t) { go(t); return null; }
    return open.apply(w, arguments);
  };
}
"""

_SCROLL_JS = """
export default function (component) {
  const { data } = component;
  if (!data || !data.token) return;
  const w = window;
  if (w.__memuseScrolled === data.token) return;
  w.__memuseScrolled = data.token;
  let tries = 0, done = 0;
  const step = () => {
    if (w.__memuseScrolled !== data.token) return;
    const el = document.querySelector(data.selector);
    if (el) {
      el.scrollIntoView({ block: "start" });
      el.setAttribute("data-memuse-scrolled", data.token);
      done += 1;
      // Elements above may still be re-rendered by the same script run: settle twice more.
      if (done < 3) setTimeout(step, 400);
      return;
    }
    if (++tries < 150) setTimeout(step, 100);
  };
  step();
}
"""

_catcher = st.components.v2.component("memuse_link_catcher", js=_CATCHER_JS)
_scroller = st.components.v2.component("memuse_scroll_to", js=_SCROLL_JS)


def link_catcher(current_path: str) -> links.AppLink | None:
    """Mount the link catcher; returns the in-app link clicked since the last run (or None)."""
    res = _catcher(
        key="memuse_link_catcher",
        data={"pages": list(links.URL_PATHS.values()), "current": current_path},
        on_navigate_change=lambda: None,
    )
    hit: Any = res.get("navigate") if res is not None else None
    if not isinstance(hit, dict):
        return None
    return links.parse_link(str(hit.get("path") or ""), str(hit.get("query") or ""))


def scroll_to(selector: str, token: str, *, key: str) -> None:
    """Ask the browser to scroll `selector` to the top of the view once per `token`."""
    _scroller(key=key, data={"selector": selector, "token": token})
