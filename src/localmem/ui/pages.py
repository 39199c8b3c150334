"""The overview.

It reads only what is cheap at 100k memories (index counts, the core blocks,
the queue), never `stats()`'s size and vector counts. The queue itself, with
its merge and undo, is `duplicates_pages`.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

import localmem
from localmem.memory.maintenance import audit as auditing
from localmem.memory.maintenance import dedupe
from localmem.memory.model import CORE_TOKEN_CAP
from localmem.ui import charts
from localmem.ui.duplicates_pages import pair_block
from localmem.ui.html import Html, h, join
from localmem.ui.layout import (
    View,
    number,
    page,
    preview,
    with_query,
)

KIND_COLUMNS = ("note", "lesson", "trace", "core", "imported")
OVERVIEW_PAIRS = 3  # the queue's first pairs shown on the overview


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
        queued = dedupe.queue_page(store.connection, limit=OVERVIEW_PAIRS)
    fullest = max((c.tokens for c in core), default=0)
    cards = h(
        "div",
        {"class": "cards"},
        _card("memories", figures.total, "/browse"),
        _card("workspaces", len(figures.by_workspace)),
        _card("near duplicates to review", queued.total, "/duplicates"),
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
    queue = [pair_block(view, p, actions=False) for p in queued.pairs]
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
                h("h2", {}, f"Near-duplicate queue ({number(queued.total)})"),
                queue or h("p", {}, "The queue is empty."),
                h("p", {}, h("a", {"href": "/duplicates"}, "Review every pair"))
                if queued.total
                else None,
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
