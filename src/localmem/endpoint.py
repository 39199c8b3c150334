"""Talking to a local OpenAI-compatible chat-completions endpoint, as a chat client does.

`local-memory trial` uses this to put its cases to a model (llama.cpp server,
Ollama, LM Studio, vLLM): `Endpoint` sends one request with `urllib.request`,
and `turn` runs one user message through `localmem.chat` exactly as a client
does: the memory block, the three tools, each tool call run and its result fed
back until the model answers in text, at most `MAX_ROUNDS` rounds.

Facts go only where the locality gate allows, and nowhere else: no proxy from
the environment is used and no redirect is followed, since either would carry
the memory block to another address. Every failure is an `EndpointError`
carrying one sentence. Standard library only (decision 137).
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from http.client import HTTPException, HTTPMessage
from typing import IO, Any, NoReturn

from localmem import chat
from localmem.errors import LocalmemError
from localmem.facts.trial import ToolCall, Turn, parse_arguments

MAX_ROUNDS = 4  # tool rounds per turn; the last one tells the model to answer now
MAX_ANSWER = 16 * 1024 * 1024  # bytes read from one answer, so a runaway server cannot fill memory
COMPLETIONS = "/chat/completions"


class EndpointError(LocalmemError):
    """The endpoint is down, too slow, or answered something that is not a chat completion."""


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(
        self,
        req: urllib.request.Request,
        fp: IO[bytes],
        code: int,
        msg: str,
        headers: HTTPMessage,
        newurl: str,
    ) -> NoReturn:
        raise EndpointError(
            f"the endpoint redirected to {newurl[:80]}; redirects are not followed, so the "
            "memory block goes nowhere but the endpoint you named."
        )


def base_url(endpoint: str) -> str:
    """The API's base URL: `http://host:port/v1` whether or not `/chat/completions` was given."""
    url = endpoint.strip().rstrip("/")
    if url.endswith(COMPLETIONS):
        url = url[: -len(COMPLETIONS)]
    return url


class Endpoint:
    """One OpenAI-compatible API at `url` (its base, usually ending in /v1)."""

    def __init__(self, url: str, model: str | None = None, timeout: float = 120.0) -> None:
        self.url = base_url(url)
        self.model = model
        self.timeout = timeout
        self._opener = urllib.request.build_opener(urllib.request.ProxyHandler({}), _NoRedirect())

    def _request(self, path: str, body: dict[str, Any] | None, on_404: str | None = None) -> Any:
        where = self.url + path
        data = None if body is None else json.dumps(body).encode("utf-8")
        request = urllib.request.Request(where, data=data, method="GET" if body is None else "POST")
        request.add_header("Content-Type", "application/json")
        request.add_header("Accept", "application/json")
        try:
            with self._opener.open(request, timeout=self.timeout) as answer:
                raw = answer.read(MAX_ANSWER + 1)
        except urllib.error.HTTPError as error:
            raise EndpointError(
                on_404 if on_404 and error.code == 404 else self._http_error(where, error)
            ) from None
        except urllib.error.URLError as error:
            raise EndpointError(self._unreachable(error.reason)) from None
        except TimeoutError:
            raise EndpointError(self._too_slow()) from None
        except (HTTPException, OSError) as error:
            raise EndpointError(self._unreachable(error)) from None
        if len(raw) > MAX_ANSWER:
            raise EndpointError(f"{where} answered more than {MAX_ANSWER // 2**20} MB; stopped.")
        try:
            return json.loads(raw)
        except (ValueError, RecursionError):
            raise EndpointError(
                f"{where} answered something that is not JSON, so not an OpenAI-compatible "
                f"chat completion ({_shown(raw)})."
            ) from None

    def _too_slow(self) -> str:
        return (
            f"the endpoint at {self.url} did not answer within {self.timeout:g} seconds; "
            "a slow model needs a larger --timeout."
        )

    def _unreachable(self, reason: object) -> str:
        if isinstance(reason, TimeoutError):
            return self._too_slow()
        if isinstance(reason, ConnectionRefusedError):
            return (
                f"nothing answers at {self.url} (connection refused); is the model server running?"
            )
        detail = getattr(reason, "strerror", None) or str(reason) or type(reason).__name__
        return f"cannot reach the endpoint at {self.url}: {detail}."

    def _http_error(self, where: str, error: urllib.error.HTTPError) -> str:
        if error.code == 404:
            return (
                f"{where} answered 404 Not Found; give the base URL of an OpenAI-compatible "
                "API, usually ending in /v1 (for example http://127.0.0.1:8080/v1)."
            )
        try:
            body = error.read(2000)
        except OSError:
            body = b""
        return f"{where} answered HTTP {error.code} {error.reason} ({_shown(body)})."

    def first_model(self) -> str:
        """The first model the endpoint lists at `/models`, for when --model is not given."""
        none = f"{self.url}/models lists no model; name the one to use with --model NAME."
        listed = self._request("/models", None, on_404=none)
        data = listed.get("data") if isinstance(listed, dict) else None
        if isinstance(data, list):
            for entry in data:
                if isinstance(entry, dict) and isinstance(entry.get("id"), str):
                    return str(entry["id"])
        raise EndpointError(none)

    def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Any:
        """One chat completion: the assistant message the endpoint answered."""
        body: dict[str, Any] = {"model": self.model, "messages": messages, "stream": False}
        if tools:
            body["tools"] = tools
        answer = self._request(COMPLETIONS, body)
        try:
            message = answer["choices"][0]["message"]
            if not isinstance(message, dict):
                raise TypeError
        except (KeyError, IndexError, TypeError):
            raise EndpointError(
                f"{self.url}{COMPLETIONS} answered JSON that is not an OpenAI chat completion "
                f"(no choices[0].message: {_shown(json.dumps(answer).encode())})."
            ) from None
        return message


def _shown(raw: bytes, limit: int = 80) -> str:
    text = " ".join(raw.decode("utf-8", "replace").split())
    if not text:
        return "an empty answer"
    return repr(text if len(text) <= limit else text[: limit - 3] + "...")


def _tool_calls(message: dict[str, Any], where: str) -> list[tuple[str, str, str]]:
    """(id, name, arguments JSON) of each tool call in an assistant message."""
    calls = message.get("tool_calls") or []
    if not isinstance(calls, list):
        raise EndpointError(f"{where} answered tool_calls that are not a list.")
    found = []
    for number, item in enumerate(calls):
        function = item.get("function") if isinstance(item, dict) else None
        name = function.get("name") if isinstance(function, dict) else None
        if not isinstance(function, dict) or not isinstance(name, str):
            raise EndpointError(f"{where} answered a tool call with no function name.")
        arguments = function.get("arguments")
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments if arguments is not None else {})
        call_id = item.get("id") if isinstance(item.get("id"), str) else f"call_{number}"
        found.append((call_id, name, arguments))
    return found


def turn(
    endpoint: Endpoint, gate: chat.Gate, user_text: str, folder: str, today: str | None = None
) -> Turn:
    """One user message through the memory block, the tools and the tool loop, in `folder`."""
    known = {tool["function"]["name"] for tool in chat.TOOLS}
    history: list[dict[str, Any]] = [{"role": "user", "content": user_text}]
    made: list[ToolCall] = []
    round_number = 0
    while True:
        decision = gate.check(endpoint.url)
        if not decision.memory_on:  # the caller checked already; a client checks every request
            raise EndpointError(f"the endpoint {endpoint.url} is not local; stopped.")
        system = {"role": "system", "content": chat.prompt(folder)}
        message = endpoint.complete([system, *history], chat.TOOLS)
        calls = _tool_calls(message, endpoint.url + COMPLETIONS)
        content = message.get("content")
        reply = content if isinstance(content, str) else ""
        if not calls or round_number == MAX_ROUNDS:
            return Turn(tuple(made), reply)  # a text answer, or tools past the last round
        for _, name, _ in calls:
            if name not in known:
                raise EndpointError(
                    f"the model called a tool named {name[:40]!r}, which does not exist; "
                    f"it was offered {', '.join(sorted(known))}."
                )
        history.append(
            {
                "role": "assistant",
                "content": reply or None,
                "tool_calls": [
                    {"id": i, "type": "function", "function": {"name": n, "arguments": a}}
                    for i, n, a in calls
                ],
            }
        )
        last_round = round_number == MAX_ROUNDS - 1
        for position, (call_id, name, arguments) in enumerate(calls):
            result = chat.call(name, arguments, today=today, folder=folder)
            made.append(ToolCall(name, parse_arguments(arguments), result))
            last = last_round and position == len(calls) - 1
            history.append(chat.tool_message(call_id, result, last=last))
        round_number += 1
