"""The MCP server (SPEC section 7): tool list, tool calls and the stdio transport.

Built on the SDK's low-level `Server` rather than `MCPServer`: the input schemas
must be exactly the ones of the single tool definition in `localmem.tools`
(enums, ranges, a description per parameter), and a refused call must come back
as an error result carrying one sentence, where `MCPServer` derives schemas from
Python signatures and prefixes its own text to every error (decision 50).

A tool never raises into the stream: every call ends in a `CallToolResult`,
`isError: true` with one sentence when it was refused or failed. Store calls
run on one dedicated worker thread, which owns the SQLite connection, so the
event loop keeps answering while a write waits for a lock. Without `--facts`
nothing here imports or opens the facts store; with it, the server's
instructions carry the memory block, read when the server starts (decision 136).
With the semantic view on, a background thread loads the model at start and
embeds the backlog while no call is in flight (`memory.search.semantic_worker`);
LOCALMEM_SEMANTIC=off turns it off.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sqlite3
import sys
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

import mcp_types as types
from mcp.server import Server, ServerRequestContext

from localmem import __version__, paths
from localmem.errors import InvalidInput, LocalmemError
from localmem.mcp.memory_tools import MemoryTools, refuse_add

if TYPE_CHECKING:
    from localmem.memory.search.semantic_worker import Backfill

log = logging.getLogger("localmem.mcp")

# MCP hints for each tool (SPEC 7): recall reads only, add only ever adds.
ANNOTATIONS: dict[str, types.ToolAnnotations] = {
    "memory_recall": types.ToolAnnotations(
        read_only_hint=True, idempotent_hint=True, open_world_hint=False
    ),
    "memory_add": types.ToolAnnotations(
        read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False
    ),
    "recall": types.ToolAnnotations(
        read_only_hint=True, idempotent_hint=True, open_world_hint=False
    ),
    "remember": types.ToolAnnotations(
        read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False
    ),
    "forget": types.ToolAnnotations(
        read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False
    ),
}

FAILED = (
    "localmem could not run {name} because of an internal error; "
    "the server's stderr has the details."
)


def tool_list(facts: bool = False, semantic: bool | None = None) -> list[types.Tool]:
    """The tools this server offers, generated from `localmem.tools`; their descriptions
    say whether search is lexical first (`semantic`: whether the semantic view is on,
    by default as this process finds it)."""
    from localmem import tools

    if semantic is None:
        from localmem.memory.search.semantic import enabled

        semantic = enabled()
    defs: list[Any] = list(tools.memory_tools(semantic=semantic))
    if facts:
        defs += list(tools.FACT_TOOLS)
    return [
        types.Tool(
            name=d.name,
            description=d.description,
            input_schema=tools.input_schema(d),
            annotations=ANNOTATIONS[d.name],
        )
        for d in defs
    ]


# ---- argument checking against the published schema ------------------------------------


def _describe(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 40 else text[:37] + "..."


def _is_integer(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and value.is_integer())


def _check_value(name: str, schema: Mapping[str, Any], value: Any) -> Any:
    kind = schema.get("type")
    if "enum" in schema and value not in schema["enum"]:
        allowed = ", ".join(str(v) for v in schema["enum"])
        raise InvalidInput(f"{name} {_describe(value)} is not one of {allowed}.")
    if kind == "string":
        if not isinstance(value, str):
            raise InvalidInput(f"{name} must be a string, not {_describe(value)}.")
        limit = schema.get("maxLength")
        if limit is not None and len(value) > limit:
            raise InvalidInput(f"{name} is {len(value)} characters long; the limit is {limit}.")
        return value
    if kind == "integer":
        if not _is_integer(value):
            raise InvalidInput(f"{name} must be a whole number, not {_describe(value)}.")
        number = int(value)
        low, high = schema.get("minimum"), schema.get("maximum")
        if (low is not None and number < low) or (high is not None and number > high):
            span = f"from {low} to {high}" if high is not None else f"at least {low}"
            raise InvalidInput(f"{name} must be {span}, not {number}.")
        return number
    if kind == "array":
        if not isinstance(value, list):
            raise InvalidInput(f"{name} must be a list, not {_describe(value)}.")
        most = schema.get("maxItems")
        if most is not None and len(value) > most:
            raise InvalidInput(f"{name} takes at most {most} items, not {len(value)}.")
        item_schema = schema.get("items", {})
        return [_check_value(f"each item of {name}", item_schema, item) for item in value]
    return value


def check_arguments(tool: types.Tool, arguments: Mapping[str, Any] | None) -> dict[str, Any]:
    """Check `arguments` against the tool's input schema; one sentence on the first problem.

    A null for an optional parameter counts as leaving it out, as models often send one.
    """
    schema = tool.input_schema
    properties: Mapping[str, Any] = schema.get("properties", {})
    given = {k: v for k, v in (arguments or {}).items() if v is not None}
    unknown = sorted(set(given) - set(properties))
    if unknown:
        takes = ", ".join(properties)
        raise InvalidInput(f"{tool.name} has no parameter {unknown[0]!r}; it takes {takes}.")
    for required in schema.get("required", []):
        if required not in given:
            raise InvalidInput(f"{tool.name} needs {required!r}; it is missing.")
    return {name: _check_value(name, properties[name], value) for name, value in given.items()}


# ---- results -----------------------------------------------------------------------------


def ok_result(payload: dict[str, Any]) -> types.CallToolResult:
    text = json.dumps(payload, ensure_ascii=False)
    return types.CallToolResult(content=[types.TextContent(text=text)], structured_content=payload)


def error_result(sentence: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=sentence)], is_error=True)


# ---- the server --------------------------------------------------------------------------


class LocalmemServer:
    """The tools, their dispatch, and the worker thread that owns the store."""

    def __init__(self, facts: bool = False) -> None:
        from localmem.memory.search.semantic import enabled

        self.facts = facts
        semantic = enabled()
        self.tools = {tool.name: tool for tool in tool_list(facts, semantic)}
        self.fact_tools: frozenset[str] = frozenset()
        self._in_flight = 0  # tool calls running or queued; the embedding worker waits for 0
        self.backfill = self._start_backfill() if semantic else None
        self.memory = MemoryTools(backfill=self.backfill)
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="localmem-store")
        self._runners: dict[str, Callable[[dict[str, Any]], types.CallToolResult]] = {
            "memory_recall": lambda args: ok_result(self.memory.recall(args)),
            "memory_add": lambda args: ok_result(self.memory.add(args)),
        }
        if facts:
            from localmem.tools import FACT_TOOLS

            self.fact_tools = frozenset(tool.name for tool in FACT_TOOLS)
            for name in self.fact_tools:
                self._runners[name] = self._facts_runner(name)

    def _start_backfill(self) -> Backfill:
        # The model loads at start, on a background thread (decision 95): the client's
        # handshake covers most of its cost, and the first recall does not pay it.
        from localmem import paths
        from localmem.memory.search.semantic_worker import Backfill

        backfill = Backfill(paths.memory_db, lambda: self._in_flight == 0)
        backfill.start()
        return backfill

    @staticmethod
    def _facts_runner(name: str) -> Callable[[dict[str, Any]], types.CallToolResult]:
        def run(args: dict[str, Any]) -> types.CallToolResult:
            from localmem.facts.calls import call

            text = call(name, json.dumps(args))
            if text.startswith("error:"):
                return error_result(text[len("error:") :].strip())
            return types.CallToolResult(content=[types.TextContent(text=text)])

        return run

    def instructions(self) -> str | None:
        """With `--facts`, the memory block (read now), as every local-model client gets it."""
        if not self.facts:
            return None
        from localmem import paths
        from localmem.facts.block import block_or_empty

        return block_or_empty(paths.facts_folder()) or None

    def call(self, name: str, arguments: Mapping[str, Any] | None) -> types.CallToolResult:
        """Run one tool call to its result; never raises."""
        tool = self.tools.get(name)
        if tool is None:
            offered = ", ".join(self.tools)
            return error_result(f"there is no tool {name!r} here; this server offers {offered}.")
        try:
            if name in self.fact_tools:
                # The facts tools check their own input (`localmem.facts.calls.call` never raises).
                return self._runners[name](dict(arguments or {}))
            if name == "memory_add":
                refuse_add(dict(arguments or {}))
            return self._runners[name](check_arguments(tool, arguments))
        except LocalmemError as error:
            return error_result(str(error))
        except (sqlite3.Error, OSError) as error:
            # A full disk, a read-only place, a damaged file: the sentence, and serve on.
            from localmem.memory import faults

            fault = faults.describe(error, paths.memory_db_location())
            if fault is not None:
                return error_result(str(fault))
            log.exception("tool %s failed", name)
            return error_result(FAILED.format(name=name))
        except Exception:
            log.exception("tool %s failed", name)
            return error_result(FAILED.format(name=name))

    async def call_async(
        self, name: str, arguments: Mapping[str, Any] | None
    ) -> types.CallToolResult:
        loop = asyncio.get_running_loop()
        self._in_flight += 1  # only the event loop's thread counts, so no lock is needed
        try:
            return await loop.run_in_executor(self._worker, self.call, name, arguments)
        finally:
            self._in_flight -= 1

    def close(self) -> None:
        if self.backfill is not None:
            self.backfill.stop()
        try:
            self._worker.submit(self.memory.close).result()
        except Exception:
            log.exception("closing the memory store failed")
        self._worker.shutdown()

    def lowlevel(self) -> Server[Any]:
        """The SDK server wired to this object's tools."""

        async def list_tools(
            ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
        ) -> types.ListToolsResult:
            return types.ListToolsResult(tools=list(self.tools.values()))

        async def call_tool(
            ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
        ) -> types.CallToolResult:
            return await self.call_async(params.name, params.arguments)

        return Server(
            "localmem",
            version=__version__,
            instructions=self.instructions(),
            on_list_tools=list_tools,
            on_call_tool=call_tool,
        )


def log_to_stderr() -> None:
    # stdout is the protocol: every diagnostic, ours or the SDK's, goes to stderr.
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("localmem: %(name)s: %(levelname)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.WARNING)


def stream_error(exc: Exception) -> types.ErrorData:
    """The JSON-RPC error for a line that did not parse into a message."""
    from pydantic import ValidationError

    if isinstance(exc, ValidationError) and any(
        e["type"] == "json_invalid" for e in exc.errors(include_input=False, include_url=False)
    ):
        return types.ErrorData(
            code=types.PARSE_ERROR,
            message="Parse error: the line is not JSON (malformed, or nested too deeply).",
        )
    return types.ErrorData(
        code=types.INVALID_REQUEST,
        message="Invalid request: the line is not a JSON-RPC 2.0 message this server can read.",
    )


def run_stdio(facts: bool = False) -> None:
    """Serve over stdin/stdout until the client closes stdin."""
    import anyio
    from mcp.server.stdio import stdio_server
    from mcp.shared._context_streams import create_context_streams
    from mcp.shared.message import SessionMessage

    log_to_stderr()
    server = LocalmemServer(facts=facts)
    sdk = server.lowlevel()

    async def main() -> None:
        async with stdio_server() as (read_stream, write_stream):
            # The SDK drops a line it cannot parse without a word; JSON-RPC wants an
            # answer (id null), so a client sees why its request went nowhere.
            inbox_writer, inbox = create_context_streams[SessionMessage | Exception](0)

            async def screen() -> None:
                async with inbox_writer:
                    async for item in read_stream:
                        if isinstance(item, Exception):
                            error = stream_error(item)
                            log.warning("ignored an unreadable line: %s", error.message)
                            reply = types.JSONRPCError(jsonrpc="2.0", id=None, error=error)
                            await write_stream.send(SessionMessage(reply))
                        else:
                            await inbox_writer.send(item)

            async with anyio.create_task_group() as tasks:
                tasks.start_soon(screen)
                await sdk.run(inbox, write_stream, sdk.create_initialization_options())
                tasks.cancel_scope.cancel()

    try:
        anyio.run(main)
    finally:
        server.close()
