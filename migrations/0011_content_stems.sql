-- Words in their forms (issue 31): `content:invoices` finds "invoice" and
-- "invoiced". Each file's text is also indexed as the Snowball stems of its
-- words, in the language it is written in (a guess per document, see
-- daemon/src/store/stem.rs), one token per distinct stem: the language's
-- code and the stem (`eninvoic`, `dehaus`), so a word is matched only
-- against documents of the language it was stemmed in.
--
-- Contentless like content_fts; detail=none: stems are matched one word
-- at a time (phrases stay exact, in content_fts), so no positions are kept.
CREATE VIRTUAL TABLE content_stem USING fts5(
    body,
    content = '',
    contentless_delete = 1,
    detail = none,
    tokenize = 'unicode61 remove_diacritics 2'
);

-- The language each file's stems were made in (ISO 639-1, e.g. `en`); ''
-- for a row made before this version, or with no text.
ALTER TABLE content_state ADD COLUMN lang TEXT NOT NULL DEFAULT '';

-- The rows stored before this version have no stems: mark them stale (an
-- extractor version no extractor has), so the content worker reads every
-- file of the content folders once more after the upgrade and stems it.
-- Until it has, such a file is found by its exact words, as before.
UPDATE content_state SET version = 0;

-- An entry that leaves the index takes its stems with it, in the same
-- transaction (as 0006's trigger does for the other content tables).
DROP TRIGGER content_gone;
CREATE TRIGGER content_gone AFTER DELETE ON entries
WHEN old.kind = 0
BEGIN
    DELETE FROM content_fts WHERE rowid = old.id;
    DELETE FROM content_stem WHERE rowid = old.id;
    DELETE FROM content_state WHERE entry_id = old.id;
    DELETE FROM content_queue WHERE entry_id = old.id;
    DELETE FROM content_text WHERE entry_id = old.id;
END;
