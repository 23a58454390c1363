//! The daemon's folders are layers, and the data flows one way through
//! them (docs/ARCHITECTURE.md): a module may use its own layer and the
//! ones below it, never one above. This reads the sources as a newcomer
//! would and fails on the first upward `crate::` path, on SQL over
//! `entries` outside the store, and on a file that grew past 1,200 lines
//! before its tests.

use std::path::{Path, PathBuf};

/// Lowest first. `lib` is the crate root's small helpers (`LockOk`), which
/// every layer may use.
const LAYERS: &[&[&str]] = &[
    &["lib", "platform"],
    &["error", "config"],
    &["store"],
    &["index"],
    &["ingest"],
    &["queries"],
    &["engine"],
    &["server"],
    &["main"],
];

const MAX_LINES: usize = 1200;

fn layer(module: &str) -> usize {
    LAYERS
        .iter()
        .position(|l| l.contains(&module))
        .unwrap_or_else(|| panic!("module `{module}` has no layer: add it to LAYERS"))
}

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The top-level module a file belongs to (`store` for `store/writer.rs`).
fn module_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).unwrap();
    let first = rel
        .components()
        .next()
        .unwrap()
        .as_os_str()
        .to_string_lossy();
    first.trim_end_matches(".rs").to_string()
}

/// The file's code before its unit tests (`#[cfg(test)] mod tests`).
fn before_tests(text: &str) -> &str {
    let lines: Vec<&str> = text.lines().collect();
    for (i, w) in lines.windows(2).enumerate() {
        if w[0].trim() == "#[cfg(test)]" && w[1].trim_start().starts_with("mod tests") {
            let at: usize = lines[..i].iter().map(|l| l.len() + 1).sum();
            return &text[..at];
        }
    }
    text
}

/// The modules named by `crate::NAME` paths and `use crate::{NAME, ...}`
/// groups in code (comments left out).
fn used_modules(code: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (n, line) in code.lines().enumerate() {
        let line = line.split("//").next().unwrap();
        let mut rest = line;
        while let Some(at) = rest.find("crate::") {
            rest = &rest[at + "crate::".len()..];
            if let Some(group) = rest.strip_prefix('{') {
                // `crate::{a::b, c}`: the first segment of each path.
                let inner = group.split('}').next().unwrap();
                for part in inner.split(',') {
                    let name: String = part
                        .trim()
                        .chars()
                        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                        .collect();
                    if !name.is_empty() {
                        out.push((n + 1, name));
                    }
                }
            } else {
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                out.push((n + 1, name));
            }
        }
    }
    out
}

/// Crate-root items that are not modules (`LockOk`, `Error`, ...) belong to
/// `lib` or `error`.
fn module_of_name(name: &str) -> &str {
    match name {
        "Error" | "Critical" | "Runtime" => "error",
        "LockOk" | "RwLockOk" => "lib",
        other => other,
    }
}

#[test]
fn no_module_uses_a_layer_above_its_own() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    files.sort();
    let mut wrong = Vec::new();
    for f in &files {
        let module = module_of(&src, f);
        let text = std::fs::read_to_string(f).unwrap();
        for (line, used) in used_modules(before_tests(&text)) {
            let used = module_of_name(&used);
            if layer(used) > layer(&module) {
                wrong.push(format!(
                    "{}:{line}: {module} uses crate::{used}, a layer above it",
                    f.strip_prefix(&src).unwrap().display()
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "upward imports:\n{}", wrong.join("\n"));
}

#[test]
fn sql_on_entries_lives_in_the_store() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let mut wrong = Vec::new();
    for f in &files {
        if module_of(&src, f) == "store" {
            continue;
        }
        let text = std::fs::read_to_string(f).unwrap();
        for (n, line) in before_tests(&text).lines().enumerate() {
            let l = line.to_ascii_uppercase();
            if l.contains("FROM ENTRIES")
                || l.contains("JOIN ENTRIES")
                || l.contains("INTO ENTRIES")
            {
                wrong.push(format!(
                    "{}:{}",
                    f.strip_prefix(&src).unwrap().display(),
                    n + 1
                ));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "SQL on entries outside store/:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn no_file_is_longer_than_a_reader_can_hold() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let mut long = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let n = before_tests(&text).lines().count();
        if n > MAX_LINES {
            long.push(format!(
                "{}: {n} lines before its tests",
                f.strip_prefix(&src).unwrap().display()
            ));
        }
    }
    assert!(
        long.is_empty(),
        "files over {MAX_LINES} lines:\n{}",
        long.join("\n")
    );
}
