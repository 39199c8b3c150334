"""The audit report and the export with the git mirror.

The audit page shows the first rows of each section, as `localmem audit` does,
and every "and N more" is a link to the listing of that section, a page at a
time (`/browse?only=...`, `/duplicates`), never the whole section in one page.
The export download streams (`export_chunks`): its first byte leaves at once,
whatever the size of the store.
"""

from __future__ import annotations

from collections.abc import Iterator

from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from localmem.memory.maintenance import audit as auditing
from localmem.memory.readonly import open_readonly
from localmem.memory.transfer import mirror
from localmem.memory.transfer.export import export_chunks
from localmem.ui import charts
from localmem.ui.html import Html, h, join
from localmem.ui.layout import View, number, page, preview
from localmem.ui.pages import core_table
from localmem.ui.security import HEADERS

# Where the rest of each audit section is listed, a page at a time.
MORE = {
    "queue": "/duplicates",
    "promotion": "/browse?only=promotion&sort=times_seen",
    "never_recalled": "/browse?only=never_recalled&sort=oldest",
    "superseded": "/browse?only=superseded",
    "lessons": "/browse?only=long_lessons",
}


def _items(title: str, total: int, items: tuple[auditing.Item, ...], more: str) -> Html:
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
    rest = (
        h("p", {}, h("a", {"href": more}, f"… and {number(total - len(items))} more"))
        if total > len(items)
        else None
    )
    return h(
        "section",
        {},
        h("h2", {}, f"{title}: {number(total)}"),
        h("ul", {"class": "items"}, rows) if rows else None,
        rest,
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
            _items("Near-duplicate queue", report.queue_total, report.queue, MORE["queue"]),
            _items(
                "Promotion candidates (seen or recalled often, never promoted)",
                report.promotion_total,
                report.promotion,
                MORE["promotion"],
            ),
            h("section", {}, h("h2", {}, "Core health"), core_table(report.core)),
            _items(
                "Never recalled, oldest first",
                report.never_recalled_total,
                report.never_recalled,
                MORE["never_recalled"],
            ),
            _items(
                "Superseded, with their correction",
                report.superseded_total,
                report.superseded,
                MORE["superseded"],
            ),
            _items(
                "Lesson health (a lesson is one short line)",
                report.lesson_problems_total,
                report.lesson_problems,
                MORE["lessons"],
            ),
            h(
                "section",
                {},
                h(
                    "h2",
                    {},
                    f"Trace similarity ({number(report.traces_measured)} most recent traces; "
                    f"capture gate {report.gate})",
                ),
                h(
                    "figure",
                    {"class": "chart-box"},
                    charts.columns(histogram, label="trace similarity histogram", every=4)
                    if report.traces_measured
                    else charts.no_data("No traces to measure."),
                ),
                h(
                    "p",
                    {"class": "meta"},
                    "Each trace's best word overlap with the memories of its workspace when "
                    "it was stored: what the capture gate compares.",
                ),
                h(
                    "p",
                    {},
                    "At or above the gate (would be skipped now): "
                    f"{number(report.traces_at_or_above_gate)}",
                ),
            ),
        ]
    )
    return page(view, f"Audit ({number(report.total)} memories)", body, here="/audit")


def export_page(view: View, request: Request) -> Response:
    conn = open_readonly(view.db)
    try:
        state = mirror.status(conn)
    finally:
        conn.close()
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


def _download(view: View) -> Iterator[bytes]:
    """The document's pieces, on a read-only connection of its own that lives as long as
    the download (iterated from Starlette's worker threads, hence not thread-bound)."""
    conn = open_readonly(view.db)
    try:
        for piece in export_chunks(conn):
            yield piece.encode("utf-8")
    finally:
        conn.close()


def export_download(view: View, request: Request) -> Response:
    return StreamingResponse(
        _download(view),
        media_type="application/json",
        headers={**HEADERS, "content-disposition": 'attachment; filename="localmem-export.json"'},
    )
