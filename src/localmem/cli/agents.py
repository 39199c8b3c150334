"""The `localmem agents` command: list, register and repair agent configs.

Formatting only; the rules live in `localmem.agents`. Each named agent is
handled on its own, so one refusal does not stop the others, and any refusal or
stale entry makes the exit status non-zero (SPEC section 8). The store the
entries carry (`$LOCALMEM_DB`, decision 224) is shown as `store` (null when none
is named).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from localmem.agents import AGENTS, install, statuses
from localmem.agents.base import (
    AgentContext,
    AgentStatus,
    InstallResult,
    UnreadableConfig,
    named_store,
)
from localmem.agents.command import localmem_command
from localmem.errors import InvalidInput, LocalmemError

STATE_TEXT = {
    "registered": "registered",
    "stale": "STALE",
    "not_registered": "not registered",
    "unreadable": "UNREADABLE",
}
STATUS_TEXT = {
    "installed": "registered localmem in",
    "already_registered": "already registered in",
    "repaired": "repaired the localmem entry in",
}


def run_agents(names: tuple[str, ...], repair: bool, as_json: bool) -> None:
    ctx = AgentContext.current()
    if names or repair:
        command = localmem_command()
        if names:
            ok = _install_all(ctx, names, command, repair, as_json)
        else:
            ok = _repair_stale(ctx, command, as_json)
        sys.exit(0 if ok else 1)
    _list(ctx, as_json)


def _listing_command() -> tuple[Path, str | None]:
    # Listing never refuses: it shows where things stand even from a uvx run.
    try:
        return localmem_command(), None
    except InvalidInput as error:
        return localmem_command(refuse_throwaway=False), str(error)


def _list(ctx: AgentContext, as_json: bool) -> None:
    command, warning = _listing_command()
    store = named_store(ctx)  # a URL with a password: one sentence, like every command
    found = statuses(ctx, command)
    stale = [s for s in found if s.state == "stale"]
    if as_json:
        click.echo(
            json.dumps(
                {
                    "command": str(command),
                    "store": store,
                    "warning": warning,
                    "agents": [_status_json(s) for s in found],
                },
                indent=2,
                ensure_ascii=False,
            )
        )
    else:
        click.echo(f"localmem command: {command}")
        if store is not None:
            click.echo(f"store for agents: {store}")
        if warning:
            click.echo(f"warning: {warning}")
        width = max(len(agent.name) for agent in AGENTS)
        for status in found:
            detected = "detected" if status.detected else "-"
            state = STATE_TEXT[status.state]
            click.echo(
                f"  {status.name:<{width}}  {detected:<8}  {state:<14}  {status.config_path}"
            )
        click.echo("Register one with: localmem agents --install NAME  (naming it is your consent)")
        if stale:
            names = ", ".join(s.name for s in stale)
            click.echo(
                f"Stale entries ({names}) start another localmem or store; "
                "point them at this one with: localmem agents --repair",
                err=True,
            )
    if stale:
        sys.exit(1)


def _status_json(status: AgentStatus) -> dict[str, object]:
    return {
        "name": status.name,
        "title": status.title,
        "detected": status.detected,
        "config_path": str(status.config_path),
        "scope": status.scope,
        "state": status.state,
        "entry": status.entry,
        "problem": status.problem,
    }


def _install_all(
    ctx: AgentContext, names: tuple[str, ...], command: Path, repair: bool, as_json: bool
) -> bool:
    results: list[dict[str, object]] = []
    ok = True
    for name in names:
        try:
            result = install(ctx, name, command, repair=repair)
        except LocalmemError as error:
            ok = False
            results.append({"name": name, "status": "refused", "error": str(error)})
            if not as_json:
                _echo_refusal(name, error)
            continue
        results.append(_result_json(result))
        if not as_json:
            _echo_result(result)
    if as_json:
        document = {"command": str(command), "store": _store_or_none(ctx), "results": results}
        click.echo(json.dumps(document, indent=2))
    elif any(r["status"] in ("installed", "repaired") for r in results):
        click.echo(
            "Restart the agent to load it, and paste the pointer snippet "
            "(`localmem snippet`) into the instruction file it reads."
        )
    return ok


def _repair_stale(ctx: AgentContext, command: Path, as_json: bool) -> bool:
    stale = tuple(s.name for s in statuses(ctx, command) if s.state == "stale")
    if not stale:
        if as_json:
            document: dict[str, object] = {
                "command": str(command),
                "store": _store_or_none(ctx),
                "results": [],
            }
            click.echo(json.dumps(document, indent=2))
        else:
            click.echo("No stale localmem entry found; nothing to repair.")
        return True
    return _install_all(ctx, stale, command, True, as_json)


def _store_or_none(ctx: AgentContext) -> str | None:
    # A refused store (a URL with a password) is already in each result's error.
    try:
        return named_store(ctx)
    except InvalidInput:
        return None


def _result_json(result: InstallResult) -> dict[str, object]:
    return {
        "name": result.name,
        "status": result.status,
        "config_path": str(result.config_path),
        "backup": str(result.backup) if result.backup else None,
        "store": result.store,
    }


def _echo_result(result: InstallResult) -> None:
    line = f"{result.title}: {STATUS_TEXT[result.status]} {result.config_path}"
    if result.backup:
        line += f" (the previous file is in {result.backup})"
    click.echo(line)


def _echo_refusal(name: str, error: LocalmemError) -> None:
    if isinstance(error, UnreadableConfig):
        click.echo(f"localmem: {name}: {error.path} {error.reason}; nothing was written.", err=True)
        click.echo("Add this block to it by hand:\n", err=True)
        click.echo(error.block, err=True)
    else:
        click.echo(f"localmem: {name}: {error}", err=True)
