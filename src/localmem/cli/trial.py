"""`local-memory trial`: how well a local model uses its memory (SPEC section 3).

Parses its flags by hand like the rest of `local-memory`, refuses an endpoint
the locality gate does not call local, then puts the design's five cases
(`localmem.facts.trial`) to the model through `localmem.endpoint`, each run in a
throwaway folder seeded with invented facts, and prints the table. Imported
only by the `trial` command, so `prompt` stays on its fast path.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

from localmem import chat
from localmem.endpoint import Endpoint, EndpointError, EndpointGone, base_url, turn
from localmem.errors import InvalidInput
from localmem.facts import trial
from localmem.facts.block import offer_wanted

USAGE = """\
usage: local-memory trial --endpoint URL [--model NAME] [--runs N] [--lang en|it]
                          [--timeout SECONDS] [--out FILE] [--json]

Puts the design's five memory cases to a local OpenAI-compatible model, N runs
each, in a throwaway facts folder seeded with invented facts (yours is never
read or touched), and prints hits, misfires and undecided replies per case.

  --endpoint URL       the API's base URL, e.g. http://127.0.0.1:8080/v1; local only
  --model NAME         the model to ask (default: the first one the endpoint lists)
  --runs N             runs per case, 1 to 1000 (default 10)
  --lang en|it         the language of the cases (default en)
  --timeout SECONDS    how long one request may take (default 120)
  --out FILE           keep every reply in FILE as the trial goes; run the same command
                       again to resume where it stopped
  --json               print the result as JSON

Set LOCAL_MEMORY_OFFER=0 to try the memory block without its offer sentence.
"""

FLAGS = {"--endpoint", "--model", "--runs", "--lang", "--timeout", "--out"}


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


def _duration(seconds: float) -> str:
    if seconds < 1:
        return f"{seconds * 1000:.0f} ms"
    if seconds < 10:
        return f"{seconds:.1f} s"
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 90 * 60:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


class Clock:
    """Time per request and what is left, from the turns done so far (decision 176)."""

    def __init__(self, turns: int) -> None:
        self.turns = turns
        self.done = self.requests = 0
        self.seconds = 0.0

    def add(self, record: dict[str, Any]) -> None:
        self.done += 1
        self.requests += max(1, int(record["requests"]))  # a failed turn is one failed request
        self.seconds += float(record["seconds"])

    def line(self, case: int, position: int, run: int, runs: int) -> str:
        text = f"case {case} ({position} of 5), run {run} of {runs}"
        if self.done:
            left = (self.turns - self.done) * self.seconds / self.done
            per = self.seconds / self.requests
            text += f"; {_duration(per)} per request, about {_duration(left)} left"
        return text


def load(out: str | None, model: str, lang: str, offer_rule: bool) -> dict[int, dict[int, Any]]:
    """The replies an earlier run with the same `--out FILE` kept: case -> run -> record."""
    if out is None or not os.path.exists(out):
        return {}
    try:
        with open(out, encoding="utf-8") as handle:
            kept = json.load(handle)
        same = (kept["model"], kept["lang"], kept["offer_rule"]) == (model, lang, offer_rule)
        cases = {int(c["case"]): {int(r["run"]): r for r in c["replies"]} for c in kept["cases"]}
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise InvalidInput(
            f"{out[:80]} is not a trial this command can resume ({type(error).__name__}); "
            "give --out a new file."
        ) from None
    if not same:
        raise InvalidInput(
            f"{out[:80]} holds a trial of {str(kept['model'])[:40]} in {kept['lang']} with the "
            f"offer sentence {'on' if kept['offer_rule'] else 'off'}; give --out a new file to "
            "try another model, language or offer setting."
        )
    return cases


def save(out: str, result: dict[str, Any]) -> None:
    """Write the result so far, whole or not at all (a temporary file, then a rename)."""
    folder = os.path.dirname(os.path.abspath(out))
    try:
        fd, temporary = tempfile.mkstemp(prefix=".trial-", dir=folder)
    except OSError as error:
        raise InvalidInput(f"cannot write {out[:80]}: {error.strerror or error}.") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(result, handle, ensure_ascii=False, indent=2)
            handle.write("\n")
        os.replace(temporary, out)
    except BaseException as error:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        if isinstance(error, OSError):
            raise InvalidInput(f"cannot write {out[:80]}: {error.strerror or error}.") from None
        raise


def run(options: dict[str, Any], clock: Callable[[], float] = time.monotonic) -> dict[str, Any]:
    """Every case, `runs` times, in a throwaway folder; the result as a plain dict."""
    endpoint = Endpoint(options["endpoint"], options.get("model"), options["timeout"])
    progress = Progress()
    if endpoint.model is None:
        progress.show("asking the endpoint which model it serves")
        endpoint.model = endpoint.first_model()
    lang, runs, offer_rule = options["lang"], options["runs"], offer_wanted()
    out = options.get("out")
    kept = load(out, endpoint.model, lang, offer_rule)
    today = time.strftime("%Y-%m-%d")
    results = {
        case.number: trial.CaseResult(case, trial.expected(case, offer_rule, runs))
        for case in trial.CASES
    }
    timing = Clock(len(trial.CASES) * runs)
    stopped: str | None = None

    def result() -> dict[str, Any]:
        return summary(endpoint, lang, runs, offer_rule, list(results.values()), timing, stopped)

    # The kept replies count from the start, so a save made before their case comes round
    # still holds them: a second interruption loses nothing the first one kept.
    for number, case in results.items():
        for run_index in range(runs):
            record = kept.get(number, {}).get(run_index + 1)
            if record is not None:
                case.add(record)
                timing.add(record)
    try:
        with tempfile.TemporaryDirectory(prefix="local-memory-trial-") as scratch:
            folder = f"{scratch}/facts"
            for position, number in enumerate(trial.RUN_ORDER, start=1):
                case = results[number]
                for run_index in range(runs):
                    if run_index + 1 in kept.get(number, {}):
                        continue
                    progress.show(timing.line(number, position, run_index + 1, runs))
                    record = one_run(endpoint, case.case, lang, run_index, folder, today, clock)
                    case.add(record)
                    timing.add(record)
                    if out:
                        save(out, result())
                failed = [r for r in case.replies if r["kind"] == trial.FAILED]
                if position == 1 and len(failed) == case.runs:
                    raise EndpointError(
                        f"every one of {case.runs} requests failed, so the trial stopped; "
                        f"the last: {failed[-1]['reason']}"
                    )
                if position == 1 and not trial.carried_calls(case):
                    stopped = trial.TOOL_SUPPORT
                    break
    finally:
        progress.done()
    done = result()
    if out:
        save(out, done)
    return done


def one_run(
    endpoint: Endpoint,
    case: trial.Case,
    lang: str,
    run_index: int,
    folder: str,
    today: str,
    clock: Callable[[], float],
) -> dict[str, Any]:
    """One turn of `case`, scored; a failed request is an error in its case (decision 175)."""
    trial.seed(folder, lang, today)
    said = trial.prompt_for(case, lang, run_index)
    started = clock()
    try:
        done = turn(endpoint, chat.Gate(), said, folder, today)
    except EndpointGone:
        raise  # no server at all: the trial stops, and this turn is not kept as an error
    except EndpointError as error:
        return trial.record(run_index + 1, said, None, trial.failed(str(error)), clock() - started)
    verdict = trial.score(case, done, lang, offer_wanted())
    return trial.record(run_index + 1, said, done, verdict, clock() - started)


def summary(
    endpoint: Endpoint,
    lang: str,
    runs: int,
    offer_rule: bool,
    results: list[trial.CaseResult],
    timing: Clock,
    stopped: str | None,
) -> dict[str, Any]:
    """The trial as `--json` prints it and `--out` keeps it."""
    return {
        "endpoint": endpoint.url,
        "model": endpoint.model,
        "lang": lang,
        "runs": runs,
        "offer_rule": offer_rule,
        "requests": timing.requests,
        "seconds": round(timing.seconds, 2),
        "cases": [
            {
                "case": r.case.number,
                "name": r.case.name,
                "expected": r.expected,
                "runs": r.runs,
                "hits": r.hits,
                "misfires": r.misfires,
                "undecided": r.undecided,
                "errors": r.errors,
                "undecided_replies": r.undecided_replies,
                "replies": r.replies,
            }
            for r in results
        ],
        "stopped": stopped,
        "advice": trial.advice(results, offer_rule),
    }


def table(result: dict[str, Any]) -> str:
    """The result as the table a person reads; cases that did not run are left out."""
    head = ("case", "expected", "runs", "hits", "misfires", "undecided", "errors")
    rows = [
        (
            f"{c['case']} {c['name']}",
            c["expected"],
            *(str(c[key]) for key in ("runs", "hits", "misfires", "undecided", "errors")),
        )
        for c in result["cases"]
        if c["runs"]
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
    if result["requests"]:
        per = result["seconds"] / result["requests"]
        lines += ["", f"{result['requests']} requests, {_duration(per)} each on average."]
    undecided = sum(c["undecided"] for c in result["cases"])
    if undecided:
        lines += [
            "",
            f"undecided: {undecided} repl{'y' if undecided == 1 else 'ies'} mentioned remembering "
            "or saving outside a question, which the offer rule cannot score (see them with "
            "--json).",
        ]
    for paragraph in (result["stopped"], result["advice"]):
        if paragraph:
            lines += ["", paragraph]
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
    except EndpointGone as error:
        # The server went away (or never was): stop rather than fill every run left with
        # errors; with --out the replies so far are kept and the same command resumes.
        kept = ""
        if options.get("out") and os.path.exists(options["out"]):
            kept = f" The replies so far are in {options['out']}: run the same command to resume."
        sys.stderr.write(f"local-memory trial: {error}{kept}\n")
        return 1
    except (InvalidInput, EndpointError) as error:
        sys.stderr.write(f"local-memory trial: {error}\n")
        return 1
    except KeyboardInterrupt:
        kept = ""
        if options.get("out"):
            kept = f" The replies so far are in {options['out']}: run the same command to resume."
        sys.stderr.write(f"local-memory trial: interrupted; your facts were not touched.{kept}\n")
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
