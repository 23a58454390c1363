//! What a row's Stat adds to what Search returns: the media metadata the
//! daemon read from a photo's, song's, video's or document's headers
//! (issue 32) and the entry's tags (issue 34). Search rows carry neither,
//! so the window asks Stat for the rows it draws, and only while a column
//! that shows them is on (or for the row the preview shows), and keeps
//! the answers by path for as long as the row's size and mtime are those
//! it was read for. No egui and no I/O here: [`DetailsCache::wanted`]
//! says what to ask, [`DetailsCache::apply`] takes the answers.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use fsindex_proto::v1 as pb;

use crate::backend::{Row, RowKind};

/// Answers kept; past that the cache starts again (a long scroll through
/// a million rows does not keep them all).
pub const KEPT: usize = 20_000;
/// Paths asked in one request.
pub const BATCH: usize = 64;
/// A photo, song, video or document whose headers the daemon has not read
/// yet (it reads them in the background, after the scan) is asked again
/// after this long, a few times.
pub const RETRY: Duration = Duration::from_secs(3);
const TRIES: u32 = 5;

/// An optional column of the results table, off until chosen (the choice
/// is kept in `fsgui.toml`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Extra {
    /// Width × height in pixels (photos, videos).
    Dimensions,
    /// Length (songs, videos).
    Duration,
    /// When a photo was taken, as the camera wrote it.
    Taken,
    /// The entry's tags, the user's and the file's own.
    Tags,
}

impl Extra {
    pub const ALL: [Extra; 4] = [
        Extra::Dimensions,
        Extra::Duration,
        Extra::Taken,
        Extra::Tags,
    ];

    /// The column's header, and its name in `fsgui.toml`.
    pub fn title(self) -> &'static str {
        match self {
            Extra::Dimensions => "Dimensions",
            Extra::Duration => "Duration",
            Extra::Taken => "Taken",
            Extra::Tags => "Tags",
        }
    }

    /// The column's width at first, in points: what its usual values need.
    pub fn width(self) -> f32 {
        match self {
            Extra::Dimensions => 90.0,
            Extra::Duration => 65.0,
            Extra::Taken => 135.0,
            Extra::Tags => 100.0,
        }
    }

    /// The column named `name` (as [`Extra::title`], any case).
    pub fn named(name: &str) -> Option<Extra> {
        Extra::ALL
            .into_iter()
            .find(|e| e.title().eq_ignore_ascii_case(name))
    }

    /// What the cell shows for a row with these details.
    pub fn cell(self, d: &Details) -> String {
        let m = d.media.as_ref();
        match self {
            Extra::Dimensions => m.and_then(dimensions).unwrap_or_default(),
            Extra::Duration => m
                .and_then(|m| m.duration_ms)
                .map(duration)
                .unwrap_or_default(),
            Extra::Taken => m
                .and_then(|m| m.taken.as_deref())
                .map(taken)
                .unwrap_or_default(),
            Extra::Tags => d
                .tags
                .iter()
                .map(|t| t.name.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        }
    }
}

/// One tag on an entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EntryTag {
    pub name: String,
    /// Read from the file (`user.xdg.tags`, Finder), not set with fsindex.
    pub from_file: bool,
}

/// What Stat said about one path.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Details {
    /// Present once the daemon has read the file's headers; `status` other
    /// than `ok` says why nothing was read.
    pub media: Option<pb::MediaInfo>,
    /// The daemon has looked at the file's headers (`media` may still be
    /// absent: nothing to read, or not readable).
    pub read: bool,
    pub tags: Vec<EntryTag>,
}

impl Details {
    pub fn from_stat(s: pb::StatResponse) -> Details {
        let mut tags: Vec<EntryTag> = Vec::new();
        for t in s.tags {
            // A tag both set by the user and carried by the file is one.
            if !tags
                .iter()
                .any(|e| e.name.to_lowercase() == t.name.to_lowercase())
            {
                tags.push(EntryTag {
                    from_file: t.source != pb::TagSource::User as i32,
                    name: t.name,
                });
            }
        }
        Details {
            read: s.media.is_some(),
            media: s.media.filter(|m| m.status == "ok"),
            tags,
        }
    }

    /// The preview's lines: (label, value), for what is known.
    pub fn lines(&self) -> Vec<(&'static str, String)> {
        let mut out = Vec::new();
        if let Some(m) = &self.media {
            let camera = match (&m.camera_make, &m.camera_model) {
                // Models usually start with the make ("Canon EOS 80D").
                (Some(make), Some(model))
                    if model.to_lowercase().starts_with(&make.to_lowercase()) =>
                {
                    Some(model.clone())
                }
                (Some(make), Some(model)) => Some(format!("{make} {model}")),
                (a, b) => a.clone().or_else(|| b.clone()),
            };
            let text = |label, v: &Option<String>| v.clone().map(|v| (label, v));
            out.extend(m.taken.as_deref().map(|t| ("Taken", taken(t))));
            out.extend(camera.map(|c| ("Camera", c)));
            out.extend(dimensions(m).map(|d| ("Dimensions", d)));
            out.extend(m.duration_ms.map(|d| ("Duration", duration(d))));
            out.extend(text("Title", &m.title));
            out.extend(text("Artist", &m.artist));
            out.extend(text("Album", &m.album));
            out.extend(m.track.map(|t| ("Track", t.to_string())));
            out.extend(m.year.map(|y| ("Year", y.to_string())));
            out.extend(text("Genre", &m.genre));
            out.extend(m.pages.map(|p| ("Pages", p.to_string())));
            out.extend(text("Author", &m.author));
        }
        if !self.tags.is_empty() {
            let names: Vec<String> = self
                .tags
                .iter()
                .map(|t| {
                    if t.from_file {
                        format!("{} (file)", t.name)
                    } else {
                        t.name.clone()
                    }
                })
                .collect();
            out.push(("Tags", names.join(", ")));
        }
        out
    }
}

/// `493 × 312`.
pub fn dimensions(m: &pb::MediaInfo) -> Option<String> {
    Some(format!("{} × {}", m.width?, m.height?))
}

/// `0:03`, `3:20`, `1:02:03`: whole seconds, rounded.
pub fn duration(ms: u64) -> String {
    let s = (ms + 500) / 1000;
    let (h, m, s) = (s / 3600, s / 60 % 60, s % 60);
    if h > 0 {
        format!("{h}:{m:02}:{s:02}")
    } else {
        format!("{m}:{s:02}")
    }
}

/// `2019-06-14T10:30:00` (no time zone: the camera's clock) as
/// `2019-06-14 10:30:00`.
pub fn taken(t: &str) -> String {
    t.replacen('T', " ", 1)
}

/// A row asked about: its path, and the size and mtime the Search row
/// had (the answer is kept for those).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Asked {
    pub path: Vec<u8>,
    pub size: u64,
    pub mtime_ns: i64,
}

#[derive(Debug)]
struct Known {
    size: u64,
    mtime_ns: i64,
    at: Instant,
    /// Answers so far for this version of the file.
    tries: u32,
    details: Details,
}

impl Known {
    /// Headers the daemon may still read: worth asking again.
    fn unread(&self, kind: RowKind) -> bool {
        !self.details.read && has_media(kind) && self.tries < TRIES
    }
}

/// Whether the daemon reads this kind's headers (so a row without media
/// metadata may get some later).
fn has_media(kind: RowKind) -> bool {
    matches!(
        kind,
        RowKind::Image | RowKind::Audio | RowKind::Video | RowKind::Document
    )
}

/// Stat answers by path, each for the row's size and mtime it was read
/// with.
#[derive(Debug, Default)]
pub struct DetailsCache {
    known: HashMap<Vec<u8>, Known>,
    /// Asked and not answered yet.
    asked: HashSet<Vec<u8>>,
}

impl DetailsCache {
    /// The details of `row`, if known for the row as it is.
    pub fn get(&self, row: &Row) -> Option<&Details> {
        self.known
            .get(&row.path)
            .filter(|k| k.size == row.size && k.mtime_ns == row.mtime_ns)
            .map(|k| &k.details)
    }

    /// Whether `row` is to be asked about (again) at `now`.
    fn stale(&self, row: &Row, now: Instant) -> bool {
        match self.known.get(&row.path) {
            Some(k) if k.size == row.size && k.mtime_ns == row.mtime_ns => {
                k.unread(row.kind) && now.duration_since(k.at) >= RETRY
            }
            _ => true,
        }
    }

    /// Whether some of `rows` wait for the daemon to read their headers
    /// (the window looks again after [`RETRY`]).
    pub fn waiting<'a>(&self, rows: impl IntoIterator<Item = &'a Row>) -> bool {
        rows.into_iter().any(|r| match self.known.get(&r.path) {
            Some(k) if k.size == r.size && k.mtime_ns == r.mtime_ns => k.unread(r.kind),
            _ => has_media(r.kind),
        })
    }

    /// The rows among `rows` to ask Stat about (unknown, or known for an
    /// older version of the file, and not asked already), marked asked.
    pub fn wanted<'a>(
        &mut self,
        rows: impl IntoIterator<Item = &'a Row>,
        now: Instant,
    ) -> Vec<Asked> {
        let mut out = Vec::new();
        for r in rows {
            if self.stale(r, now) && !self.asked.contains(&r.path) {
                self.asked.insert(r.path.clone());
                out.push(Asked {
                    path: r.path.clone(),
                    size: r.size,
                    mtime_ns: r.mtime_ns,
                });
            }
        }
        out
    }

    /// Takes answers, each kept for the row as it was asked about (a Stat
    /// that failed gives empty details: not asked again until the row
    /// changes or [`DetailsCache::forget`]).
    pub fn apply(&mut self, answers: Vec<(Asked, Details)>, now: Instant) {
        if self.known.len() + answers.len() > KEPT {
            self.known.clear();
        }
        for (a, details) in answers {
            self.asked.remove(&a.path);
            let tries = match self.known.get(&a.path) {
                Some(k) if k.size == a.size && k.mtime_ns == a.mtime_ns => k.tries + 1,
                _ => 1,
            };
            let k = Known {
                size: a.size,
                mtime_ns: a.mtime_ns,
                at: now,
                tries,
                details,
            };
            self.known.insert(a.path, k);
        }
    }

    /// Forgets every answer (tags changed, the daemon came back).
    pub fn forget(&mut self) {
        self.known.clear();
        self.asked.clear();
    }
}

// The window's side: which columns are on, what is asked, what comes back.
impl crate::App {
    /// The optional columns on, in the order chosen.
    pub fn extras(&self) -> Vec<Extra> {
        self.settings
            .columns
            .iter()
            .filter_map(|c| Extra::named(c))
            .collect()
    }

    /// Turns a column on (at the end) or off, and keeps the choice.
    pub fn toggle_column(&mut self, column: Extra) {
        let on = self.extras().contains(&column);
        self.settings
            .columns
            .retain(|c| Extra::named(c) != Some(column));
        if !on {
            self.settings.columns.push(column.title().to_owned());
        }
        self.save_settings();
    }

    /// Asks Stat about those of `rows` not known yet, in batches.
    pub(crate) fn ask_details(&mut self, rows: Vec<Asked>) {
        let mut rows = rows.into_iter().peekable();
        while rows.peek().is_some() {
            let batch: Vec<Asked> = rows.by_ref().take(BATCH).collect();
            self.send(vec![crate::backend::Request::Details(batch)]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(path: &str, size: u64, mtime_ns: i64) -> Row {
        Row {
            path: path.as_bytes().to_vec(),
            name: path.rsplit('/').next().unwrap().to_owned(),
            folder: String::new(),
            kind: RowKind::Image,
            size,
            mtime_ns,
            sensitive: false,
            marks: Vec::new(),
        }
    }

    #[test]
    fn cells_say_what_the_daemon_read() {
        let photo = Details {
            read: true,
            media: Some(pb::MediaInfo {
                status: "ok".into(),
                taken: Some("2019-06-14T10:30:00".into()),
                camera_make: Some("Canon".into()),
                camera_model: Some("Canon EOS 80D".into()),
                width: Some(493),
                height: Some(312),
                ..Default::default()
            }),
            tags: vec![EntryTag {
                name: "trip".into(),
                from_file: true,
            }],
        };
        assert_eq!(Extra::Dimensions.cell(&photo), "493 × 312");
        assert_eq!(Extra::Taken.cell(&photo), "2019-06-14 10:30:00");
        assert_eq!(Extra::Duration.cell(&photo), "");
        assert_eq!(Extra::Tags.cell(&photo), "trip");
        assert_eq!(
            photo.lines(),
            [
                ("Taken", "2019-06-14 10:30:00".to_owned()),
                ("Camera", "Canon EOS 80D".to_owned()),
                ("Dimensions", "493 × 312".to_owned()),
                ("Tags", "trip (file)".to_owned()),
            ]
        );
        assert_eq!(duration(2_999), "0:03");
        assert_eq!(duration(200_000), "3:20");
        assert_eq!(duration(3_723_000), "1:02:03");
        assert_eq!(Extra::named("taken"), Some(Extra::Taken));
        assert_eq!(Extra::named("colour"), None);
    }

    #[test]
    fn a_row_is_asked_once_and_again_when_its_file_changes() {
        let mut c = DetailsCache::default();
        let now = Instant::now();
        let a = row("/t/a.jpg", 10, 1);
        let b = row("/t/b.jpg", 20, 2);
        assert_eq!(c.wanted([&a, &b], now).len(), 2);
        // Asked: not again while the answer is on its way.
        assert!(c.wanted([&a, &b], now).is_empty());
        let asked = Asked {
            path: a.path.clone(),
            size: 10,
            mtime_ns: 1,
        };
        c.apply(vec![(asked, Details::default())], now);
        assert!(c.get(&a).is_some());
        assert!(c.wanted([&a], now).is_empty());
        // A photo not read yet by the daemon is asked again, later, a
        // few times.
        assert!(c.waiting([&a]));
        for i in 1..TRIES {
            let later = now + RETRY * i;
            let again = c.wanted([&a], later);
            assert_eq!(again.len(), 1, "try {i}");
            c.apply(vec![(again[0].clone(), Details::default())], later);
        }
        assert!(!c.waiting([&a]));
        assert!(c.wanted([&a], now + RETRY * 10).is_empty());
        // The file changed: asked again.
        let a2 = row("/t/a.jpg", 11, 5);
        assert!(c.get(&a2).is_none());
        assert_eq!(c.wanted([&a2], now)[0].mtime_ns, 5);
        c.forget();
        assert_eq!(c.wanted([&a, &b], now).len(), 2);
    }
}
