-- Media metadata (issue 32): what photos, songs and videos say about
-- themselves, read from their headers for files of known media types under
-- every root.
--
-- One row per file read, valid only for the (dev, ino, size, mtime_ns,
-- ctime_ns) it was read for, like the hash cache: any change and the file
-- is read again. A file that could not be read keeps a row too (status
-- says why), so it is not read again until it changes.
CREATE TABLE media (
    entry_id     INTEGER PRIMARY KEY,  -- entries.id
    dev          INTEGER NOT NULL,
    ino          INTEGER NOT NULL,
    size         INTEGER NOT NULL,
    mtime_ns     INTEGER NOT NULL,
    ctime_ns     INTEGER NOT NULL,
    version      INTEGER NOT NULL,     -- the media reader's version
    status       TEXT NOT NULL,        -- 'ok', or why not: 'parse', 'timeout', ...
    detail       TEXT NOT NULL DEFAULT '',
    taken        TEXT,                 -- YYYY-MM-DDTHH:MM:SS as the camera wrote it
    taken_s      INTEGER,              -- the same, read as UTC, in unix seconds
    camera_make  TEXT,
    camera_model TEXT,
    width        INTEGER,
    height       INTEGER,
    duration_ms  INTEGER,
    artist       TEXT,
    album        TEXT,
    title        TEXT,
    track        INTEGER,
    year         INTEGER,
    genre        TEXT,
    gps_lat      REAL,
    gps_lon      REAL
);

-- An entry that leaves the index takes its metadata with it.
CREATE TRIGGER media_gone AFTER DELETE ON entries
WHEN old.kind = 0
BEGIN
    DELETE FROM media WHERE entry_id = old.id;
END;
