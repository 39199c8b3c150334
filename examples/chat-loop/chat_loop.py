#!/usr/bin/env python3
"""A terminal chat with a local OpenAI-compatible model that remembers you, via localmem.chat.

    python examples/chat-loop/chat_loop.py --endpoint http://127.0.0.1:8080/v1 --model qwen3

Type a message; `/model NAME` and `/endpoint URL` switch mid-conversation, `/new`
starts a new conversation, `/quit` (or end of input) leaves. Tool calls the model
writes as text (a bare or fenced JSON call, `<tool_call>` tags...) run like native
ones, through `chat.read_reply`. Before every request
the locality gate decides: memory (the block and the three tools) goes only to a
local model, and the first switch to a cloud model after memory was used prints
the gate's warning once. Standard library plus localmem; copy it into your client.
"""

from __future__ import annotations

import argparse
import json
import sys
import urllib.request
from typing import Any

from localmem import chat

MAX_ROUNDS = 4  # tool rounds per turn; the last tool result tells the model to answer now
# No proxy from the environment: facts go to the endpoint the gate judged, nowhere else.
OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


class Conversation:
    def __init__(self, endpoint: str, model: str, timeout: float) -> None:
        self.endpoint, self.model, self.timeout = endpoint, model, timeout
        self.gate = chat.Gate()  # one per conversation
        self.history: list[dict[str, Any]] = []

    def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Any:
        body: dict[str, Any] = {"model": self.model, "messages": messages}
        if tools:
            body["tools"] = tools
        request = urllib.request.Request(
            self.endpoint.rstrip("/") + "/chat/completions",
            data=json.dumps(body).encode("utf-8"),
            headers={"Content-Type": "application/json"},
        )
        with OPENER.open(request, timeout=self.timeout) as answer:
            return json.load(answer)["choices"][0]["message"]

    def say(self, text: str) -> str:
        """One user message to the model's text answer, running its tool calls on the way."""
        self.history.append({"role": "user", "content": text})
        round_number = 0
        while True:
            decision = self.gate.check(self.endpoint)  # per request: the model may have changed
            if decision.warning:
                print(f"[memory] {decision.warning}", flush=True)
            block = chat.prompt() if decision.memory_on else ""
            system = [{"role": "system", "content": block}] if block else []
            tools = chat.TOOLS if decision.memory_on else []
            message = self.complete(system + self.history, tools)
            # Native tool_calls, or calls a small model wrote as text: read_reply takes
            # the latter only for an offered tool with fitting arguments, so a JSON
            # answer naming anything else is shown as it is.
            reply = chat.read_reply(message, tools)
            calls = reply.tool_calls
            if not calls or not decision.memory_on or round_number == MAX_ROUNDS:
                self.history.append({"role": "assistant", "content": reply.text})
                return reply.text
            self.history.append(
                {"role": "assistant", "content": reply.text or None, "tool_calls": calls}
            )
            for number, call in enumerate(calls):
                result = chat.call(call["function"]["name"], call["function"]["arguments"])
                last = round_number == MAX_ROUNDS - 1 and number == len(calls) - 1
                self.history.append(chat.tool_message(call["id"], result, last=last))
            round_number += 1

    def new(self) -> None:
        self.history.clear()
        self.gate.new_conversation()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--endpoint", default="http://127.0.0.1:8080/v1", help="API base URL")
    parser.add_argument("--model", default="local", help="model name the endpoint serves")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per request")
    args = parser.parse_args()
    talk = Conversation(args.endpoint, args.model, args.timeout)
    print(f"chatting with {talk.model} at {talk.endpoint}; /model, /endpoint, /new, /quit")
    prompt = "> " if sys.stdin.isatty() else ""
    while True:
        try:
            line = input(prompt).strip()
        except (EOFError, KeyboardInterrupt):
            return 0
        command, _, value = line.partition(" ")
        if not line:
            continue
        if command == "/quit":
            return 0
        if command == "/new":
            talk.new()
            print("[new conversation]")
        elif command in ("/model", "/endpoint") and value.strip():
            setattr(talk, command[1:], value.strip())
            print(f"[{command[1:]}: {value.strip()}]")
        elif command.startswith("/"):
            print("[commands: /model NAME, /endpoint URL, /new, /quit]")
        else:
            kept = len(talk.history)
            try:
                print(talk.say(line), flush=True)
            except (OSError, ValueError, LookupError, TypeError, AttributeError) as error:
                del talk.history[kept:]  # the failed turn is not part of the conversation
                print(f"[error] {talk.endpoint} did not answer as expected: {error}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
