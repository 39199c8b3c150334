"""What keeps the web view to the person who started it (docs/ui.md, "Security").

- A random start token per run, in the printed address only, and good once: the
  first visit with it opens a session. The session id is another random value,
  made at that moment (so a new one at every start), and it is what the HttpOnly,
  SameSite=Strict cookie holds; the token is spent and never sent back
  (decision 160). Anything without the session is 401.
- Host must name this server (127.0.0.1, localhost or [::1] with our port, or the
  `--host` address): a DNS-rebinding page reaches us under its own name and is refused.
- Fetch metadata: a request another site's page makes (an `<img>`, a script, a
  fetch, a frame, from another port of 127.0.0.1 too) is refused before anything
  runs; only a top-level navigation may come from elsewhere (decision 161).
- Every POST carries the per-start CSRF token in a form field, and its Origin
  (when the browser sends one) must be ours; `Sec-Fetch-Site` must be same-origin.
- No CORS headers, ever; a Content-Security-Policy without any script, no
  framing, no referrer to other sites, no caching.

Written as a plain ASGI middleware so it also guards the static files.
"""

from __future__ import annotations

import hmac
import secrets
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field

from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from localmem.ui.html import escape

# No page of the view runs script (the charts are SVG, the forms plain HTML).
CSP = (
    "default-src 'none'; script-src 'none'; style-src 'self'; img-src 'self' data:; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
HEADERS = {
    "content-security-policy": CSP,
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "same-origin",  # "no-referrer" makes a browser send `Origin: null`
    "cache-control": "no-store",
    "cross-origin-opener-policy": "same-origin",
    "cross-origin-resource-policy": "same-origin",
}
TOKEN_PARAM = "token"
CSRF_FIELD = "csrf"


def _random() -> str:
    return secrets.token_urlsafe(32)


@dataclass
class Guard:
    """The secrets and names of one run of `localmem ui`."""

    host: str
    port: int = 0  # set once the socket is bound (`--port 0` picks one)
    token: str = field(default_factory=_random)
    csrf: str = field(default_factory=_random)
    token_spent: bool = False
    session: str | None = None  # made when the token is spent; never derived from it
    # Told once the token is spent (the server removes the browser's launch file then).
    on_token_spent: Callable[[], None] | None = None

    @property
    def cookie_name(self) -> str:
        # Cookies ignore the port: two views on two ports must not overwrite each other's.
        return f"localmem_ui_{self.port}"

    def allowed_hosts(self) -> set[str]:
        names = {"127.0.0.1", "localhost", "[::1]"}
        names.add(f"[{self.host}]" if ":" in self.host else self.host)
        return {f"{name}:{self.port}" for name in names}

    def origins(self) -> set[str]:
        return {f"http://{host}" for host in self.allowed_hosts()}

    def url(self, path: str = "/") -> str:
        shown = f"[{self.host}]" if ":" in self.host else self.host
        if self.host in ("0.0.0.0", "::"):
            shown = "127.0.0.1"
        return f"http://{shown}:{self.port}{path}?{TOKEN_PARAM}={self.token}"

    def spend_token(self, value: str) -> str | None:
        """A new session id if `value` is the start token and it was never used, else None."""
        if self.token_spent or not _same(value, self.token):
            return None
        self.token_spent = True
        self.session = _random()
        if self.on_token_spent is not None:
            self.on_token_spent()
        return self.session

    def session_ok(self, value: str | None) -> bool:
        return self.session is not None and value is not None and _same(value, self.session)

    def csrf_ok(self, value: str | None) -> bool:
        return value is not None and _same(value, self.csrf)


def _same(given: str, secret: str) -> bool:
    return hmac.compare_digest(given.encode(), secret.encode())


def local_path(path: str) -> str:
    """`path` as a path of this server: `//evil.example/` or `/\\evil` would be read by a
    browser as another host, so leading slashes and backslashes fold into one."""
    return "/" + path.lstrip("/\\")


def _refusal(status: int, title: str, sentence: str) -> Response:
    body = (
        "<!doctype html><html lang=en><head><meta charset=utf-8><title>localmem</title></head>"
        f"<body><h1>{title}</h1><p>{sentence}</p></body></html>"
    )
    return HTMLResponse(body, status_code=status, headers=HEADERS)


def _session_opened(target: str) -> HTMLResponse:
    # A page that moves on by itself rather than a 303: after a navigation that came from
    # elsewhere (the launch file, a terminal), the browser would not send a Strict cookie
    # along a redirect, while this page's own refresh is a same-origin navigation.
    shown = escape(target)
    body = (
        "<!doctype html><html lang=en><head><meta charset=utf-8>"
        f'<meta http-equiv="refresh" content="0; url={shown}">'
        "<title>localmem</title></head>"
        f'<body><p>Opening the view: <a href="{shown}">continue</a>.</p></body></html>'
    )
    return HTMLResponse(body, headers=HEADERS)


def _foreign_subrequest(scope: Scope, headers: Headers) -> bool:
    """A browser request made by another site's page, other than a top-level navigation.

    `Sec-Fetch-Site` is `same-site` for a page on another port of 127.0.0.1, so a
    SameSite=Strict cookie alone would go along with its `<img src=...>`. Clients that
    send no fetch metadata (older browsers, scripts) are judged by the token alone."""
    site = headers.get("sec-fetch-site")
    if site is None or site in ("same-origin", "none"):
        return False
    navigation = (
        headers.get("sec-fetch-mode") == "navigate"
        and headers.get("sec-fetch-dest", "document") == "document"
    )
    return not (navigation and scope["method"] in ("GET", "HEAD"))


class GuardMiddleware:
    """Host check, fetch metadata, the start token or the session, Origin on writes, and
    the security headers. The CSRF field itself is checked once the form is parsed."""

    def __init__(self, app: ASGIApp, guard: Guard) -> None:
        self.app = app
        self.guard = guard

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        refusal = self._check(scope)
        if refusal is not None:
            await refusal(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = message.setdefault("headers", [])
                present = {name.lower() for name, _ in headers}
                for name, value in HEADERS.items():
                    if name.encode() not in present:
                        headers.append((name.encode(), value.encode()))
            await send(message)

        await self.app(scope, receive, send_with_headers)

    def _check(self, scope: Scope) -> Response | None:
        headers = Headers(scope=scope)
        if headers.get("host", "").lower() not in self.guard.allowed_hosts():
            return _refusal(
                400,
                "Wrong host",
                "This page was asked for under another host name; open the address that "
                "localmem ui printed.",
            )
        if _foreign_subrequest(scope, headers):
            return _refusal(
                403,
                "Refused",
                "Another site's page asked for this; the view answers only its own pages "
                "and addresses you open yourself.",
            )
        request = Request(scope)
        given = request.query_params.get(TOKEN_PARAM)
        has_session = self.guard.session_ok(request.cookies.get(self.guard.cookie_name))
        if given is not None and scope["method"] == "GET":  # a HEAD never spends the token
            return self._exchange(request, given, has_session)
        if not has_session:
            return _refusal(
                401,
                "Token needed",
                "This view needs the address that localmem ui printed when it started; open "
                "that address (its token changes at every start and opens one browser).",
            )
        if scope["method"] not in ("GET", "HEAD"):
            origin = headers.get("origin")
            site = headers.get("sec-fetch-site")
            if (origin is not None and origin not in self.guard.origins()) or (
                site is not None and site not in ("same-origin", "none")
            ):
                return _refusal(
                    403,
                    "Refused",
                    "A change was sent from another site; changes are accepted only from "
                    "localmem ui's own pages.",
                )
        return None

    def _exchange(self, request: Request, given: str, has_session: bool) -> Response:
        """The printed address: spend the token for a session, then show the same page
        without the token (so it stays out of history and Referer)."""
        query = [(k, v) for k, v in request.query_params.multi_items() if k != TOKEN_PARAM]
        target = local_path(request.url.path) + (
            "?" + urllib.parse.urlencode(query) if query else ""
        )
        if has_session:  # the browser already has a session: the token is not needed
            return RedirectResponse(target, status_code=303, headers=HEADERS)
        session = self.guard.spend_token(given)
        if session is None:
            return _refusal(
                401,
                "Token needed",
                "This address was already used or its token is wrong; each start of localmem "
                "ui prints an address that opens one browser: restart it for a new one.",
            )
        response = _session_opened(target)
        response.set_cookie(
            self.guard.cookie_name, session, httponly=True, samesite="strict", path="/"
        )
        return response


def csrf_refusal() -> Response:
    return _refusal(
        403,
        "Refused",
        "This change did not carry the form's check token; reload the page and try again.",
    )
