"""`local-memory trial`: how well a local model uses its memory (SPEC section 3).

Parses its flags by hand like the rest of `local-memory`, refuses an endpoint
the locality gate does not call local, then puts the design's five cases
(`localmem.facts.trial`) to the model through `localmem.endpoint`, each run in a
throwaway folder seeded with invented facts, and prints the table. Imported
only by the `trial` command, so `prompt` stays on its fast path.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from typing import Any

from localmem import chat
from localmem.endpoint import Endpoint, EndpointError, base_url, turn
from localmem.errors import InvalidInput
from localmem.facts import trial
from localmem.facts.block import offer_wanted

USAGE = """\
usage: local-memory trial --endpoint URL [--model NAME] [--runs N] [--lang en|it]
                          [--timeout SECONDS] [--json]

Puts the design's five memory cases to a local OpenAI-compatible model, N runs
each, in a throwaway facts folder seeded with invented facts (yours is never
read or touched), and prints hits, misfires and undecided replies per case.

  --endpoint URL       the API's base URL, e.g. http://127.0.0.1:8080/v1; local only
  --model NAME         the model to ask (default: the first one the endpoint lists)
  --runs N             runs per case, 1 to 1000 (default 10)
  --lang en|it         the language of the cases (default en)
  --timeout SECONDS    how long one request may take (default 120)
  --json               print the result as JSON

Set LOCAL_MEMORY_OFFER=0 to try the memory block without its offer sentence.
"""

FLAGS = {"--endpoint", "--model", "--runs", "--lang", "--timeout"}


class UsageError(Exception):
    """Wrong usage of `trial`: exit status 2 with the usage text."""


def parse(args: list[str]) -> dict[str, Any]:
    """The options of `trial` from argv (`--flag value` or `--flag=value`)."""
    options: dict[str, Any] = {"json": False}
    rest = list(args)
    while rest:
        arg = rest.pop(0)
        name, has_value, value = arg.partition("=")
        if arg == "--json":
            options["json"] = True
        elif name in FLAGS:
            if not has_value:
                if not rest:
                    raise UsageError(f"{name} needs a value")
                value = rest.pop(0)
            options[name[2:]] = value
        else:
            raise UsageError(f'unknown argument "{arg[:40]}"')
    if "endpoint" not in options:
        raise UsageError("trial needs --endpoint URL")
    options["runs"] = _number(options.get("runs", "10"), "--runs", int, 1, 1000)
    options["timeout"] = _number(options.get("timeout", "120"), "--timeout", float, 0.1, 3600)
    options.setdefault("lang", "en")
    if options["lang"] not in trial.LANGUAGES:
        raise UsageError(f"--lang takes {' or '.join(trial.LANGUAGES)}")
    return options


def _number(text: str, flag: str, kind: type[Any], low: float, high: float) -> Any:
    try:
        value = kind(text)
    except ValueError:
        raise UsageError(f"{flag} takes a number, not {text[:20]!r}") from None
    if not low <= value <= high:
        raise UsageError(f"{flag} must be from {low:g} to {high:g}")
    return value


def check_endpoint(url: str) -> None:
    """Refuse what the trial must not talk to: anything the gate does not call local."""
    if not url.strip().lower().startswith(("http://", "https://")):
        raise InvalidInput(
            f"the trial talks HTTP to an OpenAI-compatible server; give an http:// URL such as "
            f"http://127.0.0.1:8080/v1, not {url[:60]!r}."
        )
    if not chat.Gate().check(url).memory_on:
        raise InvalidInput(
            f"{base_url(url)[:80]} is not a local endpoint, and facts never go to a cloud model: "
            "the trial runs only against loopback, private addresses, localhost or *.local."
        )


class Progress:
    """One line on stderr, rewritten in place, only when stderr is a terminal."""

    def __init__(self) -> None:
        self.on = sys.stderr.isatty()

    def show(self, text: str) -> None:
        if self.on:
            sys.stderr.write(f"\r\033[Klocal-memory trial: {text}")
            sys.stderr.flush()

    def done(self) -> None:
        if self.on:
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()


def run(options: dict[str, Any]) -> dict[str, Any]:
    """Every case, `runs` times, in a throwaway folder; the result as a plain dict."""
    endpoint = Endpoint(options["endpoint"], options.get("model"), options["timeout"])
    progress = Progress()
    if endpoint.model is None:
        progress.show("asking the endpoint which model it serves")
        endpoint.model = endpoint.first_model()
    lang, runs, offer_rule = options["lang"], options["runs"], offer_wanted()
    today = time.strftime("%Y-%m-%d")
    results = [
        trial.CaseResult(case, trial.expected(case, offer_rule, runs)) for case in trial.CASES
    ]
    try:
        with tempfile.TemporaryDirectory(prefix="local-memory-trial-") as scratch:
            folder = f"{scratch}/facts"
            for result in results:
                for number in range(runs):
                    progress.show(f"case {result.case.number} of 5, run {number + 1} of {runs}")
                    trial.seed(folder, lang, today)
                    said = trial.prompt_for(result.case, lang, number)
                    done = turn(endpoint, chat.Gate(), said, folder, today)
                    result.add(trial.score(result.case, done, lang, offer_rule), done.reply)
    finally:
        progress.done()
    return {
        "endpoint": endpoint.url,
        "model": endpoint.model,
        "lang": lang,
        "runs": runs,
        "offer_rule": offer_rule,
        "cases": [
            {
                "case": r.case.number,
                "name": r.case.name,
                "expected": r.expected,
                "runs": r.runs,
                "hits": r.hits,
                "misfires": r.misfires,
                "undecided": r.undecided,
                "undecided_replies": r.undecided_replies,
            }
            for r in results
        ],
        "advice": trial.advice(results, offer_rule),
    }


def table(result: dict[str, Any]) -> str:
    """The result as the table a person reads."""
    head = ("case", "expected", "runs", "hits", "misfires", "undecided")
    rows = [
        (
            f"{c['case']} {c['name']}",
            c["expected"],
            *(str(c[key]) for key in ("runs", "hits", "misfires", "undecided")),
        )
        for c in result["cases"]
    ]
    widths = [max(len(row[i]) for row in (head, *rows)) for i in range(len(head))]
    lines = [
        f"{result['model']} at {result['endpoint']}, {trial.LANGUAGES[result['lang']]}, "
        f"{result['runs']} runs per case, offer sentence {'on' if result['offer_rule'] else 'off'}",
        "",
    ]
    for row in (head, *rows):
        cells = [row[0].ljust(widths[0]), row[1].ljust(widths[1])]
        cells += [cell.rjust(widths[i + 2]) for i, cell in enumerate(row[2:])]
        lines.append("  ".join(cells).rstrip())
    undecided = sum(c["undecided"] for c in result["cases"])
    lines += [
        "",
        f"undecided: {undecided} repl{'y' if undecided == 1 else 'ies'} mentioned remembering or "
        "saving outside a question, which the offer rule cannot score (see them with --json).",
    ]
    if result["advice"]:
        lines += ["", result["advice"]]
    return "\n".join(lines) + "\n"


def main(args: list[str]) -> int:
    """`local-memory trial ARGS`; returns the exit status (SPEC section 3)."""
    if args in (["-h"], ["--help"]):
        _out(USAGE)
        return 0
    try:
        options = parse(args)
    except UsageError as error:
        sys.stderr.write(f"local-memory trial: {error}\n\n{USAGE}")
        return 2
    try:
        check_endpoint(options["endpoint"])
        result = run(options)
    except (InvalidInput, EndpointError) as error:
        sys.stderr.write(f"local-memory trial: {error}\n")
        return 1
    except KeyboardInterrupt:
        sys.stderr.write("local-memory trial: interrupted; your facts were not touched.\n")
        return 130
    _out(
        json.dumps(result, ensure_ascii=False, indent=2) + "\n"
        if options["json"]
        else table(result)
    )
    return 0


def _out(text: str) -> None:
    # Bytes, so replies in any language print whatever the locale says.
    sys.stdout.buffer.write(text.encode("utf-8", "backslashreplace"))
    sys.stdout.flush()
