-- Content search: what files say, for the folders that turn it on.
--
-- A contentless FTS5 table (the text is not stored, only the index):
-- rowid = entries.id, so a renamed file keeps its row. Words are folded
-- case-insensitively and without accents (unicode61, remove_diacritics 2).
CREATE VIRTUAL TABLE content_fts USING fts5(
    body,
    content = '',
    contentless_delete = 1,
    tokenize = 'unicode61 remove_diacritics 2'
);

-- What was extracted from each file, and from which state of it, so that
-- nothing is extracted twice: a file is read again only when its size or
-- mtime, or the extractor's version, differ from this row.
CREATE TABLE content_state (
    entry_id     INTEGER PRIMARY KEY,  -- entries.id
    size         INTEGER NOT NULL,
    mtime_ns     INTEGER NOT NULL,
    extractor    TEXT NOT NULL,        -- e.g. "text", "pdf"; '' when never opened
    version      INTEGER NOT NULL,
    status       TEXT NOT NULL,        -- 'ok', or why not: 'too_big', 'timeout', 'parse', ...
    detail       TEXT NOT NULL DEFAULT '',
    text_bytes   INTEGER NOT NULL,     -- bytes of text indexed
    truncated    INTEGER NOT NULL DEFAULT 0,
    extracted_at INTEGER NOT NULL      -- unix seconds
);

-- Files waiting to be read: persistent, so a restart resumes where it was.
CREATE TABLE content_queue (
    entry_id INTEGER PRIMARY KEY       -- entries.id
);

-- A root added with `fsctl roots add PATH --content` has content on.
ALTER TABLE roots ADD COLUMN content INTEGER NOT NULL DEFAULT 0;

-- An entry that leaves the index takes its text with it, in the same
-- transaction.
CREATE TRIGGER content_gone AFTER DELETE ON entries
WHEN old.kind = 0
BEGIN
    DELETE FROM content_fts WHERE rowid = old.id;
    DELETE FROM content_state WHERE entry_id = old.id;
    DELETE FROM content_queue WHERE entry_id = old.id;
END;
