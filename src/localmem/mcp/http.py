"""`localmem serve --http`: the MCP server over streamable HTTP, behind a bearer token.

Owns the token (from `LOCALMEM_TOKEN`, else a random one generated on first use
and kept 0600 in localmem's data folder), the loopback check that decides
whether binding an address deserves a warning, and the HTTP process itself.
Token checking uses the SDK's own bearer middleware with a verifier that knows
exactly one token, so a request without it, or with another one, gets 401
before it reaches the MCP session.
"""

from __future__ import annotations

import hmac
import os
import secrets
import sys
from dataclasses import dataclass
from pathlib import Path

from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings

from localmem.listening import is_loopback, listen
from localmem.paths import FileLock, ensure_folder, localmem_dir, write_atomic

TOKEN_ENV = "LOCALMEM_TOKEN"
TOKEN_FILE = "http-token"
MCP_PATH = "/mcp"


@dataclass(frozen=True)
class Token:
    value: str
    origin: str  # where it came from, for the start-up line on stderr


def token_path() -> Path:
    return localmem_dir() / TOKEN_FILE


def load_token() -> Token:
    """The bearer token: `$LOCALMEM_TOKEN`, else the stored one, created 0600 on first use."""
    explicit = os.environ.get(TOKEN_ENV, "").strip()
    if explicit:
        return Token(explicit, f"${TOKEN_ENV}")
    path = token_path()
    folder = path.parent
    ensure_folder(folder)
    # Two servers starting at once must agree on one token, so create under a lock.
    with FileLock(folder / f".{TOKEN_FILE}.lock"):
        if path.exists():
            stored = path.read_text(encoding="utf-8").strip()
            if stored:
                return Token(stored, str(path))
        fresh = secrets.token_urlsafe(32)
        write_atomic(path, (fresh + "\n").encode("utf-8"))
        return Token(fresh, f"{path} (new)")


class SingleTokenVerifier:
    """The SDK's `TokenVerifier` protocol for one shared secret."""

    def __init__(self, token: str) -> None:
        self._token = token.encode("utf-8")

    async def verify_token(self, token: str) -> AccessToken | None:
        # Constant-time comparison: the token is the only thing guarding the memories.
        if hmac.compare_digest(token.encode("utf-8"), self._token):
            return AccessToken(token=token, client_id="localmem", scopes=[])
        return None


def _url(host: str, port: int) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}"


def run_http(host: str, port: int, facts: bool = False) -> None:
    """Serve MCP over streamable HTTP at `http://host:port/mcp` until interrupted."""
    import anyio
    import uvicorn

    from localmem.mcp.server import LocalmemServer, log_to_stderr

    log_to_stderr()
    token = load_token()
    sock = listen(host, port, "pass another --port or --host")
    port = sock.getsockname()[1]
    if not is_loopback(host):
        print(
            f"localmem: warning: listening on {host}, which other machines can reach; "
            "anyone holding the token can read and add memories.",
            file=sys.stderr,
        )
    server = LocalmemServer(facts=facts)
    sdk = server.lowlevel()
    base = _url(host, port)
    app = sdk.streamable_http_app(
        streamable_http_path=MCP_PATH,
        host=host,
        # No authorization server here: the issuer is this server, and nothing is advertised.
        auth=AuthSettings(issuer_url=base, resource_server_url=None),  # type: ignore[arg-type]
        token_verifier=SingleTokenVerifier(token.value),
    )
    config = uvicorn.Config(app, log_config=None, access_log=False, lifespan="on")
    print(
        f"localmem: serving MCP at {base}{MCP_PATH}; send 'Authorization: Bearer <token>' "
        f"with the token from {token.origin}.",
        file=sys.stderr,
        flush=True,
    )
    try:
        anyio.run(uvicorn.Server(config).serve, [sock])
    except KeyboardInterrupt:
        pass
    finally:
        sock.close()
        server.close()
