-- Content search keeps the text it extracted, so that a file's text can be
-- read back (the ReadText RPC, `fsctl cat`, MCP `read_text_file`) and a
-- result's snippet cut from it, without opening or parsing the file again.
--
-- One row per file whose extraction succeeded: rowid = entries.id. The text
-- is deflate-compressed UTF-8 (what the FTS5 table indexed, exactly);
-- `encoding` says how the file's bytes were decoded (`UTF-8`,
-- `windows-1252`, or what a document format fixes, e.g. `PDF text`).
CREATE TABLE content_text (
    entry_id INTEGER PRIMARY KEY,      -- entries.id
    encoding TEXT NOT NULL,
    text     BLOB NOT NULL             -- deflate (RFC 1951) of the UTF-8 text
);

-- The rows stored before this version have no text: mark them stale (an
-- extractor version no extractor has), so the content worker reads every
-- file of the content folders once more after the upgrade and fills this
-- table. Until it has, ReadText extracts such a file on demand.
UPDATE content_state SET version = 0;

-- An entry that leaves the index takes its text with it, in the same
-- transaction (as 0004's trigger does for the other content tables).
DROP TRIGGER content_gone;
CREATE TRIGGER content_gone AFTER DELETE ON entries
WHEN old.kind = 0
BEGIN
    DELETE FROM content_fts WHERE rowid = old.id;
    DELETE FROM content_state WHERE entry_id = old.id;
    DELETE FROM content_queue WHERE entry_id = old.id;
    DELETE FROM content_text WHERE entry_id = old.id;
END;
