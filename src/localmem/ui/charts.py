"""Inline SVG charts drawn by our code: no script, no library, fine under the CSP.

Colours come from presentation attributes and CSS classes (`style.css`), never
inline `style` attributes, which the Content-Security-Policy forbids. Every
chart carries a `<title>` per bar and an `aria-label`, so the numbers are
readable without seeing the picture. Counts are written with thousands
separators; a chart with nothing to draw is a sentence, never an empty frame;
room is kept above the tallest bar for its value.
"""

from __future__ import annotations

from collections.abc import Sequence

from localmem.ui.html import Html, h

WIDTH = 560
BAR_GAP = 4
LABEL_ROOM = 16  # above the tallest bar, where its value is written
NO_DATA = "Nothing to show yet."


def no_data(sentence: str = NO_DATA) -> Html:
    return h("p", {"class": "no-data"}, sentence)


def columns(
    series: Sequence[tuple[str, int]], *, label: str, height: int = 160, every: int = 1
) -> Html:
    """Vertical bars, one per (label, value); every `every`-th label is written below."""
    top = max((value for _, value in series), default=0)
    if top == 0:
        return no_data()
    slot = WIDTH / max(len(series), 1)
    bars = []
    for i, (name, value) in enumerate(series):
        bar_h = round((height - 20 - LABEL_ROOM) * value / top)
        x = round(i * slot + BAR_GAP / 2, 1)
        bars.append(
            h(
                "g",
                {"class": "bar"},
                h(
                    "rect",
                    {
                        "x": x,
                        "y": height - 20 - bar_h,
                        "width": round(slot - BAR_GAP, 1),
                        "height": bar_h,
                    },
                    h("title", {}, f"{name}: {value:,}"),
                ),
                h(
                    "text",
                    {"x": round(x + (slot - BAR_GAP) / 2, 1), "y": height - 24 - bar_h},
                    f"{value:,}" if value else "",
                ),
                h(
                    "text",
                    {"class": "axis", "x": round(x + (slot - BAR_GAP) / 2, 1), "y": height - 4},
                    name if i % every == 0 else "",
                ),
            )
        )
    return h(
        "svg",
        {
            "class": "chart columns",
            "viewBox": f"0 0 {WIDTH} {height}",
            "role": "img",
            "aria-label": label,
        },
        bars,
    )


def rows(series: Sequence[tuple[str, int]], *, label: str, unit: str = "") -> Html:
    """Horizontal bars with the label on the left and the value on the right."""
    top = max((value for _, value in series), default=0)
    if top == 0:
        return no_data()
    row_h = 22
    left = 190
    span = WIDTH - left - 70
    items = []
    for i, (name, value) in enumerate(series):
        y = i * row_h
        width = max(1, round(span * value / top)) if value else 0
        shown = name if len(name) <= 28 else name[:27] + "…"
        items.append(
            h(
                "g",
                {"class": "bar"},
                h("text", {"class": "axis", "x": 0, "y": y + 15}, shown),
                h(
                    "rect",
                    {"x": left, "y": y + 3, "width": width, "height": row_h - 6},
                    h("title", {}, f"{name}: {value:,}{unit}"),
                ),
                h("text", {"x": left + width + 6, "y": y + 15}, f"{value:,}{unit}"),
            )
        )
    return h(
        "svg",
        {
            "class": "chart rows",
            "viewBox": f"0 0 {WIDTH} {max(row_h * len(series), row_h)}",
            "role": "img",
            "aria-label": label,
        },
        items,
    )


def split(parts: Sequence[tuple[str, int]], *, label: str) -> Html:
    """One bar cut into parts (e.g. recalled / never recalled), with a legend."""
    total = sum(value for _, value in parts)
    if total == 0:
        return no_data()
    x = 0.0
    pieces = []
    legend = []
    for i, (name, value) in enumerate(parts):
        width = WIDTH * value / total
        pieces.append(
            h(
                "rect",
                {
                    "class": f"part part{i}",
                    "x": round(x, 1),
                    "y": 0,
                    "width": round(width, 1),
                    "height": 24,
                },
                h("title", {}, f"{name}: {value:,}"),
            )
        )
        legend.append(h("li", {"class": f"part{i}"}, f"{name}: {value:,}"))
        x += width
    return h(
        "figure",
        {"class": "split"},
        h(
            "svg",
            {
                "class": "chart split",
                "viewBox": f"0 0 {WIDTH} 24",
                "role": "img",
                "aria-label": label,
            },
            pieces,
        ),
        h("ul", {"class": "legend"}, legend),
    )
