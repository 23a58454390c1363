//! A first index's held rows in a compact form.
//!
//! While a root's first index is held back from SQLite
//! ([`super::backlog`]), its inserted rows wait in memory until the walk
//! ends. As [`Op::Insert`]s they cost about 170 bytes an entry (the row,
//! its name's own allocation, the enum around it), which put a 1M-entry
//! first index at 237 MiB RSS at *ready*. Packed here they take about a
//! fifth of that: each row is a few LEB128 numbers, most of them the
//! difference from the row before it (ids and inodes come in runs, a
//! folder's files share a device and near times), followed by its name's
//! bytes. Packing also moves the row itself on to the name index instead
//! of a copy of it.
//!
//! Rows come back in the order they were packed, as the writer commits
//! them.

use super::model::{EntryRow, Kind, Op};

/// Inserted rows, packed in order.
#[derive(Debug, Default)]
pub(super) struct PackedRows {
    bytes: Vec<u8>,
    rows: usize,
    /// The previous row's figures that the next one is told against.
    last: Last,
}

/// The figures of the row packed last (or read last).
#[derive(Clone, Copy, Debug, Default)]
struct Last {
    id: i64,
    mtime_ns: i64,
    dev: u64,
    ino: u64,
}

fn put(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// A signed difference as an unsigned number (zigzag): small either way.
fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

fn unzigzag(v: u64) -> i64 {
    (v >> 1) as i64 ^ -((v & 1) as i64)
}

fn put_signed(out: &mut Vec<u8>, v: i64) {
    put(out, zigzag(v));
}

fn get(b: &[u8], at: &mut usize) -> u64 {
    let mut v = 0u64;
    let mut shift = 0;
    while let Some(&byte) = b.get(*at) {
        *at += 1;
        v |= u64::from(byte & 0x7f) << shift;
        if byte < 0x80 {
            break;
        }
        shift += 7;
    }
    v
}

fn get_signed(b: &[u8], at: &mut usize) -> i64 {
    unzigzag(get(b, at))
}

impl PackedRows {
    pub(super) fn len(&self) -> usize {
        self.rows
    }

    /// Gives back what growing left over (a full piece).
    pub(super) fn shrink(&mut self) {
        self.bytes.shrink_to_fit();
    }

    /// Packs one row (after the ones packed before).
    pub(super) fn push(&mut self, row: &EntryRow) {
        let out = &mut self.bytes;
        let last = &mut self.last;
        put_signed(out, row.id.wrapping_sub(last.id));
        // 0: no parent (a root's folder); else the distance back from the
        // row's own id, plus one.
        match row.parent_id {
            None => put(out, 0),
            Some(p) => put(out, zigzag(row.id.wrapping_sub(p)).wrapping_add(1)),
        }
        out.push(row.kind as u8);
        put(out, u64::from(row.mode));
        put(out, u64::from(row.flags));
        put(out, row.size);
        put(out, row.blocks);
        put_signed(out, row.mtime_ns.wrapping_sub(last.mtime_ns));
        put_signed(out, row.dev.wrapping_sub(last.dev) as i64);
        put_signed(out, row.ino.wrapping_sub(last.ino) as i64);
        put(out, row.nlink);
        put(out, row.name.len() as u64);
        out.extend_from_slice(&row.name);
        *last = Last {
            id: row.id,
            mtime_ns: row.mtime_ns,
            dev: row.dev,
            ino: row.ino,
        };
        self.rows += 1;
    }

    /// The rows, in order, as the writer's inserts.
    pub(super) fn into_ops(self) -> Vec<Op> {
        let b = &self.bytes;
        let mut out = Vec::with_capacity(self.rows);
        let mut at = 0;
        let mut last = Last::default();
        while at < b.len() {
            let id = last.id.wrapping_add(get_signed(b, &mut at));
            let parent_id = match get(b, &mut at) {
                0 => None,
                d => Some(id.wrapping_sub(unzigzag(d.wrapping_sub(1)))),
            };
            let kind = Kind::from_i64(i64::from(b[at]));
            at += 1;
            let mode = get(b, &mut at) as u32;
            let flags = get(b, &mut at) as u32;
            let size = get(b, &mut at);
            let blocks = get(b, &mut at);
            let mtime_ns = last.mtime_ns.wrapping_add(get_signed(b, &mut at));
            let dev = last.dev.wrapping_add(get_signed(b, &mut at) as u64);
            let ino = last.ino.wrapping_add(get_signed(b, &mut at) as u64);
            let nlink = get(b, &mut at);
            let len = get(b, &mut at) as usize;
            let name = b[at..at + len].to_vec();
            at += len;
            last = Last {
                id,
                mtime_ns,
                dev,
                ino,
            };
            out.push(Op::Insert(EntryRow {
                id,
                parent_id,
                name,
                kind,
                size,
                blocks,
                mtime_ns,
                dev,
                ino,
                nlink,
                mode,
                flags,
            }));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rows of every shape come back equal, in order: extreme figures,
    /// ids and inodes going back, no parent, names that are not UTF-8.
    #[test]
    fn rows_come_back_as_they_were_packed() {
        let mut rows = Vec::new();
        let mut r = EntryRow::for_test(1, None, b"/home/user", Kind::Dir);
        r.mtime_ns = 1_700_000_000_123_456_789;
        r.dev = 0xfd01;
        rows.push(r);
        let kinds = [Kind::File, Kind::Dir, Kind::Symlink, Kind::Other];
        for i in 2..300i64 {
            let mut r = EntryRow::for_test(
                if i % 7 == 0 { i + 1000 } else { i },
                Some(if i % 5 == 0 { 1 } else { i - 1 }),
                format!("name {i} caf\u{e9}").as_bytes(),
                kinds[i as usize % 4],
            );
            r.size = (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (i % 64);
            r.blocks = r.size / 512;
            r.mtime_ns = if i % 3 == 0 {
                -i * 1_000_000_007
            } else {
                i64::MAX - i
            };
            r.dev = if i % 11 == 0 { u64::MAX } else { 0xfd01 };
            r.ino = if i % 2 == 0 { 1u64 << 63 } else { i as u64 };
            r.nlink = i as u64 % 4;
            r.mode = 0o100_644 + i as u32;
            r.flags = i as u32 % 2;
            rows.push(r);
        }
        let mut odd = EntryRow::for_test(5000, Some(4999), b"\xff\xfe raw\nline", Kind::File);
        odd.ino = 0;
        odd.dev = 0;
        rows.push(odd);
        rows.push(EntryRow::for_test(6000, Some(5000), b"", Kind::File));
        let mut packed = PackedRows::default();
        for r in &rows {
            packed.push(r);
        }
        assert_eq!(packed.len(), rows.len());
        let back: Vec<EntryRow> = packed
            .into_ops()
            .into_iter()
            .map(|op| match op {
                Op::Insert(r) => r,
                other => panic!("not an insert: {other:?}"),
            })
            .collect();
        assert_eq!(back, rows);
    }
}
