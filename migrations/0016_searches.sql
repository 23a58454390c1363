-- Saved searches and search history (issue 34), kept by the daemon so that
-- every client shares them: `fsctl search @NAME` and `@NAME` in any query
-- (fsgui, MCP's find_files and search_files) run a saved search, and
-- `fsctl history`, fsgui's history menu and a client's own history read
-- the same list.
--
-- `uid` is whose they are, as for tags and bookmarks (0007): the daemon's
-- own user on a per-user index; on a machine-wide one the calling user's,
-- so no user reads, runs or lists another's.
CREATE TABLE saved_searches (
    uid       INTEGER NOT NULL,
    name      TEXT NOT NULL COLLATE NOCASE,  -- what `@name` calls (letters, digits, - _ .)
    query     TEXT NOT NULL,                 -- as given (fsctl made `in:` paths absolute)
    added_at  INTEGER NOT NULL,              -- unix seconds
    PRIMARY KEY (uid, name)
) WITHOUT ROWID;

-- The searches a client recorded (fsctl: searches typed at a terminal;
-- fsgui: a query acted on; MCP: an agent's find_files / search_files),
-- newest last. The same query again from the same client updates the
-- newest row instead of adding one; each user keeps at most 1,000 rows
-- (the writer drops the oldest: store/searches.rs).
CREATE TABLE search_history (
    id        INTEGER PRIMARY KEY,
    uid       INTEGER NOT NULL,
    query     TEXT NOT NULL,
    results   INTEGER NOT NULL,              -- how many matched
    client    TEXT NOT NULL,                 -- fsctl, fsgui, mcp
    at_ms     INTEGER NOT NULL               -- unix milliseconds
);
CREATE INDEX search_history_by_uid ON search_history(uid, id);
