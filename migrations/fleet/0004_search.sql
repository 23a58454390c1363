-- Fleet schema 4: `fsindex.search` answers from its candidate scans.
--
-- Schema 3's search found candidate ids with the trigram indexes, then
-- looked each up again through the view (two index look-ups per result),
-- matched its whole path against every term again, and returned the
-- view's every column, which PostgreSQL then sorted on disk; its plan's
-- cost also turned on JIT compilation, 0.4 s of a 1 s query. Here each
-- candidate comes with its row and its folder's in one join, the term that
-- chose the candidates is not matched again (a trigram scan rechecks its
-- own LIKE, and a text without `/` is in a path `dir/name` only if it is in
-- `dir` or in `name`), only the columns fsctl prints come back, and JIT is
-- off. The rows are those of schema 3 (the equality tests say so).
--
-- It also takes the whole query language that the shipped rows can answer,
-- as the daemon parses it (`fsindexd --fleet-query`, daemon/src/queries/
-- fleet.rs): terms, `path:`, wildcards, `ext:`, `size:`, `dm:`,
-- `kind:folder`, and `accents:ignore` (`fsindex.bare`, the daemon's
-- `strip_accents` in SQL).
--
-- Only functions change: rows, indexes and daemons stay as they are.
DROP FUNCTION fsindex.search(name, text, jsonb, bigint);

-- The daemon's `strip_accents` of folded text: canonical decomposition,
-- the combining marks of the Combining Diacritical Marks blocks dropped,
-- the letters readers take for accented ones spelled out, recomposed.
-- ASCII is returned as it is. No SET clause nor STRICT, so that PostgreSQL inlines it
-- (it names only pg_catalog's functions, which come first on any path).
CREATE FUNCTION fsindex.bare(t text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN octet_length(t) = char_length(t) THEN t ELSE normalize(
        replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(
        regexp_replace(normalize(t, NFD),
            '[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]', '', 'g'),
        'æ', 'ae'), 'œ', 'oe'), 'ø', 'o'), 'ł', 'l'), 'đ', 'd'), 'ð', 'd'), 'þ', 'th'),
        'ħ', 'h'), 'ŧ', 't'), 'ı', 'i'), 'ŀ', 'l'),
        NFC) END
$$;

-- One test of a query (see fsindex.search) as SQL over a candidate `c`
-- (`folded`: its path relative to the root, folded; `nfolded`: its name
-- folded; `ffolded`: its folder's path, folded; `kind`, `size`,
-- `mtime_ns`). Values are quoted (`%L`) or cast
-- to numbers: nothing of `t` reaches the SQL as it is.
CREATE FUNCTION fsindex.search_test(t jsonb) RETURNS text
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

-- How a test can choose candidates through a trigram index: 'infix' for
-- `{"path": "%text%"}`, 'suffix' for `{"path": "%text"}` (no `/`, no
-- wildcard in text), 'name' for `{"name": ...}`; NULL when it cannot
-- (negated, `bare`, size, ...). `len`: the literal's length (for a name
-- pattern, its longest run without wildcards); under 3 it cannot either.
CREATE FUNCTION fsindex.search_driver(t jsonb, OUT how text, OUT len integer)
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

-- The tests of which one must hold: an `any` that is not negated is
-- opened (`ext:pdf;md` inside a group `a|ext:pdf;md`).
CREATE FUNCTION fsindex.search_alternatives(t jsonb) RETURNS SETOF jsonb
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    x jsonb;
BEGIN
    IF t ? 'any' AND NOT coalesce((t ->> 'neg')::boolean, false)
       AND NOT coalesce((t ->> 'nondir')::boolean, false) THEN
        FOR x IN SELECT * FROM jsonb_array_elements(t -> 'any') LOOP
            RETURN QUERY SELECT * FROM fsindex.search_alternatives(x);
        END LOOP;
    ELSE
        RETURN NEXT t;
    END IF;
END
$$;

-- `terms`: one element per group of the query, all of which must hold:
-- `{"any": [test, ...]}`, one of which must hold. A test: `{"path":
-- LIKE}` (the entry's path relative to its root, folded as the daemon
-- folds names), `{"bare": LIKE}` (the same without accents), `{"name":
-- LIKE}` (the folded name), `{"size": [min, max]}` (a non-folder),
-- `{"mtime": [from_ns, to_ns]}` (from inclusive), `{"folder": true}`, or
-- `{"any": [...]}`; any test may add `"neg": true` and `"nondir": true`.
-- Schema 3's `{"neg", "ext", "alts": [path LIKE, ...]}` is still taken.
CREATE FUNCTION fsindex.search(who name, only_host text, terms jsonb, lim bigint)
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
    cols constant text := 'i.host, i.gate, i.kind, i.size, i.mtime_ns,
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
