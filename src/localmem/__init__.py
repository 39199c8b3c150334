"""localmem: memory for language models that never leaves the user's machine.

This module holds the version only; it must stay free of imports so that the
`local-memory` fast path pays nothing for it.
"""

__version__ = "0.1.0"

TYPE_CHECKING = False  # `typing` is not imported here: this module must stay import-free
if TYPE_CHECKING:
    from collections.abc import Callable
    from datetime import datetime
    from pathlib import Path

    from localmem.memory.store import Store


def open(
    path: "Path | str | None" = None,
    *,
    create: bool = True,
    clock: "Callable[[], datetime] | None" = None,
    for_recall: bool = False,
) -> "Store":
    """Open the memory store (see `localmem.memory.store`); imports it only when called.

    Every write that changes something is then exported to the git mirror, when
    one is set up (`localmem mirror init`). `for_recall=True` opens it for searches
    only: never created, and strictly read-only while LOCALMEM_NO_TRACKING is set.
    """
    from localmem.memory.store import open_store
    from localmem.memory.transfer.mirror import after_write

    return open_store(
        path, create=create, clock=clock, after_write=after_write, for_recall=for_recall
    )
