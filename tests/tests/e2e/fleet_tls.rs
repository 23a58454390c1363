//! The fleet over TLS: a real PostgreSQL with `ssl=on` and a certificate
//! the test issues with the `openssl` command (its own CA, a server
//! certificate for `IP:127.0.0.1` and `DNS:db.fleet.test`, and a second CA
//! that signed nothing). Oracles: PostgreSQL's own `pg_stat_ssl` (is the
//! daemon's session encrypted?), the hosts' own `fsctl --json search`, and
//! what the daemon's status and fsctl say when the certificate is not one
//! the URL trusts.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use serde_json::Value;

use crate::util::*;

/// Runs `openssl ARGS` in `dir`, failing the test if it fails.
fn openssl(dir: &Path, args: &[&str]) {
    let out = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("openssl is installed (tests/setup.sh)");
    assert!(out.status.success(), "openssl {args:?}: {}", text(&out));
}

/// A CA of the test's own, and what it signed.
struct Certs {
    /// The CA that signed the server's certificate.
    ca: PathBuf,
    /// A CA that signed nothing here.
    other_ca: PathBuf,
    server_crt: PathBuf,
    server_key: PathBuf,
}

fn make_certs(dir: &Path) -> Certs {
    std::fs::create_dir_all(dir).unwrap();
    let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1"];
    for (name, cn) in [("ca", "fleet test CA"), ("other-ca", "another CA")] {
        let mut a = vec!["req", "-x509", "-nodes", "-days", "2"];
        a.extend_from_slice(&ec);
        let (key, crt, subj) = (
            format!("{name}.key"),
            format!("{name}.crt"),
            format!("/CN={cn}"),
        );
        a.extend_from_slice(&["-keyout", &key, "-out", &crt, "-subj", &subj]);
        openssl(dir, &a);
    }
    let mut a = vec!["req", "-nodes"];
    a.extend_from_slice(&ec);
    a.extend_from_slice(&[
        "-keyout",
        "server.key",
        "-out",
        "server.csr",
        "-subj",
        "/CN=db.fleet.test",
    ]);
    openssl(dir, &a);
    std::fs::write(
        dir.join("san.ext"),
        "subjectAltName=IP:127.0.0.1,DNS:db.fleet.test\n",
    )
    .unwrap();
    openssl(
        dir,
        &[
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            "ca.crt",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-days",
            "2",
            "-extfile",
            "san.ext",
            "-out",
            "server.crt",
        ],
    );
    Certs {
        ca: dir.join("ca.crt"),
        other_ca: dir.join("other-ca.crt"),
        server_crt: dir.join("server.crt"),
        server_key: dir.join("server.key"),
    }
}

/// Turns TLS on in a running server with the given certificate (a reload
/// is enough since PostgreSQL 10) and checks that it took.
fn enable_tls(pg: &Postgres, certs: &Certs) {
    use std::os::unix::fs::PermissionsExt;
    for (from, to) in [
        (&certs.server_crt, "server.crt"),
        (&certs.server_key, "server.key"),
    ] {
        let dest = pg.data.join(to);
        std::fs::copy(from, &dest).unwrap();
        std::fs::set_permissions(&dest, std::fs::Permissions::from_mode(0o600)).unwrap();
        if is_root() {
            let st = Command::new("chown")
                .arg("nobody:nogroup")
                .arg(&dest)
                .status()
                .unwrap();
            assert!(st.success());
        }
    }
    pg.psql("ALTER SYSTEM SET ssl_cert_file = 'server.crt'");
    pg.psql("ALTER SYSTEM SET ssl_key_file = 'server.key'");
    pg.psql("ALTER SYSTEM SET ssl = on");
    pg.psql("SELECT pg_reload_conf()");
    eventually(Duration::from_secs(10), "ssl = on after a reload", || {
        pg.psql("SHOW ssl") == "on"
    });
}

/// `url` with `query` appended (`?` or `&`).
fn with(url: &str, query: &str) -> String {
    let sep = if url.contains('?') { '&' } else { '?' };
    format!("{url}{sep}{query}")
}

/// A host whose daemon ships to `url` (password from the server's file).
fn tls_host(tmp: &Path, pg: &Postgres, name: &str, url: &str) -> (PathBuf, Instance) {
    let tree = tmp.join(name).join("tree");
    std::fs::create_dir_all(&tree).unwrap();
    let home = tmp.join(name).join("home");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(
        home.join("config.toml"),
        format!(
            "[fleet]\ndatabase = \"{url}\"\nhost = \"{name}\"\npassword_file = \"{}\"\n",
            pg.password_file.display()
        ),
    )
    .unwrap();
    let inst = Instance::new(home, &[tree.as_path()], Runner::current());
    (tree, inst)
}

fn fleet_at(inst: &Instance, url: &str, args: &[&str]) -> Output {
    let mut a = vec!["fleet"];
    a.extend_from_slice(args);
    a.extend_from_slice(&["--database", url]);
    inst.fsctl(&a)
}

fn link(inst: &Instance) -> Value {
    inst.status()["fleet"].clone()
}

/// Waits until the link is down with a one-line error that holds every
/// one of `needles`; returns it.
fn wait_error(inst: &Instance, needles: &[&str]) -> String {
    let mut last = Value::Null;
    let ok = poll_until(Duration::from_secs(20), || {
        last = link(inst);
        last["connected"] == false
            && last["last_error"]
                .as_str()
                .is_some_and(|e| needles.iter().all(|n| e.contains(n)) && !e.contains('\n'))
    });
    assert!(ok, "fleet status should say {needles:?}: {last}");
    last["last_error"].as_str().unwrap().to_owned()
}

/// (path, size) of what a search found, locally or in the fleet.
fn found(lines: &[Value]) -> Vec<(String, u64)> {
    let mut v: Vec<_> = lines
        .iter()
        .map(|l| {
            (
                l["path"].as_str().unwrap().to_owned(),
                l["size"].as_u64().unwrap(),
            )
        })
        .collect();
    v.sort();
    v
}

/// `sslmode=verify-full` with the right CA: the daemon ships over TLS (as
/// the server itself reports) and fsctl fleet reads it back; `require`,
/// `prefer` and `disable` connect too, and a host named by the URL that
/// the certificate names (reached by `hostaddr`) verifies. A wrong CA or a
/// host name the certificate does not name: the link says why in one line
/// in `fsctl status`, and the daemon serves its own tree all along.
#[test]
fn fleet_over_tls_verifies_the_server() {
    let tmp = tempfile::tempdir().unwrap();
    let certs = make_certs(&tmp.path().join("certs"));
    let pg = Postgres::start();
    enable_tls(&pg, &certs);
    let ca = certs.ca.display().to_string();
    let verified = |url: &str| with(url, &format!("sslmode=verify-full&sslrootcert={ca}"));

    // fsctl fleet init over verify-full.
    let (tree, mut good) = tls_host(tmp.path(), &pg, "good", &verified(&pg.url()));
    let admin = verified(&pg.url_with_password());
    let out = fleet_at(&good, &admin, &["init", "--json"]);
    assert!(out.status.success(), "fleet init over TLS: {}", text(&out));

    write_file(&tree, "docs/over-tls.txt", b"shipped encrypted");
    good.start();
    let mut last = Value::Null;
    let ok = poll_until(Duration::from_secs(30), || {
        last = link(&good);
        last["connected"] == true && last["lag_batches"] == 0 && last["state"] == "current"
    });
    assert!(ok, "fleet link over TLS not current: {last}");
    // PostgreSQL's view: the daemon's sessions (the journal's, and the
    // one that hashes for fleet dupes) are all encrypted.
    assert_eq!(
        pg.psql(
            "SELECT count(*) FILTER (WHERE s.ssl) > 0 AND count(*) FILTER (WHERE NOT s.ssl) = 0 \
             FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid) \
             WHERE a.application_name = 'fsindexd'"
        ),
        "t"
    );
    let local = found(&json_lines(
        &good.fsctl(&["search", "--json", "--limit", "0", "over-tls"]),
    ));
    assert_eq!(local.len(), 1);
    let out = fleet_at(&good, &admin, &["search", "--json", "over-tls"]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(found(&json_lines(&out)), local, "fleet search over TLS");

    // Every other mode fsctl takes reaches the same rows; the name the
    // certificate gives verifies when the address comes from hostaddr.
    let named = format!(
        "postgresql://postgres:{PG_PASSWORD}@db.fleet.test:{}/postgres?hostaddr=127.0.0.1",
        pg.port
    );
    for url in [
        with(&pg.url_with_password(), "sslmode=require"),
        with(&pg.url_with_password(), "sslmode=prefer"),
        with(&pg.url_with_password(), "sslmode=disable"),
        with(
            &pg.url_with_password(),
            &format!("sslmode=verify-ca&sslrootcert={ca}"),
        ),
        verified(&named),
    ] {
        let out = fleet_at(&good, &url, &["search", "--json", "over-tls"]);
        assert!(out.status.success(), "{url}: {}", text(&out));
        assert_eq!(found(&json_lines(&out)), local, "{url}");
    }

    // A CA that did not sign the server's certificate.
    let wrong_ca = with(
        &pg.url(),
        &format!(
            "sslmode=verify-full&sslrootcert={}",
            certs.other_ca.display()
        ),
    );
    let (tree_b, mut bad_ca) = tls_host(tmp.path(), &pg, "badca", &wrong_ca);
    write_file(&tree_b, "local-b.txt", b"b");
    bad_ca.start();
    let e = wait_error(
        &bad_ca,
        &["certificate verify failed", "sslmode=verify-full"],
    );
    assert!(e.contains("other-ca.crt"), "{e}");
    assert_eq!(
        found(&json_lines(
            &bad_ca.fsctl(&["search", "--json", "--limit", "0", "local-b"])
        ))
        .len(),
        1,
        "the daemon serves its tree"
    );

    // The right CA, but a host name the certificate does not name.
    let wrong_name = verified(&format!(
        "postgresql://postgres@wrong.fleet.test:{}/postgres?hostaddr=127.0.0.1",
        pg.port
    ));
    let (tree_c, mut bad_name) = tls_host(tmp.path(), &pg, "badname", &wrong_name);
    write_file(&tree_c, "local-c.txt", b"c");
    bad_name.start();
    wait_error(&bad_name, &["hostname mismatch", "sslmode=verify-full"]);
    assert_eq!(
        found(&json_lines(
            &bad_name.fsctl(&["search", "--json", "--limit", "0", "local-c"])
        ))
        .len(),
        1,
        "the daemon serves its tree"
    );
    // Neither shipped a row.
    assert_eq!(
        pg.psql("SELECT count(*) FROM fsindex.hosts WHERE host IN ('badca', 'badname')"),
        "0"
    );
    // fsctl says the same, and exits 2.
    let out = fleet_at(
        &good,
        &admin.replace(&ca, &certs.other_ca.display().to_string()),
        &["hosts"],
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("certificate verify failed"),
        "{}",
        text(&out)
    );

    // A mode that verifies with no CA to verify against is refused by
    // name (unless libpq's default CA file is there, which it then uses).
    let home_ca = std::env::var_os("HOME")
        .map(|h| Path::new(&h).join(".postgresql/root.crt"))
        .is_some_and(|f| f.exists());
    if !home_ca {
        let out = fleet_at(
            &good,
            &with(&pg.url_with_password(), "sslmode=verify-full"),
            &["hosts"],
        );
        assert_eq!(out.status.code(), Some(2), "{}", text(&out));
        assert!(text(&out).contains("sslrootcert"), "{}", text(&out));
    }
    // Client certificates are not implemented: refused by name.
    let out = fleet_at(&good, &with(&admin, "sslcert=/tmp/client.crt"), &["hosts"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("sslcert"), "{}", text(&out));

    for i in [&mut good, &mut bad_ca, &mut bad_name] {
        i.stop();
    }
}

/// `sslmode=require` against a server with `ssl=off` is a clear error, in
/// fsctl (exit 2) and in the daemon's status; `prefer` (the default) goes
/// on without TLS there.
#[test]
fn fleet_require_refuses_a_server_without_tls() {
    let tmp = tempfile::tempdir().unwrap();
    let pg = Postgres::start();
    assert_eq!(pg.psql("SHOW ssl"), "off");
    let required = with(&pg.url(), "sslmode=require");
    let (tree, mut h) = tls_host(tmp.path(), &pg, "req", &required);
    let out = fleet_at(
        &h,
        &with(&pg.url_with_password(), "sslmode=require"),
        &["init"],
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("server does not support TLS")
            && text(&out).contains("sslmode=require"),
        "{}",
        text(&out)
    );
    let out = fleet_at(
        &h,
        &with(&pg.url_with_password(), "sslmode=prefer"),
        &["init"],
    );
    assert!(out.status.success(), "{}", text(&out));

    write_file(&tree, "plain.txt", b"p");
    h.start();
    wait_error(&h, &["server does not support TLS", "sslmode=require"]);
    assert_eq!(
        found(&json_lines(
            &h.fsctl(&["search", "--json", "--limit", "0", "plain"])
        ))
        .len(),
        1,
        "the daemon serves its tree"
    );
    h.stop();
}
