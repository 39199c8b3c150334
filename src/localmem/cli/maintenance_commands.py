"""The `localmem` maintenance commands: their options and help.

Bodies live in `localmem.cli.maintenance` and `localmem.cli.redact`.

Declared here, registered on the `localmem` group by `cli.main`; each body is
imported inside its command so that the command line starts fast.
"""

from __future__ import annotations

import click

# ---- maintenance commands (owner: maintenance; bodies in localmem.cli.maintenance) ----


@click.command()
@click.option("-w", "--workspace", help="Only this workspace (default: every workspace).")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def audit(workspace: str | None, as_json: bool) -> None:
    """Read-only health report: queue, promotion candidates, core, recall, lessons, traces.

    The database is opened read-only: the file is byte for byte the same afterwards.
    """
    from localmem.cli.maintenance import run_audit

    run_audit(workspace, as_json)


@click.command()
@click.option("--dry-run", is_flag=True, help="List what would be masked; change nothing.")
@click.option(
    "--rewrite-history", is_flag=True, help="Restart the git mirror's history if it holds them."
)
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def redact(dry_run: bool, rewrite_history: bool, as_json: bool) -> None:
    """Mask credentials already stored as [redacted: KIND], in one transaction.

    Every write masks them; `audit` lists rows written before. Says when the git
    mirror's history still holds them, and how to purge it (decision 140).
    """
    from localmem.cli.redact import run_redact

    run_redact(dry_run, as_json, rewrite_history)


@click.command()
@click.option(
    "--prune-traces",
    "prune_days",
    type=click.IntRange(0, 36500),  # a century: any more would overflow the date
    metavar="DAYS",
    help="Delete traces never recalled and older than DAYS (never one in a supersede link).",
)
@click.option("--dry-run", is_flag=True, help="Report what would go; change nothing.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def gc(prune_days: int | None, dry_run: bool, as_json: bool) -> None:
    """Drop stale near-duplicate queue rows and reclaim disk space (VACUUM)."""
    from localmem.cli.maintenance import run_gc

    run_gc(prune_days, dry_run, as_json)


@click.command()
@click.option("--list", "listing", is_flag=True, help="List the queued pairs (the default).")
@click.option("--review", is_flag=True, help="Go through the pairs one at a time (terminal).")
@click.option(
    "--merge", nargs=2, type=int, metavar="A B", help="Merge memory B into memory A (A stays)."
)
@click.option("--keep-both", nargs=2, type=int, metavar="A B", help="Keep both; off the queue.")
@click.option("--keep-all", is_flag=True, help="Keep both of every queued pair (of -w NAME).")
@click.option("-w", "--workspace", help="Only pairs of this workspace.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def dedupe(
    listing: bool,
    review: bool,
    merge: tuple[int, int] | None,
    keep_both: tuple[int, int] | None,
    keep_all: bool,
    workspace: str | None,
    as_json: bool,
) -> None:
    """The near-duplicate review queue: list, review, merge, keep both."""
    from localmem.cli.maintenance import run_dedupe

    run_dedupe(
        workspace=workspace,
        review=review,
        merge=merge or None,
        keep_both=keep_both or None,
        keep_all=keep_all,
        as_json=as_json,
    )


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def embed(as_json: bool) -> None:
    """Compute the missing vectors of the semantic view (the extra localmem[semantic])."""
    from localmem.cli.maintenance import run_embed

    run_embed(as_json)


@click.command()
@click.option("-w", "--workspace", help="Only this workspace (default: every memory).")
@click.option("-o", "--output", metavar="FILE", help="Write to FILE instead of stdout.")
def export(workspace: str | None, output: str | None) -> None:
    """Every memory as JSON (stable order: the same store gives the same bytes)."""
    from localmem.cli.export import run_export

    run_export(workspace, output)


@click.command()
@click.argument("path", type=click.Path(), required=False)
@click.option(
    "--from-backup",
    is_flag=True,
    help="PATH is a backup made before a migration (default: the newest); it replaces "
    "the database, which is kept beside it.",
)
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def restore(path: str | None, from_backup: bool, as_json: bool) -> None:
    """Merge an export, a mirror folder or a localmem 0.5 export into this store.

    Safe to run twice; a broken file is refused and nothing changes. With
    --from-backup, bring back a memory.db.v<N>.bak that `localmem doctor` lists.
    """
    if from_backup:
        from localmem.cli.doctor import run_restore_backup

        run_restore_backup(path, as_json)
        return
    if path is None:
        raise click.UsageError("Missing argument 'PATH'.")
    from localmem.cli.maintenance import run_restore

    run_restore(path, as_json)


@click.command()
@click.option("--repair", is_flag=True, help="Rebuild derived data; recover a damaged file.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def doctor(repair: bool, as_json: bool) -> None:
    """Check the store and the facts folder; say what is wrong and what to do.

    Checks integrity, the schema version, the index and vectors against the rows,
    file modes, locks, the mirror, backups and the topic files. --repair rebuilds
    derived data and copies a damaged file into a new one, keeping the original.
    Exits 1 while a problem remains.
    """
    from localmem.cli.doctor import run_doctor

    run_doctor(repair, as_json)


@click.group()
def mirror() -> None:
    """Keep the memory store in a git repository, pushed after every change."""


@mirror.command("init")
@click.argument("remote")
@click.option("--dir", "folder", type=click.Path(file_okay=False), help="The mirror folder.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def mirror_init(remote: str, folder: str | None, as_json: bool) -> None:
    """Set the mirror up with REMOTE (restores what REMOTE already holds first)."""
    from localmem.cli.maintenance import run_mirror_init

    run_mirror_init(remote, folder, as_json)


@mirror.command("status")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def mirror_status(as_json: bool) -> None:
    """The mirror folder, its remote, its last commit and the last push error."""
    from localmem.cli.maintenance import run_mirror_status

    run_mirror_status(as_json)


@mirror.command("sync")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def mirror_sync(as_json: bool) -> None:
    """Export, commit and push now, in the foreground."""
    from localmem.cli.maintenance import run_mirror_sync

    run_mirror_sync(as_json)


@click.command()
@click.option(
    "--to",
    "target",
    required=True,
    metavar="PATH",
    help="Where the copy goes: a new database file, or a store to merge into.",
)
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def migrate(target: str, as_json: bool) -> None:
    """Copy every memory of this store to another location; this store is left as it is.

    Then point LOCALMEM_DB at the copy to use it. Safe to run twice.
    """
    from localmem.cli.maintenance import run_migrate

    run_migrate(target, as_json)


COMMANDS = (audit, redact, gc, dedupe, embed, export, restore, migrate, mirror, doctor)
