//! Media metadata end to end (issue 32): photos (JPEG, PNG, TIFF, WebP,
//! HEIC) made by ImageMagick and tagged by `exiftool`; songs (WAV from
//! Python's `wave`, MP3 as silent MPEG frames, FLAC as a bare STREAMINFO)
//! tagged by `mutagen`; MP4 videos the test writes box by box
//! (ffmpeg is not installed: a full codec suite for two header boxes),
//! Matroska/WebM files the test writes element by element, and hostile
//! files. The oracles: `exiftool -json -n` and `mutagen` read every tag
//! back independently, and the test knows what it wrote into each video.
//! Every filter is compared with the oracle's answer; `fsctl info --json`
//! carries the oracle's values; a corrupt file gets no metadata and the
//! daemon lives; WARN files are never read; an edited tag shows within the
//! usual latency; an unchanged restart reads no media file.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use crate::util::{Instance, Runner, lossy, poll_until, write_file};

/// How long the first read of a test tree may take (debug binaries, a
/// loaded machine).
const SETTLE: Duration = Duration::from_secs(90);
/// How long an edit may take to show: well under a second alone, but the
/// media worker runs at nice 19 and, beside two dozen other tests on two
/// cores, waited over 20 s for a turn.
const LATENCY: Duration = Duration::from_secs(60);

/// Makes the tree: photos, songs, videos, hostile files. Writes the oracle
/// (what exiftool and mutagen read back, what the test wrote into MP4s) as
/// JSON on stdout.
const MAKE_TREE: &str = r#"
import json, os, struct, subprocess, sys, wave
root = sys.argv[1]
os.makedirs(root + '/photos/2019', exist_ok=True)
os.makedirs(root + '/music', exist_ok=True)
os.makedirs(root + '/video', exist_ok=True)
os.makedirs(root + '/bad', exist_ok=True)

def run(*a):
    subprocess.run(a, check=True, stdout=subprocess.DEVNULL)

photos = [
    # name, size, format, exiftool tags
    ('photos/2019/IMG_0001.jpg', '493x312', ['-Make=Canon', '-Model=Canon EOS 80D', '-DateTimeOriginal=2019:06:14 10:30:00',
        '-GPSLatitude=48.8583', '-GPSLatitudeRef=N', '-GPSLongitude=2.2945', '-GPSLongitudeRef=E']),
    ('photos/2019/IMG_0002.jpg', '4000x3000', ['-Make=Canon', '-Model=Canon EOS R5', '-DateTimeOriginal=2019:08:31 23:59:59']),
    ('photos/2019/portrait.jpg', '3200x1800', ['-Make=NIKON CORPORATION', '-Model=NIKON D750', '-DateTimeOriginal=2019:09:01 08:00:00', '-Orientation#=6']),
    ('photos/beach.tif', '640x480', ['-Make=FUJIFILM', '-Model=X-T3', '-DateTimeOriginal=2021:07:04 12:00:00',
        '-GPSLatitude=33.5', '-GPSLatitudeRef=S', '-GPSLongitude=70.25', '-GPSLongitudeRef=W']),
    ('photos/plain.png', '800x600', []),
    ('photos/tagged.png', '1024x768', ['-Make=Apple', '-Model=iPhone 12', '-DateTimeOriginal=2020:02:29 07:15:00']),
    ('photos/sony.webp', '120x80', ['-Make=SONY', '-Model=ILCE-7M3', '-DateTimeOriginal=2018:01:02 03:04:05']),
    ('photos/iphone.heic', '160x90', ['-Make=Apple', '-Model=iPhone 15', '-DateTimeOriginal=2023:05:06 07:08:09']),
    ('photos/my_password_card.jpg', '100x100', ['-Make=Canon', '-Model=Secret Cam', '-DateTimeOriginal=2019:06:15 10:00:00']),
]
for name, size, tags in photos:
    run('convert', '-size', size, 'xc:#336699', root + '/' + name)
    if tags:
        run('exiftool', '-q', '-overwrite_original', *tags, root + '/' + name)
exif = json.loads(subprocess.run(['exiftool', '-json', '-n', '-DateTimeOriginal', '-Make', '-Model', '-ImageWidth',
    '-ImageHeight', '-Orientation', '-GPSLatitude', '-GPSLongitude'] + [root + '/' + p[0] for p in photos],
    check=True, capture_output=True).stdout)

# Songs: PCM WAV from Python's wave module, MP3 as silent MPEG-1 Layer III
# frames (128 kbit/s, 44.1 kHz: 417 bytes, 1152 samples each); tags by mutagen.
from mutagen.id3 import ID3, TIT2, TPE1, TALB, TCON, TRCK, TDRC
def tags(t):
    return [TIT2(encoding=3, text=t['title']), TPE1(encoding=3, text=t['artist']), TALB(encoding=3, text=t['album']),
            TCON(encoding=3, text=t['genre']), TRCK(encoding=3, text=str(t['track'])), TDRC(encoding=3, text=str(t['year']))]
songs = [
    ('music/milk.wav', 'wav', 3, dict(title='Milk Song', artist='Björk', album='Debut', genre='Pop', track=4, year=1993)),
    ('music/long.mp3', 'mp3', 200, dict(title='A Long Road', artist='The Walkers', album='Miles', genre='Folk', track=1, year=2001)),
    ('music/short.mp3', 'mp3', 30, dict(title='Brief', artist='Quick Band', album='Miles', genre='Punk Rock', track=2, year=2001)),
    ('music/sea.flac', 'flac', 125, dict(title='Sea Song', artist='Nina', album='Blue', genre='Jazz', track=7, year=1965)),
]
for name, kind, seconds, t in songs:
    path = root + '/' + name
    if kind == 'wav':
        w = wave.open(path, 'wb'); w.setnchannels(1); w.setsampwidth(2); w.setframerate(8000)
        w.writeframes(b'\0\0' * 8000 * seconds); w.close()
        from mutagen.wave import WAVE
        f = WAVE(path); f.add_tags()
        for fr in tags(t): f.tags.add(fr)
        f.save()
    elif kind == 'flac':
        # fLaC and a STREAMINFO block (44.1 kHz, 2 channels, 16 bits, the
        # sample count), no audio frames; mutagen adds the Vorbis comments.
        si = struct.pack('>HH', 4096, 4096) + b'\0' * 6
        si += ((44100 << 44) | (1 << 41) | (15 << 36) | 44100 * seconds).to_bytes(8, 'big') + b'\0' * 16
        open(path, 'wb').write(b'fLaC' + bytes([0x80]) + len(si).to_bytes(3, 'big') + si)
        from mutagen.flac import FLAC
        f = FLAC(path)
        for k, v in [('title', t['title']), ('artist', t['artist']), ('album', t['album']), ('genre', t['genre']),
                     ('tracknumber', str(t['track'])), ('date', str(t['year']))]:
            f[k] = v
        f.save()
    else:
        frames = int(seconds * 44100 / 1152)
        with open(path, 'wb') as f:
            f.write((b'\xff\xfb\x90\x64' + b'\0' * 413) * frames)
        id3 = ID3()
        for fr in tags(t): id3.add(fr)
        id3.save(path)
import mutagen
audio = {}
for name, _, _, _ in songs:
    f = mutagen.File(root + '/' + name)
    if name.endswith('.flac'):
        g = lambda k: f.tags[k][0] if k in f.tags else None
        keys = ['title', 'artist', 'album', 'genre', 'tracknumber', 'date']
    else:
        g = lambda k: str(f.tags[k].text[0]) if k in f.tags else None
        keys = ['TIT2', 'TPE1', 'TALB', 'TCON', 'TRCK', 'TDRC']
    title, artist, album, genre, track, year = map(g, keys)
    audio[name] = dict(title=title, artist=artist, album=album, genre=genre,
        track=int(track), year=int(str(year)[:4]), length=f.info.length)

# MP4: ftyp, moov(mvhd(time scale, duration), trak(tkhd(width, height)), trak(audio tkhd, 0x0)), mdat.
def box(kind, body):
    return struct.pack('>I', 8 + len(body)) + kind + body
def tkhd(w, h):
    matrix = struct.pack('>9I', 0x10000, 0, 0, 0, 0x10000, 0, 0, 0, 0x40000000)
    return box(b'tkhd', b'\0\0\0\x07' + struct.pack('>IIIII', 0, 0, 1, 0, 0) + b'\0' * 8
               + struct.pack('>hhhH', 0, 0, 0, 0) + matrix + struct.pack('>II', w << 16, h << 16))
videos = [('video/clip.mp4', 600, 90000, 1920, 1080), ('video/tiny.mov', 1000, 4500, 320, 240)]
for name, scale, duration, w, h in videos:
    mvhd = box(b'mvhd', b'\0\0\0\0' + struct.pack('>IIII', 0, 0, scale, duration) + b'\0' * 80)
    moov = box(b'moov', mvhd + box(b'trak', tkhd(w, h)) + box(b'trak', tkhd(0, 0)))
    with open(root + '/' + name, 'wb') as f:
        f.write(box(b'ftyp', b'isom\0\0\0\x01isom') + moov + box(b'mdat', b'\0' * 1000))
video = {n: dict(duration_ms=d * 1000 // s, width=w, height=h) for n, s, d, w, h in videos}
# Matroska/WebM: EBML header, Segment(Info(TimestampScale, Duration), Tracks(TrackEntry(Video(PixelWidth, PixelHeight)))), a Cluster.
def el(ident, body):
    n = len(body)
    size = bytes([0x80 | n]) if n < 127 else b'\x01' + n.to_bytes(7, 'big')
    return ident + size + body
def uint(ident, v):
    return el(ident, v.to_bytes(4, 'big'))
for name, ms, w, h in [('video/talk.webm', 754321, 1280, 720), ('video/film.mkv', 5400000, 3840, 1608)]:
    info = el(b'\x15\x49\xa9\x66', uint(b'\x2a\xd7\xb1', 1000000) + el(b'\x44\x89', struct.pack('>d', float(ms))))
    tracks = el(b'\x16\x54\xae\x6b', el(b'\xae', uint(b'\xd7', 1) + el(b'\xe0', uint(b'\xb0', w) + uint(b'\xba', h))))
    cluster = el(b'\x1f\x43\xb6\x75', b'\0' * 100)
    segment = el(b'\x18\x53\x80\x67', info + tracks + cluster)
    header = el(b'\x1a\x45\xdf\xa3', el(b'\x42\x82', b'webm' if name.endswith('webm') else b'matroska'))
    open(root + '/' + name, 'wb').write(header + segment)
    video[name] = dict(duration_ms=ms, width=w, height=h)

# Hostile: a JPEG cut inside its EXIF, an MP3 whose ID3 tag claims 100 MB,
# an MP4 whose moov claims more bytes than the file has, a "JPEG" of noise.
with open(root + '/photos/2019/IMG_0001.jpg', 'rb') as f:
    head = f.read(40)
open(root + '/bad/truncated.jpg', 'wb').write(head)
big = 100 * 1024 * 1024
syncsafe = bytes([(big >> 21) & 0x7f, (big >> 14) & 0x7f, (big >> 7) & 0x7f, big & 0x7f])
open(root + '/bad/huge_tag.mp3', 'wb').write(b'ID3\x04\x00\x00' + syncsafe + b'TIT2' + b'\x7f\x7f\x7f\x7f' + b'\0' * 64)
open(root + '/bad/liar.mp4', 'wb').write(box(b'ftyp', b'isom\0\0\0\x01') + struct.pack('>I', 0x7fffffff) + b'moov' + b'\0' * 64)
open(root + '/bad/noise.jpg', 'wb').write(os.urandom(4096))
json.dump(dict(exif=exif, audio=audio, video=video), sys.stdout)
"#;

fn oracle(tree: &Path) -> Value {
    let out = Command::new("python3")
        .arg("-c")
        .arg(MAKE_TREE)
        .arg(tree)
        .output()
        .expect("python3 (tests/setup.sh installs it, mutagen, exiftool and ImageMagick)");
    assert!(
        out.status.success(),
        "making the media tree failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// One media file as the oracle says it is.
#[derive(Debug, Default, Clone)]
struct Want {
    taken: Option<String>,
    make: Option<String>,
    model: Option<String>,
    width: Option<u64>,
    height: Option<u64>,
    duration_ms: Option<u64>,
    artist: Option<String>,
    album: Option<String>,
    title: Option<String>,
    genre: Option<String>,
    track: Option<u64>,
    year: Option<u64>,
    gps: Option<(f64, f64)>,
}

fn wants(tree: &Path, o: &Value) -> BTreeMap<String, Want> {
    let mut all = BTreeMap::new();
    let s = |v: &Value| v.as_str().map(str::to_owned);
    for e in o["exif"].as_array().unwrap() {
        let path = e["SourceFile"].as_str().unwrap();
        let rel = path.strip_prefix(&format!("{}/", tree.display())).unwrap();
        let (w, h) = (e["ImageWidth"].as_u64(), e["ImageHeight"].as_u64());
        let turned = e["Orientation"]
            .as_u64()
            .is_some_and(|o| (5..=8).contains(&o));
        all.insert(
            rel.to_owned(),
            Want {
                // exiftool: "2019:06:14 10:30:00"; info: "2019-06-14T10:30:00".
                taken: s(&e["DateTimeOriginal"]).map(|d| {
                    let (date, time) = d.split_once(' ').unwrap();
                    format!("{}T{time}", date.replace(':', "-"))
                }),
                make: s(&e["Make"]),
                model: s(&e["Model"]),
                width: if turned { h } else { w },
                height: if turned { w } else { h },
                gps: e["GPSLatitude"].as_f64().zip(e["GPSLongitude"].as_f64()),
                ..Want::default()
            },
        );
    }
    for (rel, a) in o["audio"].as_object().unwrap() {
        all.insert(
            rel.clone(),
            Want {
                duration_ms: Some((a["length"].as_f64().unwrap() * 1000.0) as u64),
                artist: s(&a["artist"]),
                album: s(&a["album"]),
                title: s(&a["title"]),
                genre: s(&a["genre"]),
                track: a["track"].as_u64(),
                year: a["year"].as_u64(),
                ..Want::default()
            },
        );
    }
    for (rel, v) in o["video"].as_object().unwrap() {
        all.insert(
            rel.clone(),
            Want {
                duration_ms: v["duration_ms"].as_u64(),
                width: v["width"].as_u64(),
                height: v["height"].as_u64(),
                ..Want::default()
            },
        );
    }
    all
}

/// Waits until the worker has nothing queued and holds `rows` rows.
pub(crate) fn settled(inst: &Instance, rows: u64) -> Value {
    let mut last = Value::Null;
    let ok = poll_until(SETTLE, || {
        last = inst.status()["media"].clone();
        let have: u64 = last["rows"]
            .as_object()
            .map_or(0, |m| m.values().filter_map(Value::as_u64).sum());
        have == rows && last["queued"] == 0 && last["busy"] == false
    });
    assert!(ok, "media metadata not settled at {rows} rows: {last}");
    last
}

/// The media rows of `status --json`'s `media` that say why a file gave
/// nothing (every status but `ok`).
fn failures(media: &Value) -> u64 {
    media["rows"]
        .as_object()
        .unwrap()
        .iter()
        .filter(|(k, _)| *k != "ok")
        .map(|(_, v)| v.as_u64().unwrap())
        .sum()
}

pub(crate) fn found(inst: &Instance, query: &str) -> BTreeSet<String> {
    inst.search0(&["--limit", "0", query])
        .iter()
        .map(|p| lossy(p))
        .collect()
}

fn fold(s: &str) -> String {
    s.to_lowercase()
}

#[test]
fn media_metadata_matches_exiftool_and_mutagen_and_every_filter_agrees() {
    let t = tempfile::tempdir().unwrap();
    let tree = t.path().join("tree");
    std::fs::create_dir_all(&tree).unwrap();
    write_file(&tree, "notes/readme.txt", b"not a media file");
    let o = oracle(&tree);
    let want = wants(&tree, &o);
    let mut inst = Instance::new(t.path().join("home"), &[&tree], Runner::current());
    inst.start();
    // Every media file has a row (the WARN-tier photo never does), the
    // hostile ones with a reason.
    let media_files = want.len() as u64 - 1 + 4;
    let status = settled(&inst, media_files);
    let failed = failures(&status);
    assert_eq!(failed, 4, "the four hostile files are not read: {status}");

    // info --json carries what the oracles read.
    for (rel, w) in &want {
        let info = inst.json(&["info", &tree.join(rel).display().to_string()]);
        let m = &info["media"];
        if rel.contains("password") {
            assert!(m.is_null(), "{rel}: a WARN-tier file is never read: {info}");
            continue;
        }
        assert_eq!(m["status"], "ok", "{rel}: {info}");
        let s = |k: &str| m[k].as_str().map(str::to_owned);
        assert_eq!(s("taken"), w.taken, "{rel} taken");
        assert_eq!(s("camera_make"), w.make, "{rel} make");
        assert_eq!(s("camera_model"), w.model, "{rel} model");
        assert_eq!(m["width"].as_u64(), w.width, "{rel} width");
        assert_eq!(m["height"].as_u64(), w.height, "{rel} height");
        assert_eq!(s("artist"), w.artist, "{rel} artist");
        assert_eq!(s("album"), w.album, "{rel} album");
        assert_eq!(s("title"), w.title, "{rel} title");
        assert_eq!(s("genre"), w.genre, "{rel} genre");
        assert_eq!(m["track"].as_u64(), w.track, "{rel} track");
        assert_eq!(m["year"].as_u64(), w.year, "{rel} year");
        match (m["duration_ms"].as_u64(), w.duration_ms) {
            // MP3 lengths are estimated from the bit rate by both readers.
            (Some(got), Some(want)) => assert!(
                got.abs_diff(want) <= (want / 100).max(50),
                "{rel} duration {got} ms, the oracle says {want} ms"
            ),
            (got, want) => assert_eq!(got, want, "{rel} duration"),
        }
        match (m["gps_lat"].as_f64(), m["gps_lon"].as_f64(), w.gps) {
            (Some(lat), Some(lon), Some((wl, wn))) => assert!(
                (lat - wl).abs() < 1e-4 && (lon - wn).abs() < 1e-4,
                "{rel} gps {lat},{lon} vs {wl},{wn}"
            ),
            (None, None, None) => {}
            other => panic!("{rel} gps: {other:?}"),
        }
    }
    for bad in ["truncated.jpg", "huge_tag.mp3", "liar.mp4", "noise.jpg"] {
        let info = inst.json(&["info", &tree.join("bad").join(bad).display().to_string()]);
        let m = info["media"].as_object().unwrap();
        assert_ne!(m["status"], "ok", "{bad}: {info}");
        assert_eq!(m.len(), 1, "{bad} gets no metadata, only why: {info}");
        // Refused by the reader, not by the sandbox: no memory spike (the
        // 100 MB tag claim is never allocated), no hang, no crash.
        for killed in ["memory", "timeout", "crashed"] {
            assert_ne!(m["status"], killed, "{bad}: {info}");
        }
    }

    // Every filter against the oracle.
    let path = |rel: &String| tree.join(rel).display().to_string();
    let expect = |keep: &dyn Fn(&Want) -> bool| -> BTreeSet<String> {
        want.iter()
            .filter(|(rel, w)| !rel.contains("password") && keep(w))
            .map(|(rel, _)| path(rel))
            .collect()
    };
    let year_month = |w: &Want| w.taken.as_ref().map(|t| t[..7].to_owned());
    let has =
        |f: &Option<String>, needle: &str| f.as_deref().is_some_and(|f| fold(f).contains(needle));
    type Keep = Box<dyn Fn(&Want) -> bool>;
    let cases: Vec<(&str, Keep)> = vec![
        (
            "taken:2019",
            Box::new(|w| w.taken.as_deref().is_some_and(|t| t.starts_with("2019"))),
        ),
        (
            "taken:2019-06..2019-08",
            Box::new(move |w| {
                year_month(w).is_some_and(|m| ("2019-06".."2019-09").contains(&m.as_str()))
            }),
        ),
        (
            "taken:2019-06-14",
            Box::new(|w| {
                w.taken
                    .as_deref()
                    .is_some_and(|t| t.starts_with("2019-06-14"))
            }),
        ),
        (
            "taken:2020..2021",
            Box::new(|w| {
                w.taken
                    .as_deref()
                    .is_some_and(|t| ("2020".."2022").contains(&t))
            }),
        ),
        (
            "camera:canon",
            Box::new(move |w| has(&w.make, "canon") || has(&w.model, "canon")),
        ),
        ("camera:d750", Box::new(move |w| has(&w.model, "d750"))),
        (
            "width:>3000",
            Box::new(|w| w.width.is_some_and(|x| x > 3000)),
        ),
        (
            "height:>=1080",
            Box::new(|w| w.height.is_some_and(|x| x >= 1080)),
        ),
        (
            "width:300..900",
            Box::new(|w| w.width.is_some_and(|x| (300..=900).contains(&x))),
        ),
        (
            "duration:>3min",
            Box::new(|w| w.duration_ms.is_some_and(|d| d > 180_000)),
        ),
        (
            "duration:<10s",
            Box::new(|w| w.duration_ms.is_some_and(|d| d < 10_000)),
        ),
        ("artist:björk", Box::new(move |w| has(&w.artist, "björk"))),
        (
            "artist:walkers",
            Box::new(move |w| has(&w.artist, "walkers")),
        ),
        ("album:miles", Box::new(move |w| has(&w.album, "miles"))),
        ("title:song", Box::new(move |w| has(&w.title, "song"))),
        ("genre:rock", Box::new(move |w| has(&w.genre, "rock"))),
    ];
    for (q, keep) in &cases {
        let want_set = expect(keep.as_ref());
        assert_eq!(found(&inst, q), want_set, "`{q}`");
    }
    assert!(!expect(&|w| w.width.is_some_and(|x| x > 3000)).is_empty());
    // Filters combine with the rest of the language.
    let canon_jpgs = found(&inst, "camera:canon");
    let not_canon: BTreeSet<String> = found(&inst, "ext:jpg")
        .difference(&canon_jpgs)
        .cloned()
        .collect();
    let mut q = inst.search0(&["--limit", "0", "ext:jpg", "!camera:canon"]);
    q.sort();
    assert_eq!(
        q.iter().map(|p| lossy(p)).collect::<BTreeSet<_>>(),
        not_canon
    );

    // Malformed values are INVALID_ARGUMENT naming the bad part.
    for bad in [
        "width:big",
        "duration:3parsecs",
        "taken:2019-13",
        "height:9..1",
        "camera:",
    ] {
        let out = inst.fsctl(&["search", bad]);
        assert_eq!(out.status.code(), Some(2), "{bad}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(bad), "`{bad}`: {err}");
    }

    // An edited tag shows within the usual latency.
    // (A JPEG: on a PNG without EXIF, exiftool writes Make as a PNG text
    // chunk, which is not EXIF.)
    let img = tree.join("photos/2019/IMG_0002.jpg");
    let ok = Command::new("exiftool")
        .args([
            "-q",
            "-overwrite_original",
            "-Make=Leica",
            "-Model=Leica M11",
        ])
        .arg(&img)
        .status()
        .unwrap();
    assert!(ok.success());
    let mut got = BTreeSet::new();
    assert!(
        poll_until(LATENCY, || {
            got = found(&inst, "camera:leica");
            got == BTreeSet::from([img.display().to_string()])
        }),
        "an edited tag did not show: {got:?}"
    );

    // MCP: get_file_info shows the metadata; count_files by year places
    // photos by the year taken, the rest by the year modified (UTC, as
    // GNU date says).
    let mcp = crate::mcp::Mcp::start(&inst, &tree, &[]);
    let info = mcp.ok(
        "get_file_info",
        serde_json::json!({"path": path(&"photos/2019/IMG_0001.jpg".to_owned())}),
    );
    assert_eq!(info["media"]["cameraModel"], "Canon EOS 80D", "{info}");
    assert_eq!(info["media"]["taken"], "2019-06-14T10:30:00", "{info}");
    assert!(info["media"]["gpsLat"].as_f64().is_some(), "{info}");
    let years = mcp.ok(
        "count_files",
        serde_json::json!({"query": "ext:jpg;png;tif", "groupBy": "year"}),
    );
    let mut want_years: BTreeMap<String, u64> = BTreeMap::new();
    let mut by_taken = 0;
    for rel in [
        "photos/2019/IMG_0001.jpg",
        "photos/2019/IMG_0002.jpg",
        "photos/2019/portrait.jpg",
        "photos/beach.tif",
        "photos/plain.png",
        "photos/tagged.png",
        "photos/my_password_card.jpg",
        "bad/truncated.jpg",
        "bad/noise.jpg",
    ] {
        let year = match want
            .get(rel)
            .and_then(|w| w.taken.clone())
            .filter(|_| !rel.contains("password"))
        {
            Some(t) => {
                by_taken += 1;
                t[..4].to_owned()
            }
            None => {
                let out = Command::new("date")
                    .args(["-u", "+%Y", "-r"])
                    .arg(tree.join(rel))
                    .output()
                    .unwrap();
                String::from_utf8(out.stdout).unwrap().trim().to_owned()
            }
        };
        *want_years.entry(year).or_default() += 1;
    }
    let got_years: BTreeMap<String, u64> = years["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| {
            (
                g["key"].as_str().unwrap().to_owned(),
                g["files"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(got_years, want_years, "count_files by year: {years}");
    assert_eq!(years["byDateTaken"], by_taken, "{years}");
    drop(mcp);

    // An unchanged restart reads no media file.
    inst.stop();
    inst.start();
    let status = settled(&inst, media_files);
    assert_eq!(
        status["read"], 0,
        "an unchanged restart read media files: {status}"
    );
    assert_eq!(found(&inst, "camera:leica").len(), 1);
    // A file that could not be read keeps its reason across the restart,
    // and asking about it does not read it again (a failure is kept as a
    // print of the size and mtime it was tried for).
    for bad in ["truncated.jpg", "huge_tag.mp3", "liar.mp4", "noise.jpg"] {
        let info = inst.json(&["info", &tree.join("bad").join(bad).display().to_string()]);
        let m = info["media"].as_object().unwrap();
        assert!(
            m["status"]
                .as_str()
                .is_some_and(|s| s != "ok" && !s.is_empty()),
            "{bad} after a restart: {info}"
        );
    }
    let status = inst.status();
    assert_eq!(
        status["media"]["read"], 0,
        "info read unchanged failures again: {status}"
    );
    // A failure that changes is tried again: now a real photo.
    std::fs::copy(
        tree.join("photos/2019/IMG_0001.jpg"),
        tree.join("bad/noise.jpg"),
    )
    .unwrap();
    let mut tried = false;
    for _ in 0..100 {
        let info = inst.json(&["info", &tree.join("bad/noise.jpg").display().to_string()]);
        if info["media"]["status"] == "ok" {
            tried = true;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert!(tried, "a changed failure is read again");
    // `status` counts what the index holds now: the photo that was noise
    // is no failure any more, and a failure whose file is deleted leaves
    // the count with it.
    std::fs::remove_file(tree.join("bad/truncated.jpg")).unwrap();
    let status = settled(&inst, media_files - 1);
    let failed = failures(&status);
    assert_eq!(
        failed, 2,
        "huge_tag.mp3 and liar.mp4 are the failures left: {status}"
    );
}

/// Where a photo was taken is for its owner: a machine-wide daemon shows
/// GPS to the file's owner (and root) only, the rest of the metadata to
/// whoever may read the file, and nothing to whoever may not. A `chown`
/// (which changes the ctime the row was read for, not size or mtime) is
/// followed: the file is read again when asked for.
#[test]
fn machine_wide_gps_only_for_the_owner_and_nothing_for_who_cannot_read() {
    use std::os::unix::fs::PermissionsExt;
    let Some((t, root)) = crate::security::system_tree() else {
        return;
    };
    std::fs::create_dir_all(&root).unwrap();
    std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o755)).unwrap();
    let photo = root.join("trip.jpg");
    let closed = root.join("closed.jpg");
    for p in [&photo, &closed] {
        assert!(
            Command::new("convert")
                .args(["-size", "64x48", "xc:red"])
                .arg(p)
                .status()
                .unwrap()
                .success()
        );
        assert!(
            Command::new("exiftool")
                .args([
                    "-q",
                    "-overwrite_original",
                    "-Make=Canon",
                    "-Model=Canon EOS 80D",
                    "-GPSLatitude=48.8583",
                    "-GPSLatitudeRef=N",
                    "-GPSLongitude=2.2945",
                    "-GPSLongitudeRef=E"
                ])
                .arg(p)
                .status()
                .unwrap()
                .success()
        );
    }
    std::fs::set_permissions(&photo, std::fs::Permissions::from_mode(0o644)).unwrap();
    std::fs::set_permissions(&closed, std::fs::Permissions::from_mode(0o600)).unwrap();
    let (inst, visitor) = crate::security::start_system(t.path(), &root);
    settled(&inst, 2);
    let info_as = |visitor_asks: bool, p: &Path| -> Value {
        let args = ["info", "--json", p.to_str().unwrap()];
        let out = if visitor_asks {
            visitor.run(&args)
        } else {
            inst.fsctl(&args)
        };
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    };
    // Root owns both: root sees GPS; the visitor sees the camera, not where.
    let m = info_as(false, &photo)["media"].clone();
    assert!(m["gps_lat"].as_f64().is_some(), "{m}");
    let m = info_as(true, &photo)["media"].clone();
    assert_eq!(m["camera_model"], "Canon EOS 80D", "{m}");
    assert!(
        m.get("gps_lat").is_none() && m.get("gps_lon").is_none(),
        "{m}"
    );
    // A file the visitor may not read: no metadata at all.
    assert!(info_as(true, &closed)["media"].is_null());
    // Given to the visitor: now the visitor is the owner and sees GPS.
    crate::security::change(
        "chown",
        &[&format!("{}:{}", crate::util::NOBODY, crate::util::NOBODY)],
        &photo,
    );
    let m = info_as(true, &photo)["media"].clone();
    assert!(m["gps_lat"].as_f64().is_some(), "the owner sees GPS: {m}");
}

/// A PNG of `w` x `h` pixels as far as its header goes (signature, IHDR,
/// IEND; no pixels): what the reader looks at.
fn png_header(w: u32, h: u32) -> Vec<u8> {
    fn crc32(bytes: &[u8]) -> u32 {
        let mut c = !0u32;
        for &b in bytes {
            c ^= u32::from(b);
            for _ in 0..8 {
                c = if c & 1 == 1 {
                    (c >> 1) ^ 0xEDB8_8320
                } else {
                    c >> 1
                };
            }
        }
        !c
    }
    let chunk = |kind: &[u8], body: &[u8]| {
        let mut out = (body.len() as u32).to_be_bytes().to_vec();
        let mut crc_in = kind.to_vec();
        crc_in.extend_from_slice(body);
        out.extend_from_slice(&crc_in);
        out.extend_from_slice(&crc32(&crc_in).to_be_bytes());
        out
    };
    let mut ihdr = w.to_be_bytes().to_vec();
    ihdr.extend_from_slice(&h.to_be_bytes());
    ihdr.extend_from_slice(&[8, 0, 0, 0, 0]);
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    png.extend(chunk(b"IHDR", &ihdr));
    png.extend(chunk(b"IEND", b""));
    png
}

/// A first pass over more photos than the worker lists (it finds them again
/// a chunk at a time, in id order, beyond 4,096): every photo is read once
/// and has its own size, the text files beside them get no row, and photos
/// added and removed while the pass runs are read or dropped. The oracle is
/// what the test wrote into each header.
#[test]
fn a_first_pass_over_thousands_of_photos_reads_each_once() {
    let tmp = tempfile::tempdir().unwrap();
    let tree = tmp.path().join("tree");
    let (folders, per) = (45, 100);
    for d in 0..folders {
        let dir = tree.join(format!("roll{d:02}"));
        std::fs::create_dir_all(&dir).unwrap();
        for f in 0..per {
            let w = d * per + f + 1;
            std::fs::write(dir.join(format!("p{w:04}.png")), png_header(w, 7)).unwrap();
            if f % 10 == 0 {
                std::fs::write(dir.join(format!("note{w:04}.txt")), b"not a photo").unwrap();
            }
        }
    }
    let all = folders * per;
    let mut inst = Instance::new(tmp.path().join("home"), &[&tree], Runner::current());
    inst.start();
    inst.wait_ready();
    // While the pass runs: ten photos more, ten fewer.
    let extra = tree.join("late");
    std::fs::create_dir_all(&extra).unwrap();
    for w in all + 1..=all + 10 {
        std::fs::write(extra.join(format!("p{w:04}.png")), png_header(w, 7)).unwrap();
    }
    for w in 1..=10 {
        std::fs::remove_file(tree.join(format!("roll00/p{w:04}.png"))).unwrap();
    }
    let status = settled(&inst, u64::from(all));
    assert_eq!(
        status["rows"]["ok"].as_u64(),
        Some(u64::from(all)),
        "{status}"
    );
    // Each photo once: as many files read as there were, give or take the
    // ten removed before their turn.
    let read = status["read"].as_u64().unwrap();
    assert!(
        (u64::from(all)..=u64::from(all) + 10).contains(&read),
        "{read} files read for {all} photos: {status}"
    );
    let widths = |q: &str| -> BTreeSet<u32> {
        found(&inst, q)
            .iter()
            .map(|p| {
                let name = p.rsplit('/').next().unwrap();
                name[1..5].parse().unwrap()
            })
            .collect()
    };
    assert_eq!(widths("height:7 ext:png"), (11..=all + 10).collect());
    assert_eq!(widths("width:>4400"), (4401..=all + 10).collect());
    assert_eq!(widths("width:1..20"), (11..=20).collect());
    assert!(found(&inst, "height:7 ext:txt").is_empty());
}
