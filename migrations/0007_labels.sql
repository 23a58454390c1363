-- Bookmarks and tags (issue 34): the user's own labels on entries.
--
-- Both name an entry by its id, not its path, so they follow it through
-- every rename and move the index records as one (a `mv` of the file or of
-- a folder above it), survive restarts (a restart's reconcile keeps ids),
-- and leave with the entry (a delete: the triggers below).
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
-- transaction.
CREATE TRIGGER labels_gone AFTER DELETE ON entries
BEGIN
    DELETE FROM tags WHERE entry_id = old.id;
    DELETE FROM bookmarks WHERE entry_id = old.id;
END;
