"""Browse, search, one memory, and the curate actions on it (forget, promote, correct,
keywords). Every read and change is one call to the store (`localmem.open()`);
the rules (forget's chain rule, promote's core warning, add's supersede checks)
are the domain's, so the CLI and this view cannot drift apart.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

import localmem
from localmem.errors import InvalidInput
from localmem.memory.browse import SORTS
from localmem.memory.maintenance import dedupe
from localmem.memory.model import ALL, KINDS, Hit, Memory, Recall
from localmem.memory.store import Store
from localmem.ui.html import Html, h, join
from localmem.ui.layout import (
    View,
    badge,
    form,
    memory_link,
    page,
    preview,
    select,
    when,
    with_query,
)

SORT_LABELS = {
    "created": "created",
    "last_recalled": "last recalled",
    "times_recalled": "times recalled",
}


def _int(value: str | None, default: int, what: str) -> int:
    if value in (None, ""):
        return default
    try:
        return int(value)
    except ValueError:
        raise InvalidInput(f"The {what} must be a whole number, not {value!r}.") from None


def _workspaces(store: Store) -> list[str]:
    return store.workspace_names()


def _done(path: str, sentence: str) -> RedirectResponse:
    return RedirectResponse(with_query(path, done=sentence), status_code=303)


# ---- browse ------------------------------------------------------------------------


def browse(view: View, request: Request) -> Response:
    params = request.query_params
    workspace = params.get("workspace") or None
    kind = params.get("kind") or None
    sort = params.get("sort") or "created"
    number = _int(params.get("page"), 1, "page number")
    with localmem.open(view.db, create=False) as store:
        listing = store.browse(workspace=workspace, kind=kind, sort=sort, page=number)
        names = _workspaces(store)
    filters = h(
        "form",
        {"method": "get", "action": "/browse", "class": "filters"},
        select(
            "workspace", [("", "every workspace"), *((n, n) for n in names)], workspace, "Workspace"
        ),
        select("kind", [("", "every kind"), *((k, k) for k in KINDS)], kind, "Kind"),
        select("sort", [(s, SORT_LABELS[s]) for s in SORTS], sort, "Newest / most first by"),
        h("button", {"type": "submit"}, "Show"),
    )
    table = h(
        "table",
        {"class": "memories"},
        h(
            "thead",
            {},
            h(
                "tr",
                {},
                [h("th", {}, c) for c in ("id", "workspace", "kind", "memory", "created")],
                h("th", {}, "last recalled"),
                h("th", {"class": "num"}, "recalled"),
            ),
        ),
        h(
            "tbody",
            {},
            [
                h(
                    "tr",
                    {},
                    h("td", {}, memory_link(m)),
                    h("td", {}, m.workspace),
                    h("td", {}, badge(m.kind, m.kind)),
                    h(
                        "td",
                        {},
                        memory_link(m, preview(m.content)),
                        badge("superseded", "superseded") if m.superseded else None,
                    ),
                    h("td", {}, when(m.created_at)),
                    h("td", {}, when(m.last_recalled_at)),
                    h("td", {"class": "num"}, m.recalled_count),
                )
                for m in listing.memories
            ],
        ),
    )

    def link(to: int, text: str) -> Html:
        return h(
            "a",
            {"href": with_query("/browse", workspace=workspace, kind=kind, sort=sort, page=to)},
            text,
        )

    pager = h(
        "nav",
        {"class": "pager", "aria-label": "pages"},
        link(listing.page - 1, "← newer") if listing.page > 1 else None,
        h("span", {}, f"page {listing.page} of {listing.pages} · {listing.total} memories"),
        link(listing.page + 1, "older →") if listing.page < listing.pages else None,
    )
    empty = h("p", {}, "No memories here.") if not listing.memories else None
    body = join([filters, pager, table, empty])
    return page(view, "Browse", body, flash=params.get("done"), here="/browse")


# ---- search ------------------------------------------------------------------------


def hit_block(rank: int, hit: Hit) -> Html:
    memory = hit.memory
    marks = [badge(memory.kind, memory.kind)]
    if hit.weak:
        marks.append(badge("weak", "weak"))
    if memory.superseded:
        marks.append(badge(f"superseded by #{memory.superseded_by}", "superseded"))
    neighbours = [
        h(
            "li",
            {},
            f"{n.relation.replace('_', ' ')} ",
            memory_link(n.memory),
            ": ",
            preview(n.memory.content),
        )
        for n in hit.neighbors
    ]
    return h(
        "article",
        {"class": "hit weak-hit" if hit.weak else "hit", "data-id": memory.id},
        h(
            "header",
            {},
            h("span", {"class": "rank"}, f"{rank}."),
            memory_link(memory),
            f" · {memory.workspace} · score {hit.score:.3f} ",
            marks,
        ),
        h("p", {"class": "content"}, memory.content),
        h("ul", {"class": "neighbours"}, neighbours) if neighbours else None,
    )


def core_aside(recall: Recall) -> Html:
    items = [h("li", {}, memory_link(m), " ", m.content) for m in recall.core]
    return h(
        "aside",
        {"class": "core"},
        h("h2", {}, "Core (pushed with every recall)"),
        h("ul", {}, items) if items else h("p", {}, "No core memories in this scope."),
        h("p", {}, f"{recall.core_dropped} older core row(s) left out by the cap.")
        if recall.core_dropped
        else None,
    )


def search(view: View, request: Request) -> Response:
    params = request.query_params
    query = params.get("q", "")
    workspace = params.get("workspace") or ALL
    kind = params.get("kind") or None
    k = _int(params.get("k"), 10, "number of results")
    with localmem.open(view.db, create=False) as store:
        names = _workspaces(store)
        # The same recall as `localmem search`, and counted as one (SPEC 5, tracking).
        recall = view.search(store, query, workspace=workspace, k=k, kind=kind) if query else None
    controls = h(
        "form",
        {"method": "get", "action": "/search", "class": "filters"},
        h(
            "label",
            {},
            "Query ",
            h("input", {"type": "search", "name": "q", "value": query, "autofocus": True}),
        ),
        select("workspace", [(ALL, "all"), *((n, n) for n in names)], workspace, "Workspace"),
        select("kind", [("", "every kind"), *((x, x) for x in KINDS)], kind, "Kind"),
        h("button", {"type": "submit"}, "Search"),
    )
    if recall is None:
        body = join([controls, h("p", {}, "Type what you want to recall, as you would ask it.")])
        return page(view, "Search", body, here="/search")
    hits = [hit_block(rank, hit) for rank, hit in enumerate(recall.hits, 1)]
    message = h("p", {"class": "message"}, recall.message) if recall.message else None
    results = h("section", {"class": "results"}, hits, message)
    body = join([controls, h("div", {"class": "with-aside"}, results, core_aside(recall))])
    return page(view, "Search", body, query=query, here="/search")


# ---- one memory --------------------------------------------------------------------


def _field(name: str, value: object) -> list[Html]:
    return [h("dt", {}, name), h("dd", {}, value)]


def memory_page(view: View, request: Request) -> Response:
    memory_id = int(request.path_params["memory_id"])
    with localmem.open(view.db, create=False) as store:
        memory = store.get(memory_id)  # reading a memory is not a recall: nothing is counted
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
        _field("seen", memory.seen_count),
        _field("recalled", f"{memory.recalled_count} times, last {when(memory.last_recalled_at)}"),
        _field("created", when(memory.created_at)),
        _field("updated", when(memory.updated_at)),
    )

    def listed(title: str, memories: tuple[Memory, ...] | list[Memory], empty: str) -> Html:
        items = [h("li", {}, memory_link(m), " ", preview(m.content)) for m in memories]
        return h(
            "section",
            {"class": "chain"},
            h("h2", {}, title),
            h("ul", {}, items) if items else h("p", {}, empty),
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
    kinds = [(k, k) for k in KINDS if k != "imported"]
    curate = h(
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
        form(
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
        ),
        h(
            "p",
            {},
            h(
                "a",
                {"class": "danger", "href": f"/memory/{memory.id}/forget"},
                "Forget this memory…",
            ),
        ),
    )
    superseded = (
        h(
            "p",
            {"class": "notice"},
            "Superseded by ",
            h("a", {"href": f"/memory/{memory.superseded_by}"}, f"#{memory.superseded_by}"),
            ".",
        )
        if memory.superseded
        else None
    )
    body = join(
        [
            superseded,
            h("pre", {"class": "content"}, memory.content),
            facts,
            listed("Corrected by (nearest first)", links.newer, "Nothing corrects it."),
            listed("It corrects", links.older, "It corrects nothing."),
            h(
                "section",
                {},
                h("h2", {}, "Near duplicates in the review queue"),
                h("ul", {}, duplicates) if duplicates else h("p", {}, "None queued."),
                h("p", {}, h("a", {"href": "/duplicates"}, "Review the queue"))
                if duplicates
                else None,
            ),
            curate,
        ]
    )
    return page(view, f"Memory #{memory.id}", body, flash=request.query_params.get("done"))


# ---- curate ------------------------------------------------------------------------


def forget_confirm(view: View, request: Request) -> Response:
    memory_id = int(request.path_params["memory_id"])
    with localmem.open(view.db, create=False) as store:
        # The same dry run as `localmem forget --dry-run`: a forget the chain rule refuses
        # is refused here, before anyone is asked.
        preview_result = store.forget(memory_id, dry_run=True)
    memory = preview_result.memory
    details = [h("pre", {"class": "content"}, memory.content)]
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
                h("input", {"type": "hidden", "name": "confirm", "value": "yes"}),
                button="Yes, forget it",
                danger=True,
            ),
            h("p", {}, h("a", {"href": f"/memory/{memory.id}"}, "No, keep it")),
        ]
    )
    return page(view, f"Forget memory #{memory.id}?", body)


def forget(view: View, memory_id: int, fields: dict[str, str]) -> Response:
    if fields.get("confirm") != "yes":
        return RedirectResponse(f"/memory/{memory_id}/forget", status_code=303)
    with localmem.open(view.db, create=False) as store:
        result = store.forget(memory_id)
    sentence = f"Forgot memory {memory_id}."
    if result.relinked:
        sentence += (
            f" Memories {', '.join(map(str, result.relinked))} are now superseded by memory "
            f"{result.memory.superseded_by}."
        )
    return _done("/browse", sentence)


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


__all__ = [
    "browse",
    "correct",
    "edit_keywords",
    "forget",
    "forget_confirm",
    "memory_page",
    "promote",
    "search",
]
