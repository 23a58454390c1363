//! The fleet's queries: search, du, dupes and hosts, in SQL over the rows
//! the daemons ship (`migrations/fleet/`).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::Write;
use std::process::ExitCode;

use anyhow::bail;
use serde_json::{Value, json};
use tokio_postgres::Client;

use crate::global::Global;
use crate::output::{count, rfc3339, size};

use super::describe;

fn db(e: tokio_postgres::Error) -> anyhow::Error {
    anyhow::anyhow!("the fleet database: {}", describe(&e))
}

fn type_name(kind: i16) -> &'static str {
    match kind {
        1 => "dir",
        2 => "symlink",
        3 => "other",
        _ => "file",
    }
}

/// `s` as a LIKE pattern matching itself (`\` is the escape).
fn like_literal(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(c, '%' | '_' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[derive(Debug, clap::Args)]
pub struct SearchArgs {
    /// Terms, all of which must match; "quoted phrases" keep spaces.
    #[arg(required = true, value_name = "QUERY")]
    terms: Vec<String>,
    /// At most N results; 0 means all.
    #[arg(long, short = 'n', default_value_t = 0, value_name = "N")]
    limit: u64,
    /// Only this host's entries.
    #[arg(long, value_name = "NAME")]
    host: Option<String>,
    /// Print only the number of matches.
    #[arg(long, short = 'c')]
    count: bool,
    /// Compare names without their accents: cafe finds café and Cafe (adds
    /// `accents:ignore` to the query).
    #[arg(long)]
    ignore_accents: bool,
}

/// The query as `fsindex.search` takes it (JSON), parsed and folded by the
/// daemon's own parser: `fsindexd --fleet-query` (fsctl does not link the
/// daemon crate), so that a fleet search and each host's own search read a
/// query alike. A filter the shipped rows cannot answer is refused there,
/// by name. The child runs while the connection is made (about 10 ms each).
pub struct Terms(std::process::Child, std::path::PathBuf);

impl Terms {
    pub fn start(a: &SearchArgs) -> anyhow::Result<Terms> {
        let query = crate::cmd::search::query_of(&a.terms, a.ignore_accents);
        let daemon = fsindex_client::find_daemon().ok_or_else(|| {
            anyhow::anyhow!(
                "fsindexd is neither beside fsctl nor on PATH: fleet search parses queries with it"
            )
        })?;
        let child = std::process::Command::new(&daemon)
            .arg(format!("--fleet-query={query}"))
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .map_err(|e| anyhow::anyhow!("running {}: {e}", daemon.display()))?;
        Ok(Terms(child, daemon))
    }

    /// The folded query, or the parser's own message.
    pub fn finish(self) -> anyhow::Result<String> {
        let out = self
            .0
            .wait_with_output()
            .map_err(|e| anyhow::anyhow!("running {}: {e}", self.1.display()))?;
        if !out.status.success() {
            bail!("{}", String::from_utf8_lossy(&out.stderr).trim());
        }
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
    }
}

/// `terms`: the folded query, from [`Terms::finish`].
pub async fn search(
    g: &Global,
    client: &Client,
    a: &SearchArgs,
    terms: String,
) -> anyhow::Result<ExitCode> {
    // One call of `fsindex.search`, which applies who-sees-what itself (it
    // runs as the schema's owner): under row-level security a LIKE may not
    // use the trigram index (PostgreSQL evaluates no function that is not
    // leakproof before a policy), and a mapped role's search would scan
    // every row.
    // As text, cast there: no JSON feature of the client needed.
    if a.count {
        let n: i64 = client
            .query_one(
                "SELECT count(*) FROM fsindex.search(current_user, $1, $2::text::jsonb, 0)",
                &[&a.host, &terms],
            )
            .await
            .map_err(db)?
            .get(0);
        if g.json {
            println!("{}", json!({ "total": n }));
        } else {
            println!("{n}");
        }
        return Ok(if n > 0 {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(1)
        });
    }
    let limit = i64::try_from(a.limit).unwrap_or(i64::MAX);
    let rows = client
        .query(
            "SELECT host, path, name, kind, size, mtime_ns
             FROM fsindex.search(current_user, $1, $2::text::jsonb, $3)",
            &[&a.host, &terms, &limit],
        )
        .await
        .map_err(db)?;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for r in &rows {
        let (host, path): (&str, &str) = (r.get(0), r.get(1));
        if g.json {
            let name: &[u8] = r.get(2);
            let v = json!({
                "host": host,
                "path": path,
                "name": String::from_utf8_lossy(name),
                "type": type_name(r.get(3)),
                "size": r.get::<_, i64>(4),
                "mtime": rfc3339(r.get(5)),
            });
            writeln!(out, "{v}")?;
        } else {
            writeln!(out, "{host}:{path}")?;
        }
    }
    out.flush()?;
    Ok(if rows.is_empty() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

#[derive(Debug, clap::Args)]
pub struct DuArgs {
    /// HOST:PATH, a folder (or file) on one host; none: every host's roots.
    #[arg(value_name = "HOST:PATH")]
    target: Option<String>,
    /// How many of the largest entries to show (0: all).
    #[arg(long, default_value_t = 20, value_name = "N")]
    top: u32,
    /// Rank and show by apparent size (st_size, as du -b) instead of allocated bytes.
    #[arg(long)]
    apparent: bool,
}

/// du's figures of one entry.
#[derive(Clone, Debug, Default)]
struct Usage {
    path: String,
    kind: i16,
    bytes: i64,
    apparent: i64,
    files: i64,
    dirs: i64,
    incomplete: bool,
}

impl Usage {
    fn json(&self, host: &str, depth: u32) -> Value {
        json!({
            "host": host,
            "path": self.path,
            "type": type_name(self.kind),
            "bytes": self.bytes,
            "apparent_bytes": self.apparent,
            "files": self.files,
            "dirs": self.dirs,
            "incomplete": self.incomplete,
            "depth": depth,
            "excluded": false,
        })
    }
}

const USAGE_COLUMNS: &str =
    "id, path, kind, size, blocks, nlink, t_bytes, t_apparent, t_files, t_dirs, t_incomplete";

/// An entry's own figures: a folder's subtree totals (multi-link files
/// left out, as the host keeps them), a file's own sizes.
fn usage_of(r: &tokio_postgres::Row) -> (i64, Usage) {
    let kind: i16 = r.get(2);
    let u = if kind == 1 {
        Usage {
            path: r.get(1),
            kind,
            bytes: r.get::<_, Option<i64>>(6).unwrap_or(0),
            apparent: r.get::<_, Option<i64>>(7).unwrap_or(0),
            files: r.get::<_, Option<i64>>(8).unwrap_or(0),
            dirs: r.get::<_, Option<i64>>(9).unwrap_or(0),
            incomplete: r.get::<_, Option<i64>>(10).unwrap_or(0) > 0,
        }
    } else {
        Usage {
            path: r.get(1),
            kind,
            bytes: r.get::<_, i64>(4) * 512,
            apparent: r.get(3),
            files: 1,
            dirs: 0,
            incomplete: false,
        }
    };
    (r.get(0), u)
}

pub async fn du(g: &Global, client: &Client, a: &DuArgs) -> anyhow::Result<ExitCode> {
    let Some(target) = &a.target else {
        return du_roots(g, client).await;
    };
    let Some((host, path)) = target.split_once(':') else {
        bail!("{target}: give HOST:PATH, e.g. nas:/srv/photos");
    };
    let mut path = path.to_owned();
    while path.len() > 1 && path.ends_with('/') {
        path.pop();
    }
    // Found by its folder's path (an index of `fsindex.folders`), not by
    // the view's computed paths, which no index holds.
    let (dir, base) = match path.rsplit_once('/') {
        Some(("", b)) => ("/", b),
        Some((d, b)) => (d, b),
        None => ("", path.as_str()),
    };
    let found = client
        .query_opt(
            "SELECT id FROM fsindex.folders WHERE host = $1 AND path = $2
             UNION ALL
             SELECT e.id FROM fsindex.items e
             JOIN fsindex.folders f ON f.host = e.host AND f.id = e.parent_id
             WHERE e.host = $1 AND f.path = $3 AND e.name = $4 AND e.kind <> 1
             LIMIT 1",
            &[&host, &path, &dir, &base],
        )
        .await
        .map_err(db)?;
    let row = match found {
        Some(f) => client
            .query_opt(
                &format!("SELECT {USAGE_COLUMNS} FROM fsindex.entries WHERE host = $1 AND id = $2"),
                &[&host, &f.get::<_, i64>(0)],
            )
            .await
            .map_err(db)?,
        None => None,
    }
    .ok_or_else(|| anyhow::anyhow!("{host}:{path} is not in the fleet"))?;
    let (id, mut total) = usage_of(&row);
    let mut children: Vec<Usage> = Vec::new();
    if total.kind == 1 {
        let prefix = if path == "/" {
            "/".to_owned()
        } else {
            format!("{path}/")
        };
        let kids = client
            .query(
                &format!(
                    "SELECT {USAGE_COLUMNS} FROM fsindex.entries WHERE host = $1 AND parent_id = $2"
                ),
                &[&host, &id],
            )
            .await
            .map_err(db)?;
        let mut by_name: HashMap<String, usize> = HashMap::new();
        for k in &kids {
            let (_, u) = usage_of(k);
            let name = u.path[prefix.len().min(u.path.len())..].to_owned();
            by_name.insert(name, children.len());
            children.push(u);
        }
        // Files with several links, each inode once per folder measured.
        let links = client
            .query(
                "SELECT path, dev, ino, blocks, size FROM fsindex.entries
                 WHERE host = $1 AND nlink > 1 AND kind <> 1 AND path LIKE $2",
                &[&host, &format!("{}%", like_literal(&prefix))],
            )
            .await
            .map_err(db)?;
        let mut seen_total = HashSet::new();
        let mut seen_child: HashMap<usize, HashSet<(i64, i64)>> = HashMap::new();
        for l in &links {
            let (p, dev, ino, blocks, sz): (&str, i64, i64, i64, i64) =
                (l.get(0), l.get(1), l.get(2), l.get(3), l.get(4));
            if seen_total.insert((dev, ino)) {
                total.bytes += blocks * 512;
                total.apparent += sz;
                total.files += 1;
            }
            let first = p[prefix.len()..].split('/').next().unwrap_or_default();
            if let Some(&i) = by_name.get(first)
                && children[i].kind == 1
                && seen_child.entry(i).or_default().insert((dev, ino))
            {
                children[i].bytes += blocks * 512;
                children[i].apparent += sz;
                children[i].files += 1;
            }
        }
    }
    {
        let mut shown: Vec<&mut Usage> = vec![&mut total];
        shown.extend(children.iter_mut());
        hide_closed(client, host, &path, &mut shown).await?;
    }
    let key = |u: &Usage| if a.apparent { u.apparent } else { u.bytes };
    children.sort_by(|x, y| key(y).cmp(&key(x)).then_with(|| x.path.cmp(&y.path)));
    let children_total = children.len();
    if a.top > 0 {
        children.truncate(a.top as usize);
    }
    if g.json {
        let mut v = total.json(host, 0);
        v["children"] = Value::Array(children.iter().map(|c| c.json(host, 1)).collect());
        v["children_total"] = json!(children_total);
        println!("{v}");
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "{:>10}  {host}:{}  ({} files, {} folders)",
        size(key(&total) as u64),
        total.path,
        count(total.files as u64),
        count(total.dirs as u64)
    );
    for c in &children {
        println!("{:>10}  {}", size(key(c) as u64), c.path);
    }
    if children_total > children.len() {
        eprintln!(
            "({} more; --top 0 shows them all)",
            children_total - children.len()
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// Is `inner` the path `outer` or below it?
fn within(inner: &str, outer: &str) -> bool {
    inner.starts_with(outer)
        && (inner.len() == outer.len()
            || outer.ends_with('/')
            || inner.as_bytes()[outer.len()] == b'/')
}

/// du as the caller may see it, as the daemon's machine-wide mode answers
/// it: a folder under `path` that the caller may see but not open counts
/// its own blocks, and what is inside it is taken out of every figure
/// shown that holds it (marked incomplete). Rows inside such a folder are
/// not visible to the caller at all (row-level security), so only these
/// topmost ones are found. Nothing to do for a role that sees every row.
async fn hide_closed(
    client: &Client,
    host: &str,
    path: &str,
    shown: &mut [&mut Usage],
) -> anyhow::Result<()> {
    let sees_all: bool = client
        .query_one("SELECT fsindex.sees_all(current_user)", &[])
        .await
        .map_err(db)?
        .get(0);
    if sees_all {
        return Ok(());
    }
    let below = format!("{}/%", like_literal(path.trim_end_matches('/')));
    let closed = client
        .query(
            "SELECT path, coalesce(t_bytes, 0) - blocks * 512, coalesce(t_apparent, 0) - size,
                    coalesce(t_files, 0), greatest(coalesce(t_dirs, 0) - 1, 0)
             FROM fsindex.entries
             WHERE host = $1 AND kind = 1 AND (mode & 365) <> 365
               AND (path = $2 OR path LIKE $3)
               AND (host, id) NOT IN (SELECT g.host, g.id FROM fsindex.open_gates(current_user) g)",
            &[&host, &path, &below],
        )
        .await
        .map_err(db)?;
    for c in &closed {
        let p: &str = c.get(0);
        for u in shown.iter_mut() {
            if within(p, &u.path) {
                u.bytes -= c.get::<_, i64>(1);
                u.apparent -= c.get::<_, i64>(2);
                u.files -= c.get::<_, i64>(3);
                u.dirs -= c.get::<_, i64>(4);
                u.incomplete = true;
            }
        }
    }
    Ok(())
}

/// Every host's roots, one line each.
async fn du_roots(g: &Global, client: &Client) -> anyhow::Result<ExitCode> {
    let rows = client
        .query(
            &format!(
                "SELECT {USAGE_COLUMNS}, host FROM fsindex.entries WHERE parent_id IS NULL ORDER BY host, path"
            ),
            &[],
        )
        .await
        .map_err(db)?;
    for r in &rows {
        let host: &str = r.get(11);
        let (_, mut u) = usage_of(r);
        let links = client
            .query(
                "SELECT DISTINCT ON (dev, ino) blocks, size FROM fsindex.entries
                 WHERE host = $1 AND nlink > 1 AND kind <> 1 AND path LIKE $2",
                &[
                    &host,
                    &format!(
                        "{}%",
                        like_literal(&format!("{}/", u.path.trim_end_matches('/')))
                    ),
                ],
            )
            .await
            .map_err(db)?;
        for l in &links {
            u.bytes += l.get::<_, i64>(0) * 512;
            u.apparent += l.get::<_, i64>(1);
            u.files += 1;
        }
        let path = u.path.clone();
        hide_closed(client, host, &path, &mut [&mut u]).await?;
        if g.json {
            println!("{}", u.json(host, 0));
        } else {
            println!("{:>10}  {host}:{}", size(u.bytes as u64), u.path);
        }
    }
    Ok(ExitCode::SUCCESS)
}

#[derive(Debug, clap::Args)]
pub struct DupesArgs {
    /// Only files at least this many bytes.
    #[arg(long, default_value_t = 1, value_name = "BYTES")]
    min_size: i64,
}

pub async fn dupes(g: &Global, client: &Client, a: &DupesArgs) -> anyhow::Result<ExitCode> {
    let rows = client
        .query(
            "SELECT size, hash, host, path, dev, ino, blocks FROM fsindex.entries e
             WHERE kind = 0 AND size >= $1 AND hash IS NOT NULL AND (size, hash) IN (
               SELECT size, hash FROM fsindex.items
               WHERE kind = 0 AND size >= $1 AND hash IS NOT NULL
               GROUP BY size, hash HAVING count(DISTINCT (host, dev, ino)) > 1)
             ORDER BY size DESC, hash, host, path",
            &[&a.min_size.max(1)],
        )
        .await
        .map_err(db)?;
    // (size, hash) -> copy (host, dev, ino) -> (paths, allocated bytes)
    type Copies = BTreeMap<(String, i64, i64), (Vec<String>, i64)>;
    let mut groups: Vec<((i64, Vec<u8>), Copies)> = Vec::new();
    for r in &rows {
        let key = (r.get::<_, i64>(0), r.get::<_, Vec<u8>>(1));
        if groups.last().is_none_or(|(k, _)| *k != key) {
            groups.push((key, BTreeMap::new()));
        }
        let copies = &mut groups.last_mut().expect("pushed").1;
        let host: String = r.get(2);
        let c = copies
            .entry((host.clone(), r.get(4), r.get(5)))
            .or_insert_with(|| (Vec::new(), r.get::<_, i64>(6) * 512));
        c.0.push(format!("{host}:{}", r.get::<_, &str>(3)));
    }
    let mut lines: Vec<(i64, Value, String)> = Vec::new();
    for ((sz, hash), copies) in &groups {
        let n = copies.len() as i64;
        let reclaimable = sz * (n - 1);
        let most = copies.values().map(|c| c.1).max().unwrap_or(0);
        let allocated: i64 = copies.values().map(|c| c.1).sum::<i64>() - most;
        let hex: String = hash.iter().map(|b| format!("{b:02x}")).collect();
        let copies_json: Vec<Vec<&String>> =
            copies.values().map(|c| c.0.iter().collect()).collect();
        let hosts: Vec<&str> = {
            let mut h: Vec<&str> = copies.keys().map(|k| k.0.as_str()).collect();
            h.dedup();
            h
        };
        let v = json!({
            "size": sz,
            "hash": hex,
            "hosts": hosts,
            "paths": copies.values().flat_map(|c| c.0.iter()).collect::<Vec<_>>(),
            "copies": copies_json,
            "reclaimable_bytes": reclaimable,
            "reclaimable_allocated_bytes": allocated,
        });
        let text = format!(
            "{} x {} copies, {} reclaimable  {}\n{}",
            size(*sz as u64),
            n,
            size(reclaimable as u64),
            &hex[..16.min(hex.len())],
            copies
                .values()
                .map(|c| format!("    {}", c.0.join("  (hard links: ")))
                .collect::<Vec<_>>()
                .join("\n")
        );
        lines.push((reclaimable, v, text));
    }
    lines.sort_by_key(|l| std::cmp::Reverse(l.0));
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for (i, (_, v, text)) in lines.iter().enumerate() {
        if g.json {
            writeln!(out, "{v}")?;
        } else {
            if i > 0 {
                writeln!(out)?;
            }
            writeln!(out, "{text}")?;
        }
    }
    out.flush()?;
    if !g.json {
        eprintln!("{} groups", count(lines.len() as u64));
    }
    Ok(ExitCode::SUCCESS)
}

pub async fn hosts(g: &Global, client: &Client) -> anyhow::Result<ExitCode> {
    let rows = client
        .query(
            "SELECT h.host, h.epoch, h.seq, extract(epoch FROM h.shipped_at)::float8, h.batch_ns,
                    (SELECT count(*) FROM fsindex.items e WHERE e.host = h.host),
                    (SELECT count(*) FROM fsindex.items e WHERE e.host = h.host AND e.parent_id IS NULL)
             FROM fsindex.hosts h ORDER BY h.host",
            &[],
        )
        .await
        .map_err(db)?;
    for r in &rows {
        let (host, epoch, seq): (&str, i64, i64) = (r.get(0), r.get(1), r.get(2));
        let shipped = (r.get::<_, f64>(3) * 1e9) as i64;
        let (entries, roots): (i64, i64) = (r.get(5), r.get(6));
        if g.json {
            println!(
                "{}",
                json!({
                    "host": host,
                    "entries": entries,
                    "roots": roots,
                    "epoch": epoch,
                    "seq": seq,
                    "shipped_at": rfc3339(shipped),
                })
            );
        } else {
            println!(
                "{host}  {} entries in {} roots, batch {seq}, last shipped {}",
                count(entries as u64),
                roots,
                rfc3339(shipped)
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn like_patterns_are_literal() {
        assert_eq!(like_literal("50%_a\\b"), "50\\%\\_a\\\\b");
    }
}
