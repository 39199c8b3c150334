"""The facts about the user, only when started with `--facts` (SPEC 2, the same boundary
as `serve --facts`): topics, a topic's facts, remember, forget, and the folder's git
status with its last `.git-error`. `app.py` imports this module and adds its routes
only with the flag, so without it nothing here runs and the folder is never touched.
"""

from __future__ import annotations

import time

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from localmem import paths
from localmem.facts import gitrepo, rules, store
from localmem.ui.html import h, join
from localmem.ui.layout import View, form, page, with_query


def _topic_link(name: str, count: int) -> object:
    return h("li", {}, h("a", {"href": f"/facts/{name}"}, name), f" ({count})")


def facts_home(view: View, request: Request) -> Response:
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
            _remember_form(view, ""),
            h("section", {}, h("h2", {}, "Git"), git_part),
        ]
    )
    return page(view, "Facts", body, flash=request.query_params.get("done"), here="/facts")


def _remember_form(view: View, topic: str) -> object:
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
            h("label", {}, "Fact ", h("input", {"type": "text", "name": "fact", "required": True})),
            button="Remember",
        ),
    )


def facts_topic(view: View, request: Request) -> Response:
    topic = rules.check_topic(request.path_params["topic"])
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
                form(
                    view,
                    "/facts/forget",
                    h("input", {"type": "hidden", "name": "topic", "value": topic}),
                    h("input", {"type": "hidden", "name": "text", "value": fact}),
                    button="Forget",
                    danger=True,
                ),
            )
        )
    body = join(
        [
            h("ul", {"class": "facts"}, items)
            if items
            else h("p", {}, f"There are no facts about {topic}."),
            _remember_form(view, topic),
            h("p", {}, h("a", {"href": "/facts"}, "All topics")),
        ]
    )
    return page(
        view, f"Facts: {topic}", body, flash=request.query_params.get("done"), here="/facts"
    )


def remember(view: View, fields: dict[str, str]) -> Response:
    topic = fields.get("topic", "").strip()
    outcome = store.remember(
        paths.facts_folder(), topic, fields.get("fact", ""), time.strftime("%Y-%m-%d")
    )
    first = outcome.text.splitlines()[0] if outcome.text else "saved"
    return RedirectResponse(
        with_query(f"/facts/{topic}", done=first.rstrip(":") + "."), status_code=303
    )


def forget(view: View, fields: dict[str, str]) -> Response:
    topic = fields.get("topic", "")
    outcome = store.forget(paths.facts_folder(), topic, fields.get("text", ""))
    return RedirectResponse(
        with_query(f"/facts/{topic}", done=outcome.text.strip()), status_code=303
    )
