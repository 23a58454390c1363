-- Bookmarks and tags (issue 34): the user's own labels on entries.
--
-- Both name an entry by its id, not its path, so they follow it through
-- every rename and move the index records as one (a `mv` of the file or of
-- a folder above it), survive restarts (a restart's reconcile keeps ids),
-- and leave with the entry (a delete: the triggers below, which also bring
-- them back when the same file returns as a new entry).
--
-- `uid` is whose label it is: the daemon's own user on a per-user index;
-- on a machine-wide index (`fsindexd --system`) the calling user's, so each
-- user sees and searches their own. Tags read from the file system (the
-- `user.xdg.tags` extended attribute) have uid -1 and source 1: they belong
-- to the file, for everyone who may see it.
CREATE TABLE tags (
    entry_id  INTEGER NOT NULL,        -- entries.id
    uid       INTEGER NOT NULL,        -- whose; -1 for the file's own (xattr)
    key       TEXT NOT NULL,           -- the tag folded (NFC, case folding): what matches
    name      TEXT NOT NULL,           -- the tag as first written
    source    INTEGER NOT NULL,        -- 0 set with fsctl/gRPC/MCP, 1 read from user.xdg.tags
    added_at  INTEGER NOT NULL,        -- unix seconds
    PRIMARY KEY (entry_id, uid, key)
) WITHOUT ROWID;
CREATE INDEX tags_by_key ON tags(key, uid);

CREATE TABLE bookmarks (
    uid       INTEGER NOT NULL,
    name      TEXT NOT NULL,           -- unique per user
    entry_id  INTEGER NOT NULL,        -- entries.id
    added_at  INTEGER NOT NULL,        -- unix seconds
    PRIMARY KEY (uid, name)
) WITHOUT ROWID;
CREATE UNIQUE INDEX bookmarks_by_entry ON bookmarks(entry_id, uid);

-- An entry that leaves the index takes its labels with it, in the same
-- transaction; they wait ten minutes in `labels_limbo` under the entry's
-- inode, in case the same file comes back as a new entry. That is how a move
-- the watcher could not pair keeps its labels: a folder or file moved into a
-- folder made a moment before (not watched yet, so the kernel reports only
-- the move away), or renamed while the daemon was stopped (the restart's
-- reconcile sees a delete and a create). The file that comes back must be the
-- same one: same device, inode, type and modification time to the
-- nanosecond (a move keeps them all; a new file that reuses the inode has
-- a new mtime).
CREATE TABLE labels_limbo (
    dev       INTEGER NOT NULL,
    ino       INTEGER NOT NULL,
    kind      INTEGER NOT NULL,
    mtime_ns  INTEGER NOT NULL,
    gone_at   INTEGER NOT NULL,        -- unix seconds
    what      INTEGER NOT NULL,        -- 0 a tag, 1 a bookmark
    uid       INTEGER NOT NULL,
    key       TEXT NOT NULL,           -- a tag's key; '' for a bookmark
    name      TEXT NOT NULL,
    source    INTEGER NOT NULL,
    added_at  INTEGER NOT NULL
);
CREATE INDEX labels_limbo_by_inode ON labels_limbo(dev, ino);

CREATE TRIGGER labels_gone AFTER DELETE ON entries
WHEN EXISTS (SELECT 1 FROM tags WHERE entry_id = old.id)
  OR EXISTS (SELECT 1 FROM bookmarks WHERE entry_id = old.id)
BEGIN
    DELETE FROM labels_limbo WHERE gone_at < unixepoch() - 600;
    INSERT INTO labels_limbo
        SELECT old.dev, old.ino, old.kind, old.mtime_ns, unixepoch(), 0, uid, key, name, source, added_at
        FROM tags WHERE entry_id = old.id;
    INSERT INTO labels_limbo
        SELECT old.dev, old.ino, old.kind, old.mtime_ns, unixepoch(), 1, uid, '', name, 0, added_at
        FROM bookmarks WHERE entry_id = old.id;
    DELETE FROM tags WHERE entry_id = old.id;
    DELETE FROM bookmarks WHERE entry_id = old.id;
END;

CREATE TRIGGER labels_back AFTER INSERT ON entries
WHEN EXISTS (SELECT 1 FROM labels_limbo WHERE dev = new.dev AND ino = new.ino)
BEGIN
    INSERT OR IGNORE INTO tags (entry_id, uid, key, name, source, added_at)
        SELECT new.id, uid, key, name, source, added_at FROM labels_limbo
        WHERE dev = new.dev AND ino = new.ino AND kind = new.kind AND mtime_ns = new.mtime_ns
          AND what = 0 AND gone_at >= unixepoch() - 600;
    INSERT OR IGNORE INTO bookmarks (uid, name, entry_id, added_at)
        SELECT uid, name, new.id, added_at FROM labels_limbo
        WHERE dev = new.dev AND ino = new.ino AND kind = new.kind AND mtime_ns = new.mtime_ns
          AND what = 1 AND gone_at >= unixepoch() - 600;
    DELETE FROM labels_limbo
        WHERE dev = new.dev AND ino = new.ino AND kind = new.kind AND mtime_ns = new.mtime_ns;
END;
