"""`localmem search --context`: the lines a prompt hook injects, and their fast path.

An auto-recall hook runs this on every prompt the user types, so its cost is
paid all day. `run()` answers the common form of the command without click,
`dataclasses` or `typing` (which together cost about three times the search
itself here, see docs/memory.md), through the same rules the full recall uses
(`memory.lookup`). Anything it does not recognise returns None and the ordinary
click command handles it, so the two can never disagree on what is valid.

The output: one line per hit, `- (workspace) text`, whitespace collapsed and
cut at CONTEXT_CHARS characters with the id to fetch the rest; no core block;
nothing at all when nothing matched; weak (fallback) hits only with
`--context-fallback`. A missing database prints nothing: a hook must never
break the prompt.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

CONTEXT_CHARS = 400


def context_line(workspace: str, content: str, memory_id: int) -> str:
    """One hook line: collapsed, cut at CONTEXT_CHARS with the id to fetch the rest."""
    text = " ".join(content.split())
    if len(text) > CONTEXT_CHARS:
        cut = text[:CONTEXT_CHARS].rstrip()
        text = f"{cut} [... cut; full text: localmem show {memory_id}]"
    return f"- ({workspace}) {text}"


def context_text(hits: Iterable[tuple[str, str, int, bool]], *, fallback: bool) -> str:
    """The hook's output for (workspace, content, id, weak) hits: "" when none qualify."""
    lines = [context_line(ws, content, i) for ws, content, i, weak in hits if fallback or not weak]
    return "".join(line + "\n" for line in lines)


class _Options:
    __slots__ = ("query", "workspace", "every", "k", "fallback")

    def __init__(self) -> None:
        self.query: str | None = None
        self.workspace: str | None = None
        self.every = False
        self.k = 5
        self.fallback = False


def parse(argv: list[str]) -> _Options | None:
    """The options of `search QUERY --context [...]`, or None to let click decide."""
    options_part = argv[: argv.index("--")] if "--" in argv else argv
    if len(argv) < 2 or argv[0] != "search" or "--context" not in options_part:
        return None  # (after `--`, "--context" is the text searched for)
    options = _Options()
    items = iter(argv[1:])
    only_positional = False
    for item in items:
        if only_positional or not item.startswith("-") or item == "-":
            if options.query is not None:
                return None
            options.query = item
        elif item == "--":
            only_positional = True
        elif item == "--context":
            continue
        elif item == "--context-fallback":
            options.fallback = True
        elif item == "--all":
            options.every = True
        elif item in ("-k", "-w", "--workspace"):
            value = next(items, None)
            if value is None:
                return None
            if item == "-k":
                if not value.isdigit() or not 1 <= int(value) <= 20:
                    return None
                options.k = int(value)
            else:
                options.workspace = value
        else:
            return None
    if options.query is None or (options.every and options.workspace is not None):
        return None
    return options


def run(argv: list[str]) -> int | None:
    """Answer `search --context` if `argv` is its plain form; None otherwise."""
    options = parse(argv)
    if options is None or options.query is None:
        return None
    query = options.query
    from localmem import paths
    from localmem.errors import InvalidInput, LocalmemError, StoreUnavailable
    from localmem.memory import readonly, schema, workspaces
    from localmem.memory.search import lookup

    try:
        path = paths.memory_db_file()
        if not paths.is_store_url(path) and not os.path.exists(path):
            return 0
        conn = readonly.open_for_recall(path)
    except (StoreUnavailable, InvalidInput) as error:
        sys.stderr.write(f"localmem: {error}\n")
        return 1
    try:
        if options.every:
            scope = "all"
        else:
            scope = workspaces.resolve_workspace(options.workspace, os.getcwd(), conn)
        names = lookup.scope_names(scope)
        with schema.read_snapshot(conn):
            kept, _dropped, _total = lookup.core_rows(conn, names)
            found = lookup.ranked(
                conn,
                query[: lookup.MAX_QUERY_CHARS],
                names,
                k=options.k,
                kind=None,
                exclude={row[lookup.ID] for row in kept},
            )
        shown = [
            (row[lookup.WORKSPACE], row[lookup.CONTENT], row[lookup.ID], stage != "match")
            for row, _score, stage in found
        ]
        text = context_text(shown, fallback=options.fallback)
        sys.stdout.write(text)
        sys.stdout.flush()
        if readonly.tracking_enabled():
            counted = {i: 1 for _ws, _c, i, weak in shown if options.fallback or not weak}
            lookup.track(conn, counted, schema.utc_text_now())
    except LocalmemError as error:
        sys.stderr.write(f"localmem: {error}\n")
        return error.exit_code
    finally:
        conn.close()
    return 0
