-- The index: roots, the entry tree, and per-directory disk-usage aggregates.

-- A configured root: a folder whose whole tree is indexed.
CREATE TABLE roots (
    id          INTEGER PRIMARY KEY,
    path        BLOB NOT NULL UNIQUE,   -- absolute, canonical, byte-exact
    entry_id    INTEGER,                -- the root folder's own entry, once scanned
    scanned_at  INTEGER NOT NULL DEFAULT 0, -- end of the last complete scan (unix seconds)
    added_at    INTEGER NOT NULL
);

-- One row per file, folder, symlink or special file. Full paths are derived
-- from the tree, so renaming a folder is one row.
CREATE TABLE entries (
    id          INTEGER PRIMARY KEY,
    parent_id   INTEGER,                -- NULL for a root's own folder
    name        BLOB NOT NULL,          -- byte-exact; a root's own folder holds its absolute path
    kind        INTEGER NOT NULL,       -- 0 file, 1 dir, 2 symlink, 3 other
    size        INTEGER NOT NULL,       -- st_size
    blocks      INTEGER NOT NULL,       -- st_blocks (512-byte units)
    mtime_ns    INTEGER NOT NULL,
    dev         INTEGER NOT NULL,
    ino         INTEGER NOT NULL,
    nlink       INTEGER NOT NULL,
    mode        INTEGER NOT NULL,
    flags       INTEGER NOT NULL DEFAULT 0  -- bit 0: a folder that could not be read
);
CREATE UNIQUE INDEX entries_by_parent ON entries(parent_id, name);
-- Files with several hard links are counted once per disk-usage query, so they
-- are kept out of the aggregates and found through this small index instead.
CREATE INDEX entries_multilink ON entries(nlink) WHERE nlink > 1 AND kind <> 1;

-- Aggregates of every folder's whole subtree (the folder itself included),
-- maintained incrementally by the writer. Multi-link files are left out here.
CREATE TABLE dir_totals (
    id          INTEGER PRIMARY KEY,    -- entries.id of a folder
    bytes       INTEGER NOT NULL,       -- sum of st_blocks * 512
    apparent    INTEGER NOT NULL,       -- sum of st_size
    files       INTEGER NOT NULL,       -- non-folder entries
    dirs        INTEGER NOT NULL,       -- folders, this one included
    incomplete  INTEGER NOT NULL        -- unreadable folders in the subtree
);
