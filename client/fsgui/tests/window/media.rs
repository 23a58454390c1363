//! The optional columns (issue 32: dimensions, duration, date taken; issue
//! 34: tags) and the preview's metadata, against real files: a JPEG made
//! by ImageMagick's `convert` and tagged by `exiftool`, a WAV written by
//! Python's `wave`. The oracles are those tools reading the files back
//! (`exiftool -json -n`, `wave`'s frame count), never fsindex.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use egui::accesskit::Role;
use egui_kittest::kittest::Queryable;
use fsgui::View;
use fsgui::details::Extra;
use serde_json::Value;

use super::util::{Instance, eventually, settle};

/// Makes `photos/canon.jpg` (493x312, a Canon EOS 80D, taken 2019-06-14
/// 10:30:00) and `music/tone.wav` (3 s of silence at 8 kHz).
const MAKE: &str = r#"
import os, subprocess, sys, wave
root = sys.argv[1]
os.makedirs(root + '/photos', exist_ok=True)
os.makedirs(root + '/music', exist_ok=True)
jpg = root + '/photos/canon.jpg'
subprocess.run(['convert', '-size', '493x312', 'xc:#336699', jpg], check=True)
subprocess.run(['exiftool', '-q', '-overwrite_original', '-Make=Canon', '-Model=Canon EOS 80D',
    '-DateTimeOriginal=2019:06:14 10:30:00', jpg], check=True)
w = wave.open(root + '/music/tone.wav', 'wb')
w.setnchannels(1); w.setsampwidth(2); w.setframerate(8000)
w.writeframes(b'\0\0' * 8000 * 3); w.close()
"#;

fn run(cmd: &mut Command) -> Vec<u8> {
    let out = cmd.output().expect("run the tool");
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// What exiftool reads back: (date taken as `YYYY-MM-DD HH:MM:SS`, make,
/// model, width, height).
fn exif(jpg: &Path) -> (String, String, String, u64, u64) {
    let out = run(Command::new("exiftool")
        .args(["-json", "-n", "-DateTimeOriginal", "-Make", "-Model"])
        .args(["-ImageWidth", "-ImageHeight"])
        .arg(jpg));
    let v: Value = serde_json::from_slice(&out).unwrap();
    let v = &v[0];
    let date = v["DateTimeOriginal"].as_str().unwrap();
    // `2019:06:14 10:30:00`: the date's colons become dashes.
    let (day, time) = date.split_once(' ').unwrap();
    (
        format!("{} {time}", day.replace(':', "-")),
        v["Make"].as_str().unwrap().to_owned(),
        v["Model"].as_str().unwrap().to_owned(),
        v["ImageWidth"].as_u64().unwrap(),
        v["ImageHeight"].as_u64().unwrap(),
    )
}

/// What Python's `wave` reads back: the length in whole seconds.
fn wav_seconds(wav: &Path) -> u64 {
    let out = run(Command::new("python3").arg("-c").arg(
        "import sys, wave; w = wave.open(sys.argv[1]); print(round(w.getnframes() / w.getframerate()))",
    ).arg(wav));
    String::from_utf8(out).unwrap().trim().parse().unwrap()
}

#[test]
fn optional_columns_and_the_preview_show_what_exiftool_and_wave_read() {
    let inst = Instance::start(|root| {
        run(Command::new("python3").arg("-c").arg(MAKE).arg(root));
    });
    let jpg = inst.tree.join("photos/canon.jpg");
    let wav = inst.tree.join("music/tone.wav");
    let (taken, make, model, width, height) = exif(&jpg);
    assert_eq!(taken, "2019-06-14 10:30:00");
    let seconds = wav_seconds(&wav);
    assert_eq!(seconds, 3);
    let out = inst.fsctl(&["tag", "add", jpg.to_str().unwrap(), "trip"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The daemon reads headers after the scan: wait until it has.
    for path in [&jpg, &wav] {
        eventually(Duration::from_secs(60), "the media read", || {
            inst.json_lines(&["info", path.to_str().unwrap()])
                .first()
                .is_some_and(|v| v["media"].is_object())
        });
    }

    let mut h = inst.window(View::Search);
    h.step();
    // Off by default.
    assert!(h.state().extras().is_empty());
    h.get_by_label("Search").type_text("canon");
    settle(&mut h, "the photo's row", |a| {
        a.search.results.total == 1 && a.settled()
    });
    assert!(h.query_by_label(&taken).is_none(), "no Taken column yet");
    // Turned on from the Columns menu, one at a time.
    for column in ["Taken", "Dimensions", "Duration", "Tags"] {
        h.get_by_label("Columns").click();
        for _ in 0..3 {
            h.step();
        }
        h.get_by_role_and_label(Role::CheckBox, column).click();
        settle(&mut h, "the column on", |a| {
            a.extras().iter().any(|e| e.title() == column)
        });
        // Close the menu if the click left it open.
        if h.query_by_role_and_label(Role::CheckBox, column).is_some() {
            h.key_press(egui::Key::Escape);
            for _ in 0..3 {
                h.step();
            }
        }
    }
    assert_eq!(
        h.state().extras(),
        [
            Extra::Taken,
            Extra::Dimensions,
            Extra::Duration,
            Extra::Tags
        ]
    );
    let dims = format!("{width} × {height}");
    settle(&mut h, "the photo's cells", |a| {
        a.search
            .results
            .row(0)
            .and_then(|r| a.details.get(r))
            .is_some_and(|d| d.media.is_some())
    });
    for cell in [&taken, &dims, "trip"] {
        assert!(h.query_by_label(cell).is_some(), "no cell {cell:?}");
    }
    for header in ["Taken", "Dimensions", "Duration", "Tags"] {
        assert!(
            h.query_all_by_label(header).next().is_some(),
            "no header {header:?}"
        );
    }

    // The preview of the selected photo: its metadata, label and value.
    h.get_by_label("canon.jpg").click();
    settle(&mut h, "the preview", |a| a.preview.is_some());
    h.step();
    let camera = if model.starts_with(&make) {
        model.clone()
    } else {
        format!("{make} {model}")
    };
    assert!(h.query_by_label("Camera").is_some(), "no Camera line");
    assert!(h.query_by_label(&camera).is_some(), "no {camera:?}");
    // The date and the size: in the row and in the preview.
    for value in [&taken, &dims] {
        assert_eq!(h.query_all_by_label(value).count(), 2, "{value:?}");
    }

    // The song: its length as `wave` counts it.
    h.state_mut().type_query("tone.wav");
    settle(&mut h, "the song's row", |a| {
        a.search.results.total == 1
            && a.settled()
            && a.search
                .results
                .row(0)
                .and_then(|r| a.details.get(r))
                .is_some_and(|d| d.media.is_some())
    });
    let length = format!("{}:{:02}", seconds / 60, seconds % 60);
    assert!(
        h.query_by_label(&length).is_some(),
        "no duration {length:?}"
    );

    // Remembered: a new window has the same columns.
    drop(h);
    let kept = std::fs::read_to_string(inst.home.join("fsgui.toml")).unwrap();
    assert!(kept.contains("Taken") && kept.contains("Tags"), "{kept}");
    let mut h = inst.window(View::Search);
    h.step();
    assert_eq!(
        h.state().extras(),
        [
            Extra::Taken,
            Extra::Dimensions,
            Extra::Duration,
            Extra::Tags
        ]
    );
    h.get_by_label("Search").type_text("canon");
    settle(&mut h, "the photo's cells again", |a| {
        a.search
            .results
            .row(0)
            .and_then(|r| a.details.get(r))
            .is_some_and(|d| d.media.is_some())
    });
    assert!(h.query_by_label(&taken).is_some());
}
