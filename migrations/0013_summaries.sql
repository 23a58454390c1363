-- One-line summaries of files for folder manifests (`fsctl manifest`, MCP
-- `folder_manifest`): a document's title, first heading, first sentence or
-- module doc comment, worked out once per state of the file.
--
-- A row serves while the file's size and mtime, and the summariser's
-- version, are what they were when it was made (as content_state's rows
-- do); `source` is `title`, `heading`, `sentence`, `doc-comment`, or empty
-- when the file gave none (so it is not read again until it changes).
-- Sensitive (WARN-tier) files are never cached.
CREATE TABLE summaries (
    entry_id INTEGER PRIMARY KEY,      -- entries.id
    size     INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    version  INTEGER NOT NULL,
    source   TEXT NOT NULL,
    summary  TEXT NOT NULL
);

-- An entry that leaves the index takes its summary with it, in the same
-- transaction.
CREATE TRIGGER summaries_gone AFTER DELETE ON entries
WHEN old.kind = 0
BEGIN
    DELETE FROM summaries WHERE entry_id = old.id;
END;
