-- What the rules keep out of the index still takes disk space, and du must
-- never drop it silently: its sizes (never its contents, and for the
-- sensitive tiers never its names) are kept per folder and counted in that
-- folder's aggregates.
CREATE TABLE unlisted (
    parent_id   INTEGER NOT NULL,   -- entries.id of the folder holding it
    -- An excluded folder's name (a row of its own in du, tree and map), or
    -- x'' for the nameless sum of the folder's BLOCK and SKIP entries and
    -- excluded files.
    name        BLOB NOT NULL,
    bytes       INTEGER NOT NULL,   -- sum of st_blocks * 512, each inode once
    apparent    INTEGER NOT NULL,   -- sum of st_size
    files       INTEGER NOT NULL,
    dirs        INTEGER NOT NULL,
    incomplete  INTEGER NOT NULL,   -- folders that could not be read
    measured_at INTEGER NOT NULL,   -- unix seconds of the sizes-only walk
    -- The files with several links counted here, as (dev, ino) pairs of
    -- two little-endian u64 each: du counts an inode once even when it is
    -- also linked from indexed folders (uv's cache hard-linked into a
    -- project's .venv).
    links       BLOB NOT NULL DEFAULT x'',
    PRIMARY KEY (parent_id, name)
) WITHOUT ROWID;

-- Multi-link files are found by inode too: a link made or removed anywhere
-- refreshes every indexed path of that inode.
DROP INDEX entries_multilink;
CREATE INDEX entries_multilink ON entries(ino) WHERE nlink > 1 AND kind <> 1;
