//! The password file of libpq (`PGPASSFILE`, else `~/.pgpass`): lines of
//! `hostname:port:database:username:password`, `*` matching anything, `\`
//! escaping `:` and `\`, the first matching line winning. tokio-postgres
//! does not read it, and the fleet's users expect it to work as psql does;
//! the daemon's fleet link and `fsctl fleet` both read it through here.

/// The password for this host (`None`: a Unix socket, which libpq names
/// `localhost`), port (default 5432), database (default: the user's name)
/// and user.
pub fn lookup(
    host: Option<&str>,
    port: Option<u16>,
    db: Option<&str>,
    user: &str,
) -> Option<String> {
    let file = std::env::var_os("PGPASSFILE")
        .filter(|f| !f.is_empty())
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| std::path::Path::new(&h).join(".pgpass")))?;
    let text = std::fs::read_to_string(file).ok()?;
    let port = port.unwrap_or(5432).to_string();
    find(
        &text,
        [host.unwrap_or("localhost"), &port, db.unwrap_or(user), user],
    )
}

fn find(text: &str, want: [&str; 4]) -> Option<String> {
    for line in text.lines() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let fields = split(line);
        if fields.len() < 5 {
            continue;
        }
        if fields[..4]
            .iter()
            .zip(want)
            .all(|(f, w)| f == "*" || f == w)
        {
            return Some(fields[4..].join(":"));
        }
    }
    None
}

/// Splits on unescaped `:`, unescaping `\:` and `\\`.
fn split(line: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if let Some(n) = chars.next() {
                    out.last_mut().expect("one field").push(n);
                }
            }
            ':' => out.push(String::new()),
            c => out.last_mut().expect("one field").push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_matching_line_wins() {
        let text =
            "# comment\nother:5432:*:*:nope\n127.0.0.1:*:fleet:me:s\\:cret\n*:*:*:*:fallback\n";
        assert_eq!(
            find(text, ["127.0.0.1", "5432", "fleet", "me"]).as_deref(),
            Some("s:cret")
        );
        assert_eq!(
            find(text, ["db", "5432", "x", "y"]).as_deref(),
            Some("fallback")
        );
        assert_eq!(find("a:b:c:d", ["a", "b", "c", "d"]), None);
    }
}
