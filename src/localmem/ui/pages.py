"""The overview and the near-duplicate queue with its merge.

The overview reads only what is cheap at 100k memories (index counts, the core
blocks, the queue), never `stats()`'s size and vector counts. A merge is two
steps: the pair's page shows word by word what differs and what the merged
memory will be, and only its form merges (decision 167).
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

import localmem
from localmem.errors import InvalidInput, NotFound
from localmem.memory.maintenance import audit as auditing
from localmem.memory.maintenance import dedupe
from localmem.memory.model import CORE_TOKEN_CAP, Memory
from localmem.memory.write import normalize_keywords
from localmem.ui import charts, diff
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
KIND_COLUMNS = ("note", "lesson", "trace", "core", "imported")


def _card(label: str, value: int, href: str | None = None) -> Html:
    inner = [h("span", {"class": "value"}, number(value)), h("span", {"class": "label"}, label)]
    return (
        h("a", {"class": "card", "href": href}, inner)
        if href
        else h("div", {"class": "card"}, inner)
    )


def core_table(core: tuple[auditing.CoreHealth, ...]) -> Html:
    if not core:
        return h("p", {}, "No core memories.")
    head = ("workspace", "estimated tokens", "cap", "pushed", "left out by the cap", "superseded")
    return h(
        "div",
        {"class": "table-wrap"},
        h(
            "table",
            {"class": "core-health"},
            h("thead", {}, h("tr", {}, [h("th", {}, c) for c in head])),
            h(
                "tbody",
                {},
                [
                    h(
                        "tr",
                        {"class": "over" if c.dropped else None},
                        h("td", {}, c.workspace),
                        [
                            h("td", {"class": "num"}, number(v))
                            for v in (c.tokens, c.cap, c.pushed, c.dropped, c.superseded)
                        ],
                    )
                    for c in core
                ],
            ),
        ),
    )


def _core_warnings(core: tuple[auditing.CoreHealth, ...]) -> list[str]:
    return [
        f"The core of {c.workspace} is over its cap: {number(c.tokens)} estimated tokens of "
        f"{number(c.cap)}, so {number(c.dropped)} older core rows are left out of every "
        "recall; change the kind of some on their pages."
        for c in core
        if c.dropped
    ]


def _figure(caption: str, chart: Html, wide: bool = False) -> Html:
    return h("figure", {"class": "wide" if wide else None}, h("figcaption", {}, caption), chart)


def overview(view: View, request: Request) -> Response:
    with localmem.open(view.db, create=False) as store:
        figures = store.overview()
        core = auditing.core_health(store.connection, None)
        pairs = dedupe.list_pairs(store.connection)
    fullest = max((c.tokens for c in core), default=0)
    cards = h(
        "div",
        {"class": "cards"},
        _card("memories", figures.total, "/browse"),
        _card("workspaces", len(figures.by_workspace)),
        _card("near duplicates to review", len(pairs), "/duplicates"),
        _card(f"core tokens of {CORE_TOKEN_CAP} (fullest)", fullest),
        _card("never recalled", figures.never_recalled, "/browse?only=never_recalled&sort=oldest"),
    )
    by_size = sorted(
        figures.by_workspace.items(), key=lambda item: (-sum(item[1].values()), item[0])
    )
    counts = h(
        "div",
        {"class": "table-wrap"},
        h(
            "table",
            {"class": "counts"},
            h(
                "thead",
                {},
                h(
                    "tr",
                    {},
                    h("th", {}, "workspace"),
                    [h("th", {"class": "num"}, k) for k in (*KIND_COLUMNS, "total")],
                ),
            ),
            h(
                "tbody",
                {},
                [
                    h(
                        "tr",
                        {},
                        h("td", {}, h("a", {"href": with_query("/browse", workspace=ws)}, ws)),
                        [h("td", {"class": "num"}, number(kinds.get(k, 0))) for k in KIND_COLUMNS],
                        h("td", {"class": "num"}, number(sum(kinds.values()))),
                    )
                    for ws, kinds in by_size
                ],
            ),
        ),
    )
    weekly_series = [(monday.strftime("%d %b"), n) for monday, n in figures.weekly]
    weekly = charts.columns(weekly_series, label="memories added per week", every=2)
    if figures.total and not any(n for _, n in figures.weekly):
        newest = figures.newest.isoformat() if figures.newest else "unknown"
        weekly = charts.no_data(
            f"None of the {number(figures.total)} memories was added in the last "
            f"{len(figures.weekly)} weeks; the newest is from {newest}."
        )
    largest = [(f"#{s.id} {preview(s.preview, 24)}", s.chars) for s in figures.largest]
    per_workspace = [(ws, sum(kinds.values())) for ws, kinds in by_size[:15]]
    more_workspaces = (
        h("p", {"class": "meta"}, f"and {number(len(by_size) - 15)} smaller workspaces")
        if len(by_size) > 15
        else None
    )
    charts_grid = h(
        "div",
        {"class": "charts"},
        _figure("Memories added per week", weekly),
        _figure("Age of memories", charts.columns(list(figures.ages), label="age histogram")),
        _figure(
            "Recalled at least once vs never recalled",
            charts.split(
                [("recalled", figures.recalled), ("never recalled", figures.never_recalled)],
                label="recalled vs never recalled",
            ),
        ),
        _figure(
            "Memories per workspace, largest first",
            join([charts.rows(per_workspace, label="memories per workspace"), more_workspaces]),
        ),
        _figure("Largest memories (characters)", charts.rows(largest, label="largest memories")),
    )
    queue = [pair_block(view, p, actions=False) for p in pairs[:3]]
    body = join(
        [
            cards,
            charts_grid,
            h("section", {}, h("h2", {}, "Per workspace and kind"), counts),
            h(
                "section",
                {},
                h("h2", {}, "Core tier (pushed with every recall)"),
                core_table(core),
            ),
            h(
                "section",
                {},
                h("h2", {}, f"Near-duplicate queue ({number(len(pairs))})"),
                queue or h("p", {}, "The queue is empty."),
                h("p", {}, h("a", {"href": "/duplicates"}, "Review every pair")) if pairs else None,
            ),
            h(
                "section",
                {},
                h("h2", {}, "Audit findings"),
                [h("p", {"class": "warning"}, w) for w in _core_warnings(core)],
                h(
                    "p",
                    {},
                    h("a", {"href": "/audit"}, "The full audit report"),
                    ": promotion candidates, never recalled, superseded rows, lesson health, "
                    "trace similarity.",
                ),
            ),
        ]
    )
    return page(view, "Overview", body, flash=request.query_params.get("done"), here="/")


# ---- the near-duplicate queue ------------------------------------------------------


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
        pairs = dedupe.list_pairs(store.connection)
    pages = max(1, -(-len(pairs) // PAIRS_PER_PAGE))
    number_ = min(number_, pages)
    shown = pairs[(number_ - 1) * PAIRS_PER_PAGE : number_ * PAIRS_PER_PAGE]
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
            pager,
            [pair_block(view, p, actions=True) for p in shown] or h("p", {}, "The queue is empty."),
            pager,
        ]
    )
    return page(
        view,
        f"Near duplicates ({number(len(pairs))})",
        body,
        flash=request.query_params.get("done"),
        here="/duplicates",
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
                "A merge cannot be undone from the view: check what differs first.",
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
    sentence = f"Merged memory {result.merged.id} into memory {survivor.id} ({survivor.kind})."
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
