"""Reading an eval fixture (SPEC section 10) and refusing a bad one in one sentence.

A fixture is `{"name", "corpus": [{"id", "content", "kind", "keywords",
"age_days"}], "queries": [{"id", "text", "relevant": [ids]}]}`. A corpus row may
also carry `supersedes` (ids of earlier rows it corrects) and `seen_count` (how
many times the same text was written); an optional top-level `version` must be 1.
Every check happens here, before anything is written, so a broken file never
produces half a report.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from localmem.errors import InvalidInput, NotFound

SUPPORTED_VERSION = 1

# The bundled fixtures, in the order `localmem eval` runs them by default.
BUNDLED = (
    "peer-bilingual-v1.json",
    "conversational-v1.json",
    "madial-en-v1.json",
    "prompts-v1.json",
)


@dataclass(frozen=True)
class FixtureMemory:
    id: str
    content: str
    kind: str
    keywords: tuple[str, ...]
    age_days: float
    supersedes: tuple[str, ...] = ()
    seen_count: int = 1


@dataclass(frozen=True)
class FixtureQuery:
    id: str
    text: str
    relevant: tuple[str, ...]  # empty: the answer is not stored (off-corpus)


@dataclass(frozen=True)
class Fixture:
    name: str
    source: str  # where it came from, as shown in reports
    corpus: tuple[FixtureMemory, ...]
    queries: tuple[FixtureQuery, ...]


def bundled_path(filename: str) -> Path:
    """The path of a fixture shipped inside the package."""
    return Path(str(resources.files("localmem").joinpath("eval").joinpath(filename)))


def load_bundled() -> list[Fixture]:
    """Every bundled fixture, in `BUNDLED` order."""
    return [load(bundled_path(name), source=f"bundled:{name}") for name in BUNDLED]


class _Bad(Exception):
    """One problem found in the fixture; `load` turns it into the user's sentence."""


def load(path: Path, *, source: str | None = None) -> Fixture:
    """Read and check the fixture at `path`; raise NotFound or InvalidInput on a bad one."""
    shown = source or str(path)
    if not path.is_file():
        raise NotFound(
            f"there is no fixture file at {path}; pass an existing JSON file to --fixture"
        )
    try:
        raw = json.loads(path.read_bytes().decode("utf-8"))
    except UnicodeDecodeError:
        raise InvalidInput(
            f"the fixture {shown} is not UTF-8 text; save it as UTF-8 JSON"
        ) from None
    except json.JSONDecodeError as error:
        raise InvalidInput(
            f"the fixture {shown} is not valid JSON (line {error.lineno}, column {error.colno}: "
            f"{error.msg}); fix the file and run again"
        ) from None
    try:
        return _parse(raw, shown, path)
    except _Bad as problem:
        raise InvalidInput(
            f"the fixture {shown} is not usable: {problem}; see docs/eval.md for the format"
        ) from None


def _parse(raw: Any, shown: str, path: Path) -> Fixture:
    if not isinstance(raw, dict):
        raise _Bad("the file must hold one JSON object with 'name', 'corpus' and 'queries'")
    version = raw.get("version", SUPPORTED_VERSION)
    if version != SUPPORTED_VERSION or isinstance(version, bool):
        raise _Bad(f"its 'version' is {version!r} and only version {SUPPORTED_VERSION} is known")
    name = raw.get("name", path.stem)
    if not isinstance(name, str) or not name.strip():
        raise _Bad("'name' must be a non-empty string")
    corpus = tuple(_memories(raw.get("corpus")))
    known = {row.id for row in corpus}
    queries = tuple(_queries(raw.get("queries"), known))
    return Fixture(name=name, source=shown, corpus=corpus, queries=queries)


def _rows(value: Any, field: str) -> list[dict[str, Any]]:
    if not isinstance(value, list) or not value:
        raise _Bad(f"'{field}' must be a non-empty list of objects")
    for index, row in enumerate(value):
        if not isinstance(row, dict):
            raise _Bad(f"{field}[{index}] is not an object")
    return value


def _text(row: dict[str, Any], key: str, where: str) -> str:
    value = row.get(key)
    if not isinstance(value, str) or not value.strip():
        raise _Bad(f"{where} needs a non-empty string '{key}'")
    return value


def _strings(row: dict[str, Any], key: str, where: str) -> tuple[str, ...]:
    value = row.get(key, [])
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise _Bad(f"{where} has '{key}' that is not a list of strings")
    return tuple(value)


def _memories(value: Any) -> list[FixtureMemory]:
    out: list[FixtureMemory] = []
    seen: set[str] = set()
    for index, row in enumerate(_rows(value, "corpus")):
        where = f"corpus[{index}]"
        row_id = _text(row, "id", where)
        where = f"corpus row {row_id!r}"
        if row_id in seen:
            raise _Bad(f"the corpus id {row_id!r} appears twice")
        age = row.get("age_days", 0)
        if isinstance(age, bool) or not isinstance(age, (int, float)) or not 0 <= age < 36500:
            raise _Bad(f"{where} has 'age_days' that is not a number of days from 0 to 36500")
        seen_count = row.get("seen_count", 1)
        if isinstance(seen_count, bool) or not isinstance(seen_count, int) or seen_count < 1:
            raise _Bad(f"{where} has 'seen_count' that is not a whole number of at least 1")
        supersedes = _strings(row, "supersedes", where)
        for target in supersedes:
            if target not in seen:
                raise _Bad(f"{where} supersedes {target!r}, which is not an earlier corpus row")
        out.append(
            FixtureMemory(
                id=row_id,
                content=_text(row, "content", where),
                kind=_text(row, "kind", where),
                keywords=_strings(row, "keywords", where),
                age_days=float(age),
                supersedes=supersedes,
                seen_count=seen_count,
            )
        )
        seen.add(row_id)
    return out


def _queries(value: Any, known: set[str]) -> list[FixtureQuery]:
    out: list[FixtureQuery] = []
    seen: set[str] = set()
    for index, row in enumerate(_rows(value, "queries")):
        query_id = _text(row, "id", f"queries[{index}]")
        where = f"query {query_id!r}"
        if query_id in seen:
            raise _Bad(f"the query id {query_id!r} appears twice")
        if "relevant" not in row:
            raise _Bad(f"{where} has no 'relevant' list (use [] for an off-corpus query)")
        relevant = _strings(row, "relevant", where)
        for target in relevant:
            if target not in known:
                raise _Bad(f"{where} names {target!r} as relevant, which is not a corpus id")
        out.append(FixtureQuery(query_id, _text(row, "text", where), relevant))
        seen.add(query_id)
    return out
