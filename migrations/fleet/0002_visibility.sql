-- Who sees what: the rule of the daemon's machine-wide mode, applied by
-- row-level security to database roles mapped to a host's users.
--
-- An entry is visible to a user when the user may read and search (`r`
-- and `x`) every folder above it, from its root's folder down to its
-- parent. A folder whose mode gives `r` and `x` to owner, group and others
-- alike (0755, 0555, ...) stops nobody; the others, "gates", may. So each
-- row carries `gate`, the id of the nearest gate above it on its host (0:
-- none), and a gate's own row carries its owner and group (`uid`, `gid`,
-- with `mode`) and, in its own `gate`, the next gate above. A role sees a
-- row when the role is mapped to the row's host and the row's gate is 0 or
-- a gate whose whole chain the mapped user opens (`fsindex.open_gates`).
-- A chmod that makes a folder a gate (or no longer one) re-ships what is
-- below it; a chown re-ships the folder.
--
-- Rows shipped before this version carry no gate (-1: unknown, seen by no
-- mapped role), and every host reconciles once (its epoch is reset) to
-- ship them anew. A daemon older than this version cannot ship (its rows
-- lack `gate`, which has no default): it says so in its status.
ALTER TABLE fsindex.entries
    ADD COLUMN uid  bigint,                     -- a folder's owner (gates only; else NULL)
    ADD COLUMN gid  bigint,                     -- a folder's group (gates only; else NULL)
    ADD COLUMN gate bigint NOT NULL DEFAULT -1; -- the nearest gate above (0: none)
ALTER TABLE fsindex.entries ALTER COLUMN gate DROP DEFAULT;
UPDATE fsindex.hosts SET epoch = -1;
-- The gates of a host, by the gate above them: what open_gates walks.
CREATE INDEX entries_gates ON fsindex.entries (host, gate) WHERE kind = 1 AND (mode & 365) <> 365;

-- Which database role is which user on which host: `uid` and every group
-- the user holds there (`id -G`), as the host's kernel would check them.
-- Set with `fsctl fleet grant ROLE --host NAME --uid N --gid N...`.
CREATE TABLE fsindex.role_map (
    role  name   NOT NULL,
    host  text   NOT NULL,
    uid   bigint NOT NULL,
    gids  bigint[] NOT NULL DEFAULT '{}',
    PRIMARY KEY (role, host)
);
-- Roles that see (and may write) every row: the daemons' own roles, and
-- people who administer the fleet (`fsctl fleet grant ROLE --admin`). The
-- schema's owner, superusers and roles with BYPASSRLS see everything too.
CREATE TABLE fsindex.admins (
    role name PRIMARY KEY
);

-- Whether a user (uid, groups) may read and search a folder with this
-- owner, group and mode, as the kernel decides without ACLs (the daemon's
-- `Caller::allows` with r and x). An unknown owner or group matches no one.
CREATE FUNCTION fsindex.opens(uid bigint, gids bigint[], owner bigint, grp bigint, mode integer)
RETURNS boolean LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT uid = 0 OR CASE
        WHEN owner = uid THEN (mode >> 6) & 5 = 5
        WHEN grp = ANY (gids) THEN (mode >> 3) & 5 = 5
        ELSE mode & 5 = 5
    END
$$;

-- Is `who` an admin of the fleet? Asked with `current_user` by the
-- policies; answers only for a role the session may act as.
CREATE FUNCTION fsindex.is_admin(who name)
RETURNS boolean LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp AS $$
    SELECT pg_has_role(session_user, who, 'MEMBER') AND EXISTS (
        SELECT 1 FROM fsindex.admins a WHERE pg_has_role(who, a.role, 'MEMBER'))
$$;

-- Does `who` see every row (an admin, a superuser, a role with BYPASSRLS,
-- or the schema's owner)? Asked by `fsctl fleet du`, which takes out of a
-- folder's totals what the caller may not see inside it.
CREATE FUNCTION fsindex.sees_all(who name)
RETURNS boolean LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp AS $$
    SELECT fsindex.is_admin(who)
        OR EXISTS (SELECT 1 FROM pg_roles r WHERE r.rolname = who AND (r.rolsuper OR r.rolbypassrls))
        OR who = (SELECT pg_get_userbyid(c.relowner) FROM pg_class c
                  WHERE c.oid = 'fsindex.entries'::regclass)
$$;

-- The gates `who` opens, with the whole chain above each, as (host, id);
-- plus (host, 0) for every host `who` is mapped to (rows with no gate
-- above them). Runs as the schema's owner (it reads gates the role may not
-- see), and answers only for a role the session may act as.
CREATE FUNCTION fsindex.open_gates(who name)
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
        JOIN fsindex.entries e ON e.host = o.host AND e.gate = o.id
        JOIN me ON me.host = e.host
        WHERE e.kind = 1 AND (e.mode & 365) <> 365
          AND fsindex.opens(me.uid, me.gids, e.uid, e.gid, e.mode)
    )
    SELECT host, id FROM open
$$;

ALTER TABLE fsindex.entries ENABLE ROW LEVEL SECURITY;
CREATE POLICY fleet_admins ON fsindex.entries
    USING ((SELECT fsindex.is_admin(current_user)))
    WITH CHECK ((SELECT fsindex.is_admin(current_user)));
CREATE POLICY fleet_readers ON fsindex.entries FOR SELECT
    USING ((host, gate) IN (SELECT g.host, g.id FROM fsindex.open_gates(current_user) g));

-- `fsctl fleet search`: the entries (every column) whose `folded` matches
-- every term, as `who` may see them, ordered by host and path, at most
-- `lim` (0: all). `terms` is a JSON array of {"neg": bool, "ext": bool,
-- "alts": [LIKE patterns]}: a term matches when any pattern does (`ext`:
-- and the entry is not a folder), `neg` inverts it. It runs as the
-- schema's owner and applies who-sees-what itself, after the trigram
-- index has narrowed the rows: under row-level security PostgreSQL
-- evaluates no function that is not leakproof (LIKE is not) before the
-- policy, so a mapped role's own `LIKE` scans every row. Every pattern and
-- name goes into the statement quoted (format %L).
CREATE FUNCTION fsindex.search(who name, only_host text, terms jsonb, lim bigint)
RETURNS SETOF fsindex.entries LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    q text := 'SELECT e.* FROM fsindex.entries e WHERE octet_length(e.rel) > 0';
    t jsonb;
    a text;
    cond text;
BEGIN
    IF NOT pg_has_role(session_user, who, 'MEMBER') THEN
        RAISE EXCEPTION 'fsindex.search: % is not a role of this session', who;
    END IF;
    IF only_host IS NOT NULL THEN
        q := q || format(' AND e.host = %L', only_host);
    END IF;
    FOR t IN SELECT * FROM jsonb_array_elements(terms) LOOP
        cond := NULL;
        FOR a IN SELECT * FROM jsonb_array_elements_text(t -> 'alts') LOOP
            cond := coalesce(cond || ' OR ', '') || format('e.folded LIKE %L', a);
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
        END IF;
        q := q || ' AND ' || cond;
    END LOOP;
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
