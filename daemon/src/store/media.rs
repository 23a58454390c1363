//! The media metadata tables: what photos, songs, videos and documents say
//! about themselves, one `media` row per file read (migrations 0009,
//! 0010), valid for the `(dev, ino, size, mtime_ns, ctime_ns)` it was read
//! for; and one small `media_unread` row per file that could not be read
//! (migration 0022): a print of what it was tried for and its reason's
//! number in `media_reasons`. Writes go through the single
//! writer ([`super::Op::PutMedia`], [`super::Op::DropMedia`]); this module
//! holds the SQL.

use std::collections::HashMap;

use rusqlite::{Connection, OptionalExtension, params};

use crate::Error;
pub use fsindex_extract::media::Media;

/// The file state a row was read for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MediaKey {
    pub dev: u64,
    pub ino: u64,
    pub size: u64,
    pub mtime_ns: i64,
    pub ctime_ns: i64,
}

/// One file's row.
#[derive(Clone, Debug, PartialEq)]
pub struct MediaRow {
    pub entry_id: i64,
    /// The file state it was read for; for a failure read back from the
    /// index, only [`MediaRow::read_for`] is known and this is zero.
    pub key: MediaKey,
    pub version: u32,
    /// `ok`, or the failure's reason (`parse`, `timeout`, `unreadable`, ...).
    pub status: String,
    pub detail: String,
    pub media: Media,
    /// `media.taken` as unix seconds (the camera's clock read in the
    /// daemon's time zone, as `dm:` reads dates).
    pub taken_s: Option<i64>,
}

impl MediaRow {
    /// The [`read_for`] print of what it was read for.
    pub fn read_for(&self) -> u32 {
        read_for(self.key.size, self.key.mtime_ns, self.version)
    }
}

/// What a row was read for, in 32 bits: the file's size and mtime and the
/// reader's version, as the worker's sweep compares them with the index.
/// Stable across builds (it is stored); a file that changes gets another
/// print but for one chance in four billion, which leaves its old row.
pub fn read_for(size: u64, mtime_ns: i64, version: u32) -> u32 {
    // splitmix64's finaliser over the three, chained.
    fn mix(mut z: u64) -> u64 {
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    let h = mix(mix(mix(size) ^ mtime_ns as u64) ^ u64::from(version));
    // Never 0 (the worker's mark of a removed row).
    ((h ^ (h >> 32)) as u32).max(1)
}

/// What the worker compares with the index between reads, by entry id
/// (in no order: the worker sorts), over both tables.
pub fn states(conn: &Connection) -> Result<Vec<(u32, u32)>, Error> {
    let mut out: Vec<(u32, u32)> = Vec::new();
    let mut stmt = conn.prepare_cached("SELECT entry_id, size, mtime_ns, version FROM media")?;
    let mut rows = stmt.query([])?;
    while let Some(r) = rows.next()? {
        let (size, mtime, version): (i64, i64, u32) = (r.get(1)?, r.get(2)?, r.get(3)?);
        out.push((
            r.get::<_, i64>(0)? as u32,
            read_for(size as u64, mtime, version),
        ));
    }
    // As for content: 'sandbox' (the child could not be started) is read
    // again next start.
    let mut stmt = conn.prepare_cached(
        "SELECT entry_id, read_for FROM media_unread \
         WHERE reason NOT IN (SELECT id FROM media_reasons WHERE status = 'sandbox')",
    )?;
    let mut rows = stmt.query([])?;
    while let Some(r) = rows.next()? {
        out.push((r.get::<_, i64>(0)? as u32, r.get::<_, i64>(1)? as u32));
    }
    Ok(out)
}

const COLUMNS: &str = "entry_id, dev, ino, size, mtime_ns, ctime_ns, version, status, detail, \
     taken, taken_s, camera_make, camera_model, width, height, duration_ms, artist, album, \
     title, track, year, genre, gps_lat, gps_lon, pages, author";

fn row_of(r: &rusqlite::Row<'_>) -> rusqlite::Result<MediaRow> {
    Ok(MediaRow {
        entry_id: r.get(0)?,
        key: MediaKey {
            dev: r.get::<_, i64>(1)? as u64,
            ino: r.get::<_, i64>(2)? as u64,
            size: r.get::<_, i64>(3)? as u64,
            mtime_ns: r.get(4)?,
            ctime_ns: r.get(5)?,
        },
        version: r.get(6)?,
        status: r.get(7)?,
        detail: r.get(8)?,
        taken_s: r.get(10)?,
        media: Media {
            taken: r.get(9)?,
            camera_make: r.get(11)?,
            camera_model: r.get(12)?,
            width: r.get(13)?,
            height: r.get(14)?,
            duration_ms: r.get::<_, Option<i64>>(15)?.map(|n| n as u64),
            artist: r.get(16)?,
            album: r.get(17)?,
            title: r.get(18)?,
            track: r.get(19)?,
            year: r.get(20)?,
            genre: r.get(21)?,
            gps_lat: r.get(22)?,
            gps_lon: r.get(23)?,
            pages: r.get(24)?,
            author: r.get(25)?,
        },
    })
}

/// One entry's row, if it has one: read, or a failure (whose `key` is
/// zero; its `read_for` print is what it was tried for).
pub fn of_entry(conn: &Connection, id: i64) -> Result<Option<(MediaRow, u32)>, Error> {
    let sql = format!("SELECT {COLUMNS} FROM media WHERE entry_id=?1");
    if let Some(row) = conn
        .prepare_cached(&sql)?
        .query_row([id], row_of)
        .optional()?
    {
        let print = row.read_for();
        return Ok(Some((row, print)));
    }
    Ok(conn
        .prepare_cached(
            "SELECT u.read_for, r.status, r.detail FROM media_unread u \
             JOIN media_reasons r ON r.id = u.reason WHERE u.entry_id=?1",
        )?
        .query_row([id], |r| {
            Ok((
                MediaRow {
                    entry_id: id,
                    key: MediaKey::default(),
                    version: 0,
                    status: r.get(1)?,
                    detail: r.get(2)?,
                    media: Media::default(),
                    taken_s: None,
                },
                r.get::<_, i64>(0)? as u32,
            ))
        })
        .optional()?)
}

/// Every row read successfully (for the query filters).
pub fn all_ok(conn: &Connection) -> Result<Vec<MediaRow>, Error> {
    let sql = format!("SELECT {COLUMNS} FROM media WHERE status='ok'");
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map([], row_of)?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Entry id to date taken (unix seconds), for the rows that have one.
pub fn taken(conn: &Connection) -> Result<HashMap<u32, i64>, Error> {
    let mut stmt =
        conn.prepare_cached("SELECT entry_id, taken_s FROM media WHERE taken_s IS NOT NULL")?;
    let rows = stmt.query_map([], |r| Ok((r.get::<_, i64>(0)? as u32, r.get(1)?)))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Every file with a date taken, grouped by the folder holding it:
/// (folder id, files, earliest and latest year taken), the year read from
/// the camera's own date (`media.taken`'s first four digits). For `du`
/// and `map`'s "3,120 photos 2015-2024".
pub fn taken_by_folder(conn: &Connection) -> Result<Vec<(i64, u64, i32, i32)>, Error> {
    let mut stmt = conn.prepare_cached(
        "SELECT e.parent_id, COUNT(*), MIN(CAST(substr(m.taken, 1, 4) AS INTEGER)),
                MAX(CAST(substr(m.taken, 1, 4) AS INTEGER))
         FROM media m JOIN entries e ON e.id = m.entry_id
         WHERE m.status = 'ok' AND m.taken IS NOT NULL AND m.taken != ''
           AND e.parent_id IS NOT NULL
         GROUP BY e.parent_id",
    )?;
    let rows = stmt.query_map([], |r| {
        Ok((
            r.get::<_, i64>(0)?,
            r.get::<_, i64>(1)? as u64,
            r.get::<_, i64>(2)? as i32,
            r.get::<_, i64>(3)? as i32,
        ))
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Every file with a date taken: (entry id, year taken), one scan of
/// `media` with no join (the map finds each file's folder in the name
/// index).
pub fn taken_years(conn: &Connection) -> Result<Vec<(u32, i32)>, Error> {
    let mut stmt = conn.prepare_cached(
        "SELECT entry_id, CAST(substr(taken, 1, 4) AS INTEGER) FROM media
         WHERE status = 'ok' AND taken IS NOT NULL AND taken != ''",
    )?;
    let rows = stmt.query_map([], |r| {
        Ok((r.get::<_, i64>(0)? as u32, r.get::<_, i64>(1)? as i32))
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Rows by status (`ok`, `parse`, ...), for `status`. Prepared afresh,
/// not cached: a cached statement kept its `GROUP BY`'s sorter memory, 2 MB
/// at 1M entries, on each pooled connection that had run it (heaptrack);
/// `status` counts again only after a write that may change the count.
pub fn outcomes(conn: &Connection) -> Result<Vec<(String, u64)>, Error> {
    let mut stmt = conn.prepare(
        "SELECT status, COUNT(*) FROM media GROUP BY status UNION ALL \
         SELECT r.status, COUNT(*) FROM media_unread u JOIN media_reasons r ON r.id = u.reason \
         GROUP BY r.status",
    )?;
    let rows = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get::<_, i64>(1)? as u64)))?
        .collect::<Result<_, _>>()?;
    std::mem::drop(stmt);
    // The count read every failure's page: the pooled connection gives its
    // cache back rather than keep 2 MiB of them.
    conn.execute_batch("PRAGMA shrink_memory")?;
    Ok(rows)
}

/// Writes one file's row (in the writer's transaction), replacing the old.
pub fn put(tx: &Connection, row: &MediaRow) -> Result<(), Error> {
    // A file that left the index meanwhile gets no row.
    let exists: bool = tx
        .prepare_cached("SELECT 1 FROM entries WHERE id=?1")?
        .exists([row.entry_id])?;
    if !exists {
        return Ok(());
    }
    if row.status != "ok" {
        tx.prepare_cached("DELETE FROM media WHERE entry_id=?1")?
            .execute([row.entry_id])?;
        tx.prepare_cached("INSERT OR IGNORE INTO media_reasons (status, detail) VALUES (?1, ?2)")?
            .execute(params![row.status, row.detail])?;
        tx.prepare_cached(
            "INSERT OR REPLACE INTO media_unread (entry_id, read_for, reason) \
             SELECT ?1, ?2, id FROM media_reasons WHERE status=?3 AND detail=?4",
        )?
        .execute(params![
            row.entry_id,
            i64::from(row.read_for()),
            row.status,
            row.detail
        ])?;
        return Ok(());
    }
    tx.prepare_cached("DELETE FROM media_unread WHERE entry_id=?1")?
        .execute([row.entry_id])?;
    let m = &row.media;
    let sql = format!(
        "INSERT OR REPLACE INTO media ({COLUMNS}) VALUES \
         (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16,?17,?18,?19,?20,?21,?22,?23,?24,?25,?26)"
    );
    tx.prepare_cached(&sql)?.execute(params![
        row.entry_id,
        row.key.dev as i64,
        row.key.ino as i64,
        row.key.size as i64,
        row.key.mtime_ns,
        row.key.ctime_ns,
        row.version,
        row.status,
        row.detail,
        m.taken,
        row.taken_s,
        m.camera_make,
        m.camera_model,
        m.width,
        m.height,
        m.duration_ms.map(|n| n as i64),
        m.artist,
        m.album,
        m.title,
        m.track,
        m.year,
        m.genre,
        m.gps_lat,
        m.gps_lon,
        m.pages,
        m.author,
    ])?;
    Ok(())
}

/// Drops the rows of files that are no longer media files.
pub fn drop(tx: &Connection, ids: &[i64]) -> Result<(), Error> {
    let mut stmt = tx.prepare_cached("DELETE FROM media WHERE entry_id=?1")?;
    let mut unread = tx.prepare_cached("DELETE FROM media_unread WHERE entry_id=?1")?;
    for id in ids {
        stmt.execute([id])?;
        unread.execute([id])?;
    }
    Ok(())
}
