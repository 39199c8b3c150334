"""The facts about the user, only when started with `--facts` (SPEC 2, the same boundary
as `serve --facts`): topics, a topic's facts, remember, forget, and the folder's git
status with its last `.git-error`. `app.py` imports this module and adds its routes
only with the flag, so without it nothing here runs and the folder is never touched.

A Forget button names the very line it stands beside and asks first; a refusal
is shown as one (red), never in the success box; a refused Remember keeps what
was typed (decision 168).
"""

from __future__ import annotations

import time

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from localmem import paths
from localmem.errors import InvalidInput
from localmem.facts import gitrepo, rules, store
from localmem.ui.html import h, join
from localmem.ui.layout import View, form, hidden, page, with_query


def _topic_link(name: str, count: int) -> object:
    return h("li", {}, h("a", {"href": f"/facts/{name}"}, name), f" ({count})")


def facts_home(view: View, request: Request) -> Response:
    return _home(view, flash=request.query_params.get("done"))


def _home(
    view: View,
    *,
    flash: str | None = None,
    error: str | None = None,
    typed: tuple[str, str] = ("", ""),
) -> Response:
    folder = paths.facts_folder()
    topics = store.index(folder)
    git = gitrepo.status(folder)
    if git is None:
        git_part = h(
            "p",
            {},
            "The facts folder is not a git repository; ",
            h("code", {}, "local-memory git-init REMOTE"),
            " makes it one.",
        )
    else:
        git_part = h(
            "dl",
            {"class": "fields"},
            h("dt", {}, "remote"),
            h("dd", {}, git.remote or "none"),
            h("dt", {}, "last commit"),
            h("dd", {}, git.last_commit or "none"),
            h("dt", {}, "last sync"),
            h("dd", {}, h("pre", {"class": "error"}, git.error) if git.error else "succeeded"),
        )
    body = join(
        [
            h(
                "p",
                {"class": "notice"},
                f"Facts about you, for local models only, kept in {folder}.",
            ),
            h("ul", {"class": "topics"}, [_topic_link(n, c) for n, c in topics])
            if topics
            else h("p", {}, "No topics yet: nothing has been remembered."),
            _remember_form(view, *typed),
            h("section", {}, h("h2", {}, "Git"), git_part),
        ]
    )
    return page(
        view, "Facts", body, flash=flash, error=error, here="/facts", status=400 if error else 200
    )


def _remember_form(view: View, topic: str, fact: str = "") -> object:
    return h(
        "section",
        {},
        h("h2", {}, "Remember"),
        form(
            view,
            "/facts/remember",
            h(
                "label",
                {},
                "Topic ",
                h("input", {"type": "text", "name": "topic", "value": topic, "required": True}),
            ),
            h(
                "label",
                {},
                "Fact ",
                h("input", {"type": "text", "name": "fact", "value": fact, "required": True}),
            ),
            button="Remember",
        ),
    )


def facts_topic(view: View, request: Request) -> Response:
    topic = rules.check_topic(request.path_params["topic"])
    params = request.query_params
    return _topic(view, topic, flash=params.get("done"), error=params.get("refused"))


def _topic(
    view: View,
    topic: str,
    *,
    flash: str | None = None,
    error: str | None = None,
    typed: str = "",
    status: int = 200,
) -> Response:
    folder = paths.facts_folder()
    lines = store.fact_lines(store.read_lines(folder, topic))
    items = []
    for line in lines:
        day, fact = rules.parse_line(line)
        items.append(
            h(
                "li",
                {},
                h("span", {"class": "meta"}, f"{day} ") if day else None,
                fact,
                " ",
                h(
                    "a",
                    {
                        "class": "danger",
                        "href": with_query("/facts/forget", topic=topic, line=line),
                    },
                    "Forget…",
                ),
            )
        )
    body = join(
        [
            h("ul", {"class": "facts"}, items)
            if items
            else h("p", {}, f"There are no facts about {topic}."),
            _remember_form(view, topic, typed),
            h("p", {}, h("a", {"href": "/facts"}, "All topics")),
        ]
    )
    return page(
        view, f"Facts: {topic}", body, flash=flash, error=error, here="/facts", status=status
    )


def remember(view: View, fields: dict[str, str]) -> Response:
    topic = fields.get("topic", "").strip()
    fact = fields.get("fact", "")
    try:
        outcome = store.remember(paths.facts_folder(), topic, fact, time.strftime("%Y-%m-%d"))
    except InvalidInput as refused:
        # Shown again with what was typed, so a bad topic name costs a retype of the name only.
        sentence = str(refused)
        sentence = sentence[:1].upper() + sentence[1:]
        try:
            rules.check_topic(topic)
        except InvalidInput:
            return _home(view, error=sentence, typed=(topic, fact))
        return _topic(view, topic, error=sentence, typed=fact, status=400)
    first = outcome.text.splitlines()[0] if outcome.text else "saved"
    return RedirectResponse(
        with_query(f"/facts/{topic}", done=first.rstrip(":") + "."), status_code=303
    )


def forget_confirm(view: View, request: Request) -> Response:
    topic = rules.check_topic(request.query_params.get("topic", ""))
    line = request.query_params.get("line", "")
    if line not in store.fact_lines(store.read_lines(paths.facts_folder(), topic)):
        return _topic(
            view, topic, error="That fact is no longer there; nothing was removed.", status=404
        )
    day, fact = rules.parse_line(line)
    body = join(
        [
            h("p", {}, f"Forget this fact about {topic}?"),
            h(
                "blockquote",
                {"class": "fact"},
                fact,
                h("span", {"class": "meta"}, f" ({day})") if day else None,
            ),
            form(
                view,
                "/facts/forget",
                hidden("topic", topic),
                hidden("line", line),
                button="Yes, forget it",
                danger=True,
            ),
            h("p", {}, h("a", {"href": f"/facts/{topic}"}, "No, keep it")),
        ]
    )
    return page(view, "Forget a fact?", body, here="/facts")


def forget(view: View, fields: dict[str, str]) -> Response:
    topic = rules.check_topic(fields.get("topic", ""))
    outcome = store.forget(paths.facts_folder(), topic, fields.get("line", ""), whole_line=True)
    sentence = outcome.text.strip().splitlines()[0]
    sentence = sentence[:1].upper() + sentence[1:]
    target = f"/facts/{topic}" if outcome.changed else f"/facts/{topic}"
    key = "done" if outcome.changed else "refused"
    return RedirectResponse(with_query(target, **{key: sentence}), status_code=303)
