"""The numbered schema steps of the memory database, applied by `schema.migrate`.

Each step is a function of one connection, run inside the migration's immediate
transaction; `MIGRATIONS` lists them in order and `LATEST` is the highest.
Never edit a released step: append a new one (and test it from the previous
version's file, as tests/memory/test_schema.py does for each).
"""

from __future__ import annotations

import sqlite3

TYPE_CHECKING = False  # the prompt-hook path opens the database through here: no typing
if TYPE_CHECKING:
    from collections.abc import Callable


def _run_script(conn: sqlite3.Connection, script: str) -> None:
    # Not `executescript`: it would COMMIT the migration's transaction half-way.
    statement = ""
    for line in script.splitlines(keepends=True):
        if line.strip().startswith("--"):
            continue
        statement += line
        if sqlite3.complete_statement(statement):
            conn.execute(statement)
            statement = ""


def _m1_initial(conn: sqlite3.Connection) -> None:
    # As released (commit ae64a96): the derived-data columns and tables that came
    # later are added by step 3, never here, so a released file and a new one
    # take the same road (tests/memory/fixtures/ holds files that release wrote).
    _run_script(
        conn,
        """
        CREATE TABLE memories (
            id INTEGER PRIMARY KEY,
            content TEXT NOT NULL,
            dup_hash INTEGER NOT NULL,
            workspace TEXT NOT NULL,
            kind TEXT NOT NULL,
            keywords TEXT NOT NULL DEFAULT '',
            source TEXT,
            session_id TEXT,
            seen_count INTEGER NOT NULL DEFAULT 1,
            superseded_by INTEGER REFERENCES memories(id),
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL
        );
        CREATE INDEX memories_dup ON memories(workspace, dup_hash);
        CREATE INDEX memories_kind ON memories(kind, workspace);
        CREATE INDEX memories_superseded_by ON memories(superseded_by)
            WHERE superseded_by IS NOT NULL;

        -- Contentless: the text lives once, in `memories`; the index holds terms only.
        -- Columns: body (content terms), kw (keyword terms, lower weight),
        -- ws (one term naming the workspace, so the workspace filter runs inside the index).
        CREATE VIRTUAL TABLE memories_fts USING fts5(
            body, kw, ws, content='', tokenize='unicode61 remove_diacritics 0'
        );

        CREATE TABLE workspaces (
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL UNIQUE,
            root TEXT UNIQUE,
            created_at TEXT NOT NULL
        );

        CREATE TABLE near_duplicates (
            memory_id INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
            other_id INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
            overlap REAL NOT NULL,
            created_at TEXT NOT NULL,
            PRIMARY KEY (memory_id, other_id)
        );
        CREATE INDEX near_duplicates_other ON near_duplicates(other_id);

        CREATE TABLE entities (
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL UNIQUE
        );
        CREATE TABLE memory_entities (
            memory_id INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
            entity_id INTEGER NOT NULL REFERENCES entities(id),
            PRIMARY KEY (memory_id, entity_id)
        ) WITHOUT ROWID;
        CREATE INDEX memory_entities_entity ON memory_entities(entity_id, memory_id);

        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        """,
    )
    # The tokenizer of that release; `_reindex_if_tokenizer_changed` brings the index
    # (and step 3's columns) forward to today's tokenizer on the same open.
    conn.execute("INSERT INTO meta(key, value) VALUES ('tokenizer_version', '1')")


def _m2_tracking(conn: sqlite3.Connection) -> None:
    # Recall tracking came after the first release: counts for audit's
    # "never recalled" and promotion candidates.
    conn.execute("ALTER TABLE memories ADD COLUMN recalled_count INTEGER NOT NULL DEFAULT 0")
    conn.execute("ALTER TABLE memories ADD COLUMN last_recalled_at TEXT")


def _m3_derived_data(conn: sqlite3.Connection) -> None:
    # The stored terms of each memory (near-duplicate overlap), the document frequency
    # of each index term (the ranking reads only the rarer ones, so a search costs the
    # same at 1k and 100k memories) and the live-core index. Builds made between the
    # first release and this step put them in step 1, so each is added only if missing.
    columns = {row[1] for row in conn.execute("PRAGMA table_info(memories)")}
    if "terms" not in columns:
        conn.execute("ALTER TABLE memories ADD COLUMN terms TEXT NOT NULL DEFAULT ''")
        # Rows written before have no terms yet: mark the index stale so the
        # tokenizer check rebuilds it, terms and frequencies included, on this open.
        conn.execute("UPDATE meta SET value = '0' WHERE key = 'tokenizer_version'")
    conn.execute(
        "CREATE TABLE IF NOT EXISTS term_df (term TEXT PRIMARY KEY, df INTEGER NOT NULL) "
        "WITHOUT ROWID"
    )
    conn.execute(
        "CREATE INDEX IF NOT EXISTS memories_live_core ON memories(workspace, created_at) "
        "WHERE kind = 'core' AND superseded_by IS NULL"
    )


def _m4_browse_indexes(conn: sqlite3.Connection) -> None:
    # The web view lists memories newest first by created time, last recall or times
    # recalled (`memory.browse`); an index per order keeps page 1 instant at 100k rows
    # and lets a deep page walk the index instead of sorting the table.
    conn.execute("CREATE INDEX memories_created ON memories(created_at)")
    conn.execute("CREATE INDEX memories_last_recalled ON memories(last_recalled_at)")
    conn.execute("CREATE INDEX memories_recalled_count ON memories(recalled_count)")


def _m5_vectors(conn: sqlite3.Connection) -> None:
    # The semantic view (decision 94): one vector per memory, float16 bytes, tagged with
    # the model that made it and a hash of the text it embeds. `seq` rises with every
    # change a reader must see (a new vector, a stale mark, a new kind or workspace),
    # so a long-lived reader loads only the rows past the last `seq` it saw.
    _run_script(
        conn,
        """
        CREATE TABLE vectors (
            memory_id INTEGER PRIMARY KEY REFERENCES memories(id) ON DELETE CASCADE,
            model TEXT NOT NULL,
            content_hash TEXT NOT NULL,
            seq INTEGER NOT NULL,
            vector BLOB NOT NULL
        );
        CREATE INDEX vectors_seq ON vectors(seq);
        -- Deletions a reader cannot see through `seq`: a counter it compares.
        CREATE TABLE vector_state (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            deletions INTEGER NOT NULL
        );
        INSERT INTO vector_state(id, deletions) VALUES (1, 0);

        -- Triggers, not the foreign key alone: a connection may run with foreign keys off.
        CREATE TRIGGER vectors_forget AFTER DELETE ON memories BEGIN
            DELETE FROM vectors WHERE memory_id = old.id;
        END;
        CREATE TRIGGER vectors_deleted AFTER DELETE ON vectors BEGIN
            UPDATE vector_state SET deletions = deletions + 1 WHERE id = 1;
        END;
        -- New text: the vector is stale (an empty hash matches no text) until re-embedded.
        CREATE TRIGGER vectors_stale AFTER UPDATE OF content, keywords ON memories
        WHEN old.content IS NOT new.content OR old.keywords IS NOT new.keywords BEGIN
            UPDATE vectors SET content_hash = '',
                seq = (SELECT COALESCE(MAX(seq), 0) + 1 FROM vectors)
            WHERE memory_id = new.id;
        END;
        CREATE TRIGGER vectors_rescope AFTER UPDATE OF kind, workspace ON memories
        WHEN old.kind IS NOT new.kind OR old.workspace IS NOT new.workspace BEGIN
            UPDATE vectors SET seq = (SELECT COALESCE(MAX(seq), 0) + 1 FROM vectors)
            WHERE memory_id = new.id;
        END;
        """,
    )


def _m6_view_indexes(conn: sqlite3.Connection) -> None:
    # The web view at 100k memories (issue 24): its largest memories without reading
    # every text, and one workspace's listing in each order without sorting it.
    conn.execute("CREATE INDEX memories_length ON memories(length(content))")
    for column in ("created_at", "last_recalled_at", "recalled_count"):
        conn.execute(f"CREATE INDEX memories_ws_{column} ON memories(workspace, {column})")


def _m7_checked_with(conn: sqlite3.Connection) -> None:
    # Which version of the credential rules last read each row (decision 149): `audit`
    # and `redact` read again only the others, so a report at 100k memories does not
    # run the detector over every text. A change to the text forgets it, unless the
    # change itself records the version (a writer that masked what it wrote).
    _run_script(
        conn,
        """
        ALTER TABLE memories ADD COLUMN checked_with TEXT;
        CREATE TRIGGER memories_unchecked
        AFTER UPDATE OF content, keywords, source, session_id ON memories
        WHEN new.checked_with IS old.checked_with AND new.checked_with IS NOT NULL BEGIN
            UPDATE memories SET checked_with = NULL WHERE id = new.id;
        END;
        """,
    )


def _m8_merge_undo(conn: sqlite3.Connection) -> None:
    # What each merge of near duplicates changed, so the merge can be undone
    # (`maintenance.merge_undo`, decision 180): both rows as they were, the links and
    # queue pairs it moved, as one JSON document. No foreign keys: the merged row is
    # gone by design. `snapshot` is emptied once the merge is undone.
    _run_script(
        conn,
        """
        -- AUTOINCREMENT: an id is never given twice, so an old page's Undo cannot name
        -- another merge.
        CREATE TABLE merge_undo (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            keep_id INTEGER NOT NULL,
            drop_id INTEGER NOT NULL,
            merged_at TEXT NOT NULL,
            undone_at TEXT,
            snapshot TEXT
        );
        CREATE INDEX merge_undo_keep ON merge_undo(keep_id);
        """,
    )


def _m9_audit(conn: sqlite3.Connection) -> None:
    # `audit` at 100k memories (issue 24, decisions 183-184). Each memory's best token
    # overlap with its workspace when it was stored (`write.add`), so the trace
    # histogram reads a column instead of searching once per trace; and an index for
    # each section that scanned the table. The partial ones are named with INDEXED BY
    # where they are read: without ANALYZE the planner never picks them. The lesson
    # index holds `audit.LESSON_MAX_CHARS` (300): changing it takes a new step.
    _run_script(
        conn,
        """
        ALTER TABLE memories ADD COLUMN best_overlap REAL;
        CREATE INDEX memories_traces ON memories(created_at, workspace, best_overlap)
            WHERE kind = 'trace';
        -- Kind first: counting by kind walks it in order; the oldest are read per kind.
        CREATE INDEX memories_never_recalled ON memories(kind, created_at, workspace)
            WHERE recalled_count = 0;
        CREATE INDEX memories_lesson_problems ON memories(workspace)
            WHERE kind = 'lesson' AND (length(content) > 300 OR instr(content, char(10)) > 0
            OR instr(content, char(13)) > 0);
        CREATE INDEX memories_seen ON memories(seen_count);
        CREATE INDEX memories_checked_with ON memories(checked_with);
        """,
    )
    from localmem.memory import write

    write.backfill_overlaps(conn)  # the traces the histogram reads, measured once now


def _m10_identity(conn: sqlite3.Connection) -> None:
    # The team store (issue 22, decision 206): a repository with a
    # remote is known by its normalized remote URL, so teammates' clones in different
    # folders meet in one workspace; each memory records who wrote it. Rows written
    # before this step have no author (NULL: not known, never guessed).
    _run_script(
        conn,
        """
        ALTER TABLE workspaces ADD COLUMN remote TEXT;
        CREATE UNIQUE INDEX workspaces_remote ON workspaces(remote) WHERE remote IS NOT NULL;
        ALTER TABLE memories ADD COLUMN author TEXT;
        """,
    )
    from localmem.memory import workspaces

    workspaces.backfill_remotes(conn)


MIGRATIONS: tuple[tuple[int, str, Callable[[sqlite3.Connection], None]], ...] = (
    (1, "initial schema", _m1_initial),
    (2, "recall tracking columns", _m2_tracking),
    (3, "stored terms, term frequencies, live-core index", _m3_derived_data),
    (4, "indexes for browsing", _m4_browse_indexes),
    (5, "semantic view vectors", _m5_vectors),
    (6, "indexes for the web view", _m6_view_indexes),
    (7, "credential rules version per row", _m7_checked_with),
    (8, "merge undo records", _m8_merge_undo),
    (9, "best overlap per memory, indexes for the audit", _m9_audit),
    (10, "workspaces by remote, the author of each memory", _m10_identity),
)
LATEST = MIGRATIONS[-1][0]
