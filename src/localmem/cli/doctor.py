"""`localmem doctor` and `restore --from-backup`: the surface of `maintenance.doctor`,
`maintenance.repair` and `memory.backups` (one line per check; `--json`)."""

from __future__ import annotations

import dataclasses
import json
import sys

import click

from localmem import paths
from localmem.memory.maintenance import doctor


def _echo_json(payload: object) -> None:
    click.echo(json.dumps(payload, ensure_ascii=False, indent=2))


def _payload(report: doctor.Report) -> dict[str, object]:
    return {
        "database": report.database,
        "facts_folder": report.facts_folder,
        "ok": report.ok,
        "checks": [dataclasses.asdict(c) for c in report.checks],
        "backups": [dataclasses.asdict(b) for b in report.backups],
    }


def _print(report: doctor.Report) -> None:
    width = max(len(c.name) for c in report.checks)
    for check in report.checks:
        click.echo(f"{check.status:<8} {check.name:<{width}}  {check.message}")
    problems = sum(1 for c in report.checks if c.status == "problem")
    if problems:
        click.echo(f"{problems} problem(s); `localmem doctor --repair` fixes what it can.")


def run_doctor(repair: bool, as_json: bool) -> None:
    db_path = paths.memory_db_file()
    repaired: list[str] = []
    if repair:
        from localmem.memory.maintenance.repair import repair as run_repair

        repaired = run_repair(db_path)
    report = doctor.examine(db_path)
    if as_json:
        payload = _payload(report)
        if repair:
            payload["repaired"] = repaired
        _echo_json(payload)
    else:
        for line in repaired:
            click.echo(f"repaired {line}")
        if repair and not repaired:
            click.echo("repaired nothing: nothing needed it.")
        _print(report)
    if not report.ok:
        sys.exit(1)


def run_restore_backup(path: str | None, as_json: bool) -> None:
    from localmem.memory import backups

    done = backups.bring_back(paths.memory_db_file(), path)
    if as_json:
        _echo_json(dataclasses.asdict(done))
        return
    kept = f"; the database it replaced is kept as {done.kept}" if done.kept else ""
    click.echo(
        f"restored {done.backup} (schema {done.schema}, {done.memories} memories){kept}; "
        "the next command upgrades it to this version."
    )
