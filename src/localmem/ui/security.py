"""What keeps the web view to the person who started it (docs/ui.md, "Security").

- A random token per start: `?token=...` in the printed URL; the first valid
  visit sets an HttpOnly, SameSite=Strict cookie and redirects to the same page
  without the token (so it stays out of history and Referer). Anything else is 401.
- Host must name this server (127.0.0.1, localhost or [::1] with our port, or the
  `--host` address): a DNS-rebinding page reaches us under its own name and is refused.
- Every POST carries the per-start CSRF token in a form field, and its Origin
  (when the browser sends one) must be ours; `Sec-Fetch-Site` must not be cross-site.
- No CORS headers, ever; a strict Content-Security-Policy (no inline script or
  style), no framing, no referrer to other sites, no caching.

Written as a plain ASGI middleware so it also guards the static files.
"""

from __future__ import annotations

import hmac
import secrets
import urllib.parse
from dataclasses import dataclass, field

from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
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


@dataclass
class Guard:
    """The secrets and names of one run of `localmem ui`."""

    host: str
    port: int = 0  # set once the socket is bound (`--port 0` picks one)
    token: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    csrf: str = field(default_factory=lambda: secrets.token_urlsafe(32))

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

    def token_ok(self, value: str | None) -> bool:
        return value is not None and hmac.compare_digest(value.encode(), self.token.encode())

    def csrf_ok(self, value: str | None) -> bool:
        return value is not None and hmac.compare_digest(value.encode(), self.csrf.encode())


def _refusal(status: int, title: str, sentence: str) -> Response:
    body = (
        "<!doctype html><html lang=en><head><meta charset=utf-8><title>localmem</title></head>"
        f"<body><h1>{title}</h1><p>{sentence}</p></body></html>"
    )
    return HTMLResponse(body, status_code=status, headers=HEADERS)


class GuardMiddleware:
    """Host check, token or cookie, Origin and Sec-Fetch-Site on writes, security headers.
    The CSRF field itself is checked by `csrf_checked()` once the form is parsed."""

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
        request = Request(scope)
        given = request.query_params.get(TOKEN_PARAM)
        if given is not None and request.method == "GET":
            # Swap the token in the URL for the cookie, then show the same page without it.
            query = [(k, v) for k, v in request.query_params.multi_items() if k != TOKEN_PARAM]
            target = request.url.path + ("?" + urllib.parse.urlencode(query) if query else "")
            response = RedirectResponse(target, status_code=303, headers=HEADERS)
            response.set_cookie(
                self.guard.cookie_name,
                self.guard.token,
                httponly=True,
                samesite="strict",
                path="/",
            )
            await response(scope, receive, send)
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
        request = Request(scope)
        given = request.query_params.get(TOKEN_PARAM)
        if not (
            (given is not None and self.guard.token_ok(given))
            or self.guard.token_ok(request.cookies.get(self.guard.cookie_name))
        ):
            return _refusal(
                401,
                "Token needed",
                "This view needs the token from the address that localmem ui printed when it "
                "started; open that address (the token changes at every start).",
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


def csrf_refusal() -> Response:
    return _refusal(
        403,
        "Refused",
        "This change did not carry the form's check token; reload the page and try again.",
    )
