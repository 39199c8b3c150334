"""Fuzz targets shared by the test suite (modest example counts) and `bench/fuzz.py` (large).

Each `Target` pairs a hypothesis strategy with a check that must hold for every
input: the code under test returns normally or raises one of our own
`LocalmemError`s (a refusal with a sentence), never anything else, and the
properties stated in the check hold. `setup()` builds what the check needs
(real SQLite files and folders in a temporary directory), once per run.
"""

from __future__ import annotations

import itertools
import json
import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from localmem.errors import InvalidInput, LocalmemError

# Text with everything that has bitten text handling before: every Unicode category
# (lone surrogates, as undecodable argv bytes arrive, included), FTS5 syntax,
# markdown bullets, CJK, Vietnamese, emoji, NUL and other controls.
SYNTAX = st.sampled_from(
    ['"', "'", "(", ")", "*", "^", ":", "-", "+", "NEAR", "AND", "OR", "NOT", "body:", "kw:",
     "ws:", "{body kw}:", "NEAR(a b, 2)", "\x00", "\n", "\t", "- ", "1. ", "* ", "đường",
     "Đ", "中文字符", "ｆｕｌｌ", "🙂", "e\u0301", "\ufeff", "\u200b", "ß", "İ", "ﬁ",
     "\udcff", "\ud800", "x\udc80y"]
)  # fmt: skip
TEXT = st.one_of(
    st.text(),
    st.text(alphabet=st.characters(codec="utf-8")),
    st.lists(st.one_of(SYNTAX, st.text(max_size=8)), max_size=12).map(" ".join),
    st.lists(st.one_of(SYNTAX, st.text(max_size=8)), max_size=12).map("".join),
)
JSONISH = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=-(10**40), max_value=10**40)
    | st.floats()
    | TEXT,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)
SLUG = re.compile(r"[a-z0-9-]{1,32}")
FACT_LINE = re.compile(r"^- \d{4}-\d{2}-\d{2}: \S(?:.*\S)?$")


@dataclass
class Target:
    name: str
    strategy: st.SearchStrategy[Any]
    setup: Callable[[Path], Any]
    check: Callable[[Any, Any], None]


def _store(root: Path) -> Any:
    import localmem

    store = localmem.open(root / "memory.db")
    for n, text in enumerate(
        [
            "Run the tests with make test; pytest needs DATABASE_URL set.",
            "Lỗi kết nối cơ sở dữ liệu khi triển khai: tăng pool lên 20.",
            "中文 记忆 测试: the deploy script lives in scripts/release.sh",
            "Login fails with 401 after deploy (OPS-1234): clock skew; allow 60 s leeway.",
        ]
    ):
        store.add(text, workspace="fuzz" if n % 2 else "global", keywords=["seed", f"k{n}"])
    return store


# ---- query building and search ----------------------------------------------------------


def check_search(store: Any, value: tuple[str, Any, Any, Any]) -> None:
    query, workspace, k, kind = value
    try:
        result = store.search(query, workspace=workspace, k=k, kind=kind, track=False)
    except InvalidInput:
        return
    assert len(result.hits) <= k
    if not result.hits:
        assert result.message


SEARCH = st.tuples(
    TEXT,
    st.one_of(st.sampled_from(["fuzz", "global", "all", "other"]), TEXT),
    st.one_of(st.integers(min_value=1, max_value=20), st.integers(), JSONISH),
    st.one_of(st.none(), st.sampled_from(["note", "lesson", "core"]), TEXT),
)


def check_add_then_find(store: Any, value: tuple[str, list[str]]) -> None:
    """Whatever is stored can be added and then found again by its own words."""
    from localmem.memory.search import ranking

    content, keywords = value
    # A workspace of its own: beside it only the few global seeds are in scope, so
    # "found" is a property of the index and the query builder, not of the ranking.
    workspace = f"fuzz-{next(_WORKSPACES)}"
    try:
        added = store.add(content, workspace=workspace, keywords=keywords)
    except InvalidInput:
        return
    stored = store.get(added.id)
    if not ranking.query_terms(stored.content):
        return
    found = store.search(stored.content, workspace=workspace, k=20, track=False)
    assert added.id in {hit.memory.id for hit in found.hits}, content


ADD = st.tuples(TEXT, st.lists(TEXT, max_size=4))
_WORKSPACES = itertools.count()


def check_add_fields(store: Any, value: tuple[Any, ...]) -> None:
    """Every field of an add, from a model or argv: stored, or refused with a sentence."""
    content, workspace, kind, keywords, source, session_id, supersedes = value
    try:
        added = store.add(
            content,
            workspace=workspace,
            kind=kind,
            keywords=keywords,
            source=source,
            session_id=session_id,
            supersedes=supersedes,
        )
    except LocalmemError as refused:
        assert str(refused) and "\n" not in str(refused)
        return
    assert store.get(added.id).workspace == added.workspace


ADD_FIELDS = st.tuples(
    TEXT,
    st.one_of(st.sampled_from(["fuzz", "global", "all"]), TEXT),
    st.one_of(st.sampled_from(["note", "lesson", "trace", "core", "imported"]), TEXT),
    st.one_of(st.lists(TEXT, max_size=4), TEXT),
    st.one_of(st.none(), TEXT),
    st.one_of(st.none(), TEXT),
    st.one_of(st.lists(st.integers(min_value=-3, max_value=50), max_size=3), st.integers(0, 9)),
)


# ---- restore input ----------------------------------------------------------------------


def check_restore(store: Any, document: Any) -> None:
    """Any file handed to `restore`: refused whole with a sentence, or merged."""
    from localmem.memory.transfer.export import parse_export
    from localmem.memory.transfer.restore import restore

    text = document if isinstance(document, str) else json.dumps(document, default=str)
    try:
        source = parse_export(text, "the file")
        restore(store, source)
    except LocalmemError as refused:
        assert str(refused) and "\n" not in str(refused)


def _mutated_exports() -> st.SearchStrategy[Any]:
    from localmem.memory.transfer.export import FORMAT, memory_key

    def record(content: str, workspace: str, extra: dict[str, Any]) -> dict[str, Any]:
        base: dict[str, Any] = {
            "key": memory_key(workspace, content) if workspace and content else "k",
            "content": content,
            "workspace": workspace,
            "kind": "note",
            "keywords": ["fuzz"],
            "source": None,
            "session_id": None,
            "seen_count": 1,
            "recalled_count": 0,
            "last_recalled_at": None,
            "superseded_by": None,
            "created_at": "2026-01-01T00:00:00.000000Z",
            "updated_at": "2026-01-01T00:00:00.000000Z",
        }
        base.update(extra)
        return base

    records = st.builds(
        record,
        st.one_of(st.sampled_from(["a lesson", "note two"]), TEXT),
        st.one_of(st.sampled_from(["fuzz", "global"]), TEXT),
        st.just({}) | st.dictionaries(
            st.sampled_from(["kind", "keywords", "seen_count", "created_at", "superseded_by",
                             "recalled_count", "last_recalled_at", "key", "content"]),
            JSONISH,
            max_size=2,
        ),
    )  # fmt: skip
    return st.builds(
        lambda memories, version, extra: {
            "format": FORMAT,
            "format_version": version,
            "count": len(memories),
            "memories": memories,
            **extra,
        },
        st.lists(records, max_size=4),
        st.just(1) | st.just(1) | JSONISH,  # mostly valid documents, so restore itself runs
        st.just({}) | st.dictionaries(st.sampled_from(["format", "count"]), JSONISH, max_size=1),
    )


RESTORE = st.one_of(TEXT, JSONISH, _mutated_exports())


# ---- text normalization and keywords ----------------------------------------------------


def check_normalization(_: Any, text: str) -> None:
    from localmem.memory.search import tokens

    key = tokens.duplicate_key(text)
    # Whitespace at the ends and inside runs never makes two texts differ.
    assert tokens.duplicate_key(f" \n{text}\t ") == key
    assert tokens.duplicate_key(text.replace(" ", "  ")) == key
    assert "  " not in key and key == key.strip()
    if text == text.encode("utf-8", "replace").decode("utf-8"):  # storable text only
        assert isinstance(tokens.duplicate_hash(text), int)
    for token in tokens.tokens(text):
        # Index terms are what the query builder quotes: never a quote, never empty.
        assert token and '"' not in token and not any(ch.isspace() for ch in token)
    assert tokens.collapse(text) == " ".join(text.split())
    assert 0.0 <= tokens.overlap(tokens.meaningful(text), tokens.meaningful(key)) <= 1.0


def check_keywords(_: Any, keywords: Any) -> None:
    from localmem.memory import write
    from localmem.memory.model import MAX_KEYWORD_CHARS, MAX_KEYWORDS

    try:
        out = write.normalize_keywords(keywords)
    except InvalidInput:
        return
    assert len(out) <= MAX_KEYWORDS and len(set(out)) == len(out)
    for word in out:
        assert word and len(word) <= MAX_KEYWORD_CHARS and word == word.lower().strip()
        assert "\x00" not in word


KEYWORDS = st.one_of(st.lists(st.one_of(TEXT, JSONISH), max_size=30), TEXT)


# ---- the credential detector --------------------------------------------------------------

# The pieces that made the old rules slow or that every rule starts from; a text is a
# few of them (and random text) repeated up to `MAX_REPEATS` times, so inputs grow.
CRAFTED = st.sampled_from(
    ["a_", "a.", "=", ":", "QUJD", "x", "token ", "token=", "password is ", "eyJhbGci.", "ghp_",
     "://a:", "@", "-----BEGIN RSA PRIVATE KEY-----", "-----END", "mysql -p", "\u200b", "%41",
     "\\u0067", "mật khẩu ", "Basic ", "Bearer ", '"', "'", "\n", " ", "AKIA", "sk-", "Q~",
     "<password>", "--password ", "-u a:", "[redacted: token]", "İ", "Cookie: sid=", "-b ",
     "Private-Lines: 3\n", "Public-Lines: 2\n", "~/.pgpass ", "a:1:b:c:", "ldapsearch -w ",
     "\\/", "backup codes: ", "1234-5678 ", "mnemonic: ", "abandon ", "/api/webhooks/",
     "-----BEGIN OpenVPN Static key V1-----"]
)  # fmt: skip
MAX_REPEATS = 300
GROWING = st.tuples(
    st.lists(st.one_of(CRAFTED, TEXT), min_size=1, max_size=6), st.integers(1, MAX_REPEATS)
)


def check_credentials(_: Any, value: tuple[list[str], int]) -> None:
    from localmem import credentials

    pieces, times = value
    text = "".join(pieces) * times
    found = credentials.find(text)
    at = 0
    for finding in found:  # in order, inside the text, never overlapping
        assert at <= finding.start < finding.end <= len(text)
        at = finding.end
    masked = credentials.mask(text)
    assert masked.count == len(found)
    again = credentials.mask(masked.text)
    assert again.text == masked.text and again.kinds == ()
    if not found:
        assert masked.text == text


# ---- the facts store --------------------------------------------------------------------


def check_slug(_: Any, topic: str) -> None:
    from localmem.facts import rules

    try:
        assert rules.check_topic(topic) == topic
        accepted = True
    except InvalidInput as refused:
        accepted = False
        assert "\n" not in str(refused)
    assert accepted == bool(SLUG.fullmatch(topic)), topic


TOPIC = st.one_of(TEXT, st.from_regex(SLUG, fullmatch=True), st.sampled_from(
    ["core", "core.md", "../x", "a/b", "Games", "", "a" * 32, "a" * 33, "games\n", "-"]
))  # fmt: skip


def check_fact_line(_: Any, value: tuple[str, str]) -> None:
    from localmem.facts import rules

    day, fact = value
    try:
        folded = rules.check_fact(fact)
    except InvalidInput:
        return
    line = rules.format_line(day, folded)
    assert rules.parse_line(line) == (day, folded)
    assert FACT_LINE.match(line), line


DAY = st.dates().map(lambda d: f"{d.year:04d}-{d.month:02d}-{d.day:02d}")


def _facts_folder(root: Path) -> Path:
    folder = root / "facts"
    folder.mkdir(exist_ok=True)
    return folder


def check_remember(folder: Path, value: tuple[str, str]) -> None:
    """Any fact a model sends is refused with a sentence or saved as one whole line."""
    from localmem.facts import store

    topic, fact = value
    try:
        outcome = store.remember(str(folder), topic, fact, "2026-11-30", sync=False)
    except InvalidInput as refused:
        assert "\n" not in str(refused)
        return
    assert outcome.text
    data = (folder / f"{topic}.md").read_text("utf-8")
    assert data.endswith("\n")
    for line in data.splitlines():
        assert FACT_LINE.match(line), line


REMEMBER = st.tuples(st.sampled_from(["games", "core", "food"]), TEXT)


# ---- MCP tool arguments -----------------------------------------------------------------


def environment(root: Path) -> dict[str, str]:
    """The variables a run sets before `setup`: the server and `chat.call` open the
    store and the facts folder they name."""
    return {"LOCALMEM_DB": str(root / "mcp.db"), "LOCAL_MEMORY_DIR": str(root / "facts")}


def _server(root: Path) -> Any:
    from localmem.mcp.memory_tools import MemoryTools
    from localmem.mcp.server import LocalmemServer

    _facts_folder(root)
    server = LocalmemServer(facts=True)
    server.memory = MemoryTools(cwd=root)
    return server


def check_tool_call(server: Any, value: tuple[str, Any]) -> None:
    from localmem.mcp.server import FAILED

    name, arguments = value
    result = server.call(name, arguments)
    text = result.content[0].text
    # The catch-all answer means an exception escaped the tool: a bug to fix.
    assert text not in {FAILED.format(name=n) for n in server.tools}, (name, arguments)
    if result.is_error:
        assert "\n" not in text and "Traceback" not in text, text
    elif name in ("memory_recall", "memory_add"):
        json.loads(text)


def _tool_arguments() -> st.SearchStrategy[Any]:
    params = ["query", "workspace", "k", "content", "kind", "source", "keywords", "supersedes",
              "topic", "fact", "text"]  # fmt: skip
    values = st.one_of(
        JSONISH,
        st.sampled_from(["note", "lesson", "core", "imported", "trace", "all", "global"]),
        st.lists(st.integers(), max_size=3),
    )
    return st.one_of(st.none(), st.dictionaries(st.one_of(st.sampled_from(params), st.text()),
                                                values, max_size=6))  # fmt: skip


TOOL_CALL = st.tuples(
    st.sampled_from(["memory_recall", "memory_add", "recall", "remember", "forget", "nope"]),
    _tool_arguments(),
)


def check_chat_call(_: Any, value: tuple[str, str]) -> None:
    from localmem import chat

    name, arguments = value
    text = chat.call(name, arguments, today="2026-11-30")
    assert isinstance(text, str)
    assert "failed unexpectedly" not in text, (name, arguments, text)


CHAT_CALL = st.tuples(
    st.sampled_from(["recall", "remember", "forget", "memory_add", ""]),
    st.one_of(TEXT, _tool_arguments().map(lambda a: json.dumps(a, default=str))),
)


TARGETS: list[Target] = [
    Target("search", SEARCH, _store, check_search),
    Target("add_then_find", ADD, _store, check_add_then_find),
    Target("add_fields", ADD_FIELDS, _store, check_add_fields),
    Target("restore_input", RESTORE, _store, check_restore),
    Target("normalization", TEXT, lambda root: None, check_normalization),
    Target("credentials", GROWING, lambda root: None, check_credentials),
    Target("keywords", KEYWORDS, lambda root: None, check_keywords),
    Target("slug", TOPIC, lambda root: None, check_slug),
    Target("fact_line", st.tuples(DAY, TEXT), lambda root: None, check_fact_line),
    Target("remember", REMEMBER, _facts_folder, check_remember),
    Target("mcp_tool_arguments", TOOL_CALL, _server, check_tool_call),
    Target("chat_call", CHAT_CALL, _facts_folder, check_chat_call),
]


def new_root() -> Path:
    return Path(tempfile.mkdtemp(prefix="localmem-fuzz-"))


__all__ = ["TARGETS", "Target", "LocalmemError", "environment", "new_root"]
