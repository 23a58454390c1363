//! The least SQLite work that writing a first index takes: copies the entry
//! and folder-total rows of an existing index.db into a fresh file with the
//! daemon's own SQLite (the bundled one), its schema and its pragmas, with
//! no walk, no binding of values, no aggregates and no name index in
//! memory. benches/floor.sh times it; an initial index can be no cheaper
//! than the walk's floor plus this.
//!
//!     cargo run --release --example store_floor -- SRC.DB DST.DB wal|off
//!
//! `wal`: WAL, `synchronous=NORMAL`, the indexes in place, 50,000 rows per
//! transaction (what the daemon does). `off`: no journal, no sync, one
//! transaction, the indexes built at the end (the cheapest SQLite allows).
use rusqlite::Connection;

const TABLES: &str = "
CREATE TABLE entries (
    id INTEGER PRIMARY KEY, parent_id INTEGER, name BLOB NOT NULL,
    kind INTEGER NOT NULL, size INTEGER NOT NULL, blocks INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL, dev INTEGER NOT NULL, ino INTEGER NOT NULL,
    nlink INTEGER NOT NULL, mode INTEGER NOT NULL, flags INTEGER NOT NULL DEFAULT 0);
CREATE TABLE dir_totals (
    id INTEGER PRIMARY KEY, bytes INTEGER NOT NULL, apparent INTEGER NOT NULL,
    files INTEGER NOT NULL, dirs INTEGER NOT NULL, incomplete INTEGER NOT NULL);";
const INDEXES: &str = "
CREATE UNIQUE INDEX entries_by_parent ON entries(parent_id, name);
CREATE INDEX entries_multilink ON entries(ino) WHERE nlink > 1 AND kind <> 1;";

fn main() -> rusqlite::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [src, dst, mode] = &args[..] else {
        eprintln!("usage: store_floor SRC.DB DST.DB wal|off");
        std::process::exit(2);
    };
    for ext in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{dst}{ext}"));
    }
    let conn = Connection::open(dst)?;
    let wal = match mode.as_str() {
        "wal" => true,
        "off" => false,
        _ => {
            eprintln!("mode must be wal or off, not {mode}");
            std::process::exit(2);
        }
    };
    if wal {
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
    } else {
        conn.pragma_update(None, "journal_mode", "OFF")?;
        conn.pragma_update(None, "synchronous", "OFF")?;
    }
    conn.pragma_update(None, "cache_size", -16 * 1024)?;
    conn.execute_batch(TABLES)?;
    if wal {
        conn.execute_batch(INDEXES)?;
    }
    conn.execute("ATTACH ?1 AS src", [src])?;
    let last: i64 = conn.query_row("SELECT COALESCE(MAX(id), 0) FROM src.entries", [], |r| {
        r.get(0)
    })?;
    let step = if wal { 50_000 } else { last + 1 };
    let t = std::time::Instant::now();
    let mut rows = 0;
    let mut lo = 0;
    while lo <= last {
        let tx = conn.unchecked_transaction()?;
        rows += tx.execute(
            "INSERT INTO entries SELECT * FROM src.entries WHERE id > ?1 AND id <= ?2",
            [lo, lo + step],
        )?;
        tx.execute(
            "INSERT INTO dir_totals SELECT * FROM src.dir_totals WHERE id > ?1 AND id <= ?2",
            [lo, lo + step],
        )?;
        tx.commit()?;
        lo += step;
    }
    if !wal {
        conn.execute_batch(INDEXES)?;
    }
    if wal {
        conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
    }
    eprintln!(
        "{rows} entries copied ({mode}) in {} ms",
        t.elapsed().as_millis()
    );
    Ok(())
}
