"""`localmem migrate --to PATH|URL`: copy the whole store to another location in one step.

What `export` then `restore` into a new store would do, without the file in between:
the source is read through a read-only connection inside one snapshot (so it is
left byte for byte as it was, and a writer meanwhile changes nothing read), every
memory is validated as `restore` validates a file, and the target is filled by
`restore` in one transaction. A target that already holds memories is merged into,
as `restore` merges, so running it twice changes nothing the second time. Derived
data (the index, entities, the near-duplicate queue) is rebuilt in the target;
semantic vectors are computed there later, as for any restore (`localmem embed`).
"""

from __future__ import annotations

import os
from pathlib import Path

from localmem import paths
from localmem.errors import InvalidInput
from localmem.memory.transfer.restore import Progress, RestoreReport


def migrate(
    source: Path | paths.StoreURL, target: str, progress: Progress | None = None
) -> RestoreReport:
    """Copy every memory of the store at `source` into the store at `target` (a file
    path or a team store's `postgresql://` URL, either way round)."""
    from localmem.memory.readonly import open_readonly
    from localmem.memory.store import open_store
    from localmem.memory.transfer.export import store_source
    from localmem.memory.transfer.restore import restore

    there: Path | paths.StoreURL
    if paths.is_store_url(target):
        paths.check_store_url(target, "--to")
        there = paths.StoreURL(target)
        if target == str(source):
            raise InvalidInput(f"{target} is the store itself; give --to another location.")
    else:
        there = Path(target)
        if there.is_dir():
            raise InvalidInput(f"{target} is a folder; give --to the path of a database file.")
        if not paths.is_store_url(str(source)) and os.path.realpath(there) == os.path.realpath(
            source
        ):
            raise InvalidInput(f"{target} is the store itself; give --to another path.")
        paths.refuse_facts_folder(there, "pick another path for the copy")
    conn = open_readonly(source)
    try:
        found = store_source(conn, str(source))  # one read snapshot
    finally:
        conn.close()
    # Opened without the git mirror's hook: the mirror follows the user's own store.
    with open_store(there, create=True) as store:
        return restore(store, found, progress)
