-- Files whose media metadata could not be read (issue 36: the index under
-- 120 bytes an entry). A failure took a whole `media` row: its file state
-- in five integers and its reason spelled out, about 85 bytes of payload.
-- On a home-like tree of a million entries 347,201 photo-named files were
-- such rows, 32 bytes an entry of the index. Now a failure is a print of
-- what it was tried for and the number of its reason, about 14 bytes.
--
-- The failures already recorded are dropped, not converted (their print is
-- computed by the daemon): each such file is tried once more.
CREATE TABLE media_reasons (
    id     INTEGER PRIMARY KEY,
    status TEXT NOT NULL,            -- 'parse', 'timeout', ...
    detail TEXT NOT NULL,
    UNIQUE (status, detail)
);

CREATE TABLE media_unread (
    entry_id INTEGER PRIMARY KEY,    -- entries.id
    read_for INTEGER NOT NULL,       -- 32-bit print of (size, mtime_ns, reader version)
    reason   INTEGER NOT NULL        -- media_reasons.id
);

DELETE FROM media WHERE status <> 'ok';

DROP TRIGGER media_gone;
CREATE TRIGGER media_gone AFTER DELETE ON entries
WHEN old.kind = 0
BEGIN
    DELETE FROM media WHERE entry_id = old.id;
    DELETE FROM media_unread WHERE entry_id = old.id;
END;
