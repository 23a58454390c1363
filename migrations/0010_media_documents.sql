-- Documents' properties (issue 32): a PDF's, Office or OpenDocument file's
-- page count and author, read by the media worker like a photo's EXIF. A
-- document's title goes in the existing `title` column, beside a song's.
-- Rows already there are photos, songs and videos: they keep their values
-- and have neither.
ALTER TABLE media ADD COLUMN pages INTEGER;
ALTER TABLE media ADD COLUMN author TEXT;
