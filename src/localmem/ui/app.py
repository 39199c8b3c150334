"""The Starlette application: routes, form parsing with the CSRF check, error pages.

Each route opens the store for its own request (`localmem.open()`, one SQLite
connection, closed at the end), so requests never share a connection across
threads. Errors a user can cause (`LocalmemError`) become a page with the one
sentence and a fitting status (a memory that does not exist: 404); anything
else becomes a short 500 page, never a traceback in the browser.
"""

from __future__ import annotations

import logging
import urllib.parse
from collections.abc import Awaitable, Callable
from importlib import resources

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.formparsers import MultiPartException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import Message

from localmem.errors import Conflict, InvalidInput, LocalmemError, NotFound, StoreUnavailable
from localmem.ui import (
    curate_pages,
    duplicates_pages,
    memory_pages,
    pages,
    report_pages,
    search_page,
)
from localmem.ui.html import Html, h, join
from localmem.ui.layout import View, page
from localmem.ui.security import CSRF_FIELD, GuardMiddleware, csrf_refusal, local_path

log = logging.getLogger("localmem.ui")

Reader = Callable[[View, Request], Response]
Writer = Callable[[View, dict[str, str]], Response]
STATUS = {NotFound: 404, InvalidInput: 400, Conflict: 409, StoreUnavailable: 503}
# The largest memory `add` takes is 1 MiB of UTF-8; a browser sends a form percent-encoded,
# up to three bytes per byte, so the form may be three times that plus its keywords.
MAX_FORM_BYTES = 4 * 1024 * 1024
MAX_FORM_FIELDS = 50  # our largest form has six
MAX_DRAIN_BYTES = 64 * 1024 * 1024  # an oversized body read and dropped, up to this much


def _back_link(request: Request) -> Html:
    """Where the person came from, when that was one of our pages (Referer is sent only
    same-origin, `referrer-policy`), else the overview."""
    referer = urllib.parse.urlsplit(request.headers.get("referer", ""))
    here = f"{request.url.scheme}://{request.headers.get('host', '')}"
    back = "/"
    if referer.path and f"{referer.scheme}://{referer.netloc}" == here:
        back = local_path(referer.path) + (f"?{referer.query}" if referer.query else "")
    return h("p", {}, h("a", {"href": back, "class": "back"}, "← Back"))


def _error_page(view: View, request: Request, error: Exception) -> Response:
    if isinstance(error, LocalmemError):
        status = next((code for kind, code in STATUS.items() if isinstance(error, kind)), 400)
        title = "Not found" if status == 404 else "Refused" if status < 500 else "Unavailable"
        body = join([h("p", {"class": "error"}, str(error)), _back_link(request)])
        return page(view, title, body, status=status)
    log.error("the web view failed: %s: %s", type(error).__name__, error)
    return page(
        view,
        "Something went wrong",
        join(
            [
                h(
                    "p",
                    {},
                    "The web view could not do this; the server's terminal has a line about it.",
                ),
                _back_link(request),
            ]
        ),
        status=500,
    )


def reader(view: View, handler: Reader) -> Callable[[Request], Awaitable[Response]]:
    async def endpoint(request: Request) -> Response:
        try:
            return await run_in_threadpool(handler, view, request)
        except Exception as error:
            return _error_page(view, request, error)

    return endpoint


async def _form(request: Request) -> dict[str, str]:
    """The POSTed form, read with our own bounds so an oversized or malformed body is a
    400 with a sentence (Starlette's own limits would surface as a bare error)."""
    declared = request.headers.get("content-length")
    if declared is not None and not declared.isdigit():
        raise InvalidInput("The form's length is not a number; send it from the view's own page.")
    body = bytearray()
    over = declared is not None and int(declared) > MAX_FORM_BYTES
    read = 0
    async for chunk in request.stream():  # a body without Content-Length is bounded too
        read += len(chunk)
        over = over or read > MAX_FORM_BYTES
        if not over:
            body += chunk
        elif read > MAX_DRAIN_BYTES:
            break  # past this, the connection is simply dropped after the answer
    if over:
        # Read to its end (and thrown away) first: a browser still sending would show a
        # reset connection instead of this sentence.
        raise InvalidInput("The form is over 4 MiB; a memory holds at most 1 MiB of text.")
    kind = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if kind not in ("application/x-www-form-urlencoded", "multipart/form-data"):
        raise InvalidInput("The change must be sent as a form, as the view's own pages send it.")

    async def replay() -> Message:
        return {"type": "http.request", "body": bytes(body), "more_body": False}

    try:
        raw = await Request(request.scope, replay).form(
            max_files=0, max_fields=MAX_FORM_FIELDS, max_part_size=MAX_FORM_BYTES
        )
    except (HTTPException, MultiPartException, ValueError):
        raise InvalidInput(
            "The form could not be read (malformed, a file, more than "
            f"{MAX_FORM_FIELDS} fields or a field over 4 MiB); send it from the view's own page."
        ) from None
    return {k: v for k, v in raw.multi_items() if isinstance(v, str)}


def writer(
    view: View, handler: Callable[..., Response], *, with_id: bool = False
) -> Callable[[Request], Awaitable[Response]]:
    async def endpoint(request: Request) -> Response:
        try:
            fields = await _form(request)
            if not view.guard.csrf_ok(fields.get(CSRF_FIELD)):
                return csrf_refusal()
            if with_id:
                memory_id = int(request.path_params["memory_id"])
                return await run_in_threadpool(handler, view, memory_id, fields)
            return await run_in_threadpool(handler, view, fields)
        except Exception as error:
            return _error_page(view, request, error)

    return endpoint


def routes(view: View) -> list[BaseRoute]:
    get, post = ["GET", "HEAD"], ["POST"]
    listed: list[BaseRoute] = [
        Route("/", reader(view, pages.overview), methods=get),
        Route("/browse", reader(view, memory_pages.browse), methods=get),
        Route("/search", reader(view, search_page.search), methods=get),
        Route("/memory/{memory_id:int}", reader(view, memory_pages.memory_page), methods=get),
        Route(
            "/memory/{memory_id:int}/forget",
            reader(view, curate_pages.forget_confirm),
            methods=get,
        ),
        Route(
            "/memory/{memory_id:int}/forget",
            writer(view, curate_pages.forget, with_id=True),
            methods=post,
        ),
        Route(
            "/memory/{memory_id:int}/promote",
            writer(view, curate_pages.promote, with_id=True),
            methods=post,
        ),
        Route(
            "/memory/{memory_id:int}/keywords",
            writer(view, curate_pages.edit_keywords, with_id=True),
            methods=post,
        ),
        Route(
            "/memory/{memory_id:int}/correct",
            writer(view, curate_pages.correct, with_id=True),
            methods=post,
        ),
        Route("/duplicates", reader(view, duplicates_pages.duplicates), methods=get),
        Route("/duplicates/merge", reader(view, duplicates_pages.merge_confirm), methods=get),
        Route("/duplicates/merge", writer(view, duplicates_pages.merge), methods=post),
        Route("/duplicates/keep-both", writer(view, duplicates_pages.keep_both), methods=post),
        Route("/duplicates/undo", writer(view, duplicates_pages.undo), methods=post),
        Route("/audit", reader(view, report_pages.audit), methods=get),
        Route("/export", reader(view, report_pages.export_page), methods=get),
        Route("/export/download", reader(view, report_pages.export_download), methods=get),
    ]
    if view.facts:
        # Imported only here: without --facts no facts module is even loaded.
        from localmem.ui import facts_pages

        listed += [
            Route("/facts", reader(view, facts_pages.facts_home), methods=get),
            Route("/facts/remember", writer(view, facts_pages.remember), methods=post),
            Route("/facts/forget", reader(view, facts_pages.forget_confirm), methods=get),
            Route("/facts/forget", writer(view, facts_pages.forget), methods=post),
            Route("/facts/{topic}", reader(view, facts_pages.facts_topic), methods=get),
        ]
    static = resources.files("localmem.ui").joinpath("static")
    listed.append(Mount("/static", app=StaticFiles(directory=str(static)), name="static"))
    return listed


def build_app(view: View) -> GuardMiddleware:
    """The whole web view behind its guard (token, Host, Origin, headers)."""

    async def not_found(request: Request, exc: Exception) -> Response:
        status = exc.status_code if isinstance(exc, HTTPException) else 500
        if status == 405:
            return page(
                view,
                "Not allowed",
                h("p", {}, "This address does not take that method."),
                status=405,
            )
        return page(
            view, "Not found", h("p", {}, "There is no page at this address."), status=status
        )

    app = Starlette(
        routes=routes(view),
        exception_handlers={404: not_found, 405: not_found},
    )
    return GuardMiddleware(app, view.guard)
