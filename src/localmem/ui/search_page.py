"""The search page: the same recall as `localmem search`, read the way a person reads it.

- Looking is not recalling: the view's searches are never counted as recalls
  (decision 163), so browsing cannot push memories up the "recalled" figures, `gc`
  or promotion. `Store.search(track=False)` is the read path's own switch.
- When nothing confident came back, the page says so first, and the weak guesses
  wait folded below it; confident hits come first and carry their score, weak ones
  do not (their score comes from a looser match and is not comparable).
- Only the supersede chain is shown beside a hit; "related" memories sharing an
  entity are left out, they were noise for a person.
- The ranking returns at most `lookup.MAX_K` rows; the view asks for all of them
  once and shows them PER_PAGE at a time.
- A query is cut at MAX_QUERY_CHARS, with a note: the semantic view's model reads
  the whole query, a second per 2,000 characters, and one search at a time holds
  the view's model (decision 169). A question as a person types it is far shorter.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

import localmem
from localmem.errors import InvalidInput
from localmem.memory.model import ALL, KINDS, Hit, Recall
from localmem.memory.search import lookup, recall
from localmem.ui.html import Html, h, join
from localmem.ui.layout import View, badge, memory_link, page, preview, select, with_query

PER_PAGE = 10
MAX_QUERY_CHARS = 300
SCORE_HELP = (
    "Score: how strongly a memory matches your words, best first; compare scores within "
    "one search only. Weak: found only by a loose match on a few shared words, a guess "
    "rather than an answer, so it carries no score."
)


def hit_block(rank: int, hit: Hit) -> Html:
    memory = hit.memory
    marks = [badge(memory.kind, memory.kind)]
    if hit.weak:
        marks.append(badge("weak guess", "weak"))
    if memory.superseded:
        marks.append(badge(f"superseded by #{memory.superseded_by}", "superseded"))
    chain = [
        h(
            "li",
            {},
            "superseded by " if n.relation == "superseded_by" else "corrects ",
            memory_link(n.memory),
            ": ",
            preview(n.memory.content),
        )
        for n in hit.neighbors
        if n.relation != "related"
    ]
    score = None if hit.weak else h("span", {"class": "score"}, f" · score {hit.score:.2f}")
    return h(
        "article",
        {"class": "hit weak-hit" if hit.weak else "hit", "data-id": memory.id},
        h(
            "div",
            {"class": "hit-head"},
            h("span", {"class": "rank"}, f"{rank}."),
            memory_link(memory),
            f" · {memory.workspace}",
            f" · by {memory.author}" if memory.author else None,
            score,
            " ",
            marks,
        ),
        h("p", {"class": "content"}, preview(memory.content, 600)),
        h("ul", {"class": "neighbours"}, chain) if chain else None,
    )


def core_aside(found: Recall) -> Html:
    items = [h("li", {}, memory_link(m), " ", preview(m.content, 300)) for m in found.core]
    return h(
        "aside",
        {"class": "core"},
        h("h2", {}, "Core (pushed with every recall)"),
        h("ul", {}, items) if items else h("p", {}, "No core memories in this scope."),
        h("p", {}, f"{found.core_dropped} older core row(s) left out by the cap.")
        if found.core_dropped
        else None,
    )


def _message(found: Recall, confident: int) -> Html | None:
    if not found.hits:
        sentence = found.message or "Nothing matched."
        if sentence == recall.EMPTY_STORE:
            sentence = "Nothing is stored yet; memories arrive as your agents save them."
        return h("p", {"class": "message none"}, sentence)
    if confident == 0:
        return h(
            "p",
            {"class": "message no-match", "role": "status"},
            "No good match: nothing stored answers this. "
            f"The {len(found.hits)} results below are weak guesses that share a few words "
            "with it.",
        )
    return None


def _results(found: Recall, number_: int, url: str) -> Html:
    ordered = sorted(found.hits, key=lambda hit: hit.weak)  # stable: ranking order kept
    confident = sum(not hit.weak for hit in ordered)
    pages = max(1, -(-len(ordered) // PER_PAGE))
    number_ = min(number_, pages)
    first = (number_ - 1) * PER_PAGE
    shown = list(enumerate(ordered, 1))[first : first + PER_PAGE]
    strong = [hit_block(rank, hit) for rank, hit in shown if not hit.weak]
    weak = [hit_block(rank, hit) for rank, hit in shown if hit.weak]
    guesses = None
    if weak:
        guesses = h(
            "details",
            {"class": "weak-guesses"},  # folded: a guess is there to look at, not to read first
            h("summary", {}, f"{len(weak)} weak guess{'es' if len(weak) > 1 else ''}"),
            weak,
        )

    def link(to: int, text: str) -> Html:
        return h("a", {"href": with_query(url, page=to)}, text)

    pager = None
    if found.hits:
        last = first + len(shown)
        pager = h(
            "nav",
            {"class": "pager", "aria-label": "result pages"},
            link(number_ - 1, "← better") if number_ > 1 else None,
            h("span", {}, f"results {first + 1}–{last} of {len(ordered)}"),
            link(number_ + 1, "more →") if number_ < pages else None,
        )
    limit = None
    if len(ordered) == lookup.MAX_K and number_ == pages:
        limit = h(
            "p",
            {"class": "meta"},
            f"A search returns its {lookup.MAX_K} best results; add words to narrow it, or ",
            h("a", {"href": "/browse"}, "browse"),
            " every memory.",
        )
    return h(
        "section",
        {"class": "results"},
        _message(found, confident),
        strong,
        guesses,
        pager,
        limit,
        h("p", {"class": "help meta"}, SCORE_HELP) if found.hits else None,
    )


def _whole(value: str | None, default: int, what: str) -> int:
    if value in (None, ""):
        return default
    if not value.isdigit() or int(value) < 1:
        raise InvalidInput(f"The {what} must be a whole number of at least 1, not {value!r}.")
    return int(value)


def search(view: View, request: Request) -> Response:
    params = request.query_params
    query = params.get("q", "")
    cut = len(query) > MAX_QUERY_CHARS
    query = query[:MAX_QUERY_CHARS]
    workspace = params.get("workspace") or ALL
    kind = params.get("kind") or None
    number_ = _whole(params.get("page"), 1, "page number")
    with localmem.open(view.db, create=False) as store:
        names = store.workspace_names()
        found = (
            view.search(store, query, workspace=workspace, k=lookup.MAX_K, kind=kind)
            if query.strip()
            else None
        )
    controls = h(
        "form",
        {"method": "get", "action": "/search", "class": "filters"},
        h(
            "label",
            {},
            "Query ",
            h(
                "input",
                {
                    "type": "search",
                    "name": "q",
                    "value": query,
                    "maxlength": MAX_QUERY_CHARS,
                    "autofocus": True,
                },
            ),
        ),
        select("workspace", [(ALL, "all"), *((n, n) for n in names)], workspace, "Workspace"),
        select("kind", [("", "every kind"), *((x, x) for x in KINDS)], kind, "Kind"),
        h("button", {"type": "submit"}, "Search"),
    )
    if found is None:
        body = join([controls, h("p", {}, "Type what you want to recall, as you would ask it.")])
        return page(view, "Search", body, here="/search")
    url = with_query("/search", q=query, workspace=workspace, kind=kind)
    results = _results(found, number_, url)
    note = (
        h("p", {"class": "notice"}, f"Only the first {MAX_QUERY_CHARS} characters were searched.")
        if cut
        else None
    )
    body = join([controls, note, h("div", {"class": "with-aside"}, results, core_aside(found))])
    return page(view, "Search", body, query=query, here="/search")
