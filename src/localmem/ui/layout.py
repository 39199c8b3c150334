"""The parts every page shares: the shell, navigation, forms with the CSRF field, dates."""

from __future__ import annotations

import threading
import urllib.parse
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from starlette.responses import HTMLResponse

from localmem import paths
from localmem.memory.model import Memory
from localmem.ui.html import Html, h, join, page_shell
from localmem.ui.security import CSRF_FIELD, HEADERS, Guard

if TYPE_CHECKING:
    from localmem.memory.model import Recall
    from localmem.memory.search.semantic_view import SemanticView
    from localmem.memory.store import Store


@dataclass(frozen=True)
class View:
    """What every page needs to know about this run of `localmem ui`."""

    guard: Guard
    db: paths.Location
    facts: bool
    # The semantic view, loaded by the first search and kept for the server's life, as
    # the MCP server keeps one: loading the model per request would cost ~0.1 s each.
    _semantic: list[SemanticView] = field(default_factory=list)
    _searching: threading.Lock = field(default_factory=threading.Lock)

    def search(
        self, store: Store, query: str, *, workspace: str, k: int, kind: str | None
    ) -> Recall:
        """`store.search` with the server's one semantic view (one search at a time:
        the view's in-memory vectors are not shared between threads), never counted as
        a recall: a person looking is not an agent recalling (decision 163)."""
        with self._searching:
            if self._semantic:
                store.use_semantic_view(self._semantic[0])
            else:
                loaded = store.semantic_view()
                if loaded is not None:
                    self._semantic.append(loaded)
            return store.search(query, workspace=workspace, k=k, kind=kind, track=False)


NAV = (
    ("/", "Overview"),
    ("/browse", "Browse"),
    ("/search", "Search"),
    ("/duplicates", "Duplicates"),
    ("/audit", "Audit"),
    ("/export", "Export"),
)


def page(
    view: View,
    title: str,
    body: object,
    *,
    status: int = 200,
    flash: str | None = None,
    error: str | None = None,
    query: str = "",
    here: str = "",
) -> HTMLResponse:
    links = [*NAV, ("/facts", "Facts")] if view.facts else list(NAV)
    nav = join(
        h("a", {"href": href, "aria-current": "page" if href == here else None}, label)
        for href, label in links
    )
    notes = []
    if flash:
        notes.append(h("p", {"class": "flash", "role": "status"}, flash))
    if error:
        notes.append(h("p", {"class": "error", "role": "alert"}, error))
    document = page_shell(
        title=title,
        heading=title,
        nav=nav,
        query=query,
        flash=join(notes),
        body=join([body]),
        footer=h("span", {}, f"database: {view.db}"),
    )
    return HTMLResponse(document, status_code=status, headers=HEADERS)


def form(view: View, action: str, *fields: object, button: str, danger: bool = False) -> Html:
    """A POST form that carries the per-start CSRF token."""
    return h(
        "form",
        {"method": "post", "action": action, "class": "inline"},
        h("input", {"type": "hidden", "name": CSRF_FIELD, "value": view.guard.csrf}),
        *fields,
        h("button", {"type": "submit", "class": "danger" if danger else None}, button),
    )


def hidden(name: str, value: object) -> Html:
    return h("input", {"type": "hidden", "name": name, "value": value})


def number(value: int) -> str:
    """A count as people read it: 100,000 rather than 100000."""
    return f"{value:,}"


def when(moment: datetime | None) -> str:
    return moment.strftime("%Y-%m-%d %H:%M") if moment else "never"


def preview(text: str, width: int = 160) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def memory_link(memory: Memory, text: str | None = None) -> Html:
    return h("a", {"href": f"/memory/{memory.id}"}, text or f"#{memory.id}")


def badge(text: str, kind: str = "") -> Html:
    return h("span", {"class": f"badge {kind}".strip()}, text)


def with_query(path: str, **params: object) -> str:
    """`path` with `params` set in its query (an empty or None value is left out; a
    query `path` already has is kept, its same-named parameters replaced)."""
    base, _, existing = path.partition("?")
    query = dict(urllib.parse.parse_qsl(existing, keep_blank_values=False))
    query.update({k: str(v) for k, v in params.items() if v not in (None, "")})
    return base + ("?" + urllib.parse.urlencode(query) if query else "")


def select(name: str, options: Sequence[tuple[str, str]], chosen: str | None, label: str) -> Html:
    return h(
        "label",
        {},
        label + " ",
        h(
            "select",
            {"name": name},
            [
                h("option", {"value": v, "selected": v == (chosen or "")}, text)
                for v, text in options
            ],
        ),
    )
