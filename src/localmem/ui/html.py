"""Building HTML where escaping is the default (decision 115).

Every page is built with `h(tag, attrs, *children)`: a child or attribute value
that is a plain `str` is escaped; only `Html` (what `h` and `raw` return) goes
in as markup. A memory holding `<script>` or `onerror=` therefore renders as
text, whatever page shows it. The page shell is `templates/page.html`, filled
with `string.Template` from already-built `Html` parts.
"""

from __future__ import annotations

import functools
import html
from collections.abc import Iterable
from importlib import resources
from string import Template

# Elements that never have children or a closing tag.
_VOID = frozenset({"br", "hr", "img", "input", "link", "meta", "rect", "line", "circle"})


class Html(str):
    """Markup that is already safe to send (built here, never from user text)."""

    __slots__ = ()


def escape(value: object) -> Html:
    if isinstance(value, Html):
        return value
    return Html(html.escape(str(value), quote=True))


def raw(markup: str) -> Html:
    """Trusted markup written in this package (an SVG path, an entity); never user text."""
    return Html(markup)


def _children(items: Iterable[object]) -> str:
    out: list[str] = []
    for item in items:
        if item is None or item is False:
            continue
        if isinstance(item, str | int | float):
            out.append(escape(item))
        else:
            out.append(_children(item))  # type: ignore[arg-type]
    return "".join(out)


def h(tag: str, attrs: dict[str, object] | None = None, *children: object) -> Html:
    """`<tag attr="value">children</tag>`; a False/None attribute is left out, True is bare."""
    parts = [tag]
    for name, value in (attrs or {}).items():
        if value is None or value is False:
            continue
        key = name.rstrip("_").replace("_", "-")  # class_ -> class, data_confirm -> data-confirm
        parts.append(key if value is True else f'{key}="{escape(value)}"')
    opening = "<" + " ".join(parts) + ">"
    if tag in _VOID and not children:
        return Html(opening)
    return Html(f"{opening}{_children(children)}</{tag}>")


def join(items: Iterable[object]) -> Html:
    return Html(_children(items))


@functools.cache  # read once per process: the file ships in the wheel and never changes
def _shell() -> Template:
    text = resources.files("localmem.ui").joinpath("templates/page.html").read_text("utf-8")
    return Template(text)


def page_shell(**parts: Html | str) -> Html:
    """The whole document: `templates/page.html` with every `$name` filled (escaped
    unless it is `Html`)."""
    return Html(_shell().substitute({k: escape(v) for k, v in parts.items()}))
