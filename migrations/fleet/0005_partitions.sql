-- Fleet schema 5: a partition per host.
--
-- `fsindex.items` and `fsindex.folders` become tables partitioned by host
-- (`PARTITION BY LIST (host)`), with the columns, keys, indexes and
-- policies they had. A host's first load, and every reconcile, goes into
-- tables of its own that no one else sees, loaded by `COPY` with no index
-- (the indexes, the trigram one on names most of all, were most of a bulk
-- load's cost when kept up row by row), then indexed (by the daemon on two
-- connections at once), analysed, and attached in one short transaction
-- that also drops the host's previous partition and sets its
-- `(epoch, seq)`. So a search sees all of a host's rows or none of a new
-- host's, never a part, and another host's shipping waits on no load
-- (a first load's attach takes only a `SHARE UPDATE EXCLUSIVE` lock on
-- the parent; a reconcile's drop of the old partition an `ACCESS
-- EXCLUSIVE` one, for as long as that transaction lasts).
--
-- The daemon's role is an admin, not the schema's owner, and only an owner
-- may create, index and attach tables here: that is done by the
-- `SECURITY DEFINER` functions below (`fsindex.load_begin`,
-- `fsindex.load_index`, `fsindex.load_attach`), which only a role that may
-- write `fsindex.items` may call.
--
-- The rows of version 4 are dropped, not moved: every host ships anew
-- (its epoch is reset), as in 3.
DROP VIEW fsindex.entries;
DROP TABLE fsindex.items;
DROP TABLE fsindex.folders;
UPDATE fsindex.hosts SET epoch = -1;

CREATE TABLE fsindex.items (
    id           bigint NOT NULL,
    parent_id    bigint,
    size         bigint NOT NULL,
    blocks       bigint NOT NULL,
    mtime_ns     bigint NOT NULL,
    dev          bigint NOT NULL,
    ino          bigint NOT NULL,
    nlink        bigint NOT NULL,
    gate         bigint NOT NULL,
    t_bytes      bigint,
    t_apparent   bigint,
    t_files      bigint,
    t_dirs       bigint,
    t_incomplete bigint,
    uid          bigint,
    gid          bigint,
    mode         integer NOT NULL,
    flags        integer NOT NULL,
    kind         smallint NOT NULL,
    host         text NOT NULL,
    name         text NOT NULL,
    folded       text NOT NULL,
    raw          bytea,
    hash         bytea,
    PRIMARY KEY (host, id)
) PARTITION BY LIST (host);
CREATE INDEX items_folded ON fsindex.items USING gin (folded gin_trgm_ops);
CREATE INDEX items_children ON fsindex.items (host, parent_id);
CREATE INDEX items_sizes ON fsindex.items (size) WHERE kind = 0 AND size > 0;
CREATE INDEX items_multilink ON fsindex.items (host, dev, ino) WHERE nlink > 1 AND kind <> 1;
CREATE INDEX items_gates ON fsindex.items (host, gate) WHERE kind = 1 AND (mode & 365) <> 365;

CREATE TABLE fsindex.folders (
    id      bigint NOT NULL,
    gate    bigint NOT NULL,
    host    text NOT NULL,
    root    text NOT NULL,
    path    text NOT NULL,
    folded  text NOT NULL,
    rel     bytea NOT NULL,
    PRIMARY KEY (host, id)
) PARTITION BY LIST (host);
CREATE INDEX folders_folded ON fsindex.folders USING gin (folded gin_trgm_ops);
CREATE INDEX folders_path ON fsindex.folders (host, path text_pattern_ops);

-- As in 0003.
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

-- The policies of 0003, on the parents (a role reads the partitions only
-- through them: it is granted nothing on a partition).
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

-- A host's loads: `n` names its tables (`fsindex.items_N`,
-- `fsindex.folders_N`); `attached` once they are the host's partitions.
CREATE TABLE fsindex.loads (
    n        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    host     text NOT NULL,
    began    timestamptz NOT NULL DEFAULT now(),
    attached boolean NOT NULL DEFAULT false
);
REVOKE ALL ON fsindex.loads FROM PUBLIC;

-- Fails unless the session's role may write the fleet's rows.
CREATE FUNCTION fsindex.load_allowed() RETURNS void
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF NOT has_table_privilege(session_user, 'fsindex.items', 'INSERT') THEN
        RAISE EXCEPTION 'fsindex: % may not load rows (fsctl fleet grant % --admin)',
            session_user, session_user USING ERRCODE = 'insufficient_privilege';
    END IF;
END
$$;

-- Begins a load of `h`'s rows: drops what an earlier load of `h` left
-- unattached (a daemon stopped mid-load), creates the load's two tables
-- with the parents' columns and no index, and lets the session's role
-- write them. The caller holds `pg_advisory_lock(hashtext(h))` for the
-- whole load (one load per host at a time). Returns the load's number.
CREATE FUNCTION fsindex.load_begin(h text) RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    k bigint;
BEGIN
    PERFORM fsindex.load_allowed();
    FOR k IN SELECT l.n FROM fsindex.loads l WHERE l.host = h AND NOT l.attached LOOP
        EXECUTE format('DROP TABLE IF EXISTS fsindex.%I, fsindex.%I', 'items_' || k, 'folders_' || k);
        DELETE FROM fsindex.loads WHERE n = k;
    END LOOP;
    INSERT INTO fsindex.loads (host) VALUES (h) RETURNING n INTO k;
    EXECUTE format('CREATE TABLE fsindex.%I (LIKE fsindex.items INCLUDING DEFAULTS)', 'items_' || k);
    EXECUTE format('CREATE TABLE fsindex.%I (LIKE fsindex.folders INCLUDING DEFAULTS)', 'folders_' || k);
    -- Checked row by row as they come in (an empty table's check costs no
    -- scan), so the attach needs none.
    EXECUTE format('ALTER TABLE fsindex.%I ADD CHECK (host = %L)', 'items_' || k, h);
    EXECUTE format('ALTER TABLE fsindex.%I ADD CHECK (host = %L)', 'folders_' || k, h);
    EXECUTE format('GRANT SELECT, INSERT ON fsindex.%I, fsindex.%I TO %I',
        'items_' || k, 'folders_' || k, session_user);
    RETURN k;
END
$$;

-- Builds load `k`'s indexes, the parents' own (their definitions read from
-- the catalogue, so that the attach adopts them instead of building its
-- own): `part` 'gin' builds the items' trigram index (the longest) and
-- then their statistics; 'rest' every other index of both tables (the
-- keys' as unique indexes, made keys by `load_attach`: a key added here
-- would lock the table against the other part) and the folders'
-- statistics. `ANALYZE`, because queries planned right after a first load
-- otherwise see an empty table. The two parts take only `SHARE` locks on
-- the tables while they build, so they run at once on two connections.
CREATE FUNCTION fsindex.load_index(k bigint, part text) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET maintenance_work_mem = '256MB' AS $$
DECLARE
    t text;
    d text;
    gin boolean;
    key boolean;
BEGIN
    PERFORM fsindex.load_allowed();
    IF NOT EXISTS (SELECT 1 FROM fsindex.loads l WHERE l.n = k AND NOT l.attached) THEN
        RAISE EXCEPTION 'fsindex.load_index: no load %', k;
    END IF;
    IF part NOT IN ('gin', 'rest') THEN
        RAISE EXCEPTION 'fsindex.load_index: no part %', part;
    END IF;
    FOREACH t IN ARRAY ARRAY['items', 'folders'] LOOP
        FOR d, gin, key IN SELECT pg_get_indexdef(i.indexrelid), a.amname = 'gin', i.indisprimary
                 FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
                 JOIN pg_am a ON a.oid = c.relam
                 WHERE i.indrelid = ('fsindex.' || t)::regclass LOOP
            IF (t = 'items' AND gin) = (part = 'gin') THEN
                -- CREATE [UNIQUE] INDEX name ON ONLY fsindex.t USING ...
                --   -> CREATE [UNIQUE] INDEX [t_k_pkey] ON fsindex.t_k USING ...
                EXECUTE regexp_replace(d, '^CREATE (UNIQUE )?INDEX \S+ ON ONLY fsindex\.' || t || ' ',
                    'CREATE \1INDEX ' || CASE WHEN key THEN quote_ident(t || '_' || k || '_pkey') ELSE '' END
                    || ' ON fsindex.' || quote_ident(t || '_' || k) || ' ');
            END IF;
        END LOOP;
    END LOOP;
    IF part = 'gin' THEN
        EXECUTE format('ANALYZE fsindex.%I', 'items_' || k);
    ELSE
        EXECUTE format('ANALYZE fsindex.%I', 'folders_' || k);
    END IF;
END
$$;

-- Makes load `k` the host's rows: drops the host's previous partitions,
-- attaches the load's tables, and sets the host's `(epoch, seq)`, in the
-- caller's transaction.
CREATE FUNCTION fsindex.load_attach(k bigint, h_epoch bigint, h_seq bigint) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    h text;
    o bigint;
BEGIN
    PERFORM fsindex.load_allowed();
    SELECT l.host INTO h FROM fsindex.loads l WHERE l.n = k AND NOT l.attached;
    IF h IS NULL THEN
        RAISE EXCEPTION 'fsindex.load_attach: no load %', k;
    END IF;
    FOR o IN SELECT l.n FROM fsindex.loads l WHERE l.host = h AND l.attached LOOP
        EXECUTE format('DROP TABLE IF EXISTS fsindex.%I, fsindex.%I', 'items_' || o, 'folders_' || o);
        DELETE FROM fsindex.loads WHERE n = o;
    END LOOP;
    IF session_user <> current_user THEN
        -- Rows are read and written through the parents from now on.
        EXECUTE format('REVOKE ALL ON fsindex.%I, fsindex.%I FROM %I',
            'items_' || k, 'folders_' || k, session_user);
    END IF;
    EXECUTE format('ALTER TABLE fsindex.%I ADD PRIMARY KEY USING INDEX %I',
        'items_' || k, 'items_' || k || '_pkey');
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
