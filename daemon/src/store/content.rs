//! The content index's tables (migrations 0004 and 0006): `content_fts`
//! (contentless FTS5, rowid = entry id), `content_state` (what was extracted
//! from which state of each file, so nothing is extracted twice),
//! `content_queue` (files waiting to be read, persistent across restarts)
//! `content_text` (the text itself, deflate-compressed, so it can be
//! read back and snippets cut from it without opening the file again) and
//! `content_stem` (migration 0011: the Snowball stems of each file's words,
//! in its language, so words match in their forms; see [`super::stem`]).
//! Writes go through the single writer ([`super::Op`]); this module holds
//! the SQL.

use std::collections::HashMap;

use rusqlite::{Connection, params};

use crate::Error;

/// What was extracted from one file, to be written by the writer.
#[derive(Clone, Debug)]
pub struct ContentRow {
    pub entry_id: i64,
    /// The file's size and mtime when it was read.
    pub size: u64,
    pub mtime_ns: i64,
    pub extractor: String,
    pub version: u32,
    /// `ok`, or the failure's reason (`too_big`, `timeout`, `parse`, ...).
    pub status: String,
    pub detail: String,
    /// The text to index (`None` when the file has none).
    pub text: Option<String>,
    /// How the file's bytes were decoded (see `Extracted::encoding`).
    pub encoding: String,
    /// The language its words were stemmed in (`en`; '' without text).
    pub lang: String,
    /// Its stems, as `content_stem` indexes them ([`super::stem::stems`]).
    pub stems: String,
    pub truncated: bool,
    pub at: i64,
}

/// The state a file's content row was made from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Made {
    pub size: u64,
    pub mtime_ns: i64,
    pub version: u32,
}

/// Every content row's state, by entry id.
pub fn states(conn: &Connection) -> Result<HashMap<u32, Made>, Error> {
    let mut stmt =
        // A file the extractor could not be started for ('sandbox': the
        // child's binary missing, say) is not done: read again next start.
        conn.prepare_cached(
            "SELECT entry_id, size, mtime_ns, version FROM content_state WHERE status <> 'sandbox'",
        )?;
    let rows = stmt.query_map([], |r| {
        Ok((
            r.get::<_, i64>(0)? as u32,
            Made {
                size: r.get::<_, i64>(1)? as u64,
                mtime_ns: r.get(2)?,
                version: r.get(3)?,
            },
        ))
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Up to `n` queued entry ids.
pub fn queued(conn: &Connection, n: usize) -> Result<Vec<i64>, Error> {
    let mut stmt = conn.prepare_cached("SELECT entry_id FROM content_queue LIMIT ?1")?;
    let rows = stmt.query_map([n as i64], |r| r.get(0))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// How many files are queued.
pub fn queued_count(conn: &Connection) -> Result<u64, Error> {
    Ok(
        conn.query_row("SELECT COUNT(*) FROM content_queue", [], |r| {
            r.get::<_, i64>(0)
        })? as u64,
    )
}

/// Every queued entry id.
pub fn all_queued(conn: &Connection) -> Result<Vec<i64>, Error> {
    queued(conn, usize::MAX >> 1)
}

/// What a file matched through its stems alone (`content:invoices` in a
/// text that says only "invoice") scores: bm25 scores are negative, so
/// every exact match ranks above every stem-only one.
pub const STEM_ONLY: f64 = 1000.0;

/// The files whose text holds `words`, with their scores (lower is better):
///
/// - one word (`invoices`): every file holding a word of its stem in the
///   file's language, scored by the stems' bm25 ([`super::stem`]); a file
///   that holds the word as written keeps that score, one that holds only
///   another form gets [`STEM_ONLY`] added, so every exact match ranks
///   above every stem-only one;
/// - `=word`, or several words (a phrase): exactly these words, in this
///   order (the query parser turns a quoted value into `=...`), scored by
///   their own bm25;
/// - a trailing `*` makes the last word a prefix (`invo*`: invoice,
///   invoiced, involve).
///
/// bm25 is computed once for a word: over its stems. It is most of a
/// common word's match (a lookup of each file's length per row): scoring
/// the exact matches again (as an earlier version did) took half of
/// `content:copyright`'s 3,554-file match, for an order that differs only
/// among the exact matches, now ranked by how often the word occurs in any
/// form.
pub fn matching(conn: &Connection, words: &str) -> Result<HashMap<u32, f64>, Error> {
    if let Some(exact) = words.strip_prefix('=') {
        return matching_exactly(conn, exact);
    }
    if words.trim_end().ends_with('*') {
        return matching_exactly(conn, words);
    }
    // Only the languages some file is in (migration 0018's index).
    let mut held = conn.prepare_cached("SELECT 1 FROM content_state WHERE lang = ?1 LIMIT 1")?;
    let tokens = super::stem::query_tokens_in(words, |code| {
        // A failed probe keeps the language: more terms, the same answer.
        held.exists([code]).unwrap_or(true)
    });
    std::mem::drop(held);
    if tokens.is_empty() {
        return matching_exactly(conn, words);
    }
    let exact = ids_matching(conn, "content_fts", &phrase_of(words))?;
    // Stems are letters and digits only: quoted as they are.
    let any: Vec<String> = tokens.iter().map(|t| format!("\"{t}\"")).collect();
    let mut stmt = conn.prepare_cached(
        "SELECT rowid, bm25(content_stem) FROM content_stem WHERE content_stem MATCH ?1",
    )?;
    let rows = stmt.query_map([any.join(" OR ")], |r| {
        Ok((r.get::<_, i64>(0)? as u32, r.get::<_, f64>(1)?))
    })?;
    let mut hits = HashMap::with_capacity(exact.len());
    for row in rows {
        let (id, score) = row?;
        let exactly = exact.binary_search(&id).is_ok();
        hits.insert(id, if exactly { score } else { STEM_ONLY + score });
    }
    // A file holding the word with no stems of it (a row from before
    // migration 0011, a language without a stemmer): last of the exact
    // matches (bm25 scores are below 0).
    for id in exact {
        hits.entry(id).or_insert(0.0);
    }
    Ok(hits)
}

/// The FTS5 query for `words` as a phrase; a trailing `*` makes the last
/// word a prefix.
fn phrase_of(words: &str) -> String {
    let (words, prefix) = match words.trim_end().strip_suffix('*') {
        Some(w) if w.chars().any(char::is_alphanumeric) => (w.trim_end_matches('*'), true),
        _ => (words, false),
    };
    let mut phrase = format!("\"{}\"", words.replace('"', "\"\""));
    if prefix {
        phrase.push_str(" *");
    }
    phrase
}

/// The ids of the rows of FTS5 table `table` matching `fts_query`,
/// ascending (no score: the doclist only).
fn ids_matching(conn: &Connection, table: &str, fts_query: &str) -> Result<Vec<u32>, Error> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT rowid FROM {table} WHERE {table} MATCH ?1 ORDER BY rowid"
    ))?;
    let rows = stmt.query_map([fts_query], |r| Ok(r.get::<_, i64>(0)? as u32))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// The files whose text holds `words` in that order (a phrase), with their
/// bm25 scores (lower is better). A trailing `*` makes the last word a
/// prefix.
fn matching_exactly(conn: &Connection, words: &str) -> Result<HashMap<u32, f64>, Error> {
    let mut stmt = conn.prepare_cached(
        "SELECT rowid, bm25(content_fts) FROM content_fts WHERE content_fts MATCH ?1",
    )?;
    let rows = stmt.query_map([phrase_of(words)], |r| {
        Ok((r.get::<_, i64>(0)? as u32, r.get::<_, f64>(1)?))
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// A file's text as the content index keeps it, with the state it was
/// extracted from.
#[derive(Clone, Debug)]
pub struct StoredText {
    pub made: Made,
    pub extractor: String,
    pub encoding: String,
    /// The language its words were stemmed in (`en`; '' for a row made
    /// before migration 0011).
    pub lang: String,
    pub truncated: bool,
    pub text: String,
}

/// The stored text of entry `id`; `None` when the index holds none (not a
/// content file, not read yet, or its extraction failed).
pub fn text(conn: &Connection, id: i64) -> Result<Option<StoredText>, Error> {
    let mut stmt = conn.prepare_cached(
        "SELECT s.size, s.mtime_ns, s.version, s.extractor, s.truncated, t.encoding, t.text, s.lang
         FROM content_state s JOIN content_text t ON t.entry_id = s.entry_id
         WHERE s.entry_id = ?1 AND s.status = 'ok'",
    )?;
    let mut rows = stmt.query([id])?;
    let Some(r) = rows.next()? else {
        return Ok(None);
    };
    let packed: Vec<u8> = r.get(6)?;
    Ok(Some(StoredText {
        made: Made {
            size: r.get::<_, i64>(0)? as u64,
            mtime_ns: r.get(1)?,
            version: r.get(2)?,
        },
        extractor: r.get(3)?,
        truncated: r.get(4)?,
        encoding: r.get(5)?,
        lang: r.get(7)?,
        text: unpack(&packed)?,
    }))
}

/// The extractor that read entry `id`'s stored text (`mbox`, `text`, ...);
/// `None` when the index holds none. One row of `content_state`, no text:
/// a search asks it of every file of no known extension it lists.
pub fn extractor(conn: &Connection, id: i64) -> Result<Option<String>, Error> {
    let mut stmt = conn.prepare_cached(
        "SELECT extractor FROM content_state WHERE entry_id = ?1 AND status = 'ok'",
    )?;
    let mut rows = stmt.query([id])?;
    Ok(match rows.next()? {
        Some(r) => Some(r.get(0)?),
        None => None,
    })
}

/// Text as `content_text` keeps it: raw deflate, fast level (extracted
/// text shrinks 3-4x; the worker's time goes to parsing, not to this).
fn pack(text: &str) -> Vec<u8> {
    use std::io::Write;
    let mut z = flate2::write::DeflateEncoder::new(
        Vec::with_capacity(text.len() / 3),
        flate2::Compression::fast(),
    );
    // Writing to a Vec cannot fail.
    let _ = z.write_all(text.as_bytes());
    z.finish().unwrap_or_default()
}

fn unpack(packed: &[u8]) -> Result<String, Error> {
    use std::io::Read;
    let mut text = String::new();
    flate2::read::DeflateDecoder::new(packed).read_to_string(&mut text)?;
    Ok(text)
}

/// One row per content state: (entry id, status, text bytes).
pub fn outcomes(conn: &Connection) -> Result<Vec<(u32, String, u64)>, Error> {
    let mut stmt = conn.prepare_cached("SELECT entry_id, status, text_bytes FROM content_state")?;
    let rows = stmt.query_map([], |r| {
        Ok((
            r.get::<_, i64>(0)? as u32,
            r.get(1)?,
            r.get::<_, i64>(2)? as u64,
        ))
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Bytes the FTS index takes in the database file.
pub fn fts_bytes(conn: &Connection) -> Result<u64, Error> {
    let n: Option<i64> = conn.query_row(
        "SELECT SUM(pgsize) FROM dbstat WHERE name IN ('content_fts_data', 'content_fts_idx', 'content_fts_config', 'content_fts_docsize')",
        [],
        |r| r.get(0),
    )?;
    Ok(n.unwrap_or(0) as u64)
}

/// Writes one file's content row (in the writer's transaction): its text
/// replaces what the index held for it, and it leaves the queue.
pub fn put(tx: &Connection, row: &ContentRow) -> Result<(), Error> {
    // A file that left the index meanwhile gets no row.
    let exists: bool = tx
        .prepare_cached("SELECT 1 FROM entries WHERE id=?1")?
        .exists([row.entry_id])?;
    if !exists {
        tx.prepare_cached("DELETE FROM content_queue WHERE entry_id=?1")?
            .execute([row.entry_id])?;
        return Ok(());
    }
    tx.prepare_cached("DELETE FROM content_fts WHERE rowid=?1")?
        .execute([row.entry_id])?;
    tx.prepare_cached("DELETE FROM content_stem WHERE rowid=?1")?
        .execute([row.entry_id])?;
    if !row.stems.is_empty() {
        tx.prepare_cached("INSERT INTO content_stem (rowid, body) VALUES (?1, ?2)")?
            .execute(params![row.entry_id, row.stems])?;
    }
    let bytes = row.text.as_ref().map_or(0, |t| t.len());
    if let Some(text) = &row.text
        && !text.is_empty()
    {
        tx.prepare_cached("INSERT INTO content_fts (rowid, body) VALUES (?1, ?2)")?
            .execute(params![row.entry_id, text])?;
    }
    match &row.text {
        Some(text) if row.status == "ok" => {
            tx.prepare_cached(
                "INSERT OR REPLACE INTO content_text (entry_id, encoding, text) VALUES (?1, ?2, ?3)",
            )?
            .execute(params![row.entry_id, row.encoding, pack(text)])?;
        }
        _ => {
            tx.prepare_cached("DELETE FROM content_text WHERE entry_id=?1")?
                .execute([row.entry_id])?;
        }
    }
    tx.prepare_cached(
        "INSERT OR REPLACE INTO content_state
         (entry_id, size, mtime_ns, extractor, version, status, detail, text_bytes, truncated, extracted_at, lang)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
    )?
    .execute(params![
        row.entry_id,
        row.size as i64,
        row.mtime_ns,
        row.extractor,
        row.version,
        row.status,
        row.detail,
        bytes as i64,
        row.truncated,
        row.at,
        row.lang
    ])?;
    tx.prepare_cached("DELETE FROM content_queue WHERE entry_id=?1")?
        .execute([row.entry_id])?;
    Ok(())
}

/// Queues files to be read.
pub fn queue(tx: &Connection, ids: &[i64]) -> Result<(), Error> {
    let mut stmt =
        tx.prepare_cached("INSERT OR IGNORE INTO content_queue (entry_id) VALUES (?1)")?;
    for id in ids {
        stmt.execute([id])?;
    }
    Ok(())
}

/// Forgets files' content (content turned off for them, or they became
/// sensitive): their text leaves the index.
pub fn drop(tx: &Connection, ids: &[i64]) -> Result<(), Error> {
    for id in ids {
        tx.prepare_cached("DELETE FROM content_fts WHERE rowid=?1")?
            .execute([id])?;
        tx.prepare_cached("DELETE FROM content_stem WHERE rowid=?1")?
            .execute([id])?;
        tx.prepare_cached("DELETE FROM content_state WHERE entry_id=?1")?
            .execute([id])?;
        tx.prepare_cached("DELETE FROM content_queue WHERE entry_id=?1")?
            .execute([id])?;
        tx.prepare_cached("DELETE FROM content_text WHERE entry_id=?1")?
            .execute([id])?;
    }
    Ok(())
}

/// Roots added with `--content`.
pub fn content_roots(conn: &Connection) -> Result<Vec<Vec<u8>>, Error> {
    let mut stmt = conn.prepare_cached("SELECT path FROM roots WHERE content <> 0")?;
    let rows = stmt.query_map([], |r| r.get(0))?;
    Ok(rows.collect::<Result<_, _>>()?)
}
