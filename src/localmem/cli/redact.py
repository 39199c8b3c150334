"""The `redact` command: masks the credentials already stored (`memory.maintenance.redact`)
and says what the git mirror's history still holds of them, with the commands that
purge it; `--rewrite-history` (or a yes on a terminal) restarts that history itself
(decision 140). The secrets are never printed: ids, kinds and counts only.
"""

from __future__ import annotations

import json
import shlex
import sys
from typing import Any

import click

import localmem
from localmem import paths

TYPE_CHECKING = False
if TYPE_CHECKING:
    from localmem.memory.maintenance.redact import RedactReport
    from localmem.memory.transfer.mirror_history import MirrorHistory


def kinds_text(kinds: tuple[str, ...]) -> str:
    """`github-token x2, password`: each kind once, with how often it occurs."""
    counts: dict[str, int] = {}
    for kind in kinds:
        counts[kind] = counts.get(kind, 0) + 1
    return ", ".join(k if n == 1 else f"{k} x{n}" for k, n in counts.items())


def run_redact(dry_run: bool, as_json: bool, rewrite_history: bool = False) -> None:
    from localmem.errors import StoreUnavailable
    from localmem.memory.maintenance.redact import redact

    if dry_run and rewrite_history:
        raise click.UsageError("--rewrite-history acts after masking; drop --dry-run.")
    try:
        store = localmem.open(create=False)
    except StoreUnavailable as error:
        if not paths.memory_db().exists():  # nothing stored, so nothing to mask
            if as_json:
                payload = {"dry_run": dry_run, "count": 0, "memories": [], "mirror_history": None}
                _echo_json({**payload, "message": str(error)})
            else:
                click.echo(str(error))
            return
        raise
    asked: list[bool] = []

    def confirm(history: MirrorHistory) -> bool:
        if rewrite_history:
            return True
        if as_json or not sys.stdin.isatty():
            return False
        asked.append(True)
        commits = "1 commit" if history.commits == 1 else f"{history.commits} commits"
        try:
            return click.confirm(
                f"{history.secrets} of the {history.searched} secret value(s) just masked are "
                f"still in {commits} of the git mirror's history in {history.folder}. Restart "
                f"that history now from the masked export and force-push {history.branch} to "
                f"{history.remote or 'its remote'}?",
                default=False,
                err=True,
            )
        except click.Abort:  # the rows are masked already: say how to purge, as for a no
            return False

    with store:
        report = redact(store, dry_run=dry_run, rewrite_history=confirm)
    if as_json:
        _echo_json(_payload(report))
    else:
        _echo_text(report, shown=bool(asked))


def _echo_json(payload: object) -> None:
    click.echo(json.dumps(payload, ensure_ascii=False, indent=2))


def _payload(report: RedactReport) -> dict[str, Any]:
    from localmem.memory.payload import redacted_payload
    from localmem.memory.transfer.mirror_history import purge_commands

    payload: dict[str, Any] = {
        "dry_run": report.dry_run,
        "count": len(report.memories),
        "memories": [
            {
                "id": found.id,
                "workspace": found.workspace,
                "kind": found.kind,
                "redacted": redacted_payload(found.kinds),
            }
            for found in report.memories
        ],
    }
    if report.kinds:
        payload["redacted"] = redacted_payload(report.kinds)
    history = report.mirror
    payload["mirror_history"] = history and {
        "folder": history.folder,
        "remote": history.remote,
        "branch": history.branch,
        "commits": history.commits,
        "secrets": history.secrets,
        "searched": history.searched,
        "commands": purge_commands(history) if history.commits else [],
        "rewritten": report.restart
        and {
            "pushed": report.restart.pushed,
            "error": report.restart.error,
            "commits_left": report.restart.commits_left,
        },
    }
    return payload


def _secrets(history: MirrorHistory) -> str:
    found = f"{history.secrets} of these secrets" if history.searched > 1 else "this secret"
    commits = "1 commit" if history.commits == 1 else f"{history.commits} commits"
    return f"{found} in {commits}"


def _echo_text(report: RedactReport, *, shown: bool) -> None:
    from localmem.memory.transfer.mirror_history import purge_commands

    if not report.memories:
        click.echo("no stored memory holds a credential; nothing to mask")
        return
    verb = "would mask" if report.dry_run else "masked"
    click.echo(
        f"{verb} {len(report.kinds)} credential(s) in {len(report.memories)} memories "
        "(the text is not shown):"
    )
    for found in report.memories:
        click.echo(f"  [{found.id}] ({found.workspace}, {found.kind}) {kinds_text(found.kinds)}")
    if report.dry_run:
        click.echo("Dry run: nothing was changed; run `localmem redact` to mask them.")
    history = report.mirror
    if history is None:
        if not report.dry_run:
            click.echo("Older exports may still hold them: rotate those credentials.")
        return
    if not history.commits:
        click.echo(f"The git mirror's history in {history.folder} holds none of them.")
        return
    if report.restart is not None:
        _echo_restart(report, history)
        return
    remote = history.remote or "its remote"
    first = ", after `localmem redact`," if report.dry_run else ""
    click.echo(
        f"The git mirror's history in {history.folder} still holds {_secrets(history)}, "
        f"and so does {remote}: rotate those credentials, then{first} purge that history "
        "by starting it afresh from the masked export with these commands (the remote's "
        "own copies and every other clone of the mirror must be purged too):"
    )
    for line in purge_commands(history):
        click.echo(f"    {line}")
    if report.dry_run:
        click.echo("`localmem redact --rewrite-history` masks them and runs those commands itself.")
    elif shown:
        click.echo("The history was left as it is.")


def _echo_restart(report: RedactReport, history: MirrorHistory) -> None:
    done = report.restart
    assert done is not None
    remote = history.remote or "its remote"
    folder = shlex.quote(history.folder)
    if done.pushed:
        click.echo(
            f"Restarted the git mirror's history in {history.folder} from the masked export "
            f"(one commit on {done.branch}, force-pushed to {remote}); {history.commits} "
            "commit(s) that held the secrets are gone from this folder."
        )
    else:
        click.echo(
            f"Restarted the git mirror's history in {history.folder} from the masked export, "
            f"but the force push to {remote} failed ({done.error}); run "
            f"`git -C {folder} push --force origin {shlex.quote(done.branch)}` once it is "
            "reachable (until then every automatic push is refused)."
        )
    if done.commits_left:
        click.echo(
            f"{done.commits_left} commit(s) of other branches or tags in {history.folder} "
            "still hold them: delete those refs, then run `git gc --prune=now` there."
        )
    click.echo(
        f"{remote} may keep the old commits until its own garbage collection (a hosted "
        "remote: ask its host to purge them), and every other clone of the mirror still "
        "holds them (on each machine, run `localmem redact`, move the mirror folder away "
        f"and run `localmem mirror init {remote}` again): rotate those credentials."
    )
