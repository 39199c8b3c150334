"""An OpenAI-compatible chat-completions server that replays scripted replies.

A test double: there is no model on this machine. It checks our side of the
protocol (the requests `local-memory trial` and the chat loop send, and how they
read answers and tool calls), not how a model behaves. It is a real HTTP server
(`http.server` in a thread) on 127.0.0.1, so the client under test does real
requests, as a subprocess or in-process.

A script is a function from the request body to what the "model" answers: an
assistant message (a dict), `Raw` bytes with a status, or `HANG` (never answer).
The scripts below play a model that follows the memory block (`follows`), one
that gets every case wrong (`misfires`), and one whose replies the offer rule
cannot decide (`vague`), all driven by the trial's own case texts.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from localmem.facts import trial


@dataclass(frozen=True)
class Raw:
    status: int
    body: bytes
    headers: tuple[tuple[str, str], ...] = (("Content-Type", "application/json"),)


HANG = "hang"

Script = Callable[[dict[str, Any]], Any]


class ScriptedModel:
    """The server; `requests` holds every chat-completions body it received, in order."""

    def __init__(
        self, script: Script, models: tuple[str, ...] | None = ("scripted-model",)
    ) -> None:
        self.script = script
        self.models = models
        self.requests: list[dict[str, Any]] = []
        self.paths: list[str] = []
        self.release = threading.Event()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _send(self, status: int, body: bytes, headers: tuple[tuple[str, str], ...]) -> None:
                self.send_response(status)
                for name, value in headers:
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:
                outer.paths.append(self.path)
                if self.path != "/v1/models" or outer.models is None:
                    self._send(404, b'{"error": "not found"}', Raw(0, b"").headers)
                    return
                listed = {"object": "list", "data": [{"id": m} for m in outer.models]}
                self._send(200, json.dumps(listed).encode(), Raw(0, b"").headers)

            def do_POST(self) -> None:
                outer.paths.append(self.path)
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                if self.path != "/v1/chat/completions":
                    self._send(404, b'{"error": "not found"}', Raw(0, b"").headers)
                    return
                outer.requests.append(body)
                answer = outer.script(body)
                if answer == HANG:
                    outer.release.wait(60)
                    return
                if isinstance(answer, Raw):
                    self._send(answer.status, answer.body, answer.headers)
                    return
                completion = {
                    "id": f"chatcmpl-{len(outer.requests)}",
                    "object": "chat.completion",
                    "model": body.get("model"),
                    "choices": [{"index": 0, "message": answer, "finish_reason": "stop"}],
                }
                self._send(200, json.dumps(completion).encode(), Raw(0, b"").headers)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def start(self) -> None:
        threading.Thread(target=self.server.serve_forever, args=(0.02,), daemon=True).start()

    def stop(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


@contextmanager
def serving(
    script: Script, models: tuple[str, ...] = ("scripted-model",)
) -> Iterator[ScriptedModel]:
    server = ScriptedModel(script, models)
    server.start()
    try:
        yield server
    finally:
        server.stop()


# ---- reading a request ----------------------------------------------------------------


def user_text(body: dict[str, Any]) -> str:
    return next(m["content"] for m in body["messages"] if m["role"] == "user")


def tool_results(body: dict[str, Any]) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]


def case_of(body: dict[str, Any]) -> tuple[int, str]:
    """(case number, language) of the trial prompt in this request."""
    said = user_text(body)
    for case in trial.CASES:
        for lang, prompts in case.prompts.items():
            if said in prompts:
                return case.number, lang
    raise AssertionError(f"not a trial prompt: {said!r}")


def text(content: str) -> dict[str, Any]:
    return {"role": "assistant", "content": content}


def tool_call(name: str, arguments: dict[str, Any], call_id: str = "call_1") -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": call_id,
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments)},
            }
        ],
    }


# ---- scripted "models" ------------------------------------------------------------------

REPLIES = {
    "en": {
        "offer": "Got it. Would you like me to remember that you can't stand horror films?",
        "lunch": "Sounds like an easy lunch.",
        "answer": "It is 8 in the evening there.",
        "game": "Try a new puzzle game tonight.",
        "done": "Done: I saved that and removed the old fact.",
        "unasked_offer": "Nice. Shall I save that for later?",
        "vague": "Noted, I'll remember that.",
    },
    "it": {
        "offer": "Capito. Vuoi che mi ricordi che non sopporti i film horror?",
        "lunch": "Un pranzo semplice, allora.",
        "answer": "Lì sono le otto di sera.",
        "game": "Prova un nuovo gioco di puzzle stasera.",
        "done": "Fatto: l'ho salvato e ho tolto il fatto vecchio.",
        "unasked_offer": "Bene. Vuoi che lo salvi per la prossima volta?",
        "vague": "Va bene, me lo ricorderò.",
    },
}


def follows(body: dict[str, Any]) -> dict[str, Any]:
    """A model that does what the memory block asks, in every case."""
    case, lang = case_of(body)
    said, done = REPLIES[lang], tool_results(body)
    if case == 1:
        return text(said["offer"])
    if case == 2:
        return text(said["lunch"])
    if case == 3:
        return text(said["answer"])
    if case == 4:
        return tool_call("recall", {"topic": "games"}) if not done else text(said["game"])
    if not done:
        return tool_call("remember", {"topic": "food", "fact": "eats fish"})
    if len(done) == 1:
        old = trial.SEED[lang][trial.CONTRADICTED][1]
        return tool_call("forget", {"topic": "food", "text": old}, "call_2")
    return text(said["done"])


def misfires(body: dict[str, Any]) -> dict[str, Any]:
    """A model that gets every case wrong."""
    case, lang = case_of(body)
    said, done = REPLIES[lang], tool_results(body)
    if case == 1:
        if not done:  # saves without asking
            return tool_call("remember", {"topic": "films", "fact": "can't stand horror films"})
        return text("Saved.")
    if case in (2, 3):
        return text(said["unasked_offer"])
    if case == 4:
        return text(said["game"])  # answers without recall
    if not done:  # remembers, never forgets the old fact
        return tool_call("remember", {"topic": "food", "fact": "eats fish"})
    return text(said["done"])


def vague(body: dict[str, Any]) -> dict[str, Any]:
    """Replies the offer rule cannot decide (a memory word, no question) for cases 1 to 3."""
    case, lang = case_of(body)
    if case in (1, 2, 3):
        return text(REPLIES[lang]["vague"])
    return follows(body)


def uneven() -> Script:
    """A model that mostly follows the block: per case, in order of runs, it offers on
    the 2nd passing remark, answers the 3rd lasting preference vaguely, and forgets
    nothing on the 4th contradiction. The sample table in docs/facts.md comes from it."""
    seen: dict[int, int] = {}

    def script(body: dict[str, Any]) -> dict[str, Any]:
        case, lang = case_of(body)
        if not tool_results(body):
            seen[case] = seen.get(case, 0) + 1
        run = seen[case]
        if case == 2 and run == 2:
            return text(REPLIES[lang]["unasked_offer"])
        if case == 1 and run == 3:
            return text(REPLIES[lang]["vague"])
        if case == 5 and run == 4 and tool_results(body):
            return text(REPLIES[lang]["done"])
        return follows(body)

    return script
