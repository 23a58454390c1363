//! The fleet link: ships this host's index into PostgreSQL, where
//! `fsctl fleet` answers for every host at once.
//!
//! It runs on a thread of its own with its own small runtime, off the
//! writer's path: the writer only appends each committed batch's ids to the
//! journal in `index.db` ([`crate::store::journal`]), in the same
//! transaction as the batch. The link then
//!
//! 1. connects (the URL, the password from a file, `PGPASSFILE` or
//!    `~/.pgpass`), and checks that `fsctl fleet init` made the schema;
//! 2. reconciles when PostgreSQL cannot be brought up to date from the
//!    journal (no row for this host yet, another epoch, batches missing):
//!    a snapshot of the whole index goes by `COPY` into tables of its own
//!    with no index, which are indexed on two connections at once and
//!    swapped in as the host's partitions, with its `(epoch, seq)`, in one
//!    short transaction ([`ship::reconcile`]);
//! 3. ships the journal in order: each batch (or a run of them) in one
//!    transaction that replaces the touched rows and advances the host's
//!    `seq`; a batch at or below that `seq` is skipped, so delivery is at
//!    least once and each batch takes effect once ([`ship::apply`]);
//! 4. tells the writer what was acknowledged, which prunes it;
//! 5. beside all this, on a connection of its own, hashes the files that
//!    fleet dupes need ([`FleetLink::hash_loop`]), so that a batch never
//!    waits on a round of hashing.
//!
//! Any error (the database down or unreachable, a wrong password, the
//! schema missing) is recorded for `status` in one line, and the link
//! tries again with backoff (250 ms doubling to 5 s). Nothing here ever
//! blocks the writer or a query.

mod hash;
mod pgpass;
mod ship;
mod text;

use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::LockOk;
use crate::config::FleetConfig;
use crate::store::{Op, Store, WriteHandle, journal};

/// How often, while current, the owners of this host's gates are compared
/// with what PostgreSQL holds (a `chown` alone reaches no journal batch).
const OWNER_SWEEP: Duration = Duration::from_secs(5);

/// The version of the fleet's PostgreSQL schema this daemon needs at
/// least (`migrations/fleet/`, applied by `fsctl fleet init`); with 7 it
/// loads a host in parts (`ship::reconcile`).
pub const SCHEMA_VERSION: i32 = 5;

/// How the link reaches the database.
#[derive(Clone)]
pub struct FleetSettings {
    pub config: tokio_postgres::Config,
    /// TLS as the URL's `sslmode` and `sslrootcert` ask (None only for a
    /// link that never connects, [`FleetLink::broken`]).
    pub db: Option<fsindex_proto::pgtls::Database>,
    /// The URL without its password, for `status` and logs.
    pub database: String,
    pub host: String,
    /// `[fleet] content`: ship what files say too.
    pub content: bool,
}

impl std::fmt::Debug for FleetSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FleetSettings")
            .field("database", &self.database)
            .field("host", &self.host)
            .finish()
    }
}

impl FleetSettings {
    /// Reads `[fleet]`: the URL, the host's name (default: this machine's
    /// name) and the password (`password_file`, else `PGPASSFILE` or
    /// `~/.pgpass`, unless the URL holds one).
    pub fn from_config(c: &FleetConfig) -> Result<Option<FleetSettings>, String> {
        let Some(url) = c.database.as_deref() else {
            return Ok(None);
        };
        let db = fsindex_proto::pgtls::Database::parse(url)
            .map_err(|e| format!("[fleet] database: {e}"))?;
        let mut config = db.config.clone();
        config.connect_timeout(Duration::from_secs(5));
        if config.get_application_name().is_none() {
            config.application_name("fsindexd");
        }
        if let Some(file) = &c.password_file {
            let text = std::fs::read_to_string(file)
                .map_err(|e| format!("[fleet] password_file {}: {e}", file.display()))?;
            config.password(text.lines().next().unwrap_or("").as_bytes());
        } else if config.get_password().is_none()
            && let Some(pw) = pgpass::lookup(&config)
        {
            config.password(pw.as_bytes());
        }
        let host = match &c.host {
            Some(h) if !h.trim().is_empty() => h.trim().to_owned(),
            Some(_) => return Err("[fleet] host: empty".into()),
            None => sysinfo::System::host_name().unwrap_or_else(|_| "localhost".into()),
        };
        Ok(Some(FleetSettings {
            config,
            db: Some(db),
            database: redact(url),
            host,
            content: c.content,
        }))
    }
}

/// `url` without the password it may hold.
fn redact(url: &str) -> String {
    // postgresql://user:secret@host/db -> postgresql://user@host/db
    if let Some((scheme, rest)) = url.split_once("://")
        && let Some((auth, tail)) = rest.split_once('@')
        && let Some((user, _)) = auth.split_once(':')
    {
        return format!("{scheme}://{user}@{tail}");
    }
    url.to_owned()
}

/// What `status` shows of the link.
#[derive(Clone, Debug, Default)]
pub struct FleetFigures {
    pub host: String,
    pub database: String,
    pub connected: bool,
    /// "connecting", "reconciling", "shipping", "current" or "down"
    /// (hashing for fleet dupes runs beside them).
    pub state: String,
    /// Journal batches committed here and not yet applied there.
    pub lag_batches: u64,
    /// Age of the oldest of them (0 when none).
    pub lag_secs: f64,
    pub last_error: Option<String>,
    /// Entry rows written to PostgreSQL since start.
    pub rows_shipped: u64,
    pub reconciles: u64,
}

/// A pass of hashing for fleet dupes: the sizes shared in the fleet when
/// it began, and the last entry id its rounds reached.
#[derive(Debug)]
struct HashPass {
    sizes: Vec<i64>,
    after: i64,
}

/// The running link, shared with `status`.
#[derive(Debug)]
pub struct FleetLink {
    settings: FleetSettings,
    store: Arc<Store>,
    connected: AtomicBool,
    state: Mutex<&'static str>,
    last_error: Mutex<Option<String>>,
    /// The seq PostgreSQL holds for this host, in the journal's epoch
    /// (-1: not known yet or another epoch).
    acked: AtomicI64,
    rows_shipped: AtomicU64,
    reconciles: AtomicU64,
    stop: AtomicBool,
}

impl FleetLink {
    /// Starts the link's thread.
    pub fn start(
        store: Arc<Store>,
        writer: WriteHandle,
        settings: FleetSettings,
    ) -> std::io::Result<Arc<FleetLink>> {
        let link = Arc::new(FleetLink {
            settings,
            store,
            connected: AtomicBool::new(false),
            state: Mutex::new("connecting"),
            last_error: Mutex::new(None),
            acked: AtomicI64::new(-1),
            rows_shipped: AtomicU64::new(0),
            reconciles: AtomicU64::new(0),
            stop: AtomicBool::new(false),
        });
        let l = link.clone();
        std::thread::Builder::new()
            .name("fsindex-fleet".into())
            .spawn(move || {
                crate::platform::process::lower_thread_priority();
                let rt = match tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    Ok(rt) => rt,
                    Err(e) => {
                        l.failed(&format!("cannot start the fleet link: {e}"));
                        return;
                    }
                };
                rt.block_on(l.run(writer));
            })?;
        Ok(link)
    }

    /// A link that cannot start (a bad `[fleet]` section): `status` shows
    /// why, and the daemon serves this host as ever.
    pub fn broken(store: Arc<Store>, c: &FleetConfig, error: String) -> Arc<FleetLink> {
        let link = FleetLink {
            settings: FleetSettings {
                config: tokio_postgres::Config::new(),
                db: None,
                database: c.database.as_deref().map(redact).unwrap_or_default(),
                host: c.host.clone().unwrap_or_default(),
                content: c.content,
            },
            store,
            connected: AtomicBool::new(false),
            state: Mutex::new("down"),
            last_error: Mutex::new(None),
            acked: AtomicI64::new(-1),
            rows_shipped: AtomicU64::new(0),
            reconciles: AtomicU64::new(0),
            stop: AtomicBool::new(true),
        };
        link.failed(&error);
        Arc::new(link)
    }

    /// Asks the thread to stop (at shutdown).
    pub fn stop(&self) {
        self.stop.store(true, Ordering::SeqCst);
    }

    pub fn figures(&self) -> FleetFigures {
        let acked = self.acked.load(Ordering::Relaxed);
        let (lag_batches, lag_secs) = self
            .store
            .read(|c| journal::pending_after(c, acked.max(0)))
            .map(|(n, oldest)| {
                let age = oldest.map_or(0.0, |ns| (now_ns() - ns).max(0) as f64 / 1e9);
                (n, age)
            })
            .unwrap_or((0, 0.0));
        // One lock at a time: `failed` takes them in the other order.
        let state = (*self.state.lock_ok()).to_owned();
        let last_error = self.last_error.lock_ok().clone();
        FleetFigures {
            host: self.settings.host.clone(),
            database: self.settings.database.clone(),
            connected: self.connected.load(Ordering::Relaxed),
            state,
            lag_batches,
            lag_secs,
            last_error,
            rows_shipped: self.rows_shipped.load(Ordering::Relaxed),
            reconciles: self.reconciles.load(Ordering::Relaxed),
        }
    }

    fn set_state(&self, s: &'static str) {
        *self.state.lock_ok() = s;
    }

    fn failed(&self, msg: &str) {
        let one_line = msg.split_whitespace().collect::<Vec<_>>().join(" ");
        {
            let mut last = self.last_error.lock_ok();
            if last.as_deref() != Some(one_line.as_str()) {
                tracing::warn!(database = %self.settings.database, "fleet: {one_line}");
            }
            *last = Some(one_line);
        }
        self.connected.store(false, Ordering::Relaxed);
        self.set_state("down");
    }

    async fn run(self: Arc<Self>, writer: WriteHandle) {
        const FIRST: Duration = Duration::from_millis(250);
        const MOST: Duration = Duration::from_secs(5);
        let mut wait = FIRST;
        while !self.stop.load(Ordering::Relaxed) {
            let began = Instant::now();
            match self.session(&writer).await {
                Ok(()) => return,
                Err(e) => self.failed(&e),
            }
            // A link that worked for a while starts its backoff over.
            if began.elapsed() > Duration::from_secs(30) {
                wait = FIRST;
            }
            let until = Instant::now() + wait;
            while Instant::now() < until && !self.stop.load(Ordering::Relaxed) {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            wait = (wait * 2).min(MOST);
        }
    }

    /// One connection's life: returns only when asked to stop, or with
    /// the error that ended it.
    async fn session(&self, writer: &WriteHandle) -> Result<(), String> {
        self.set_state("connecting");
        let (client, conn_task) = self.connect().await?;
        let out = self.ship_loop(client, writer).await;
        conn_task.abort();
        out
    }

    /// A connection to the fleet's database over the configured TLS, its
    /// driving task spawned: the session's, and the second one a load's
    /// index builds and the hash loop use (see [`ship::reconcile`]).
    async fn connect(
        &self,
    ) -> Result<(tokio_postgres::Client, tokio::task::JoinHandle<()>), String> {
        let Some(db) = &self.settings.db else {
            return Err("the fleet link has no database".into());
        };
        let (client, conn) = self
            .settings
            .config
            .connect(db.tls.clone())
            .await
            .map_err(|e| db.explain(ship::describe(&e)))?;
        let task = tokio::spawn(async move {
            let _ = conn.await;
        });
        Ok((client, task))
    }

    /// Ships the journal and, beside it on a connection of its own, hashes
    /// for fleet dupes ([`FleetLink::hash_loop`]): a batch never waits for a
    /// round of hashing. Returns when either ends.
    async fn ship_loop(
        &self,
        client: tokio_postgres::Client,
        writer: &WriteHandle,
    ) -> Result<(), String> {
        ship::check_schema(&client).await?;
        if self.settings.content {
            text::check_schema(&client).await?;
        }
        self.connected.store(true, Ordering::Relaxed);
        *self.last_error.lock_ok() = None;
        let hashing = self.hash_loop();
        let shipping = self.ship_journal(client, writer);
        tokio::pin!(hashing, shipping);
        tokio::select! {
            r = &mut shipping => r,
            r = &mut hashing => r,
        }
    }

    async fn ship_journal(
        &self,
        mut client: tokio_postgres::Client,
        writer: &WriteHandle,
    ) -> Result<(), String> {
        let host = self.settings.host.clone();
        let mut owners_swept: Option<Instant> = None;
        // Whether `fsindex.texts` was brought to `[fleet] content` since
        // this connection began or the last reconcile.
        let mut texts_synced = false;
        loop {
            if self.stop.load(Ordering::Relaxed) {
                return Ok(());
            }
            let local = self.store.read(journal::state).map_err(|e| e.to_string())?;
            let remote = ship::host_state(&client, &host)
                .await
                .map_err(|e| ship::describe(&e))?;
            let replayable = match remote {
                Some((epoch, seq)) if epoch == local.epoch => {
                    seq <= local.last && local.first.is_none_or(|first| seq >= first - 1)
                }
                _ => false,
            };
            if !replayable {
                self.acked.store(-1, Ordering::Relaxed);
                self.set_state("reconciling");
                let t = Instant::now();
                let (mut second, second_task) = self.connect().await?;
                let loaded = ship::reconcile(&mut client, &mut second, &self.store, &host).await;
                second_task.abort();
                let Some((seq, rows)) = loaded.map_err(|e| ship::describe(&e))? else {
                    return Err("could not read the index to reconcile (see the log)".into());
                };
                self.reconciles.fetch_add(1, Ordering::Relaxed);
                self.rows_shipped.fetch_add(rows, Ordering::Relaxed);
                tracing::info!(
                    host,
                    seq,
                    rows,
                    secs = t.elapsed().as_secs_f64(),
                    "fleet: reconciled"
                );
                self.acknowledged(seq, writer);
                texts_synced = false;
                continue;
            }
            if !texts_synced {
                let n = text::sync(&mut client, &self.store, &host, self.settings.content)
                    .await
                    .map_err(|e| ship::describe(&e))?;
                if n > 0 {
                    tracing::info!(host, texts = n, "fleet: texts shipped");
                }
                texts_synced = true;
            }
            let (_, seq) = remote.unwrap_or_default();
            self.acked.store(seq, Ordering::Relaxed);
            let batches = self
                .store
                .read(|c| journal::batches_after(c, seq, 50_000))
                .map_err(|e| e.to_string())?;
            if batches.is_empty() {
                if seq > 0 {
                    self.acknowledged(seq, writer);
                }
                if owners_swept.is_none_or(|t| t.elapsed() >= OWNER_SWEEP) {
                    self.sweep_owners(&client).await?;
                    owners_swept = Some(Instant::now());
                }
                self.set_state("current");
                self.wait_for_batches(seq, &client).await?;
                continue;
            }
            self.set_state("shipping");
            let rows = ship::apply(
                &mut client,
                &self.store,
                &host,
                seq,
                &batches,
                self.settings.content,
            )
            .await
            .map_err(|e| ship::describe(&e))?;
            self.rows_shipped.fetch_add(rows, Ordering::Relaxed);
            let last = batches.last().map_or(seq, |b| b.seq);
            self.acknowledged(last, writer);
        }
    }

    /// Hashes, on a connection of its own, this host's files that fleet
    /// dupes need, in passes of rounds ([`FleetLink::hash_for_dupes`]): a
    /// pass whenever some host has shipped since the last (what fleet dupes
    /// need changes only then), and only while this host's rows in
    /// PostgreSQL are current (not during a load). Returns only when asked
    /// to stop, or with the error that ended it.
    async fn hash_loop(&self) -> Result<(), String> {
        let (mut client, _task) = self.connect().await?;
        let mut hashed_for: Option<String> = None;
        loop {
            if self.stop.load(Ordering::Relaxed) {
                return Ok(());
            }
            if client.is_closed() {
                return Err("the connection to the database was closed".into());
            }
            if self.acked.load(Ordering::Relaxed) >= 0 {
                let fleet_now = ship::fleet_generation(&client)
                    .await
                    .map_err(|e| ship::describe(&e))?;
                if hashed_for.as_ref() != Some(&fleet_now) {
                    let mut pass = None;
                    let mut more = true;
                    while more && !self.stop.load(Ordering::Relaxed) {
                        more = self.hash_for_dupes(&mut client, &mut pass).await?;
                    }
                    hashed_for = Some(fleet_now);
                }
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }

    /// Hashes the next round of this host's files that fleet dupes need
    /// (see [`hash`]), `pass` keeping the sizes wanted and where the
    /// rounds stand; false once the pass is over.
    async fn hash_for_dupes(
        &self,
        client: &mut tokio_postgres::Client,
        pass: &mut Option<HashPass>,
    ) -> Result<bool, String> {
        const ROUND: i64 = 2000;
        let host = &self.settings.host;
        if self.acked.load(Ordering::Relaxed) < 0 {
            return Ok(false); // a load under way: its rows are not these
        }
        if pass.is_none() {
            let sizes = ship::shared_sizes(client)
                .await
                .map_err(|e| ship::describe(&e))?;
            *pass = Some(HashPass { sizes, after: 0 });
        }
        let p = pass.as_mut().expect("set above");
        if p.sizes.is_empty() {
            return Ok(false);
        }
        let wanted = ship::hashes_wanted(client, host, &p.sizes, p.after, ROUND)
            .await
            .map_err(|e| ship::describe(&e))?;
        let Some(&last) = wanted.last() else {
            return Ok(false);
        };
        p.after = last;
        let store = self.store.clone();
        let hashed = tokio::task::spawn_blocking(move || {
            let (rows, _gone) = store
                .read(|c| journal::rows_of(c, &wanted))
                .unwrap_or_default();
            // Unreadable files, and files changed since they were shipped,
            // are left for a later pass.
            rows.into_iter()
                .filter_map(|r| hash::hash_row(&r).map(|h| (r, h)))
                .collect::<Vec<_>>()
        })
        .await
        .map_err(|e| format!("hashing for fleet dupes: {e}"))?;
        if !hashed.is_empty() && self.acked.load(Ordering::Relaxed) >= 0 {
            ship::put_hashes(client, host, &hashed)
                .await
                .map_err(|e| ship::describe(&e))?;
        }
        Ok(true)
    }

    /// Brings the owners of this host's gates in PostgreSQL up to what
    /// `lstat` says (see [`ship::put_owners`]).
    async fn sweep_owners(&self, client: &tokio_postgres::Client) -> Result<(), String> {
        let store = self.store.clone();
        let owners = tokio::task::spawn_blocking(move || {
            let gates = store.read(journal::gates)?;
            let (rows, _gone) = store.read(|c| journal::rows_of(c, &gates))?;
            Ok::<_, crate::Error>(
                rows.iter()
                    .map(|r| {
                        let (uid, gid) = ship::owner_of(&ship::full_path(r));
                        (r.row.id, uid, gid)
                    })
                    .collect::<Vec<_>>(),
            )
        })
        .await
        .map_err(|e| format!("reading the owners of folders: {e}"))?
        .map_err(|e| e.to_string())?;
        if owners.is_empty() {
            return Ok(());
        }
        let changed = ship::put_owners(client, &self.settings.host, &owners)
            .await
            .map_err(|e| ship::describe(&e))?;
        if changed > 0 {
            tracing::debug!(changed, "fleet: owners of folders shipped");
        }
        Ok(())
    }

    fn acknowledged(&self, seq: i64, writer: &WriteHandle) {
        self.acked.store(seq, Ordering::Relaxed);
        let _ = writer.send(vec![Op::FleetAcked(seq)]);
    }

    /// Waits until the journal holds a batch after `seq` (checked every
    /// 100 ms: one indexed read), for at most 2 s (then the caller looks
    /// at what the other hosts shipped), or until the connection closes.
    async fn wait_for_batches(
        &self,
        seq: i64,
        client: &tokio_postgres::Client,
    ) -> Result<(), String> {
        let mut ticks = 0u32;
        loop {
            if self.stop.load(Ordering::Relaxed) {
                return Ok(());
            }
            if client.is_closed() {
                return Err("the connection to the database was closed".into());
            }
            let local = self.store.read(journal::state).map_err(|e| e.to_string())?;
            if local.last > seq || ticks == 20 {
                return Ok(());
            }
            ticks += 1;
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

fn now_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as i64)
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redacts_the_password() {
        assert_eq!(
            redact("postgresql://me:secret@db:5432/fleet"),
            "postgresql://me@db:5432/fleet"
        );
        assert_eq!(redact("postgresql://db/fleet"), "postgresql://db/fleet");
    }

    #[test]
    fn takes_content_and_refuses_bad_urls() {
        let c = FleetConfig {
            database: Some("postgresql://127.0.0.1/x".into()),
            content: true,
            ..Default::default()
        };
        assert!(FleetSettings::from_config(&c).unwrap().unwrap().content);
        let c = FleetConfig {
            database: Some("mysql://x".into()),
            ..Default::default()
        };
        assert!(
            FleetSettings::from_config(&c)
                .unwrap_err()
                .contains("not a PostgreSQL URL")
        );
    }
}
