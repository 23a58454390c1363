//! A real PostgreSQL server for the fleet tests: Debian's binaries
//! (`tests/setup.sh` installs `postgresql`), `initdb` and `pg_ctl` in a temp
//! folder, listening on 127.0.0.1 only, password authentication over TCP
//! (scram-sha-256). PostgreSQL refuses to run as root, so under root the
//! server runs as `nobody`. Stopped (immediately) when dropped.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use super::{free_port, is_root};

/// The superuser's password in every test server.
pub const PG_PASSWORD: &str = "fleet-test-password";

pub struct Postgres {
    _dir: tempfile::TempDir,
    pub data: PathBuf,
    pub port: u16,
    /// A file holding [`PG_PASSWORD`], readable by the daemons.
    pub password_file: PathBuf,
    running: bool,
}

/// Debian's PostgreSQL binaries (the newest installed major version).
fn pg_bin(name: &str) -> PathBuf {
    let mut versions: Vec<u32> = std::fs::read_dir("/usr/lib/postgresql")
        .expect("PostgreSQL is not installed: run tests/setup.sh")
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .collect();
    versions.sort();
    let v = versions.last().expect("no PostgreSQL version installed");
    PathBuf::from(format!("/usr/lib/postgresql/{v}/bin/{name}"))
}

/// `program` as the server's user: `nobody` under root.
fn as_server_user(program: &Path) -> Command {
    if is_root() {
        let mut c = Command::new("setpriv");
        c.args(["--reuid=nobody", "--regid=nogroup", "--clear-groups"])
            .arg(program);
        c
    } else {
        Command::new(program)
    }
}

fn checked(what: &str, out: Output) -> Output {
    assert!(
        out.status.success(),
        "{what} failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

impl Postgres {
    /// initdb and start a server.
    pub fn start() -> Postgres {
        let dir = tempfile::Builder::new()
            .prefix("fsindex-pg")
            .tempdir()
            .unwrap();
        let data = dir.path().join("data");
        let password_file = dir.path().join("password");
        std::fs::write(&password_file, format!("{PG_PASSWORD}\n")).unwrap();
        if is_root() {
            // The server's user must reach its folder.
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
            let st = Command::new("chown")
                .arg("nobody:nogroup")
                .arg(dir.path())
                .arg(&password_file)
                .status()
                .unwrap();
            assert!(st.success());
        }
        checked(
            "initdb",
            as_server_user(&pg_bin("initdb"))
                .arg("-D")
                .arg(&data)
                .args(["-U", "postgres", "-E", "UTF8", "--locale=C.UTF-8"])
                .args(["--auth-local=trust", "--auth-host=scram-sha-256"])
                .arg(format!("--pwfile={}", password_file.display()))
                .args(["--no-sync", "--no-instructions"])
                .output()
                .unwrap(),
        );
        let mut pg = Postgres {
            _dir: dir,
            data,
            port: free_port(),
            password_file,
            running: false,
        };
        pg.resume();
        pg
    }

    /// Starts the server (again) on its port.
    pub fn resume(&mut self) {
        let socket_dir = self.data.parent().unwrap().to_owned();
        checked(
            "pg_ctl start",
            as_server_user(&pg_bin("pg_ctl"))
                .arg("-D")
                .arg(&self.data)
                .arg("-o")
                .arg(format!(
                    "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off",
                    self.port,
                    socket_dir.display()
                ))
                .arg("-l")
                .arg(self.data.parent().unwrap().join("server.log"))
                .args(["-w", "-t", "60", "start"])
                .output()
                .unwrap(),
        );
        self.running = true;
    }

    /// A synchronous standby of this server: a base backup streaming from
    /// it, started on a port of its own; this server then waits for the
    /// standby before any commit returns.
    pub fn standby(&self) -> Postgres {
        let dir = tempfile::Builder::new()
            .prefix("fsindex-pg-standby")
            .tempdir()
            .unwrap();
        let data = dir.path().join("data");
        if is_root() {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
            let st = Command::new("chown")
                .arg("nobody:nogroup")
                .arg(dir.path())
                .status()
                .unwrap();
            assert!(st.success());
        }
        checked(
            "pg_basebackup",
            as_server_user(&pg_bin("pg_basebackup"))
                .arg("-h")
                .arg(self.data.parent().unwrap())
                .arg("-p")
                .arg(self.port.to_string())
                .args(["-U", "postgres", "-R", "-X", "stream", "-D"])
                .arg(&data)
                .current_dir("/")
                .output()
                .unwrap(),
        );
        let mut standby = Postgres {
            _dir: dir,
            data,
            port: free_port(),
            password_file: self.password_file.clone(),
            running: false,
        };
        standby.resume();
        self.psql("ALTER SYSTEM SET synchronous_standby_names = '*'");
        self.psql("SELECT pg_reload_conf()");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while self.psql("SELECT count(*) FROM pg_stat_replication WHERE sync_state = 'sync'") != "1"
        {
            assert!(
                std::time::Instant::now() < deadline,
                "the standby never became synchronous"
            );
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        standby
    }

    /// `kill -9` of the server's postmaster: no shutdown at all.
    pub fn kill9(&mut self) {
        let pid = std::fs::read_to_string(self.data.join("postmaster.pid")).unwrap();
        let pid = pid.lines().next().unwrap().trim().to_owned();
        let st = Command::new("kill").args(["-9", &pid]).status().unwrap();
        assert!(st.success());
        // Its children notice the postmaster gone and exit on their own.
        self.running = false;
        let _ = as_server_user(&pg_bin("pg_ctl"))
            .arg("-D")
            .arg(&self.data)
            .args(["-m", "immediate", "stop"])
            .output();
    }

    /// Promotes a standby to primary.
    pub fn promote(&self) {
        checked(
            "pg_ctl promote",
            as_server_user(&pg_bin("pg_ctl"))
                .arg("-D")
                .arg(&self.data)
                .args(["-w", "promote"])
                .output()
                .unwrap(),
        );
    }

    /// Stops the server at once (as a crash or a pulled cable would).
    pub fn halt(&mut self) {
        if self.running {
            let _ = as_server_user(&pg_bin("pg_ctl"))
                .arg("-D")
                .arg(&self.data)
                .args(["-m", "immediate", "-w", "stop"])
                .output();
            self.running = false;
        }
    }

    /// The URL without a password (the daemons read it from a file).
    pub fn url(&self) -> String {
        format!("postgresql://postgres@127.0.0.1:{}/postgres", self.port)
    }

    /// The URL with the password, for fsctl fleet.
    pub fn url_with_password(&self) -> String {
        format!(
            "postgresql://postgres:{PG_PASSWORD}@127.0.0.1:{}/postgres",
            self.port
        )
    }

    /// A fleet database as `fsctl fleet init` of an older fsctl left it:
    /// the fleet migrations 1 to `version` (the files themselves) and
    /// their rows in `fsindex.schema_version`.
    pub fn fleet_schema_upto(&self, version: usize) {
        const MIGRATIONS: [&str; 7] = [
            include_str!("../../../../migrations/fleet/0001_fleet.sql"),
            include_str!("../../../../migrations/fleet/0002_visibility.sql"),
            include_str!("../../../../migrations/fleet/0003_folders.sql"),
            include_str!("../../../../migrations/fleet/0004_search.sql"),
            include_str!("../../../../migrations/fleet/0005_partitions.sql"),
            include_str!("../../../../migrations/fleet/0006_content.sql"),
            include_str!("../../../../migrations/fleet/0007_load_parts.sql"),
        ];
        let mut sql = String::from(
            "CREATE SCHEMA fsindex;
             CREATE TABLE fsindex.schema_version (version integer PRIMARY KEY,
                 applied_at timestamptz NOT NULL DEFAULT now());",
        );
        for (v, m) in MIGRATIONS[..version].iter().enumerate() {
            sql.push_str(m);
            sql.push_str(&format!(
                ";\nINSERT INTO fsindex.schema_version (version) VALUES ({});\n",
                v + 1
            ));
        }
        self.psql(&sql);
    }

    /// Runs SQL with psql over the local socket; returns its unaligned output.
    pub fn psql(&self, sql: &str) -> String {
        let out = checked(
            "psql",
            as_server_user(&pg_bin("psql"))
                .args(["-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-U", "postgres"])
                .arg("-h")
                .arg(self.data.parent().unwrap())
                .arg("-p")
                .arg(self.port.to_string())
                .args(["-d", "postgres", "-c", sql])
                .current_dir("/")
                .output()
                .unwrap(),
        );
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        self.halt();
    }
}
