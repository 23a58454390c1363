//! `--sync`: returning once every change made before the call is in the
//! index, by writing a cookie file in each root and waiting for its event
//! (Watchman's cookies). Folders left to polling are rescanned instead.

use super::*;

impl Engine {
    /// Removes the cookie files a daemon killed during a `--sync` left in
    /// the roots' own folders (their names carry its pid). A running
    /// daemon's (another instance's) are left alone.
    pub(super) fn clear_stale_cookies(roots: &[crate::store::RootRow]) {
        for r in roots {
            let root = crate::platform::bytes::path_buf(&r.path);
            let Ok(list) = std::fs::read_dir(&root) else {
                continue;
            };
            for e in list.flatten() {
                let name = e.file_name();
                if !is_cookie(&name) {
                    continue;
                }
                let pid = name.as_encoded_bytes()[COOKIE_PREFIX.len()..]
                    .split(|&b| b == b'-')
                    .next()
                    .and_then(|p| std::str::from_utf8(p).ok()?.parse::<u32>().ok());
                if let Some(pid) = pid
                    && pid != std::process::id()
                    && !crate::platform::process::is_running(pid)
                {
                    tracing::info!(path = %e.path().display(), "removing a cookie file left by a daemon that was stopped");
                    let _ = std::fs::remove_file(e.path());
                }
            }
        }
    }
    /// Wakes `--sync` callers whose cookie event is in an applied batch;
    /// an event received before a caller registered is an older one.
    pub(super) fn signal_cookies(&self, cookies: &[(PathBuf, Instant)]) {
        if cookies.is_empty() {
            return;
        }
        let mut waiting = self.cookies.lock_ok();
        for (path, received) in cookies {
            if waiting
                .get(path)
                .is_some_and(|(registered, _)| registered <= received)
                && let Some((_, tx)) = waiting.remove(path)
            {
                let _ = tx.send(());
            }
        }
    }
    /// After a full rescan that started at `started`: callers registered
    /// before it are covered, even if their cookie event was lost.
    pub(super) fn signal_registered_before(&self, started: Instant) {
        let mut waiting = self.cookies.lock_ok();
        let done: Vec<PathBuf> = waiting
            .iter()
            .filter(|(_, (r, _))| *r <= started)
            .map(|(p, _)| p.clone())
            .collect();
        for p in done {
            if let Some((_, tx)) = waiting.remove(&p) {
                let _ = tx.send(());
            }
        }
    }
    /// Returns once every change made before the call is in the index: a
    /// cookie file is written in each root and its event waited for
    /// (Watchman's cookies).
    pub fn sync(&self, timeout: Duration) -> Result<(), Error> {
        let Some(watcher) = &self.watcher else {
            return Ok(());
        };
        // The caller waits: what runs before its cookies runs at normal
        // priority.
        let _waiting = self.priority.wait();
        if watcher.polls_everything() {
            // No events to wait for: a poll now, on the scanner thread.
            let (tx, rx) = mpsc::channel();
            self.send_job(Job::Poll(Some(tx)));
            return rx.recv_timeout(timeout).map_err(|_| {
                Error::Timeout(format!(
                    "--sync: the rescan of every root did not end within {timeout:?}"
                ))
            });
        }
        let deadline = Instant::now() + timeout;
        // A root not scanned yet has no watch to report a cookie: its scan
        // covers what came before it. Wait for it to start.
        while self
            .roots
            .lock_ok()
            .values()
            .any(|rt| rt.state == RootState::Pending)
        {
            if Instant::now() >= deadline {
                return Err(Error::Timeout(format!(
                    "--sync: the scan of every root did not start within {timeout:?}"
                )));
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let roots = self.store.read(crate::store::roots)?;
        let mut cookies = Cookies(Vec::new());
        let mut scans = Vec::new();
        for r in &roots {
            match self.root_now(r)? {
                // Gone: nothing to wait for (`status` says so).
                RootNow::Gone => continue,
                RootNow::Indexed => {}
                // A folder at the root's path that is not the indexed one
                // (back after it was gone, or another one in its place) has
                // no watch to report a cookie yet: a scan of the root
                // covers it.
                RootNow::Replaced | RootNow::NotScanned => {
                    let (tx, rx) = mpsc::channel();
                    self.queue_scan(r.id, None, Some(tx), true)?;
                    scans.push(rx);
                    continue;
                }
            }
            let root = crate::platform::bytes::path_buf(&r.path);
            let n = self.cookie_seq.fetch_add(1, Ordering::Relaxed);
            cookies
                .0
                .push(root.join(format!("{COOKIE_PREFIX}{}-{n}", std::process::id())));
        }
        // Create every cookie, wait for their events; then delete them and
        // wait again, so the roots' own rows (mtime) are current too.
        for phase in ["create", "delete"] {
            let mut waits = Vec::new();
            for path in &cookies.0 {
                let (tx, rx) = mpsc::channel();
                self.cookies
                    .lock_ok()
                    .insert(path.clone(), (Instant::now(), tx));
                let done = if phase == "create" {
                    std::fs::write(path, b"")
                } else {
                    std::fs::remove_file(path)
                };
                if let Err(e) = done {
                    self.cookies.lock_ok().remove(path);
                    return Err(Error::Precondition(format!(
                        "--sync: cannot {phase} {}: {e}",
                        path.display()
                    )));
                }
                waits.push((path, rx));
            }
            for (path, rx) in waits {
                let got = rx.recv_timeout(deadline.saturating_duration_since(Instant::now()));
                self.cookies.lock_ok().remove(path);
                if got.is_err() {
                    let mut waiting = self.cookies.lock_ok();
                    for p in &cookies.0 {
                        waiting.remove(p);
                    }
                    return Err(Error::Timeout(format!(
                        "--sync: the change event for {} did not arrive within {timeout:?} (is that root polled?)",
                        path.display()
                    )));
                }
            }
        }
        cookies.0.clear();
        for rx in scans {
            match rx
                .recv_timeout(deadline.saturating_duration_since(Instant::now()))
                .map_err(|_| {
                    Error::Timeout(format!(
                        "--sync: the scan of a root that changed did not end within {timeout:?}"
                    ))
                })? {
                // Gone again meanwhile: nothing of it to wait for.
                Ok(_) | Err(Runtime::RootGone { .. }) => {}
                Err(e) => return Err(e.into()),
            }
        }
        // Folders the watcher could not watch (beyond the cap, or paths the
        // backend cannot watch) have no events to wait for: poll them now.
        if watcher.polls_any() {
            let (tx, rx) = mpsc::channel();
            self.send_job(Job::Poll(Some(tx)));
            rx.recv_timeout(deadline.saturating_duration_since(Instant::now()))
                .map_err(|_| {
                    Error::Timeout(format!(
                        "--sync: the rescan of the polled folders did not end within {timeout:?}"
                    ))
                })?;
        }
        Ok(())
    }
}

/// The cookie files of one `--sync`: whatever is left of them when it ends
/// early (a timeout, a root that went away) is removed, never left in the
/// user's folders.
struct Cookies(Vec<PathBuf>);

impl Drop for Cookies {
    fn drop(&mut self) {
        for path in &self.0 {
            let _ = std::fs::remove_file(path);
        }
    }
}
