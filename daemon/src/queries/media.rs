//! The media filters of the query language (issue 32): `taken:`,
//! `camera:`, `width:`, `height:`, `duration:`, `artist:`, `album:`,
//! `title:`, `genre:`, and for documents `pages:` and `author:` (a
//! document's title is `title:` too). Parsed here (the query parser hands over any filter
//! named in [`FILTERS`]) and answered from the `media` table's rows: the
//! engine resolves each [`MediaTest`] to the set of entries that pass it,
//! as it resolves `content:` against the content index.

use std::collections::HashSet;

use crate::Error;
use crate::index::fold::fold_str;
use crate::queries::query::Item;
use crate::store::media::MediaRow;

/// The filter names this module parses.
pub const FILTERS: &[&str] = &[
    "taken", "camera", "width", "height", "duration", "artist", "album", "title", "genre", "pages",
    "author",
];

/// A test on a media file's metadata.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum MediaTest {
    /// Taken within [from, to) unix seconds (the camera's clock read in the
    /// daemon's time zone, as `dm:` reads dates).
    Taken {
        from: i64,
        to: i64,
    },
    /// Camera make or model (`make model`) holds this folded text.
    Camera(String),
    /// Pixels, inclusive bounds, after orientation.
    Width {
        min: u64,
        max: u64,
    },
    Height {
        min: u64,
        max: u64,
    },
    /// Milliseconds, inclusive bounds.
    Duration {
        min: u64,
        max: u64,
    },
    /// The tag holds this folded text.
    Artist(String),
    Album(String),
    Title(String),
    Genre(String),
    /// A document's pages, inclusive bounds.
    Pages {
        min: u64,
        max: u64,
    },
    /// A document's author holds this folded text.
    Author(String),
}

/// Parses `name:value` for a name in [`FILTERS`].
pub fn parse(name: &str, value: &str, whole: &str, now: &jiff::Zoned) -> Result<Item, Error> {
    let text = || {
        let v = fold_str(value).into_owned();
        if v.trim().is_empty() {
            return Err(Error::InvalidQuery(format!(
                "`{whole}`: {name}: needs some text, e.g. {name}:canon"
            )));
        }
        Ok(v)
    };
    let test = match name {
        "taken" => match super::query::parse_date_filter(value, whole, now)? {
            Item::Modified { from, to } => MediaTest::Taken {
                from: from.div_euclid(1_000_000_000),
                to: to.div_euclid(1_000_000_000),
            },
            _ => unreachable!("parse_date_filter answers Modified"),
        },
        "camera" => MediaTest::Camera(text()?),
        "width" | "height" => {
            let (min, max) = parse_range(
                value,
                whole,
                pixels,
                "width:>3000, height:<=1080, width:1920 or width:1000..2000",
            )?;
            if name == "width" {
                MediaTest::Width { min, max }
            } else {
                MediaTest::Height { min, max }
            }
        }
        "duration" => {
            let (min, max) = parse_range(
                value,
                whole,
                millis,
                "duration:>3min, duration:<90s, duration:1h..2h (units ms s min h; a bare number is seconds)",
            )?;
            MediaTest::Duration { min, max }
        }
        "artist" => MediaTest::Artist(text()?),
        "album" => MediaTest::Album(text()?),
        "title" => MediaTest::Title(text()?),
        "genre" => MediaTest::Genre(text()?),
        "pages" => {
            let (min, max) = parse_range(
                value,
                whole,
                pixels,
                "pages:>10, pages:<=2, pages:1 or pages:10..50",
            )?;
            MediaTest::Pages { min, max }
        }
        "author" => MediaTest::Author(text()?),
        _ => unreachable!("only the names in FILTERS are handed over"),
    };
    Ok(Item::Media(test))
}

/// A whole number (pixels, pages).
fn pixels(s: &str) -> Option<u64> {
    s.trim().parse().ok()
}

/// "3min" -> 180000; a bare number is seconds.
fn millis(s: &str) -> Option<u64> {
    let s = s.trim().to_ascii_lowercase();
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let n: f64 = num.parse().ok()?;
    let mult = match unit {
        "ms" => 1.0,
        "" | "s" | "sec" | "secs" => 1e3,
        "m" | "min" | "mins" => 60e3,
        "h" | "hr" | "hrs" | "hour" | "hours" => 3600e3,
        _ => return None,
    };
    let v = n * mult;
    (v.is_finite() && (0.0..1.8e19).contains(&v)).then_some(v.round() as u64)
}

/// `>n`, `>=n`, `<n`, `<=n`, `=n`, `n`, `a..b` (either side open) as
/// inclusive bounds.
fn parse_range(
    value: &str,
    whole: &str,
    num: fn(&str) -> Option<u64>,
    examples: &str,
) -> Result<(u64, u64), Error> {
    let bad = || {
        Error::InvalidQuery(format!(
            "bad value `{value}` in `{whole}`: use e.g. {examples}"
        ))
    };
    if let Some((a, b)) = value.split_once("..") {
        let min = if a.is_empty() {
            0
        } else {
            num(a).ok_or_else(bad)?
        };
        let max = if b.is_empty() {
            u64::MAX
        } else {
            num(b).ok_or_else(bad)?
        };
        if min > max {
            return Err(Error::InvalidQuery(format!(
                "empty range `{value}` in `{whole}`: the first bound is larger"
            )));
        }
        return Ok((min, max));
    }
    let (op, rest) = ["<=", ">=", "<", ">", "="]
        .iter()
        .find_map(|op| value.strip_prefix(op).map(|r| (*op, r)))
        .unwrap_or(("=", value));
    let n = num(rest).ok_or_else(bad)?;
    Ok(match op {
        "<" => (0, n.checked_sub(1).ok_or_else(bad)?),
        "<=" => (0, n),
        ">" => (n.saturating_add(1), u64::MAX),
        ">=" => (n, u64::MAX),
        _ => (n, n),
    })
}

/// The entries whose row passes `test`.
pub fn hits(rows: &[MediaRow], test: &MediaTest) -> HashSet<u32> {
    let holds = |field: &Option<String>, needle: &str| {
        field
            .as_deref()
            .is_some_and(|f| fold_str(f).contains(needle))
    };
    let within = |v: Option<u64>, min: u64, max: u64| v.is_some_and(|v| (min..=max).contains(&v));
    rows.iter()
        .filter(|r| {
            let m = &r.media;
            match test {
                MediaTest::Taken { from, to } => {
                    r.taken_s.is_some_and(|t| (*from..*to).contains(&t))
                }
                MediaTest::Camera(c) => {
                    let both = [m.camera_make.as_deref(), m.camera_model.as_deref()]
                        .into_iter()
                        .flatten()
                        .collect::<Vec<_>>()
                        .join(" ");
                    fold_str(&both).contains(c.as_str())
                }
                MediaTest::Width { min, max } => within(m.width.map(u64::from), *min, *max),
                MediaTest::Height { min, max } => within(m.height.map(u64::from), *min, *max),
                MediaTest::Duration { min, max } => within(m.duration_ms, *min, *max),
                MediaTest::Artist(s) => holds(&m.artist, s),
                MediaTest::Album(s) => holds(&m.album, s),
                MediaTest::Title(s) => holds(&m.title, s),
                MediaTest::Genre(s) => holds(&m.genre, s),
                MediaTest::Pages { min, max } => within(m.pages.map(u64::from), *min, *max),
                MediaTest::Author(s) => holds(&m.author, s),
            }
        })
        .map(|r| r.entry_id as u32)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn test_of(q: &str) -> MediaTest {
        let now = jiff::Zoned::now();
        let (name, value) = q.split_once(':').unwrap();
        match parse(name, value, q, &now).unwrap() {
            Item::Media(t) => t,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn ranges_and_units() {
        assert_eq!(
            test_of("width:>3000"),
            MediaTest::Width {
                min: 3001,
                max: u64::MAX
            }
        );
        assert_eq!(
            test_of("height:1080"),
            MediaTest::Height {
                min: 1080,
                max: 1080
            }
        );
        assert_eq!(
            test_of("duration:>3min"),
            MediaTest::Duration {
                min: 180_001,
                max: u64::MAX
            }
        );
        assert_eq!(
            test_of("duration:1s..2s"),
            MediaTest::Duration {
                min: 1000,
                max: 2000
            }
        );
        assert_eq!(test_of("camera:Canon"), MediaTest::Camera("canon".into()));
        assert_eq!(
            test_of("pages:>10"),
            MediaTest::Pages {
                min: 11,
                max: u64::MAX
            }
        );
        assert_eq!(test_of("pages:2..5"), MediaTest::Pages { min: 2, max: 5 });
        assert_eq!(test_of("author:Ada"), MediaTest::Author("ada".into()));
    }

    #[test]
    fn malformed_values_point_at_the_filter() {
        let now = jiff::Zoned::now();
        for (name, value) in [
            ("width", "big"),
            ("duration", "3 parsecs"),
            ("taken", "2019-13"),
            ("height", "9..1"),
            ("pages", "many"),
            ("pages", ">-3"),
            ("author", " "),
        ] {
            let whole = format!("{name}:{value}");
            let e = parse(name, value, &whole, &now).unwrap_err().to_string();
            assert!(e.contains(&whole), "{e}");
        }
    }
}
