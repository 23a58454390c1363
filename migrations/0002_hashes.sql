-- Content hashes for duplicate finding, cached per inode.
--
-- A row is valid only while the file still has the (dev, ino, size,
-- mtime_ns, ctime_ns) it was hashed with; any change and it is recomputed.
-- A hash taken less than the racy window after the file's last change is
-- kept but not trusted by the next run (see daemon/src/dupes.rs).
CREATE TABLE hashes (
    dev         INTEGER NOT NULL,
    ino         INTEGER NOT NULL,
    size        INTEGER NOT NULL,
    mtime_ns    INTEGER NOT NULL,
    ctime_ns    INTEGER NOT NULL,
    partial     BLOB,                   -- BLAKE3 of the head and tail blocks
    full        BLOB,                   -- BLAKE3 of the whole content, 32 bytes
    hashed_ns   INTEGER NOT NULL,       -- when it was read (unix ns)
    PRIMARY KEY (dev, ino)
) WITHOUT ROWID;
