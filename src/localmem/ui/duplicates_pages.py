"""The near-duplicate queue: the pairs, a merge asked first, keep both, and undo.

A merge is two steps: the pair's page shows word by word what differs and what
the merged memory will be, and only its form merges (decision 167). The queue
page then lists the recent merges, each with an Undo button, or the sentence
saying why it can no longer be undone (`merge_undo`, decision 186).
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

import localmem
from localmem.errors import InvalidInput, NotFound
from localmem.memory.maintenance import dedupe, merge_undo
from localmem.memory.model import Memory
from localmem.memory.write import normalize_keywords
from localmem.ui import diff
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
    when,
    with_query,
)

PAIRS_PER_PAGE = 20
RECENT_MERGES = 5  # listed with their Undo on the queue page


def _side(label: str, m: Memory, text: Html) -> Html:
    return h(
        "div",
        {"class": "side"},
        h("h3", {}, f"{label}: ", memory_link(m), " ", badge(m.kind, m.kind)),
        h("p", {"class": "content long"}, text),
        h(
            "p",
            {"class": "meta"},
            f"created {when(m.created_at)}, seen {number(m.seen_count)}, "
            f"recalled {number(m.recalled_count)}",
        ),
    )


def pair_block(view: View, pair: dedupe.Pair, actions: bool) -> Html:
    a, b = pair.other, pair.memory  # the older memory first, as `dedupe --review` shows them
    text_a, text_b, _cut = diff.marked(a.content, b.content)
    buttons = None
    if actions:
        buttons = h(
            "div",
            {"class": "actions"},
            h(
                "a",
                {"class": "button", "href": with_query("/duplicates/merge", keep=a.id, drop=b.id)},
                "Merge…",
            ),
            form(
                view,
                "/duplicates/keep-both",
                hidden("a", a.id),
                hidden("b", b.id),
                button="Keep both",
            ),
        )
    return h(
        "article",
        {"class": "pair", "data-pair": f"{a.id}-{b.id}"},
        h("p", {"class": "meta"}, f"{pair.memory.workspace} · overlap {pair.overlap:.2f}"),
        h("div", {"class": "sides"}, _side("A", a, text_a), _side("B", b, text_b)),
        buttons,
    )


def _page_number(value: str | None) -> int:
    if value in (None, ""):
        return 1
    if not value.isdigit() or int(value) < 1:
        raise InvalidInput(f"The page number must be a whole number of at least 1, not {value!r}.")
    return int(value)


def duplicates(view: View, request: Request) -> Response:
    number_ = _page_number(request.query_params.get("page"))
    with localmem.open(view.db, create=False) as store:
        queued = dedupe.queue_page(
            store.connection, limit=PAIRS_PER_PAGE, offset=(number_ - 1) * PAIRS_PER_PAGE
        )
        pages = max(1, -(-queued.total // PAIRS_PER_PAGE))
        if number_ > pages:  # past the end: the last page, as browse shows it
            number_ = pages
            queued = dedupe.queue_page(
                store.connection, limit=PAIRS_PER_PAGE, offset=(number_ - 1) * PAIRS_PER_PAGE
            )
        merges = merge_undo.recent(store.connection, RECENT_MERGES)
    shown = queued.pairs
    pager = None
    if pages > 1:
        pager = h(
            "nav",
            {"class": "pager", "aria-label": "pages"},
            h("a", {"href": with_query("/duplicates", page=number_ - 1)}, "← previous")
            if number_ > 1
            else None,
            h("span", {}, f"page {number(number_)} of {number(pages)}"),
            h("a", {"href": with_query("/duplicates", page=number_ + 1)}, "next →")
            if number_ < pages
            else None,
        )
    body = join(
        [
            h(
                "p",
                {},
                "Pairs the write path found alike; they are never merged without you. Words "
                "only one side has are marked.",
            ),
            _recent_merges(view, merges),
            pager,
            [pair_block(view, p, actions=True) for p in shown] or h("p", {}, "The queue is empty."),
            pager,
        ]
    )
    return page(
        view,
        f"Near duplicates ({number(queued.total)})",
        body,
        flash=request.query_params.get("done"),
        here="/duplicates",
    )


def _recent_merges(view: View, merges: list[merge_undo.MergeRecord]) -> Html | None:
    """The merges that can still be undone (or say why not), newest first."""
    if not merges:
        return None
    items = []
    for m in merges:
        action = (
            form(view, "/duplicates/undo", hidden("merge", m.id), button="Undo")
            if m.refusal is None
            else h("span", {"class": "meta"}, m.refusal)
        )
        items.append(
            h(
                "li",
                {"data-merge": m.id},
                f"#{m.drop_id} merged into ",
                h("a", {"href": f"/memory/{m.keep_id}"}, f"#{m.keep_id}"),
                f" ({when(m.merged_at)}): {preview(m.merged_content, 100)} ",
                action,
            )
        )
    return h(
        "section",
        {"class": "merges"},
        h("h2", {}, "Recent merges"),
        h("ul", {"class": "items"}, items),
    )


def _id(value: str | None, name: str) -> int:
    if value is None or not value.isdigit() or int(value) < 1:
        raise InvalidInput(f"The field {name!r} must be a memory id.")
    return int(value)


def merge_confirm(view: View, request: Request) -> Response:
    keep = _id(request.query_params.get("keep"), "keep")
    drop = _id(request.query_params.get("drop"), "drop")
    with localmem.open(view.db, create=False) as store:
        try:
            a, b = store.get(keep), store.get(drop)
        except NotFound:
            body = join(
                [
                    h(
                        "p",
                        {"class": "error"},
                        f"Memory {keep} or {drop} no longer exists (merged or forgotten).",
                    ),
                    h("p", {}, h("a", {"href": "/duplicates", "class": "back"}, "← The queue")),
                ]
            )
            return page(view, "Not found", body, status=404)
    text_a, text_b, cut = diff.marked(a.content, b.content)
    kind = dedupe.stronger_kind(a.kind, b.kind)
    keywords = ", ".join(normalize_keywords(a.keywords + b.keywords)) or "none"
    result = h(
        "dl",
        {"class": "fields"},
        h("dt", {}, "kept"),
        h("dd", {}, f"memory #{a.id} (A); #{b.id} (B) is deleted, its links move to #{a.id}"),
        h("dt", {}, "kind"),
        h("dd", {}, kind),
        h("dt", {}, "keywords"),
        h("dd", {}, keywords),
        h("dt", {}, "seen"),
        h("dd", {}, number(a.seen_count + b.seen_count)),
        h("dt", {}, "recalled"),
        h("dd", {}, number(a.recalled_count + b.recalled_count)),
    )
    same = diff.same_text(a.content, b.content)

    def choose(which: str, label: str) -> Html:
        return form(
            view,
            "/duplicates/merge",
            hidden("keep", a.id),
            hidden("drop", b.id),
            hidden("text", which),
            button=label,
        )

    body = join(
        [
            h(
                "p",
                {"class": "notice"},
                "After the merge, the queue lists it under Recent merges with an Undo button, "
                "which puts both memories back as they were while neither changes.",
            ),
            h("div", {"class": "sides"}, _side("A", a, text_a), _side("B", b, text_b)),
            h(
                "p",
                {"class": "meta"},
                f"Only the first {number(diff.MAX_WORDS)} words are compared.",
            )
            if cut
            else None,
            h("p", {}, "The texts are the same but for spaces.") if same else None,
            h("h2", {}, "The merged memory"),
            result,
            h(
                "div",
                {"class": "actions"},
                choose("keep", "Merge, keep A's text"),
                choose("drop", "Merge, keep B's text"),
                h("a", {"href": "/duplicates"}, "Cancel"),
            ),
        ]
    )
    return page(view, f"Merge #{b.id} into #{a.id}?", body, here="/duplicates")


def merge(view: View, fields: dict[str, str]) -> Response:
    keep, drop = _id(fields.get("keep"), "keep"), _id(fields.get("drop"), "drop")
    with localmem.open(view.db, create=False) as store:
        result = dedupe.merge(
            store.connection, store.now(), keep, drop, text_of_dropped=fields.get("text") == "drop"
        )
        store.changed(f"dedupe merge {drop} into {keep}")
    survivor = result.survivor
    sentence = (
        f"Merged memory {result.merged.id} into memory {survivor.id} ({survivor.kind}); "
        "Undo, under Recent merges, puts both back."
    )
    return RedirectResponse(with_query("/duplicates", done=sentence), status_code=303)


def undo(view: View, fields: dict[str, str]) -> Response:
    """Undo one merge (refused with the domain's sentence, and a 409, when a row changed)."""
    merge_id = _id(fields.get("merge"), "merge")
    with localmem.open(view.db, create=False) as store:
        result = merge_undo.undo(store.connection, store.now(), merge_id)
        store.changed(f"dedupe undo {merge_id}")
    sentence = (
        f"Undid the merge of memory {result.restored.id} into memory {result.survivor.id}: "
        "both are as they were."
    )
    return RedirectResponse(with_query("/duplicates", done=sentence), status_code=303)


def keep_both(view: View, fields: dict[str, str]) -> Response:
    a, b = _id(fields.get("a"), "a"), _id(fields.get("b"), "b")
    with localmem.open(view.db, create=False) as store:
        try:
            dedupe.keep_both(store.connection, a, b)
        except NotFound:
            sentence = f"Memories {a} and {b} are no longer a pair in the queue."
            return RedirectResponse(with_query("/duplicates", done=sentence), status_code=303)
    sentence = f"Kept memories {a} and {b}; the pair is off the queue."
    return RedirectResponse(with_query("/duplicates", done=sentence), status_code=303)
