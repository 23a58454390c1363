-- Fleet schema 3: an entry's row holds its name, not its path. Paths live
-- in `fsindex.folders`, one row per folder, so that
--
-- * the trigram indexes cover names and folder paths, not every entry's
--   whole path (that index was most of a bulk load's cost, and of the
--   disk);
-- * a folder renamed rewrites the path rows of the folders below it (and
--   their own entry rows), not a row per entry below it.
--
-- `fsindex.entries` becomes a view with the columns it had as a table
-- (root, rel, path, folded, ...), read with the caller's rights (row-level
-- security applies to the tables under it), for psql and for the queries
-- that want whole paths. Every host ships anew (its epoch is reset): the
-- rows of version 2 are dropped, not converted.
DROP FUNCTION fsindex.search(name, text, jsonb, bigint);
DROP TABLE fsindex.entries;
UPDATE fsindex.hosts SET epoch = -1;

-- Every entry of every host, keyed by the host's own entry id. Fixed-width
-- columns first (no padding between them).
CREATE TABLE fsindex.items (
    id           bigint NOT NULL,
    parent_id    bigint,              -- NULL for a root's own folder
    size         bigint NOT NULL,     -- st_size
    blocks       bigint NOT NULL,     -- st_blocks (512-byte units)
    mtime_ns     bigint NOT NULL,
    dev          bigint NOT NULL,
    ino          bigint NOT NULL,
    nlink        bigint NOT NULL,
    gate         bigint NOT NULL,     -- the nearest gate above (0: none); see 0002
    -- A folder's whole subtree, as the host's du counts it (files with
    -- several links left out: fleet du counts them once per inode).
    t_bytes      bigint,
    t_apparent   bigint,
    t_files      bigint,
    t_dirs       bigint,
    t_incomplete bigint,
    uid          bigint,              -- a gate's owner (else NULL)
    gid          bigint,              -- a gate's group (else NULL)
    mode         integer NOT NULL,
    flags        integer NOT NULL,    -- bit 0: a folder that could not be read
    kind         smallint NOT NULL,   -- 0 file, 1 dir, 2 symlink, 3 other
    host         text NOT NULL,
    name         text NOT NULL,       -- display form (bytes not UTF-8: U+FFFD); a root's: its path
    folded       text NOT NULL,       -- the name in NFC with full case folding, as the daemon folds it
    raw          bytea,               -- the name's bytes where they are not UTF-8 (else NULL)
    hash         bytea,               -- BLAKE3 of the content, where the host has it
    PRIMARY KEY (host, id)
);
CREATE INDEX items_folded ON fsindex.items USING gin (folded gin_trgm_ops);
CREATE INDEX items_children ON fsindex.items (host, parent_id);
CREATE INDEX items_sizes ON fsindex.items (size) WHERE kind = 0 AND size > 0;
CREATE INDEX items_multilink ON fsindex.items (host, dev, ino) WHERE nlink > 1 AND kind <> 1;
CREATE INDEX items_gates ON fsindex.items (host, gate) WHERE kind = 1 AND (mode & 365) <> 365;

-- Every folder's place: its root, its path relative to the root
-- (byte-exact, '' for the root's own folder), its absolute path (display
-- form) and its relative path folded. `gate` is the folder's own row's.
CREATE TABLE fsindex.folders (
    id      bigint NOT NULL,
    gate    bigint NOT NULL,
    host    text NOT NULL,
    root    text NOT NULL,
    path    text NOT NULL,
    folded  text NOT NULL,
    rel     bytea NOT NULL,
    PRIMARY KEY (host, id)
);
CREATE INDEX folders_folded ON fsindex.folders USING gin (folded gin_trgm_ops);
CREATE INDEX folders_path ON fsindex.folders (host, path text_pattern_ops);

-- The entries as version 2 kept them, whole paths computed.
CREATE VIEW fsindex.entries WITH (security_invoker = true) AS
SELECT e.host, e.id, e.parent_id, f.root,
       CASE WHEN e.parent_id IS NULL THEN f.rel
            WHEN octet_length(f.rel) = 0 THEN coalesce(e.raw, convert_to(e.name, 'UTF8'))
            ELSE f.rel || '\x2f'::bytea || coalesce(e.raw, convert_to(e.name, 'UTF8')) END AS rel,
       CASE WHEN e.parent_id IS NULL THEN f.path
            WHEN f.path = '/' THEN '/' || e.name
            ELSE f.path || '/' || e.name END AS path,
       CASE WHEN e.parent_id IS NULL THEN f.folded
            WHEN f.folded = '' THEN e.folded
            ELSE f.folded || '/' || e.folded END AS folded,
       coalesce(e.raw, convert_to(e.name, 'UTF8')) AS name,
       e.kind, e.size, e.blocks, e.mtime_ns, e.dev, e.ino, e.nlink, e.mode, e.flags,
       e.t_bytes, e.t_apparent, e.t_files, e.t_dirs, e.t_incomplete, e.hash,
       e.uid, e.gid, e.gate
FROM fsindex.items e
JOIN fsindex.folders f ON f.host = e.host AND f.id = coalesce(e.parent_id, e.id);

-- As in 0002, over the new table.
CREATE OR REPLACE FUNCTION fsindex.sees_all(who name)
RETURNS boolean LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp AS $$
    SELECT fsindex.is_admin(who)
        OR EXISTS (SELECT 1 FROM pg_roles r WHERE r.rolname = who AND (r.rolsuper OR r.rolbypassrls))
        OR who = (SELECT pg_get_userbyid(c.relowner) FROM pg_class c
                  WHERE c.oid = 'fsindex.items'::regclass)
$$;

CREATE OR REPLACE FUNCTION fsindex.open_gates(who name)
RETURNS TABLE (host text, id bigint) LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp AS $$
    WITH RECURSIVE me AS (
        SELECT m.host, m.uid, m.gids FROM fsindex.role_map m
        WHERE m.role = who AND pg_has_role(session_user, who, 'MEMBER')
    ), open (host, id) AS (
        SELECT me.host, 0::bigint FROM me
        UNION ALL
        SELECT e.host, e.id
        FROM open o
        JOIN fsindex.items e ON e.host = o.host AND e.gate = o.id
        JOIN me ON me.host = e.host
        WHERE e.kind = 1 AND (e.mode & 365) <> 365
          AND fsindex.opens(me.uid, me.gids, e.uid, e.gid, e.mode)
    )
    SELECT host, id FROM open
$$;

ALTER TABLE fsindex.items ENABLE ROW LEVEL SECURITY;
CREATE POLICY fleet_admins ON fsindex.items
    USING ((SELECT fsindex.is_admin(current_user)))
    WITH CHECK ((SELECT fsindex.is_admin(current_user)));
CREATE POLICY fleet_readers ON fsindex.items FOR SELECT
    USING ((host, gate) IN (SELECT g.host, g.id FROM fsindex.open_gates(current_user) g));
ALTER TABLE fsindex.folders ENABLE ROW LEVEL SECURITY;
CREATE POLICY fleet_admins ON fsindex.folders
    USING ((SELECT fsindex.is_admin(current_user)))
    WITH CHECK ((SELECT fsindex.is_admin(current_user)));
CREATE POLICY fleet_readers ON fsindex.folders FOR SELECT
    USING ((host, gate) IN (SELECT g.host, g.id FROM fsindex.open_gates(current_user) g));

-- The roles granted rights on the old table get them on the new ones.
DO $$
DECLARE r name;
BEGIN
    FOR r IN SELECT a.role FROM fsindex.admins a WHERE EXISTS (SELECT 1 FROM pg_roles p WHERE p.rolname = a.role) LOOP
        EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON fsindex.items, fsindex.folders TO %I', r);
        EXECUTE format('GRANT SELECT ON fsindex.entries TO %I', r);
    END LOOP;
    FOR r IN SELECT DISTINCT m.role FROM fsindex.role_map m WHERE EXISTS (SELECT 1 FROM pg_roles p WHERE p.rolname = m.role) LOOP
        EXECUTE format('GRANT SELECT ON fsindex.items, fsindex.folders, fsindex.entries TO %I', r);
    END LOOP;
END
$$;

-- `fsctl fleet search`, as in 0002 (the same arguments and rows), over the
-- view: every term is matched against the whole relative path folded,
-- `folded LIKE pattern`, as before. The trigram indexes narrow the rows
-- first: for the most selective term whose every pattern is `%text%` or
-- `%text` (text without `/`, at least 3 characters), the candidates are
-- the entries whose name matches, plus (for `%text%`) the entries of the
-- folders whose path matches; a path holding `text` holds it in one of
-- them. With no such term every row is looked at.
CREATE FUNCTION fsindex.search(who name, only_host text, terms jsonb, lim bigint)
RETURNS SETOF fsindex.entries LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    q text := ' WHERE e.parent_id IS NOT NULL';
    t jsonb;
    a text;
    cond text;
    keys text;
    k text;
    shortest integer;
    best text;
    best_len integer := 2;
BEGIN
    IF NOT pg_has_role(session_user, who, 'MEMBER') THEN
        RAISE EXCEPTION 'fsindex.search: % is not a role of this session', who;
    END IF;
    IF only_host IS NOT NULL THEN
        q := q || format(' AND e.host = %L', only_host);
    END IF;
    FOR t IN SELECT * FROM jsonb_array_elements(terms) LOOP
        cond := NULL;
        keys := NULL;
        shortest := NULL;
        FOR a IN SELECT * FROM jsonb_array_elements_text(t -> 'alts') LOOP
            cond := coalesce(cond || ' OR ', '') || format('e.folded LIKE %L', a);
            -- The literal's length: the pattern less its two %, its escapes.
            IF a ~ '^%([^%_\\/]|\\.)*%$' THEN
                k := format('SELECT i.host, i.id FROM fsindex.items i WHERE i.folded LIKE %L
                    UNION SELECT i.host, i.id FROM fsindex.folders f
                    CROSS JOIN LATERAL (SELECT i.host, i.id FROM fsindex.items i
                        WHERE i.host = f.host AND i.parent_id = f.id OFFSET 0) i
                    WHERE f.folded LIKE %L', a, a);
                shortest := least(coalesce(shortest, 1 << 30),
                    char_length(regexp_replace(a, '\\(.)', '\1', 'g')) - 2);
            ELSIF a ~ '^%([^%_\\/]|\\.)*$' THEN
                k := format('SELECT i.host, i.id FROM fsindex.items i WHERE i.folded LIKE %L', a);
                shortest := least(coalesce(shortest, 1 << 30),
                    char_length(regexp_replace(a, '\\(.)', '\1', 'g')) - 1);
            ELSE
                k := NULL;
                shortest := 0;
            END IF;
            keys := CASE WHEN k IS NULL OR shortest = 0 THEN NULL
                         ELSE coalesce(keys || ' UNION ', '') || k END;
        END LOOP;
        IF cond IS NULL THEN
            RAISE EXCEPTION 'fsindex.search: a term without patterns';
        END IF;
        cond := '(' || cond || ')';
        IF coalesce((t ->> 'ext')::boolean, false) THEN
            cond := '(e.kind <> 1 AND ' || cond || ')';
        END IF;
        IF coalesce((t ->> 'neg')::boolean, false) THEN
            cond := 'NOT ' || cond;
        ELSIF keys IS NOT NULL AND shortest > best_len THEN
            best := keys;
            best_len := shortest;
        END IF;
        q := q || ' AND ' || cond;
    END LOOP;
    -- The candidates drive: each looked up by its key (a lateral
    -- subquery, so that PostgreSQL, which misjudges how many rows a
    -- trigram LIKE finds, never hashes the whole tables instead).
    IF best IS NOT NULL THEN
        q := 'SELECT e.* FROM (' || best || ') c CROSS JOIN LATERAL (SELECT v.* FROM '
            || 'fsindex.entries v WHERE v.host = c.host AND v.id = c.id OFFSET 0) e' || q;
    ELSE
        q := 'SELECT e.* FROM fsindex.entries e' || q;
    END IF;
    IF NOT fsindex.sees_all(who) THEN
        q := q || format(
            ' AND (e.host, e.gate) IN (SELECT g.host, g.id FROM fsindex.open_gates(%L) g)', who);
    END IF;
    q := q || ' ORDER BY e.host, e.path';
    IF lim > 0 THEN
        q := q || format(' LIMIT %s', lim);
    END IF;
    RETURN QUERY EXECUTE q;
END
$$;
