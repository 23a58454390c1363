-- Fleet schema 7: a host's first load (or reconcile) in parts, indexed as
-- they come.
--
-- Schema 5 loaded a host's items into one bare table, then built its
-- indexes; the names' trigram index, which PostgreSQL 15 builds on one
-- core, was most of the load. Now the daemon cuts its index by entry id
-- into parts of about equal name bytes (`splits`: the first id of each
-- part after the first). Each part is a table of its own
-- (`fsindex.items_N_I`), created in the transaction that copies its rows
-- (so the `COPY` may `FREEZE` them: no hint bits to set, no vacuum to
-- freeze them later) and indexed on another connection as soon as it is
-- committed, while the next part is copied. The attach makes the parts
-- the range partitions of `fsindex.items_N` (`PARTITION BY RANGE (id)`),
-- adopting the indexes they have, and that the host's partition of
-- `fsindex.items`, in the one transaction that also drops the host's
-- previous rows and sets its `(epoch, seq)`, as in 5.
--
-- The tables, their indexes and their policies do not change: rows of
-- schema 5 and 6 stay, and a host loaded by schema 5's functions keeps its
-- one table until its next load. Schema 5's functions are kept for a
-- daemon of that version.

-- The first id of each part after the first; NULL: a load of schema 5's
-- (one table for the items, no parts).
ALTER TABLE fsindex.loads ADD COLUMN splits bigint[];

-- Drops every table of load `k` (an attached load's items through their
-- parent; an unattached load's parts one by one).
CREATE FUNCTION fsindex.load_drop(k bigint) RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
SET client_min_messages = warning AS $$
DECLARE
    s bigint[];
    i int;
BEGIN
    SELECT l.splits INTO s FROM fsindex.loads l WHERE l.n = k;
    EXECUTE format('DROP TABLE IF EXISTS fsindex.%I, fsindex.%I', 'items_' || k, 'folders_' || k);
    IF s IS NOT NULL THEN
        FOR i IN 0 .. coalesce(array_length(s, 1), 0) LOOP
            EXECUTE format('DROP TABLE IF EXISTS fsindex.%I', 'items_' || k || '_' || i);
        END LOOP;
    END IF;
    DELETE FROM fsindex.loads WHERE n = k;
END
$$;
REVOKE ALL ON FUNCTION fsindex.load_drop(bigint) FROM PUBLIC;

-- Schema 5's load_begin, dropping what an unattached load in parts left.
CREATE OR REPLACE FUNCTION fsindex.load_begin(h text) RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    k bigint;
BEGIN
    PERFORM fsindex.load_allowed();
    FOR k IN SELECT l.n FROM fsindex.loads l WHERE l.host = h AND NOT l.attached LOOP
        PERFORM fsindex.load_drop(k);
    END LOOP;
    INSERT INTO fsindex.loads (host) VALUES (h) RETURNING n INTO k;
    EXECUTE format('CREATE TABLE fsindex.%I (LIKE fsindex.items INCLUDING DEFAULTS)', 'items_' || k);
    EXECUTE format('CREATE TABLE fsindex.%I (LIKE fsindex.folders INCLUDING DEFAULTS)', 'folders_' || k);
    EXECUTE format('ALTER TABLE fsindex.%I ADD CHECK (host = %L)', 'items_' || k, h);
    EXECUTE format('ALTER TABLE fsindex.%I ADD CHECK (host = %L)', 'folders_' || k, h);
    EXECUTE format('GRANT SELECT, INSERT ON fsindex.%I, fsindex.%I TO %I',
        'items_' || k, 'folders_' || k, session_user);
    RETURN k;
END
$$;

-- Begins a load of `h`'s rows in parts cut at `splits` (rising; empty:
-- one part): drops what an earlier load of `h` left unattached, creates
-- the load's folders table (no index), and returns the load's number. The
-- parts' tables are made by `fsindex.load_part`. The caller holds
-- `pg_advisory_lock(hashtext(h))` for the whole load.
CREATE FUNCTION fsindex.load_begin(h text, splits bigint[]) RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    k bigint;
    i int;
BEGIN
    PERFORM fsindex.load_allowed();
    FOR i IN 2 .. coalesce(array_length(splits, 1), 0) LOOP
        IF splits[i] IS NULL OR splits[i - 1] IS NULL OR splits[i] <= splits[i - 1] THEN
            RAISE EXCEPTION 'fsindex.load_begin: splits must rise: %', splits;
        END IF;
    END LOOP;
    FOR k IN SELECT l.n FROM fsindex.loads l WHERE l.host = h AND NOT l.attached LOOP
        PERFORM fsindex.load_drop(k);
    END LOOP;
    INSERT INTO fsindex.loads (host, splits) VALUES (h, coalesce(splits, '{}')) RETURNING n INTO k;
    EXECUTE format('CREATE TABLE fsindex.%I (LIKE fsindex.folders INCLUDING DEFAULTS)', 'folders_' || k);
    EXECUTE format('ALTER TABLE fsindex.%I ADD CHECK (host = %L)', 'folders_' || k, h);
    EXECUTE format('GRANT SELECT, INSERT ON fsindex.%I TO %I', 'folders_' || k, session_user);
    RETURN k;
END
$$;

-- Creates part `i` (0 to the number of splits) of load `k`: a bare table
-- `fsindex.items_K_I` with the items' columns, checked to hold only the
-- host's rows of the part's ids (so that neither attach scans it). Called
-- in the transaction that then copies the part's rows, which may then
-- `COPY ... FREEZE`.
CREATE FUNCTION fsindex.load_part(k bigint, i int) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    h text;
    s bigint[];
    t text := 'items_' || k || '_' || i;
BEGIN
    PERFORM fsindex.load_allowed();
    SELECT l.host, l.splits INTO h, s FROM fsindex.loads l WHERE l.n = k AND NOT l.attached;
    IF h IS NULL OR s IS NULL OR i < 0 OR i > coalesce(array_length(s, 1), 0) THEN
        RAISE EXCEPTION 'fsindex.load_part: no part % of load %', i, k;
    END IF;
    EXECUTE format('CREATE TABLE fsindex.%I (LIKE fsindex.items INCLUDING DEFAULTS)', t);
    EXECUTE format('ALTER TABLE fsindex.%I ADD CHECK (host = %L)', t, h);
    IF i > 0 THEN
        EXECUTE format('ALTER TABLE fsindex.%I ADD CHECK (id >= %s)', t, s[i]);
    END IF;
    IF i < coalesce(array_length(s, 1), 0) THEN
        EXECUTE format('ALTER TABLE fsindex.%I ADD CHECK (id < %s)', t, s[i + 1]);
    END IF;
    EXECUTE format('GRANT SELECT, INSERT ON fsindex.%I TO %I', t, session_user);
END
$$;

-- Builds the indexes of part `i` of load `k` (`i` = -1: of its folders),
-- the parents' own (their definitions read from the catalogue, so that
-- the attach adopts them instead of building its own; the key as a unique
-- index, made the key by `load_attach`), then its statistics. Parts are
-- indexed on several connections at once; each takes only a `SHARE` lock
-- on its own table.
CREATE FUNCTION fsindex.load_index_part(k bigint, i int) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET maintenance_work_mem = '128MB' AS $$
DECLARE
    parent text := CASE WHEN i < 0 THEN 'folders' ELSE 'items' END;
    t text := CASE WHEN i < 0 THEN 'folders_' || k ELSE 'items_' || k || '_' || i END;
    d text;
    key boolean;
BEGIN
    PERFORM fsindex.load_allowed();
    IF NOT EXISTS (SELECT 1 FROM fsindex.loads l WHERE l.n = k AND NOT l.attached AND l.splits IS NOT NULL)
       OR to_regclass('fsindex.' || quote_ident(t)) IS NULL THEN
        RAISE EXCEPTION 'fsindex.load_index_part: no part % of load %', i, k;
    END IF;
    FOR d, key IN SELECT pg_get_indexdef(x.indexrelid), x.indisprimary
             FROM pg_index x WHERE x.indrelid = ('fsindex.' || parent)::regclass LOOP
        EXECUTE regexp_replace(d, '^CREATE (UNIQUE )?INDEX \S+ ON ONLY fsindex\.' || parent || ' ',
            'CREATE \1INDEX ' || CASE WHEN key THEN quote_ident(t || '_pkey') ELSE '' END
            || ' ON fsindex.' || quote_ident(t) || ' ');
    END LOOP;
    EXECUTE format('ANALYZE fsindex.%I', t);
END
$$;

-- Makes load `k` the host's rows: drops the host's previous partitions
-- and sets the host's `(epoch, seq)`, in the caller's transaction; a load
-- in parts is first put together (the parts' keys, `fsindex.items_K`
-- partitioned by id range with the parts attached and the parents'
-- indexes made of theirs), then attached like schema 5's.
CREATE OR REPLACE FUNCTION fsindex.load_attach(k bigint, h_epoch bigint, h_seq bigint) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    h text;
    s bigint[];
    o bigint;
    i int;
    np int;
    t text;
    d text;
    key boolean;
BEGIN
    PERFORM fsindex.load_allowed();
    SELECT l.host, l.splits INTO h, s FROM fsindex.loads l WHERE l.n = k AND NOT l.attached;
    IF h IS NULL THEN
        RAISE EXCEPTION 'fsindex.load_attach: no load %', k;
    END IF;
    FOR o IN SELECT l.n FROM fsindex.loads l WHERE l.host = h AND l.attached LOOP
        PERFORM fsindex.load_drop(o);
    END LOOP;
    IF s IS NOT NULL THEN
        np := coalesce(array_length(s, 1), 0);
        EXECUTE format('CREATE TABLE fsindex.%I (LIKE fsindex.items INCLUDING DEFAULTS) PARTITION BY RANGE (id)',
            'items_' || k);
        FOR i IN 0 .. np LOOP
            t := 'items_' || k || '_' || i;
            IF session_user <> current_user THEN
                EXECUTE format('REVOKE ALL ON fsindex.%I FROM %I', t, session_user);
            END IF;
            EXECUTE format('ALTER TABLE fsindex.%I ADD PRIMARY KEY USING INDEX %I', t, t || '_pkey');
            EXECUTE format('ALTER TABLE fsindex.%I ATTACH PARTITION fsindex.%I FOR VALUES FROM (%s) TO (%s)',
                'items_' || k, t,
                CASE WHEN i = 0 THEN 'MINVALUE' ELSE s[i]::text END,
                CASE WHEN i = np THEN 'MAXVALUE' ELSE s[i + 1]::text END);
        END LOOP;
        -- The parents' indexes on the host's table, each made of the
        -- parts' (which match): nothing is built.
        FOR d, key IN SELECT pg_get_indexdef(x.indexrelid), x.indisprimary
                 FROM pg_index x WHERE x.indrelid = 'fsindex.items'::regclass LOOP
            IF key THEN
                EXECUTE format('ALTER TABLE fsindex.%I ADD PRIMARY KEY (host, id)', 'items_' || k);
            ELSE
                EXECUTE regexp_replace(d, '^CREATE INDEX \S+ ON ONLY fsindex\.items ',
                    'CREATE INDEX ON fsindex.' || quote_ident('items_' || k) || ' ');
            END IF;
        END LOOP;
        IF session_user <> current_user THEN
            EXECUTE format('REVOKE ALL ON fsindex.%I FROM %I', 'folders_' || k, session_user);
        END IF;
    ELSIF session_user <> current_user THEN
        -- Rows are read and written through the parents from now on.
        EXECUTE format('REVOKE ALL ON fsindex.%I, fsindex.%I FROM %I',
            'items_' || k, 'folders_' || k, session_user);
    END IF;
    IF s IS NULL THEN
        EXECUTE format('ALTER TABLE fsindex.%I ADD PRIMARY KEY USING INDEX %I',
            'items_' || k, 'items_' || k || '_pkey');
    END IF;
    EXECUTE format('ALTER TABLE fsindex.%I ADD PRIMARY KEY USING INDEX %I',
        'folders_' || k, 'folders_' || k || '_pkey');
    EXECUTE format('ALTER TABLE fsindex.items ATTACH PARTITION fsindex.%I FOR VALUES IN (%L)',
        'items_' || k, h);
    EXECUTE format('ALTER TABLE fsindex.folders ATTACH PARTITION fsindex.%I FOR VALUES IN (%L)',
        'folders_' || k, h);
    UPDATE fsindex.loads SET attached = true WHERE n = k;
    INSERT INTO fsindex.hosts (host, epoch, seq, shipped_at) VALUES (h, h_epoch, h_seq, now())
    ON CONFLICT (host) DO UPDATE SET epoch = h_epoch, seq = h_seq, shipped_at = now();
END
$$;
