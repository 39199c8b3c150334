"""`local-memory --test`: a self-check of the real commands in a throwaway folder.

It exercises the same functions as the commands (remember, duplicate refusal,
recall, forget with one and several matches, the memory block, a refused slug)
in a temporary folder, and reports the first thing that went wrong.
"""

from __future__ import annotations

import os
import shutil
import tempfile

from localmem.errors import InvalidInput
from localmem.facts import block, rules, store

DAY = "2000-01-01"


def _expect(condition: bool, what: str) -> None:
    if not condition:
        raise AssertionError(what)


def self_test() -> str | None:
    """None when every check passes, else a sentence naming the first failure."""
    path = tempfile.mkdtemp(prefix="local-memory-test-")
    try:
        _checks(os.path.join(path, "facts"))
    except AssertionError as failure:
        return str(failure)
    except OSError as error:
        return f"the temporary folder could not be used: {error}"
    finally:
        shutil.rmtree(path, ignore_errors=True)
    return None


def _checks(path: str) -> None:
    saved = store.remember(path, "games", "likes  puzzles\n", DAY, sync=False)
    _expect(saved.changed and "- 2000-01-01: likes puzzles" in saved.text, "remember failed")
    _expect(os.stat(path).st_mode & 0o777 == 0o700, "the folder is not 0700")
    _expect(os.stat(os.path.join(path, "games.md")).st_mode & 0o777 == 0o600, "a file is not 0600")
    again = store.remember(path, "games", "likes puzzles", "2000-01-02", sync=False)
    _expect(not again.changed, "a duplicate was written twice")
    store.remember(path, "games", "dislikes turn-based RPGs", DAY, sync=False)
    store.remember(path, "core", "lives in Bologna", DAY, sync=False)
    _expect("dislikes" in store.recall(path, "games"), "recall did not show a saved fact")
    _expect(not store.forget(path, "games", "likes", sync=False).changed, "vague forget removed")
    _expect(store.forget(path, "games", "PUZZLES", sync=False).changed, "forget did not remove")
    text = block.memory_block(path)
    _expect("lives in Bologna" in text and "games (1)" in text, "the memory block is wrong")
    store.forget(path, "games", "rpgs", sync=False)
    _expect(not os.path.exists(os.path.join(path, "games.md")), "an emptied topic stayed")
    try:
        rules.check_topic("../x")
    except InvalidInput:
        pass
    else:
        raise AssertionError("the topic ../x was accepted")
