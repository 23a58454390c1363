//! Times `Snapshot::search` on an existing index.db, without a daemon:
//!
//!     cargo run --release --example search_profile -- INDEX.DB REPS QUERY...
use std::time::Instant;
fn main() {
    let mut args = std::env::args().skip(1);
    let db = args.next().unwrap();
    let reps: usize = args.next().unwrap().parse().unwrap();
    let conn =
        rusqlite::Connection::open_with_flags(&db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap();
    let t = Instant::now();
    let s = fsindexd::index::Snapshot::load(&conn).unwrap();
    eprintln!(
        "load {} ms heap {}",
        t.elapsed().as_millis(),
        s.heap_bytes()
    );
    for q in args {
        let query = fsindexd::queries::query::Query::parse(&q).unwrap();
        let mut us = Vec::new();
        let mut total = 0;
        for _ in 0..reps {
            let t = Instant::now();
            let (n, f) = s.search(&query, fsindexd::queries::search::Sort::Relevance, 0, false);
            us.push(t.elapsed().as_micros());
            total = n;
            std::hint::black_box(f);
        }
        us.sort();
        println!(
            "{q:20} total {total:8} p50 {:6} us p99 {:6} us max {:6}",
            us[us.len() / 2],
            us[us.len() * 99 / 100],
            us[us.len() - 1]
        );
    }
}
