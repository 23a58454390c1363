-- Fleet schema 6: what files say (`[fleet] content = true`).
--
-- A host that ships content writes one row of `fsindex.texts` per file
-- with extracted text: `words`, the text's tokens as the daemon's FTS5
-- tokenizer makes them (folded, accents removed, with positions), and
-- `stems`, the language-tagged Snowball stems the daemon indexes
-- (`eninvoic`). Both are made by the daemon (daemon/src/store/
-- fleet_text.rs) and cast here, never parsed by a text search
-- configuration: PostgreSQL's parser keeps `report.pdf` or `3.14` whole,
-- the daemon's splits them, and a fleet search must equal the union of the
-- hosts' own. No text itself is stored.
--
-- `fsindex.search` takes a `{"content": {"words": TSQUERY, "stems":
-- TSQUERY}}` test (from `fsindexd --fleet-query`, daemon/src/queries/
-- fleet.rs): the words match, or the stems do. A content test can choose
-- the candidates through the GIN indexes (when no name or path term of 4
-- characters or more can).
--
-- The texts are read only through `fsindex.search` (SECURITY DEFINER,
-- which applies who-sees-what to the entries they belong to): mapped roles
-- get no right on the table, admins (the daemons) write it.
-- (Number 5 is another change's; this one does not depend on it.)

CREATE TABLE fsindex.texts (
    host   text NOT NULL,
    id     bigint NOT NULL,
    words  tsvector NOT NULL,
    stems  tsvector NOT NULL,
    PRIMARY KEY (host, id)
);
CREATE INDEX texts_words ON fsindex.texts USING gin (words);
CREATE INDEX texts_stems ON fsindex.texts USING gin (stems);
ALTER TABLE fsindex.texts ENABLE ROW LEVEL SECURITY;
CREATE POLICY fleet_admins ON fsindex.texts
    USING ((SELECT fsindex.is_admin(current_user)))
    WITH CHECK ((SELECT fsindex.is_admin(current_user)));

-- Whether the host's texts are in fsindex.texts: a host that turns content
-- on ships the texts it already has, one that turns it off drops them.
ALTER TABLE fsindex.hosts ADD COLUMN content boolean NOT NULL DEFAULT false;

DO $$
DECLARE r name;
BEGIN
    FOR r IN SELECT a.role FROM fsindex.admins a WHERE EXISTS (SELECT 1 FROM pg_roles p WHERE p.rolname = a.role) LOOP
        EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON fsindex.texts TO %I', r);
    END LOOP;
END
$$;

-- One test of a query, as in schema 4, and `{"content": ...}`.
CREATE OR REPLACE FUNCTION fsindex.search_test(t jsonb) RETURNS text
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    cond text;
    x jsonb;
BEGIN
    IF t ? 'any' THEN
        FOR x IN SELECT * FROM jsonb_array_elements(t -> 'any') LOOP
            cond := coalesce(cond || ' OR ', '') || fsindex.search_test(x);
        END LOOP;
        IF cond IS NULL THEN
            RAISE EXCEPTION 'fsindex.search: "any" with no tests';
        END IF;
    ELSIF t ? 'path' THEN
        cond := format('c.folded LIKE %L', t ->> 'path');
    ELSIF t ? 'bare' THEN
        -- By part, so that fsindex.bare is inlined (over a column, not an
        -- expression) and the folder's part is the same for its entries.
        cond := format('(CASE WHEN c.ffolded = %L THEN fsindex.bare(c.nfolded) '
            'ELSE fsindex.bare(c.ffolded) || %L || fsindex.bare(c.nfolded) END) LIKE %L',
            '', '/', t ->> 'bare');
    ELSIF t ? 'name' THEN
        cond := format('c.nfolded LIKE %L', t ->> 'name');
    ELSIF t ? 'size' THEN
        cond := format('c.kind <> 1 AND c.size BETWEEN %s AND %s',
            (t -> 'size' ->> 0)::bigint, (t -> 'size' ->> 1)::bigint);
    ELSIF t ? 'mtime' THEN
        cond := format('c.mtime_ns >= %s AND c.mtime_ns < %s',
            (t -> 'mtime' ->> 0)::bigint, (t -> 'mtime' ->> 1)::bigint);
    ELSIF t ? 'folder' THEN
        cond := 'c.kind = 1';
    ELSIF t ? 'content' THEN
        -- The file's text (fsindex.texts): its words, or its stems.
        IF t -> 'content' ->> 'words' IS NULL THEN
            cond := 'false';
        ELSE
            cond := format('EXISTS (SELECT 1 FROM fsindex.texts x WHERE x.host = c.host AND x.id = c.id'
                ' AND (x.words @@ %L::tsquery', t -> 'content' ->> 'words');
            IF t -> 'content' ->> 'stems' IS NOT NULL THEN
                cond := cond || format(' OR x.stems @@ %L::tsquery', t -> 'content' ->> 'stems');
            END IF;
            cond := cond || '))';
        END IF;
    ELSE
        RAISE EXCEPTION 'fsindex.search: a test it does not know: %', t;
    END IF;
    IF coalesce((t ->> 'nondir')::boolean, false) THEN
        cond := 'c.kind <> 1 AND (' || cond || ')';
    END IF;
    cond := '(' || cond || ')';
    IF coalesce((t ->> 'neg')::boolean, false) THEN
        cond := '(NOT ' || cond || ')';
    END IF;
    RETURN cond;
END
$$;

-- As in schema 4, and a content test drives through the GIN indexes.
CREATE OR REPLACE FUNCTION fsindex.search_driver(t jsonb, OUT how text, OUT len integer)
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    p text;
BEGIN
    IF coalesce((t ->> 'neg')::boolean, false) THEN
        RETURN;
    ELSIF t ? 'path' THEN
        p := t ->> 'path';
        IF p ~ '^%([^%_\\/]|\\.)*%$' THEN
            how := 'infix';
            len := char_length(regexp_replace(p, '\\(.)', '\1', 'g')) - 2;
        ELSIF p ~ '^%([^%_\\/]|\\.)*$' THEN
            how := 'suffix';
            len := char_length(regexp_replace(p, '\\(.)', '\1', 'g')) - 1;
        END IF;
    ELSIF t ? 'content' THEN
        -- The GIN indexes of fsindex.texts; ranked as a 3-character
        -- term, so that a longer name or path term drives instead.
        IF t -> 'content' ->> 'words' IS NOT NULL THEN
            how := 'content';
            len := 3;
        END IF;
    ELSIF t ? 'name' THEN
        how := 'name';
        SELECT max(char_length(regexp_replace(r, '\\(.)', '\1', 'g'))) INTO len
        FROM regexp_split_to_table(t ->> 'name', '(?<!\\)[%_]') r;
    END IF;
    IF coalesce(len, 0) < 3 THEN
        how := NULL;
    END IF;
END
$$;

-- As in schema 4, with content tests (see the top).
CREATE OR REPLACE FUNCTION fsindex.search(who name, only_host text, terms jsonb, lim bigint)
RETURNS TABLE (host text, path text, name bytea, kind smallint, size bigint, mtime_ns bigint)
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
-- A plan over millions of rows is costed high enough to be compiled, which
-- takes longer than running it; the answer is sorted in memory.
SET jit = off
SET work_mem = '64MB'
AS $$
DECLARE
    -- A candidate's columns, from its row `i` and its folder's `f`.
    cols constant text := 'i.host, i.id, i.gate, i.kind, i.size, i.mtime_ns,
        CASE WHEN f.path = ''/'' THEN ''/'' || i.name ELSE f.path || ''/'' || i.name END AS path,
        coalesce(i.raw, convert_to(i.name, ''UTF8'')) AS name,
        CASE WHEN f.folded = '''' THEN i.folded ELSE f.folded || ''/'' || i.folded END AS folded,
        i.folded AS nfolded, f.folded AS ffolded';
    items_f constant text := ' FROM fsindex.items i JOIN fsindex.folders f ON f.host = i.host AND f.id = i.parent_id';
    hostq text := '';
    fhostq text := '';
    groups jsonb[] := '{}';
    t jsonb;
    x jsonb;
    conds text[] := '{}';
    n integer := 0;
    d record;
    ok boolean;
    shortest integer;
    best integer;
    best_len integer := 2;
    src text;
    branch text;
    prior text;
    q text;
BEGIN
    IF NOT pg_has_role(session_user, who, 'MEMBER') THEN
        RAISE EXCEPTION 'fsindex.search: % is not a role of this session', who;
    END IF;
    IF only_host IS NOT NULL THEN
        hostq := format(' AND i.host = %L', only_host);
        fhostq := format(' AND f.host = %L', only_host);
    END IF;
    FOR t IN SELECT * FROM jsonb_array_elements(terms) LOOP
        IF t ? 'alts' THEN
            -- Schema 3's shape.
            t := jsonb_build_object('neg', coalesce(t -> 'neg', 'false'),
                'any', (SELECT jsonb_agg(jsonb_build_object('path', a, 'nondir', coalesce(t -> 'ext', 'false')))
                        FROM jsonb_array_elements(t -> 'alts') a));
        END IF;
        IF NOT t ? 'any' OR coalesce((t ->> 'neg')::boolean, false) THEN
            t := jsonb_build_object('any', jsonb_build_array(t));
        END IF;
        n := n + 1;
        groups := groups || t;
        conds := conds || fsindex.search_test(t);
        -- A group can choose the candidates when each of its tests can.
        ok := true;
        shortest := NULL;
        FOR x IN SELECT * FROM fsindex.search_alternatives(t) LOOP
            d := fsindex.search_driver(x);
            IF d.how IS NULL THEN
                ok := false;
            END IF;
            shortest := least(coalesce(shortest, d.len), d.len);
        END LOOP;
        IF ok AND shortest > best_len THEN
            best := n;
            best_len := shortest;
        END IF;
    END LOOP;
    IF n = 0 THEN
        RAISE EXCEPTION 'fsindex.search: no terms';
    END IF;

    IF best IS NULL THEN
        -- No group narrows by index: every entry but the roots' own rows.
        src := 'SELECT ' || cols || items_f || ' WHERE true' || hostq;
    ELSE
        -- The best group's candidates, each once: for each test, the
        -- entries whose name matches, then (for `%text%`) the children of
        -- the folders whose path matches whose own name does not; an entry
        -- a test before this one took is not taken again. The folders'
        -- children are looked up laterally by key, so that PostgreSQL,
        -- which misjudges how many rows a trigram LIKE finds, never hashes
        -- the whole table instead. What the test matched is not matched
        -- again: a trigram scan rechecks its LIKE, and a text with no `/`
        -- is in a path `dir/name` only if it is in `dir` or in `name`.
        prior := '';
        FOR x IN SELECT * FROM fsindex.search_alternatives(groups[best]) LOOP
            d := fsindex.search_driver(x);
            IF d.how = 'name' THEN
                branch := 'SELECT ' || cols || items_f
                    || format(' WHERE i.folded LIKE %L', x ->> 'name') || hostq;
            ELSIF d.how = 'content' THEN
                branch := 'SELECT ' || cols || items_f
                    || ' JOIN fsindex.texts x ON x.host = i.host AND x.id = i.id'
                    || format(' WHERE (x.words @@ %L::tsquery', x -> 'content' ->> 'words');
                IF x -> 'content' ->> 'stems' IS NOT NULL THEN
                    branch := branch || format(' OR x.stems @@ %L::tsquery', x -> 'content' ->> 'stems');
                END IF;
                branch := branch || ')' || hostq;
            ELSE
                branch := 'SELECT ' || cols || items_f
                    || format(' WHERE i.folded LIKE %L', x ->> 'path') || hostq;
                IF d.how = 'infix' THEN
                    branch := branch || ' UNION ALL SELECT ' || cols
                        || ' FROM fsindex.folders f CROSS JOIN LATERAL (SELECT * FROM fsindex.items i'
                        || ' WHERE i.host = f.host AND i.parent_id = f.id OFFSET 0) i'
                        || format(' WHERE f.folded LIKE %L AND i.folded NOT LIKE %L',
                                  x ->> 'path', x ->> 'path')
                        || fhostq;
                END IF;
            END IF;
            branch := 'SELECT * FROM (' || branch || ') c WHERE true' || prior;
            IF coalesce((x ->> 'nondir')::boolean, false) THEN
                branch := branch || ' AND c.kind <> 1';
            END IF;
            src := coalesce(src || ' UNION ALL ', '') || branch;
            prior := prior || ' AND NOT ' || fsindex.search_test(x);
        END LOOP;
        conds[best] := 'true';
    END IF;

    q := 'SELECT c.host, c.path, c.name, c.kind, c.size, c.mtime_ns FROM (' || src || ') c WHERE '
        || array_to_string(conds, ' AND ');
    IF NOT fsindex.sees_all(who) THEN
        q := q || format(
            ' AND (c.host, c.gate) IN (SELECT g.host, g.id FROM fsindex.open_gates(%L) g)', who);
    END IF;
    q := q || ' ORDER BY c.host, c.path';
    IF lim > 0 THEN
        q := q || format(' LIMIT %s', lim);
    END IF;
    RETURN QUERY EXECUTE q;
END
$$;
