-- unlisted.links gains each inode's sizes: a tag byte 1, then per file
-- (dev, ino, allocated bytes, apparent bytes) as little-endian u64s, so that
-- du counts an inode once when its links are in the unlisted rows of two
-- folders (a BLOCK file hard-linked into two folders: cp -al of a project
-- with certifi's cacert.pem). Rows in the old form ((dev, ino) pairs, no
-- tag) are read without sizes and rewritten by the next scan of their
-- folder. Nothing to convert here: the version tells older binaries that
-- they cannot read the new form.
SELECT 1;
