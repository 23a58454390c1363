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
-- Only the function changes: rows, indexes and daemons stay as they are.
DROP FUNCTION fsindex.search(name, text, jsonb, bigint);

-- `terms`: one object per term, all of which must match:
-- `{"neg": bool, "ext": bool, "alts": [LIKE pattern, ...]}`, a pattern over
-- the entry's path relative to its root, folded as the daemon folds names;
-- `ext` also asks for an entry that is not a folder.
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
        CASE WHEN f.folded = '''' THEN i.folded ELSE f.folded || ''/'' || i.folded END AS folded';
    -- The whole folded path of a candidate, before it is named `folded`.
    whole constant text := '(CASE WHEN f.folded = '''' THEN i.folded ELSE f.folded || ''/'' || i.folded END)';
    hostq text := '';
    fhostq text := '';
    conds text[] := '{}';
    t jsonb;
    a text;
    cond text;
    n integer := 0;
    alts text[];
    infix boolean[];
    usable boolean;
    shortest integer;
    len integer;
    best integer;
    best_len integer := 2;
    best_alts text[];
    best_infix boolean[];
    j integer;
    best_ext boolean;
    src text;
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
        n := n + 1;
        cond := NULL;
        alts := '{}';
        infix := '{}';
        usable := true;
        shortest := NULL;
        FOR a IN SELECT * FROM jsonb_array_elements_text(t -> 'alts') LOOP
            cond := coalesce(cond || ' OR ', '') || format('c.folded LIKE %L', a);
            alts := alts || a;
            infix := infix || (a ~ '^%([^%_\\/]|\\.)*%$');
            -- `%text%` or `%text`, no `/` in text: the literal's length,
            -- less the two (one) %, its escapes undone.
            IF a ~ '^%([^%_\\/]|\\.)*%$' THEN
                len := char_length(regexp_replace(a, '\\(.)', '\1', 'g')) - 2;
            ELSIF a ~ '^%([^%_\\/]|\\.)*$' THEN
                len := char_length(regexp_replace(a, '\\(.)', '\1', 'g')) - 1;
            ELSE
                len := 0;
            END IF;
            IF len < 3 THEN
                usable := false;
            END IF;
            shortest := least(coalesce(shortest, len), len);
        END LOOP;
        IF cond IS NULL THEN
            RAISE EXCEPTION 'fsindex.search: a term without patterns';
        END IF;
        cond := '(' || cond || ')';
        IF coalesce((t ->> 'ext')::boolean, false) THEN
            cond := '(c.kind <> 1 AND ' || cond || ')';
        END IF;
        IF coalesce((t ->> 'neg')::boolean, false) THEN
            cond := 'NOT ' || cond;
        ELSIF usable AND shortest > best_len THEN
            best := n;
            best_len := shortest;
            best_alts := alts;
            best_infix := infix;
            best_ext := coalesce((t ->> 'ext')::boolean, false);
        END IF;
        conds := conds || cond;
    END LOOP;

    IF best IS NULL THEN
        -- No term narrows by index: every entry but the roots' own rows.
        src := 'SELECT ' || cols || ' FROM fsindex.items i JOIN fsindex.folders f
            ON f.host = i.host AND f.id = i.parent_id WHERE true' || hostq;
    ELSE
        -- The best term's candidates, each once: for each pattern, the
        -- entries whose name matches, then (for `%text%`) the children of
        -- the folders whose path matches whose own name does not; an entry
        -- a pattern before this one took is not taken again. The folders'
        -- children are looked up laterally by key, so that PostgreSQL,
        -- which misjudges how many rows a trigram LIKE finds, never hashes
        -- the whole table instead.
        src := NULL;
        prior := '';
        FOR j IN 1 .. array_length(best_alts, 1) LOOP
            a := best_alts[j];
            src := coalesce(src || ' UNION ALL ', '') || 'SELECT ' || cols
                || ' FROM fsindex.items i JOIN fsindex.folders f ON f.host = i.host AND f.id = i.parent_id'
                || format(' WHERE i.folded LIKE %L', a) || hostq || prior;
            IF best_infix[j] THEN
                src := src || ' UNION ALL SELECT ' || cols
                    || ' FROM fsindex.folders f CROSS JOIN LATERAL (SELECT * FROM fsindex.items i'
                    || ' WHERE i.host = f.host AND i.parent_id = f.id OFFSET 0) i'
                    || format(' WHERE f.folded LIKE %L AND i.folded NOT LIKE %L', a, a)
                    || fhostq || prior;
            END IF;
            prior := prior || format(' AND %s NOT LIKE %L', whole, a);
        END LOOP;
        -- That term holds for every candidate: only its `ext` is left.
        conds[best] := CASE WHEN best_ext THEN '(c.kind <> 1)' ELSE 'true' END;
    END IF;

    q := 'SELECT c.host, c.path, c.name, c.kind, c.size, c.mtime_ns FROM (' || src || ') c WHERE '
        || array_to_string(conds || 'true'::text, ' AND ');
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
