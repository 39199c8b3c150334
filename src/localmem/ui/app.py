"""The Starlette application: routes, form parsing with the CSRF check, error pages.

Each route opens the store for its own request (`localmem.open()`, one SQLite
connection, closed at the end), so requests never share a connection across
threads. Errors a user can cause (`LocalmemError`) become a page with the one
sentence and a fitting status (a memory that does not exist: 404); anything
else becomes a short 500 page, never a traceback in the browser.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from importlib import resources

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from localmem.errors import Conflict, InvalidInput, LocalmemError, NotFound, StoreUnavailable
from localmem.ui import memory_pages, pages
from localmem.ui.html import h
from localmem.ui.layout import View, page
from localmem.ui.security import CSRF_FIELD, GuardMiddleware, csrf_refusal

log = logging.getLogger("localmem.ui")

Reader = Callable[[View, Request], Response]
Writer = Callable[[View, dict[str, str]], Response]
STATUS = {NotFound: 404, InvalidInput: 400, Conflict: 409, StoreUnavailable: 503}
MAX_FORM_BYTES = 2 * 1024 * 1024  # a 1 MiB memory plus its keywords, with room to spare


def _error_page(view: View, error: Exception) -> Response:
    if isinstance(error, LocalmemError):
        status = next((code for kind, code in STATUS.items() if isinstance(error, kind)), 400)
        title = "Not found" if status == 404 else "Refused" if status < 500 else "Unavailable"
        return page(view, title, h("p", {"class": "error"}, str(error)), status=status)
    log.error("the web view failed: %s: %s", type(error).__name__, error)
    return page(
        view,
        "Something went wrong",
        h("p", {}, "The web view could not do this; the server's terminal has a line about it."),
        status=500,
    )


def reader(view: View, handler: Reader) -> Callable[[Request], Awaitable[Response]]:
    async def endpoint(request: Request) -> Response:
        try:
            return await run_in_threadpool(handler, view, request)
        except Exception as error:
            return _error_page(view, error)

    return endpoint


def writer(
    view: View, handler: Callable[..., Response], *, with_id: bool = False
) -> Callable[[Request], Awaitable[Response]]:
    async def endpoint(request: Request) -> Response:
        try:
            if int(request.headers.get("content-length") or 0) > MAX_FORM_BYTES:
                raise InvalidInput("The form is over 2 MiB; a memory holds at most 1 MiB of text.")
            raw = await request.form()
            fields = {k: v for k, v in raw.multi_items() if isinstance(v, str)}
            if not view.guard.csrf_ok(fields.get(CSRF_FIELD)):
                return csrf_refusal()
            if with_id:
                memory_id = int(request.path_params["memory_id"])
                return await run_in_threadpool(handler, view, memory_id, fields)
            return await run_in_threadpool(handler, view, fields)
        except Exception as error:
            return _error_page(view, error)

    return endpoint


def routes(view: View) -> list[BaseRoute]:
    get, post = ["GET", "HEAD"], ["POST"]
    listed: list[BaseRoute] = [
        Route("/", reader(view, pages.overview), methods=get),
        Route("/browse", reader(view, memory_pages.browse), methods=get),
        Route("/search", reader(view, memory_pages.search), methods=get),
        Route("/memory/{memory_id:int}", reader(view, memory_pages.memory_page), methods=get),
        Route(
            "/memory/{memory_id:int}/forget",
            reader(view, memory_pages.forget_confirm),
            methods=get,
        ),
        Route(
            "/memory/{memory_id:int}/forget",
            writer(view, memory_pages.forget, with_id=True),
            methods=post,
        ),
        Route(
            "/memory/{memory_id:int}/promote",
            writer(view, memory_pages.promote, with_id=True),
            methods=post,
        ),
        Route(
            "/memory/{memory_id:int}/keywords",
            writer(view, memory_pages.edit_keywords, with_id=True),
            methods=post,
        ),
        Route(
            "/memory/{memory_id:int}/correct",
            writer(view, memory_pages.correct, with_id=True),
            methods=post,
        ),
        Route("/duplicates", reader(view, pages.duplicates), methods=get),
        Route("/duplicates/merge", writer(view, pages.merge), methods=post),
        Route("/duplicates/keep-both", writer(view, pages.keep_both), methods=post),
        Route("/audit", reader(view, pages.audit), methods=get),
        Route("/export", reader(view, pages.export_page), methods=get),
        Route("/export/download", reader(view, pages.export_download), methods=get),
    ]
    if view.facts:
        # Imported only here: without --facts no facts module is even loaded.
        from localmem.ui import facts_pages

        listed += [
            Route("/facts", reader(view, facts_pages.facts_home), methods=get),
            Route("/facts/remember", writer(view, facts_pages.remember), methods=post),
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
