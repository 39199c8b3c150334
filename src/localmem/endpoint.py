"""Talking to a local OpenAI-compatible chat-completions endpoint, as a chat client does.

`local-memory trial` uses this to put its cases to a model (llama.cpp server,
Ollama, LM Studio, vLLM): `Endpoint` sends one request with `urllib.request`,
and `turn` runs one user message through `localmem.chat` exactly as a client
does: the memory block, the three tools, each tool call (sent as `tool_calls` or
written as text, read by `chat.read_reply`) run and its result fed back until the
model answers in text, at most `MAX_ROUNDS` rounds.

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


class EndpointGone(EndpointError):
    """Nothing listens at the endpoint (connection refused): no server, or it stopped."""


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
            raise self._unreachable(error.reason) from None
        except TimeoutError:
            raise EndpointError(self._too_slow()) from None
        except (HTTPException, OSError) as error:
            raise self._unreachable(error) from None
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

    def _unreachable(self, reason: object) -> EndpointError:
        if isinstance(reason, TimeoutError):
            return EndpointError(self._too_slow())
        if isinstance(reason, ConnectionRefusedError):
            return EndpointGone(
                f"nothing answers at {self.url} (connection refused); is the model server running?"
            )
        detail = getattr(reason, "strerror", None) or str(reason) or type(reason).__name__
        return EndpointError(f"cannot reach the endpoint at {self.url}: {detail}.")

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
        return f"{where} answered HTTP {error.code} {error.reason} ({_error_message(body)})."

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


def _error_message(body: bytes) -> str:
    """The message of an OpenAI-style error body ({"error": {"message": ...}}), which
    servers such as llama-server use to say why, else the start of the body."""
    try:
        parsed = json.loads(body)
        message = parsed["error"]["message"] if isinstance(parsed["error"], dict) else None
    except (ValueError, RecursionError, KeyError, TypeError):
        message = None
    if isinstance(message, str) and message.strip():
        return _shown(message.encode(), limit=200)
    return _shown(body)


def _shown(raw: bytes, limit: int = 80) -> str:
    text = " ".join(raw.decode("utf-8", "replace").split())
    if not text:
        return "an empty answer"
    return repr(text if len(text) <= limit else text[: limit - 3] + "...")


def turn(
    endpoint: Endpoint, gate: chat.Gate, user_text: str, folder: str, today: str | None = None
) -> Turn:
    """One user message through the memory block, the tools and the tool loop, in `folder`.

    Tool calls are read with `chat.read_reply`, so calls the model wrote as text run
    too (decision 170). A call to a tool that was not offered gets an `error:` result,
    as any client would answer it, and is kept in `made_up` for the trial to score.
    """
    known = {tool["function"]["name"] for tool in chat.TOOLS}
    history: list[dict[str, Any]] = [{"role": "user", "content": user_text}]
    made: list[ToolCall] = []
    made_up: list[str] = []
    round_number = 0
    while True:
        decision = gate.check(endpoint.url)
        if not decision.memory_on:  # the caller checked already; a client checks every request
            raise EndpointError(f"the endpoint {endpoint.url} is not local; stopped.")
        system = {"role": "system", "content": chat.prompt(folder)}
        message = endpoint.complete([system, *history], chat.TOOLS)
        try:
            reply = chat.read_reply(message)
        except ValueError as error:
            raise EndpointError(f"{endpoint.url}{COMPLETIONS} answered: {error}.") from None
        requests = round_number + 1
        if not reply.tool_calls or round_number == MAX_ROUNDS:
            made_up += reply.made_up
            exhausted = bool(reply.tool_calls)
            return Turn(tuple(made), reply.text, tuple(made_up), reply.refused, requests, exhausted)
        history.append(
            {"role": "assistant", "content": reply.text or None, "tool_calls": reply.tool_calls}
        )
        last_round = round_number == MAX_ROUNDS - 1
        for position, item in enumerate(reply.tool_calls):
            name, arguments = item["function"]["name"], item["function"]["arguments"]
            if name not in known:
                made_up.append(name)
            result = chat.call(name, arguments, today=today, folder=folder)
            made.append(ToolCall(name, parse_arguments(arguments), result, reply.as_text))
            last = last_round and position == len(reply.tool_calls) - 1
            history.append(chat.tool_message(item["id"], result, last=last))
        round_number += 1
