-- The fleet's schema in PostgreSQL (15 or later), created and migrated by
-- `fsctl fleet init`; versions recorded in fsindex.schema_version, like the
-- local index's migrations. Every daemon ships its own host's rows.
CREATE EXTENSION IF NOT EXISTS pg_trgm;

-- One row per host: where its shipping stands. `epoch` is the generation
-- of the host's index (a new one means its journal cannot be replayed:
-- the host reconciles), `seq` the last journal batch applied.
CREATE TABLE fsindex.hosts (
    host        text PRIMARY KEY,
    epoch       bigint NOT NULL,
    seq         bigint NOT NULL,
    shipped_at  timestamptz NOT NULL DEFAULT now(),
    -- The oldest commit applied by the last transaction, as the host's
    -- clock saw it (unix ns): how far behind the fleet was then.
    batch_ns    bigint NOT NULL DEFAULT 0
);

-- Every entry of every host, keyed by the host's own entry id. Paths are
-- kept whole (`rel` byte-exact, `path` for display, `folded` as the daemon
-- folds names for search), so a search is one trigram-indexed scan and a
-- folder renamed rewrites the rows beneath it.
CREATE TABLE fsindex.entries (
    host         text NOT NULL,
    id           bigint NOT NULL,
    parent_id    bigint,              -- NULL for a root's own folder
    root         text NOT NULL,       -- the root's absolute path (display form)
    rel          bytea NOT NULL,      -- path relative to the root, byte-exact ('' for the root)
    path         text NOT NULL,       -- absolute path, display form (not UTF-8: U+FFFD)
    folded       text NOT NULL,       -- rel in NFC with full case folding
    name         bytea NOT NULL,
    kind         smallint NOT NULL,   -- 0 file, 1 dir, 2 symlink, 3 other
    size         bigint NOT NULL,     -- st_size
    blocks       bigint NOT NULL,     -- st_blocks (512-byte units)
    mtime_ns     bigint NOT NULL,
    dev          bigint NOT NULL,
    ino          bigint NOT NULL,
    nlink        bigint NOT NULL,
    mode         integer NOT NULL,
    flags        integer NOT NULL,    -- bit 0: a folder that could not be read
    -- A folder's whole subtree, as the host's du counts it (files with
    -- several links left out: fleet du counts them once per inode).
    t_bytes      bigint,
    t_apparent   bigint,
    t_files      bigint,
    t_dirs       bigint,
    t_incomplete bigint,
    hash         bytea,               -- BLAKE3 of the content, where the host has it
    PRIMARY KEY (host, id)
);
CREATE INDEX entries_folded ON fsindex.entries USING gin (folded gin_trgm_ops);
CREATE INDEX entries_children ON fsindex.entries (host, parent_id);
CREATE INDEX entries_path ON fsindex.entries (host, path text_pattern_ops);
CREATE INDEX entries_sizes ON fsindex.entries (size) WHERE kind = 0 AND size > 0;
CREATE INDEX entries_multilink ON fsindex.entries (host, dev, ino) WHERE nlink > 1 AND kind <> 1;
