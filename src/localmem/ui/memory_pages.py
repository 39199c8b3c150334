"""Browse, one memory, and the curate actions on it (forget, promote, correct, keywords).

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
from localmem.errors import Conflict, InvalidInput, NotFound
from localmem.memory import browse as browsing
from localmem.memory.maintenance import dedupe
from localmem.memory.model import KINDS, Memory
from localmem.ui.html import Html, h, join
from localmem.ui.layout import (
    View,
    badge,
    form,
    hidden,
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
        pairs = [
            p
            for p in dedupe.list_pairs(store.connection, memory.workspace)
            if memory_id in (p.memory.id, p.other.id)
        ]
    facts = h(
        "dl",
        {"class": "fields"},
        _field("workspace", memory.workspace),
        _field("kind", badge(memory.kind, memory.kind)),
        _field("keywords", ", ".join(memory.keywords) or "none"),
        _field("source", memory.source or "none"),
        _field("session", memory.session_id or "none"),
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


# ---- curate ------------------------------------------------------------------------


def forget_confirm(view: View, request: Request) -> Response:
    memory_id = int(request.path_params["memory_id"])
    back = back_target(request.query_params.get("back"), "")
    with localmem.open(view.db, create=False) as store:
        try:
            # The same dry run as `localmem forget --dry-run`: a forget the chain rule
            # refuses is refused here, before anyone is asked.
            preview_result = store.forget(memory_id, dry_run=True)
        except NotFound:
            return _missing(view, memory_id)
        except Conflict:
            older = store.chain(memory_id).older
            return _forget_refused(view, memory_id, older)
    memory = preview_result.memory
    details = [h("pre", {"class": "content long"}, memory.content)]
    if preview_result.relinked:
        details.append(
            h(
                "p",
                {},
                f"Memories {', '.join(map(str, preview_result.relinked))} will then be "
                f"superseded by memory {memory.superseded_by} (the chain is relinked, not broken).",
            )
        )
    if preview_result.entities_removed:
        details.append(
            h(
                "p",
                {},
                f"{preview_result.entities_removed} entities no other memory uses go with it.",
            )
        )
    body = join(
        [
            h(
                "p",
                {},
                f"Forget memory #{memory.id} ({memory.workspace}, {memory.kind})? "
                "This cannot be undone.",
            ),
            *details,
            form(
                view,
                f"/memory/{memory.id}/forget",
                hidden("confirm", "yes"),
                hidden("back", back),
                button="Yes, forget it",
                danger=True,
            ),
            h(
                "p",
                {},
                h("a", {"href": with_query(f"/memory/{memory.id}", back=back)}, "No, keep it"),
            ),
        ]
    )
    return page(view, f"Forget memory #{memory.id}?", body)


def _forget_refused(view: View, memory_id: int, older: tuple[Memory, ...]) -> Response:
    links = join([[", " if i else "", memory_link(m)] for i, m in enumerate(older)])
    body = join(
        [
            h(
                "p",
                {"class": "error"},
                f"Memory #{memory_id} is the current correction of ",
                links,
                "; forgetting it would silently bring the old text back. Forget the older "
                "memory first, or save a correction of this one on its page.",
            ),
            h("p", {}, h("a", {"href": f"/memory/{memory_id}", "class": "back"}, "← Back")),
        ]
    )
    return page(view, "Refused", body, status=409)


def forget(view: View, memory_id: int, fields: dict[str, str]) -> Response:
    if fields.get("confirm") != "yes":
        return RedirectResponse(f"/memory/{memory_id}/forget", status_code=303)
    with localmem.open(view.db, create=False) as store:
        try:
            result = store.forget(memory_id)
        except NotFound:
            return _missing(view, memory_id)
        except Conflict:
            return _forget_refused(view, memory_id, store.chain(memory_id).older)
    sentence = f"Forgot memory {memory_id}."
    if result.relinked:
        sentence += (
            f" Memories {', '.join(map(str, result.relinked))} are now superseded by memory "
            f"{result.memory.superseded_by}."
        )
    fallback = with_query("/browse", workspace=result.memory.workspace)
    return _done(back_target(fields.get("back"), fallback), sentence)


def promote(view: View, memory_id: int, fields: dict[str, str]) -> Response:
    with localmem.open(view.db, create=False) as store:
        result = store.promote(memory_id, fields.get("kind", "lesson"))
    if result.previous_kind == result.memory.kind:
        sentence = f"Memory {memory_id} is already {result.memory.kind}."
    else:
        sentence = f"Memory {memory_id}: {result.previous_kind} → {result.memory.kind}."
    if result.warning:
        sentence += f" Warning: {result.warning}"
    return _done(f"/memory/{memory_id}", sentence)


def _keywords(text: str) -> list[str]:
    return [word for word in text.replace("\n", ",").split(",") if word.strip()]


def edit_keywords(view: View, memory_id: int, fields: dict[str, str]) -> Response:
    with localmem.open(view.db, create=False) as store:
        memory = store.edit_keywords(memory_id, _keywords(fields.get("keywords", "")))
    shown = ", ".join(memory.keywords) or "none"
    return _done(f"/memory/{memory_id}", f"Keywords of memory {memory_id}: {shown}.")


def correct(view: View, memory_id: int, fields: dict[str, str]) -> Response:
    with localmem.open(view.db, create=False) as store:
        old = store.get(memory_id)
        if old.superseded:
            current = store.chain(memory_id).newer[-1]
            return _correct_the_end(view, old, current, fields)
        kind = "note" if old.kind == "imported" else old.kind  # `imported` is import's alone
        # Exactly `localmem add TEXT -w WS --supersedes ID`: the write path's checks apply.
        result = store.add(
            fields.get("content", ""),
            workspace=old.workspace,
            kind=kind,
            keywords=_keywords(fields.get("keywords", "")),
            supersedes=[memory_id],
        )
    verb = "Saved" if result.status == "added" else "Merged into the identical"
    return _done(
        f"/memory/{result.id}", f"{verb} memory {result.id}; it supersedes memory {memory_id}."
    )


def _correct_the_end(view: View, old: Memory, current: Memory, fields: dict[str, str]) -> Response:
    """Refused, keeping the typed text: a second correction of `old` would fork its chain."""
    body = join(
        [
            h(
                "p",
                {"class": "error"},
                f"Memory #{old.id} is already corrected; the current end of its chain is ",
                memory_link(current),
                f". A correction of #{old.id} would leave #{old.superseded_by} correcting "
                "nothing, so nothing was saved.",
            ),
            h("pre", {"class": "content long"}, current.content),
            form(
                view,
                f"/memory/{current.id}/correct",
                h(
                    "label",
                    {"class": "block"},
                    f"Your text, as a correction of #{current.id}",
                    h(
                        "textarea",
                        {"name": "content", "rows": 3, "required": True},
                        fields.get("content", ""),
                    ),
                ),
                hidden("keywords", fields.get("keywords", "")),
                button=f"Save as a correction of #{current.id}",
            ),
        ]
    )
    return page(view, "Refused", body, status=409)


__all__ = [
    "browse",
    "correct",
    "edit_keywords",
    "forget",
    "forget_confirm",
    "memory_page",
    "promote",
]
