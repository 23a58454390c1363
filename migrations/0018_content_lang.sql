-- Which languages the content index holds stems of (issue 31): a one-word
-- `content:` query looks its word up only in the stems of the languages
-- some file is written in, not in all 18 (each term of FTS5's OR seeks
-- into every segment; on a tree of English files the 17 absent languages
-- were an eighth of a common word's match). One probe of this index per
-- language answers which.
CREATE INDEX content_state_lang ON content_state(lang);
