"""Browse and one memory (the curate actions on it are in `curate_pages`).

Every read and change is one call to the store (`localmem.open()`); the rules
(forget's chain rule, promote's core warning, add's supersede checks) are the
domain's, so the CLI and this view cannot drift apart. What is the view's own:

- a listing keeps your place: a memory opened from it carries `back` (the listing's
  address), and forgetting it brings you back there (decision 164);
- a page number past the end shows the last page and says so;
- a correction is written at the current end of a supersede chain only: correcting
  a memory that is already corrected would fork the chain (decision 165).
"""

from __future__ import annotations

import urllib.parse

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

import localmem
from localmem.errors import InvalidInput, NotFound
from localmem.memory import browse as browsing
from localmem.memory.maintenance import dedupe
from localmem.memory.model import KINDS, Memory
from localmem.ui.html import Html, h, join
from localmem.ui.layout import (
    View,
    badge,
    form,
    memory_link,
    number,
    page,
    preview,
    select,
    when,
    with_query,
)
from localmem.ui.security import local_path

SORT_LABELS = {
    "created": "created, newest first",
    "oldest": "created, oldest first",
    "last_recalled": "last recalled",
    "times_recalled": "times recalled",
}
ONLY_LABELS = {"": "every memory", "never_recalled": "never recalled", "superseded": "superseded"}
BACK_PAGES = ("/browse", "/search", "/audit", "/duplicates")  # where `back` may lead


def _int(value: str | None, default: int, what: str) -> int:
    if value in (None, ""):
        return default
    if not value.isdigit() or int(value) < 1:
        raise InvalidInput(f"The {what} must be a whole number of at least 1, not {value!r}.")
    return int(value)


def back_target(value: str | None, fallback: str) -> str:
    """`value` when it is one of our listings (never another host: no open redirect)."""
    if not value:
        return fallback
    path = local_path(value)
    if urllib.parse.urlsplit(path).path not in BACK_PAGES:
        return fallback
    return path


def _done(path: str, sentence: str) -> RedirectResponse:
    parts = urllib.parse.urlsplit(path)
    query = [(k, v) for k, v in urllib.parse.parse_qsl(parts.query) if k != "done"]
    query.append(("done", sentence))
    return RedirectResponse(parts.path + "?" + urllib.parse.urlencode(query), status_code=303)


def _missing(view: View, memory_id: int) -> Response:
    body = h(
        "p",
        {"class": "error"},
        f"No memory has id {memory_id}; it may have been forgotten or merged into another. "
        "Find it with ",
        h("a", {"href": "/search"}, "Search"),
        " or ",
        h("a", {"href": "/browse"}, "Browse"),
        ".",
    )
    return page(view, "Not found", body, status=404)


# ---- browse ------------------------------------------------------------------------


def browse(view: View, request: Request) -> Response:
    params = request.query_params
    workspace = params.get("workspace") or None
    kind = params.get("kind") or None
    sort = params.get("sort") or "created"
    only = params.get("only") or None
    wanted = _int(params.get("page"), 1, "page number")
    with localmem.open(view.db, create=False) as store:
        names = store.workspace_names()

        def listing_at(number_: int) -> browsing.BrowsePage:
            return browsing.browse(
                store.connection,
                workspace=workspace,
                kind=kind,
                sort=sort,
                page=number_,
                only=only,
            )

        listing = listing_at(wanted)
        past_end = listing.total > 0 and listing.page > listing.pages
        if past_end:  # e.g. the last row of the last page was just forgotten
            listing = listing_at(listing.pages)
    here = with_query(
        "/browse", workspace=workspace, kind=kind, sort=sort, only=only, page=listing.page
    )
    filters = h(
        "form",
        {"method": "get", "action": "/browse", "class": "filters"},
        select(
            "workspace", [("", "every workspace"), *((n, n) for n in names)], workspace, "Workspace"
        ),
        select("kind", [("", "every kind"), *((k, k) for k in KINDS)], kind, "Kind"),
        select("only", list(ONLY_LABELS.items()), only, "Show"),
        select("sort", list(SORT_LABELS.items()), sort, "Order by"),
        h("button", {"type": "submit"}, "Show"),
    )
    head = ("id", "workspace", "kind", "memory", "created", "last recalled", "recalled")
    table = h(
        "div",
        {"class": "table-wrap"},
        h(
            "table",
            {"class": "memories"},
            h(
                "thead",
                {},
                h("tr", {}, [h("th", {"class": f"c-{i}"}, c) for i, c in enumerate(head)]),
            ),
            h("tbody", {}, [_row(m, here) for m in listing.memories]),
        ),
    )

    def link(to: int, text: str) -> Html:
        return h(
            "a",
            {
                "href": with_query(
                    "/browse", workspace=workspace, kind=kind, sort=sort, only=only, page=to
                )
            },
            text,
        )

    pager = h(
        "nav",
        {"class": "pager", "aria-label": "pages"},
        link(listing.page - 1, "← previous") if listing.page > 1 else None,
        h(
            "span",
            {},
            f"page {number(listing.page)} of {number(listing.pages)} · "
            f"{number(listing.total)} memories",
        ),
        link(listing.page + 1, "next →") if listing.page < listing.pages else None,
    )
    notes = []
    if past_end:
        notes.append(
            h(
                "p",
                {"class": "notice"},
                f"There is no page {number(wanted)}; this is the last one.",
            )
        )
    body = join(
        [
            filters,
            notes,
            pager,
            table if listing.memories else h("p", {}, "No memories here."),
            pager if len(listing.memories) > 15 else None,
        ]
    )
    return page(view, "Browse", body, flash=params.get("done"), here="/browse")


def _row(m: Memory, here: str) -> Html:
    target = with_query(f"/memory/{m.id}", back=here)
    return h(
        "tr",
        {},
        h("td", {"class": "c-0"}, h("a", {"href": target}, f"#{m.id}")),
        h("td", {"class": "c-1"}, m.workspace),
        h("td", {"class": "c-2"}, badge(m.kind, m.kind)),
        h(
            "td",
            {"class": "c-3 text"},
            h("a", {"href": target}, preview(m.content)),
            badge("superseded", "superseded") if m.superseded else None,
        ),
        h("td", {"class": "c-4 date"}, when(m.created_at)),
        h("td", {"class": "c-5 date"}, when(m.last_recalled_at)),
        h("td", {"class": "c-6 num"}, number(m.recalled_count)),
    )


# ---- one memory --------------------------------------------------------------------


def _field(name: str, value: object) -> list[Html]:
    return [h("dt", {}, name), h("dd", {}, value)]


def _listed(title: str, memories: tuple[Memory, ...] | list[Memory], empty: str) -> Html:
    items = [h("li", {}, memory_link(m), " ", preview(m.content)) for m in memories]
    return h(
        "section",
        {"class": "chain"},
        h("h2", {}, title),
        h("ul", {}, items) if items else h("p", {}, empty),
    )


def memory_page(view: View, request: Request) -> Response:
    memory_id = int(request.path_params["memory_id"])
    back = back_target(request.query_params.get("back"), "")
    with localmem.open(view.db, create=False) as store:
        try:
            memory = store.get(memory_id)  # reading a memory is not a recall
        except NotFound:
            return _missing(view, memory_id)
        links = store.chain(memory_id)
        pairs = dedupe.pairs_of(store.connection, memory_id)
    facts = h(
        "dl",
        {"class": "fields"},
        _field("workspace", memory.workspace),
        _field("kind", badge(memory.kind, memory.kind)),
        _field("keywords", ", ".join(memory.keywords) or "none"),
        _field("source", memory.source or "none"),
        _field("session", memory.session_id or "none"),
        _field("author", memory.author or "not recorded"),
        _field("seen", number(memory.seen_count)),
        _field(
            "recalled",
            f"{number(memory.recalled_count)} times, last {when(memory.last_recalled_at)}",
        ),
        _field("created", when(memory.created_at)),
        _field("updated", when(memory.updated_at)),
        _field("length", f"{number(len(memory.content))} characters"),
    )
    duplicates = [
        h(
            "li",
            {},
            memory_link(other := (p.other if p.memory.id == memory_id else p.memory)),
            f" (overlap {p.overlap:.2f}) ",
            preview(other.content),
        )
        for p in pairs
    ]
    current = links.newer[-1] if links.newer else None
    notice = None
    if memory.superseded:
        notice = h(
            "p",
            {"class": "notice"},
            "Superseded by ",
            h("a", {"href": f"/memory/{memory.superseded_by}"}, f"#{memory.superseded_by}"),
            (
                join([" (the current correction is ", memory_link(current), ")"])
                if current is not None and current.id != memory.superseded_by
                else ""
            ),
            ".",
        )
    side = h(
        "div",
        {"class": "memory-side"},
        facts,
        _curate(view, memory, current, back),
    )
    body = join(
        [
            h("p", {}, h("a", {"href": back, "class": "back"}, "← Back to the list"))
            if back
            else None,
            notice,
            h(
                "div",
                {"class": "memory-layout"},
                h("pre", {"class": "content long"}, memory.content),
                side,
            ),
            _listed("Corrected by (nearest first)", links.newer, "Nothing corrects it."),
            _listed("It corrects", links.older, "It corrects nothing."),
            h(
                "section",
                {},
                h("h2", {}, "Near duplicates in the review queue"),
                h("ul", {}, duplicates) if duplicates else h("p", {}, "None queued."),
                h("p", {}, h("a", {"href": "/duplicates"}, "Review the queue"))
                if duplicates
                else None,
            ),
        ]
    )
    return page(view, f"Memory #{memory.id}", body, flash=request.query_params.get("done"))


def _curate(view: View, memory: Memory, current: Memory | None, back: str) -> Html:
    kinds = [(k, k) for k in KINDS if k != "imported"]
    if current is not None:
        correction = h(
            "p",
            {"class": "notice"},
            "A correction belongs at the end of the chain: ",
            memory_link(current, f"correct #{current.id}"),
            " instead.",
        )
    else:
        correction = form(
            view,
            f"/memory/{memory.id}/correct",
            h(
                "label",
                {"class": "block"},
                "Correction (a new memory that supersedes this one)",
                h("textarea", {"name": "content", "rows": 3, "required": True}, memory.content),
            ),
            h(
                "label",
                {},
                "Keywords ",
                h(
                    "input",
                    {"type": "text", "name": "keywords", "value": ", ".join(memory.keywords)},
                ),
            ),
            button="Save correction",
        )
    return h(
        "section",
        {"class": "curate"},
        h("h2", {}, "Curate"),
        form(
            view,
            f"/memory/{memory.id}/promote",
            select(
                "kind", kinds, "lesson" if memory.kind != "lesson" else "core", "Change kind to"
            ),
            button="Change kind",
        ),
        form(
            view,
            f"/memory/{memory.id}/keywords",
            h(
                "label",
                {},
                "Keywords (comma separated) ",
                h(
                    "input",
                    {"type": "text", "name": "keywords", "value": ", ".join(memory.keywords)},
                ),
            ),
            button="Save keywords",
        ),
        correction,
        h(
            "p",
            {},
            h(
                "a",
                {"class": "danger", "href": with_query(f"/memory/{memory.id}/forget", back=back)},
                "Forget this memory…",
            ),
        ),
    )


__all__ = ["back_target", "browse", "memory_page"]
