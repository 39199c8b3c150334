"""The overview, the near-duplicate queue, the audit report and export with the mirror."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

import localmem
from localmem.memory.maintenance import audit as auditing
from localmem.memory.maintenance import dedupe
from localmem.memory.model import Memory
from localmem.memory.readonly import open_readonly
from localmem.memory.transfer import mirror
from localmem.memory.transfer.export import export_text
from localmem.ui import charts
from localmem.ui.html import Html, h, join
from localmem.ui.layout import View, badge, form, memory_link, page, preview, when, with_query


def _card(label: str, value: object, href: str | None = None) -> Html:
    inner = [h("span", {"class": "value"}, value), h("span", {"class": "label"}, label)]
    return (
        h("a", {"class": "card", "href": href}, inner)
        if href
        else h("div", {"class": "card"}, inner)
    )


def _core_table(core: tuple[auditing.CoreHealth, ...]) -> Html:
    if not core:
        return h("p", {}, "No core memories.")
    head = ("workspace", "estimated tokens", "cap", "pushed", "left out by the cap", "superseded")
    return h(
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
                    h("td", {"class": "num"}, c.tokens),
                    h("td", {"class": "num"}, c.cap),
                    h("td", {"class": "num"}, c.pushed),
                    h("td", {"class": "num"}, c.dropped),
                    h("td", {"class": "num"}, c.superseded),
                )
                for c in core
            ],
        ),
    )


def _pair_block(view: View, pair: dedupe.Pair, actions: bool) -> Html:
    a, b = pair.other, pair.memory  # the older memory first, as `dedupe --review` shows them

    def side(label: str, m: Memory) -> Html:
        return h(
            "div",
            {"class": "side"},
            h("h3", {}, f"{label}: ", memory_link(m), " ", badge(m.kind, m.kind)),
            h("p", {"class": "content"}, m.content),
            h(
                "p",
                {"class": "meta"},
                f"created {when(m.created_at)}, seen {m.seen_count}, recalled {m.recalled_count}",
            ),
        )

    buttons = None
    if actions:
        keep = h("input", {"type": "hidden", "name": "keep", "value": a.id})
        drop = h("input", {"type": "hidden", "name": "drop", "value": b.id})
        buttons = h(
            "div",
            {"class": "actions"},
            form(
                view,
                "/duplicates/merge",
                keep,
                drop,
                h("input", {"type": "hidden", "name": "text", "value": "keep"}),
                button="Merge, keep A's text",
            ),
            form(
                view,
                "/duplicates/merge",
                keep,
                drop,
                h("input", {"type": "hidden", "name": "text", "value": "drop"}),
                button="Merge, keep B's text",
            ),
            form(
                view,
                "/duplicates/keep-both",
                h("input", {"type": "hidden", "name": "a", "value": a.id}),
                h("input", {"type": "hidden", "name": "b", "value": b.id}),
                button="Keep both",
            ),
        )
    return h(
        "article",
        {"class": "pair", "data-pair": f"{a.id}-{b.id}"},
        h("p", {"class": "meta"}, f"{pair.memory.workspace} · overlap {pair.overlap:.2f}"),
        h("div", {"class": "sides"}, side("A", a), side("B", b)),
        buttons,
    )


def overview(view: View, request: Request) -> Response:
    with localmem.open(view.db, create=False) as store:
        figures = store.overview()
        stats = store.stats()
        core = auditing.core_health(store.connection, None)
        pairs = dedupe.list_pairs(store.connection)
    workspaces = len(figures.by_workspace)
    cards = h(
        "div",
        {"class": "cards"},
        _card("memories", figures.total, "/browse"),
        _card("workspaces", workspaces),
        _card("near duplicates to review", len(pairs), "/duplicates"),
        _card(f"core tokens of {stats.core_cap} (fullest)", stats.core_tokens),
        _card("never recalled", figures.never_recalled, "/browse?sort=last_recalled"),
    )
    counts = h(
        "table",
        {"class": "counts"},
        h(
            "thead",
            {},
            h(
                "tr",
                {},
                h("th", {}, "workspace"),
                [
                    h("th", {"class": "num"}, k)
                    for k in ("note", "lesson", "trace", "core", "imported", "total")
                ],
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
                    [
                        h("td", {"class": "num"}, kinds.get(k, 0))
                        for k in ("note", "lesson", "trace", "core", "imported")
                    ],
                    h("td", {"class": "num"}, sum(kinds.values())),
                )
                for ws, kinds in figures.by_workspace.items()
            ],
        ),
    )
    weekly = [(monday.strftime("%d %b"), n) for monday, n in figures.weekly]
    largest = [(f"#{s.id} {preview(s.preview, 24)}", s.chars) for s in figures.largest]
    per_workspace = [(ws, sum(kinds.values())) for ws, kinds in figures.by_workspace.items()]
    charts_grid = h(
        "div",
        {"class": "charts"},
        h(
            "figure",
            {},
            h("figcaption", {}, "Memories added per week"),
            charts.columns(weekly, label="memories added per week", every=2),
        ),
        h(
            "figure",
            {},
            h("figcaption", {}, "Age of memories"),
            charts.columns(list(figures.ages), label="age histogram"),
        ),
        h(
            "figure",
            {},
            h("figcaption", {}, "Recalled at least once vs never recalled"),
            charts.split(
                [("recalled", figures.recalled), ("never recalled", figures.never_recalled)],
                label="recalled vs never recalled",
            ),
        ),
        h(
            "figure",
            {},
            h("figcaption", {}, "Memories per workspace"),
            charts.rows(per_workspace, label="memories per workspace"),
        ),
        h(
            "figure",
            {},
            h("figcaption", {}, "Largest memories (characters)"),
            charts.rows(largest, label="largest memories"),
        ),
    )
    queue = [_pair_block(view, p, actions=False) for p in pairs[:3]]
    body = join(
        [
            cards,
            charts_grid,
            h("section", {}, h("h2", {}, "Per workspace and kind"), counts),
            h(
                "section",
                {},
                h("h2", {}, "Core tier (pushed with every recall)"),
                _core_table(core),
            ),
            h(
                "section",
                {},
                h("h2", {}, f"Near-duplicate queue ({len(pairs)})"),
                queue or h("p", {}, "The queue is empty."),
                h("p", {}, h("a", {"href": "/duplicates"}, "Review every pair")) if pairs else None,
            ),
            h(
                "section",
                {},
                h("h2", {}, "Audit findings"),
                [h("p", {"class": "warning"}, w) for w in stats.warnings],
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


def duplicates(view: View, request: Request) -> Response:
    with localmem.open(view.db, create=False) as store:
        pairs = dedupe.list_pairs(store.connection)
    body = join(
        [
            h(
                "p",
                {},
                "Pairs the write path found alike; they are never merged without you. A merge "
                "keeps A (with the text you pick), the stronger kind, both keyword lists and "
                "every supersede link.",
            ),
            [_pair_block(view, p, actions=True) for p in pairs]
            or h("p", {}, "The queue is empty."),
        ]
    )
    return page(
        view,
        f"Near duplicates ({len(pairs)})",
        body,
        flash=request.query_params.get("done"),
        here="/duplicates",
    )


def _id(fields: dict[str, str], name: str) -> int:
    try:
        return int(fields.get(name, ""))
    except ValueError:
        from localmem.errors import InvalidInput

        raise InvalidInput(f"The form field {name!r} must be a memory id.") from None


def merge(view: View, fields: dict[str, str]) -> Response:
    keep, drop = _id(fields, "keep"), _id(fields, "drop")
    with localmem.open(view.db, create=False) as store:
        result = dedupe.merge(
            store.connection, store.now(), keep, drop, text_of_dropped=fields.get("text") == "drop"
        )
        store.changed(f"dedupe merge {drop} into {keep}")
    survivor = result.survivor
    sentence = f"Merged memory {result.merged.id} into memory {survivor.id} ({survivor.kind})."
    return RedirectResponse(with_query("/duplicates", done=sentence), status_code=303)


def keep_both(view: View, fields: dict[str, str]) -> Response:
    a, b = _id(fields, "a"), _id(fields, "b")
    with localmem.open(view.db, create=False) as store:
        dedupe.keep_both(store.connection, a, b)
    sentence = f"Kept memories {a} and {b}; the pair is off the queue."
    return RedirectResponse(with_query("/duplicates", done=sentence), status_code=303)


def _items(title: str, total: int, items: tuple[auditing.Item, ...]) -> Html:
    rows = [
        h(
            "li",
            {},
            h("a", {"href": f"/memory/{i.id}"}, f"#{i.id}"),
            f" ({i.workspace}, {i.kind}) {preview(i.content, 120)}",
            h("span", {"class": "meta"}, f" — {i.detail}") if i.detail else None,
        )
        for i in items
    ]
    more = (
        h("p", {"class": "meta"}, f"… and {total - len(items)} more")
        if total > len(items)
        else None
    )
    return h(
        "section", {}, h("h2", {}, f"{title}: {total}"), h("ul", {}, rows) if rows else None, more
    )


def audit(view: View, request: Request) -> Response:
    conn = open_readonly(view.db)  # as `localmem audit`: the file is left byte for byte
    try:
        report = auditing.audit(conn, str(view.db))
    finally:
        conn.close()
    histogram = [(f"{b.low:.2f}" + (" gate" if b.gate else ""), b.count) for b in report.histogram]
    body = join(
        [
            _items("Near-duplicate queue", report.queue_total, report.queue),
            _items(
                "Promotion candidates (seen or recalled often, never promoted)",
                report.promotion_total,
                report.promotion,
            ),
            h("section", {}, h("h2", {}, "Core health"), _core_table(report.core)),
            _items(
                "Never recalled, oldest first", report.never_recalled_total, report.never_recalled
            ),
            _items("Superseded, with their correction", report.superseded_total, report.superseded),
            _items(
                "Lesson health (a lesson is one short line)",
                report.lesson_problems_total,
                report.lesson_problems,
            ),
            h(
                "section",
                {},
                h(
                    "h2",
                    {},
                    f"Trace similarity ({report.traces_measured} most recent traces; "
                    f"capture gate {report.gate})",
                ),
                charts.columns(histogram, label="trace similarity histogram", every=4),
                h(
                    "p",
                    {},
                    "At or above the gate (would be skipped now): "
                    f"{report.traces_at_or_above_gate}",
                ),
            ),
        ]
    )
    return page(view, f"Audit ({report.total} memories)", body, here="/audit")


def export_page(view: View, request: Request) -> Response:
    with localmem.open(view.db, create=False) as store:
        state = mirror.status(store.connection)
    if state is None:
        mirror_part = h(
            "p",
            {},
            "No git mirror is set up; ",
            h("code", {}, "localmem mirror init REMOTE"),
            " sets one up.",
        )
    else:
        mirror_part = h(
            "dl",
            {"class": "fields"},
            h("dt", {}, "folder"),
            h("dd", {}, state.folder),
            h("dt", {}, "remote"),
            h("dd", {}, state.remote or "none"),
            h("dt", {}, "last commit"),
            h("dd", {}, state.last_commit or "none"),
            h("dt", {}, "last push"),
            h("dd", {}, h("pre", {"class": "error"}, state.error) if state.error else "succeeded"),
        )
    body = join(
        [
            h(
                "p",
                {},
                "Every memory as one JSON document (the same bytes as ",
                h("code", {}, "localmem export"),
                "); ",
                h("code", {}, "localmem restore FILE"),
                " merges it back.",
            ),
            h(
                "p",
                {},
                h(
                    "a",
                    {
                        "class": "button",
                        "href": "/export/download",
                        "download": "localmem-export.json",
                    },
                    "Download the export",
                ),
            ),
            h("section", {}, h("h2", {}, "Git mirror"), mirror_part),
        ]
    )
    return page(view, "Export", body, here="/export")


def export_download(view: View, request: Request) -> Response:
    conn = open_readonly(view.db)
    try:
        text = export_text(conn)
    finally:
        conn.close()
    from localmem.ui.security import HEADERS

    return Response(
        text,
        media_type="application/json",
        headers={**HEADERS, "content-disposition": 'attachment; filename="localmem-export.json"'},
    )
