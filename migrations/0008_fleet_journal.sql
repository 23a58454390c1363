-- The fleet's journal: every batch the writer commits while a fleet is
-- configured, as the set of entry ids it touched, numbered (epoch, seq).
-- The fleet link ships each batch into PostgreSQL in order (one
-- transaction there per batch, which also advances the host's seq) and
-- prunes what PostgreSQL has acknowledged. A batch records ids, not rows:
-- it is shipped as the ids' rows as they are when it is shipped, so
-- shipping a batch twice, or late, changes nothing.
CREATE TABLE fleet_journal (
    seq     INTEGER PRIMARY KEY,   -- increasing within an epoch
    ids     BLOB NOT NULL,         -- entry ids, little-endian i64s, sorted
    at_ns   INTEGER NOT NULL       -- when the batch was committed (unix ns)
);
-- 'epoch': the index's generation. A new one (the index rebuilt, the
-- journal cleared while the fleet was off or over its bound) tells the
-- link that the journal cannot be replayed: it reconciles instead.
-- 'journaling': 1 while the writer keeps the journal.
CREATE TABLE fleet_meta (
    key     TEXT PRIMARY KEY,
    value   INTEGER NOT NULL
) WITHOUT ROWID;
INSERT INTO fleet_meta VALUES ('epoch', abs(random())), ('journaling', 0);
