//! The window's state: the three views' models, the daemon's status, the
//! settings, and the glue that sends requests and applies replies. The
//! drawing lives in [`crate::ui`]; [`App::ui`] is the one entry point both
//! eframe and the kittest harness call.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use fsindex_client::Target;

use crate::backend::{Backend, Reply, Request, StatusInfo, Wake};
use crate::du::DuModel;
use crate::dupes::DupesModel;
use crate::search::SearchModel;
use crate::settings::Settings;

/// How long the frame that reads a typed key waits for the answer's first
/// page before it draws. An answer in time is drawn with the key, in one
/// frame instead of two: with software GL a frame costs about 10 ms of
/// both cores, which the daemon's search would otherwise share (the key's
/// echo and the old rows drawn while it searches), and a second frame then
/// draws the rows. A slower answer is drawn when it comes, as before, the
/// key's echo this much later.
pub const SAME_FRAME: Duration = Duration::from_millis(25);

/// The three views.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum View {
    #[default]
    Search,
    DiskUsage,
    Duplicates,
}

/// What can be done with a result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// With the default application.
    Open,
    /// In the file manager, with the file selected.
    Reveal,
    CopyPath,
    CopyName,
    /// Every selected path, one per line.
    CopyList,
    /// Asks, then moves to the platform's trash.
    Trash,
    /// Asks for the new name (one path).
    Rename,
    /// Asks for the program.
    OpenWith,
    /// The Search view, with the query `in:FOLDER` (the path's folder, or
    /// the folder itself).
    SearchIn,
}

/// A question the window is asking (a modal dialog).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Dialog {
    /// Move these to the trash? `from_dupes`: copies chosen in Duplicates.
    Trash {
        paths: Vec<Vec<u8>>,
        from_dupes: bool,
    },
    /// The new name, and why the last one was refused.
    Rename {
        path: Vec<u8>,
        name: String,
        error: Option<String>,
    },
    /// The program to open with.
    OpenWith {
        paths: Vec<Vec<u8>>,
        program: String,
    },
}

/// A preview and the path it is of.
pub type PathPreview = (Vec<u8>, crate::preview::Preview);

/// What a helper thread reports when its action is done.
#[derive(Clone, Debug, Default)]
struct Done {
    text: String,
    error: bool,
    /// Paths now in the trash.
    trashed: Vec<Vec<u8>>,
}

/// How the window starts.
#[derive(Clone, Debug)]
pub struct Options {
    pub target: Target,
    /// Start fsindexd when none listens (as fsctl does).
    pub spawn: bool,
    /// The query typed in at start.
    pub query: Option<String>,
    pub view: View,
    /// Where the window keeps its choices, `fsgui.toml` (`None`: not kept).
    pub settings_path: Option<PathBuf>,
    /// Record open/reveal instead of asking the desktop (tests); trash,
    /// rename and "open with" are done for real.
    pub dry_run: bool,
}

impl Options {
    /// The instance's socket, spawning the daemon, settings in the config dir.
    pub fn for_socket(socket: PathBuf) -> Options {
        Options {
            target: Target::Socket(socket),
            spawn: true,
            query: None,
            view: View::Search,
            settings_path: Some(Settings::default_path()),
            dry_run: false,
        }
    }
}

/// A short message in the status bar (an action's result or failure).
#[derive(Clone, Debug)]
pub struct Notice {
    pub text: String,
    pub at: Instant,
    /// A failure: shown in the error colour, and longer.
    pub error: bool,
}

impl Notice {
    /// How long it stays in the status bar.
    pub fn lasts(&self) -> Duration {
        Duration::from_secs(if self.error { 20 } else { 6 })
    }
}

pub struct App {
    pub search: SearchModel,
    pub du: DuModel,
    pub dupes: DupesModel,
    pub view: View,
    pub status: Option<StatusInfo>,
    pub connection: Option<Result<(), String>>,
    pub settings: Settings,
    settings_path: Option<PathBuf>,
    /// Saved searches and history, the daemon's (see [`crate::shared`]).
    pub shared: crate::shared::SharedSearches,
    /// What Stat said of rows drawn (media metadata, tags; see
    /// [`crate::details`]).
    pub details: crate::details::DetailsCache,
    backend: Option<Backend>,
    /// Requests made without a backend (unit tests read them).
    pub outbox: Vec<Request>,
    /// How long the frame of a typed key waits for its first page
    /// ([`SAME_FRAME`]; tests set it).
    pub same_frame: Duration,
    /// Actions done, newest last (what dry-run mode records).
    pub actions: Vec<(Action, Vec<Vec<u8>>)>,
    dry_run: bool,
    /// Set by helper threads (open, reveal, trash) when they are done.
    done: Arc<Mutex<Vec<Done>>>,
    /// The question asked, if any.
    pub dialog: Option<Dialog>,
    /// What the last move to the trash moved ("Undo" puts it back).
    pub last_trashed: Option<Vec<Vec<u8>>>,
    pub notice: Option<Notice>,
    /// Give the query box the focus (and select its text) next frame.
    pub(crate) focus_query: bool,
    pub(crate) select_query: bool,
    /// Changes seen while the disk-usage view was hidden.
    du_stale: bool,
    /// Changes since the last duplicate search.
    pub dupes_stale: bool,
    pub(crate) expanded_groups: std::collections::BTreeSet<usize>,
    pub frames: u64,
    /// A daemon answered at least once (a later failure is a loss).
    connected_once: bool,
    /// The results epoch the table last showed (a new one scrolls to the top).
    pub(crate) shown_epoch: u64,
    /// Put the query box's text cursor at the end next frame.
    pub(crate) query_cursor_to_end: bool,
    /// Give the dialog's text box the focus next frame.
    pub(crate) focus_dialog: bool,
    /// Changes arrived while the daemon scanned, not yet followed.
    changes_held: bool,
    /// Where the treemap was drawn in the last frame (tests check the
    /// layout at small sizes).
    pub du_map_rect: Option<egui::Rect>,
    /// The preview pane is open (Search view, where the window is wide
    /// enough).
    pub preview_shown: bool,
    /// The preview shown, and the path it is of.
    pub preview: Option<PathPreview>,
    /// The path whose preview was asked for last.
    preview_asked: Option<Vec<u8>>,
    /// Where the loading thread leaves its answer.
    preview_slot: Arc<Mutex<Option<PathPreview>>>,
    /// The thumbnail's texture, by path.
    pub(crate) preview_texture: Option<(Vec<u8>, egui::TextureHandle)>,
    /// The daemon, for what the preview asks it (a document's text).
    target: Target,
}

impl std::fmt::Debug for App {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("App").field("view", &self.view).finish()
    }
}

impl App {
    /// Starts the backend; `wake` repaints the window.
    pub fn start(options: Options, wake: Wake) -> std::io::Result<App> {
        let backend = Backend::start(options.target.clone(), options.spawn, wake)?;
        let mut app = App::without_backend(options);
        app.backend = Some(backend);
        let pending = std::mem::take(&mut app.outbox);
        app.send(pending);
        Ok(app)
    }

    /// Starts with an egui context to wake.
    pub fn start_with(options: Options, ctx: &egui::Context) -> std::io::Result<App> {
        let ctx = ctx.clone();
        App::start(
            options,
            Arc::new(move |after| {
                if after.is_zero() {
                    ctx.request_repaint();
                } else {
                    ctx.request_repaint_after(after);
                }
            }),
        )
    }

    /// An app whose requests go to [`App::outbox`] (reducer tests).
    pub fn without_backend(options: Options) -> App {
        let settings = options
            .settings_path
            .as_deref()
            .map(Settings::load)
            .unwrap_or_default();
        let mut search = SearchModel::default();
        search.ignore_accents = !settings.match_accents.unwrap_or(false);
        let mut app = App {
            search,
            du: DuModel::default(),
            dupes: DupesModel::default(),
            view: options.view,
            status: None,
            connection: None,
            settings,
            settings_path: options.settings_path,
            shared: Default::default(),
            details: Default::default(),
            backend: None,
            outbox: Vec::new(),
            same_frame: SAME_FRAME,
            actions: Vec::new(),
            dry_run: options.dry_run,
            done: Arc::default(),
            dialog: None,
            last_trashed: None,
            notice: None,
            focus_query: true,
            select_query: false,
            du_stale: false,
            dupes_stale: false,
            expanded_groups: Default::default(),
            frames: 0,
            connected_once: false,
            shown_epoch: 0,
            query_cursor_to_end: false,
            focus_dialog: false,
            du_map_rect: None,
            changes_held: false,
            preview_shown: true,
            preview: None,
            preview_asked: None,
            preview_slot: Arc::default(),
            preview_texture: None,
            target: options.target.clone(),
        };
        if let Some(q) = options.query {
            let r = app.search.set_query(&q);
            app.send(r);
        }
        app
    }

    pub(crate) fn send(&mut self, requests: Vec<Request>) {
        for r in requests {
            match &self.backend {
                Some(b) => b.send(r),
                None => self.outbox.push(r),
            }
        }
    }

    /// Applies every reply that arrived since the last frame.
    pub fn pump(&mut self) {
        while let Some(reply) = self.backend.as_ref().and_then(Backend::try_recv) {
            self.apply(reply);
        }
        let done: Vec<Done> = self
            .done
            .lock()
            .map(|mut n| std::mem::take(&mut *n))
            .unwrap_or_default();
        for d in done {
            if !d.trashed.is_empty() {
                self.dupes.trashed(&d.trashed);
                let gone = &d.trashed;
                self.search.selection.retain(|p| !gone.contains(p));
                self.last_trashed = Some(d.trashed.clone());
            }
            if d.error {
                self.fail(d.text);
            } else {
                self.say(d.text);
            }
        }
    }

    /// One reply: the reducers of every view.
    pub fn apply(&mut self, reply: Reply) {
        match reply {
            Reply::Connection(Ok(())) => {
                let was_lost = matches!(self.connection, Some(Err(_))) && self.connected_once;
                self.connection = Some(Ok(()));
                self.connected_once = true;
                self.load_shared();
                if was_lost {
                    self.reconnected();
                }
            }
            Reply::Connection(Err(e)) => {
                if matches!(self.connection, Some(Ok(()))) {
                    self.went_away(&e);
                }
                self.connection = Some(Err(e));
            }
            Reply::Rows {
                generation,
                offset,
                total,
                elapsed_us,
                rows,
            } => {
                crate::trace::event(format_args!("applied gen={generation} offset={offset}"));
                let r = self
                    .search
                    .apply_rows(generation, offset, total, elapsed_us, rows);
                self.send(r);
            }
            Reply::SearchFailed {
                generation,
                message,
                invalid,
            } => self.search.apply_error(generation, &message, invalid),
            Reply::Status(s) => {
                // Only a scan seen ending replaced the index under the rows
                // (a first status that is already ready changes nothing).
                let was_scanning = self.status.as_ref().is_some_and(|o| o.state != "ready");
                let ready = s.state == "ready";
                self.status = Some(s);
                self.connection = Some(Ok(()));
                if (was_scanning && ready) || std::mem::take(&mut self.changes_held) {
                    // A finished scan replaced the index wholesale; or
                    // changes were held back while scanning (see `changed`).
                    self.changed();
                }
                self.open_du_root();
            }
            Reply::DiskUsage { generation, answer } => self.du.apply(generation, answer),
            Reply::Dupes { generation, event } => self.dupes.apply(generation, event),
            Reply::Shared(answer) => self.apply_shared(answer),
            Reply::Details(answers) => self.details.apply(answers, Instant::now()),
            Reply::Changed { .. } => {
                // While the daemon scans, changes stream in all the time:
                // the list follows at the status poll's pace (a second),
                // not every 100 ms, so a scan does not keep the window busy.
                let scanning = self.status.as_ref().is_some_and(|s| s.state != "ready");
                if scanning {
                    self.changes_held = true;
                } else {
                    self.changed();
                }
            }
        }
    }

    /// The daemon went away: what was asked of it will not be answered;
    /// the rows shown are marked out of date.
    fn went_away(&mut self, why: &str) {
        self.search.went_away(why);
        self.du.loading = false;
        self.du_stale = true;
        if self.dupes.running {
            self.dupes.running = false;
            self.dupes.error = Some(why.to_owned());
        }
        // The next status is a new daemon's: a scan it starts is its own.
        self.status = None;
        self.say(format!("{why}; reconnecting…"));
    }

    /// A daemon answers again: the query and the view shown are asked for
    /// anew (a duplicate search cut short runs again; a finished one is
    /// marked as possibly out of date).
    fn reconnected(&mut self) {
        self.details.forget();
        let r = self.search.rerun();
        self.send(r);
        self.du_stale = true;
        if self.view == View::DiskUsage {
            self.open_du_root();
            self.refresh_du();
        }
        if self.dupes.error.is_some() {
            let r = self.dupes.start();
            self.send(r);
        } else if self.dupes.started() {
            self.dupes_stale = true;
        }
        let what = match self.view {
            View::Search if !self.search.query.trim().is_empty() => "; the search was run again",
            View::DiskUsage => "; disk usage was asked for again",
            View::Duplicates if self.dupes.running => "; the duplicate search runs again",
            _ => "",
        };
        self.say(format!("reconnected to fsindexd{what}"));
    }

    /// The index changed: the list follows; the other views refresh when shown.
    fn changed(&mut self) {
        let r = self.search.refresh();
        self.send(r);
        self.du_stale = true;
        if self.dupes.started() {
            self.dupes_stale = true;
        }
        if self.view == View::DiskUsage {
            self.refresh_du();
        }
    }

    fn refresh_du(&mut self) {
        if self.du_stale && !self.du.loading {
            self.du_stale = false;
            let r = self.du.reload();
            self.send(r);
        }
    }

    /// The disk-usage view starts at the first root once the roots are known.
    fn open_du_root(&mut self) {
        if self.du.path.is_some() || self.view != View::DiskUsage {
            return;
        }
        let Some(root) = self
            .status
            .as_ref()
            .and_then(|s| s.roots.first())
            .map(|r| r.path.clone())
        else {
            return;
        };
        let r = self.du.open(&root, &root);
        self.du_stale = false;
        self.send(r);
    }

    /// Switches views, starting what the new one needs.
    pub fn show(&mut self, view: View) {
        self.view = view;
        match view {
            View::Search => self.focus_query = true,
            View::DiskUsage => {
                self.open_du_root();
                self.refresh_du();
            }
            View::Duplicates => {
                if !self.dupes.started() {
                    let r = self.dupes.start();
                    self.send(r);
                }
            }
        }
    }

    /// The query box changed.
    /// The accents toggle: the query again, and the choice kept.
    pub fn set_ignore_accents(&mut self, ignore: bool) {
        let r = self.search.set_ignore_accents(ignore);
        self.settings.match_accents = Some(!ignore);
        self.save_settings();
        self.focus_query = true;
        self.send(r);
    }

    pub fn type_query(&mut self, query: &str) {
        let r = self.search.set_query(query);
        let asked = r.iter().find_map(|r| match r {
            Request::Search { generation, .. } => Some(*generation),
            _ => None,
        });
        self.send(r);
        if let Some(generation) = asked {
            self.await_first_page(generation, self.same_frame);
        }
    }

    /// Waits up to `within` for the answer to the search just sent, applying
    /// every reply that comes meanwhile, so that an answer in time is drawn
    /// by the frame that read the key (see [`SAME_FRAME`]).
    fn await_first_page(&mut self, generation: u64, within: Duration) {
        let deadline = Instant::now() + within;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let Some(reply) = self
                .backend
                .as_ref()
                .filter(|_| !left.is_zero())
                .and_then(|b| b.recv_timeout(left))
            else {
                return;
            };
            let answered = matches!(
                &reply,
                Reply::Rows { generation: g, .. } | Reply::SearchFailed { generation: g, .. }
                    if *g == generation
            );
            self.apply(reply);
            if answered {
                return;
            }
        }
    }

    pub(crate) fn say(&mut self, text: impl Into<String>) {
        self.notice = Some(Notice {
            text: text.into(),
            at: Instant::now(),
            error: false,
        });
    }

    /// A failure, shown in the error colour until read (longer than news).
    pub(crate) fn fail(&mut self, text: impl Into<String>) {
        self.notice = Some(Notice {
            text: text.into(),
            at: Instant::now(),
            error: true,
        });
    }

    pub(crate) fn save_settings(&mut self) {
        if let Some(p) = &self.settings_path
            && let Err(e) = self.settings.save(p)
        {
            let msg = format!("cannot save {}: {e}", p.display());
            self.say(msg);
        }
    }

    /// Does `action` on `paths`; copying needs the egui context.
    pub fn act(&mut self, ctx: &egui::Context, action: Action, paths: Vec<Vec<u8>>) {
        if paths.is_empty() {
            return;
        }
        self.actions.push((action, paths.clone()));
        self.remember_query();
        let lossy = |p: &[u8]| String::from_utf8_lossy(p).into_owned();
        match action {
            Action::CopyPath | Action::CopyList => {
                let text: Vec<String> = paths.iter().map(|p| lossy(p)).collect();
                ctx.copy_text(text.join("\n"));
                self.say(match paths.len() {
                    1 => "copied the path".to_owned(),
                    n => format!("copied {n} paths"),
                });
            }
            Action::CopyName => {
                let names: Vec<String> = paths
                    .iter()
                    .map(|p| {
                        let at = p.iter().rposition(|&b| b == b'/').map_or(0, |i| i + 1);
                        lossy(&p[at..])
                    })
                    .collect();
                ctx.copy_text(names.join("\n"));
                self.say("copied the name");
            }
            Action::Open | Action::Reveal => {
                if self.dry_run {
                    return;
                }
                // The desktop may take a while (D-Bus, a cold file manager):
                // never on the UI thread.
                self.in_background(move || {
                    let mut failed = Vec::new();
                    for p in &paths {
                        let path = os_path(p);
                        let r = match action {
                            Action::Open => crate::actions::open(&path),
                            _ => opener::reveal(&path).map_err(|e| e.to_string()),
                        };
                        if let Err(e) = r {
                            failed.push(format!("cannot open {}: {e}", path.display()));
                        }
                    }
                    match failed.len() {
                        0 => Done::default(),
                        _ => Done {
                            text: failed.join("; "),
                            error: true,
                            ..Done::default()
                        },
                    }
                });
            }
            Action::Trash => {
                self.dialog = Some(Dialog::Trash {
                    paths,
                    from_dupes: false,
                });
            }
            Action::Rename => {
                let path = paths[0].clone();
                let at = path.iter().rposition(|&b| b == b'/').map_or(0, |i| i + 1);
                self.dialog = Some(Dialog::Rename {
                    name: lossy(&path[at..]),
                    path,
                    error: None,
                });
                self.focus_dialog = true;
            }
            Action::OpenWith => {
                self.dialog = Some(Dialog::OpenWith {
                    program: self.settings.open_with.first().cloned().unwrap_or_default(),
                    paths,
                });
                self.focus_dialog = true;
            }
            Action::SearchIn => {
                let folder = &paths[0];
                let q = crate::actions::search_in(folder);
                self.view = View::Search;
                self.type_query(&q);
                self.focus_query = true;
                self.query_cursor_to_end = true;
            }
        }
    }

    /// The preview follows the selected row: a new path is loaded on a
    /// thread (the window is woken when it is there).
    pub(crate) fn follow_preview(&mut self, ctx: &egui::Context) {
        if let Some(p) = self.preview_slot.lock().ok().and_then(|mut s| s.take())
            && Some(&p.0) == self.preview_asked.as_ref()
        {
            self.preview = Some(p);
        }
        let Some(row) = self.search.selected_row() else {
            self.preview = None;
            self.preview_asked = None;
            return;
        };
        if self.preview_asked.as_ref() == Some(&row.path) {
            return;
        }
        let path = row.path.clone();
        let folder = row.kind.is_folder();
        self.preview_asked = Some(path.clone());
        let words = crate::backend::query_words(&self.search.results.params.query);
        let slot = self.preview_slot.clone();
        let ctx = ctx.clone();
        let target = self.target.clone();
        std::thread::spawn(move || {
            let p = crate::preview::load(&os_path(&path), &words, folder, &target);
            if let Ok(mut s) = slot.lock() {
                *s = Some((path, p));
            }
            ctx.request_repaint();
        });
    }

    /// Runs `work` on a thread of its own; what it returns is shown (and
    /// applied) at the next frame.
    fn in_background(&self, work: impl FnOnce() -> Done + Send + 'static) {
        let done = self.done.clone();
        std::thread::spawn(move || {
            let d = work();
            if (!d.text.is_empty() || !d.trashed.is_empty())
                && let Ok(mut list) = done.lock()
            {
                list.push(d);
            }
        });
    }

    /// The user said yes to the dialog's question.
    pub fn confirm(&mut self) {
        let Some(dialog) = self.dialog.take() else {
            return;
        };
        match dialog {
            Dialog::Trash { paths, from_dupes } => {
                if from_dupes {
                    self.dupes.discard.clear();
                }
                self.in_background(move || match crate::actions::trash(&paths) {
                    Ok(()) => Done {
                        text: match paths.len() {
                            1 => {
                                format!("moved {} to the trash", String::from_utf8_lossy(&paths[0]))
                            }
                            n => format!("moved {n} items to the trash"),
                        },
                        error: false,
                        trashed: paths,
                    },
                    Err(e) => Done {
                        text: e,
                        error: true,
                        ..Done::default()
                    },
                });
            }
            Dialog::Rename { path, name, .. } => match crate::actions::rename(&path, &name) {
                Ok(to) => {
                    if let Some(sel) = self.search.selection.iter_mut().find(|p| **p == path) {
                        *sel = to;
                    }
                    self.say(format!("renamed to “{}”", name.trim()));
                }
                Err(e) => {
                    self.dialog = Some(Dialog::Rename {
                        path,
                        name,
                        error: Some(e),
                    });
                    self.focus_dialog = true;
                }
            },
            Dialog::OpenWith { paths, program } => {
                let program = program.trim().to_owned();
                if program.is_empty() {
                    self.dialog = Some(Dialog::OpenWith { paths, program });
                    return;
                }
                if self.settings.remember_program(&program) {
                    self.save_settings();
                }
                // Run even in dry-run mode: the program is the user's (or
                // the test's) own choice, not the desktop's.
                self.actions.push((Action::OpenWith, paths.clone()));
                self.in_background(move || match crate::actions::open_with(&program, &paths) {
                    Ok(()) => Done::default(),
                    Err(e) => Done {
                        text: e,
                        error: true,
                        ..Done::default()
                    },
                });
            }
        }
    }

    /// Puts back what the last move to the trash moved.
    pub fn undo_trash(&mut self) {
        let Some(paths) = self.last_trashed.take() else {
            return;
        };
        self.in_background(move || match crate::actions::untrash(&paths) {
            Ok(n) => Done {
                text: format!("put {n} back from the trash"),
                ..Done::default()
            },
            Err(e) => Done {
                text: e,
                error: true,
                ..Done::default()
            },
        });
    }

    /// Asks to move the copies chosen in Duplicates to the trash.
    pub fn trash_chosen_copies(&mut self) {
        let paths = self.dupes.discard_paths();
        if !paths.is_empty() {
            self.dialog = Some(Dialog::Trash {
                paths,
                from_dupes: true,
            });
        }
    }

    /// True when the view shown has everything it asked for (the
    /// screenshot mode and tests wait for this).
    pub fn settled(&self) -> bool {
        match self.view {
            View::Search => {
                !self.search.loading()
                    && (self.search.query.trim().is_empty()
                        || self.search.error.is_some()
                        || self.search.outdated.is_some()
                        || self.search.results.generation == self.search.generation())
            }
            View::DiskUsage => self.du.answer.is_some() && !self.du.loading,
            View::Duplicates => self.dupes.started() && !self.dupes.running,
        }
    }

    /// Drops a notice after a few seconds (a failure after longer).
    pub(crate) fn expire_notice(&mut self) {
        if self
            .notice
            .as_ref()
            .is_some_and(|n| n.at.elapsed() > n.lasts())
        {
            self.notice = None;
        }
    }
}

/// A byte-exact path as the OS takes it.
pub fn os_path(p: &[u8]) -> PathBuf {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        PathBuf::from(std::ffi::OsStr::from_bytes(p))
    }
    #[cfg(not(unix))]
    {
        PathBuf::from(String::from_utf8_lossy(p).into_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::{DuAnswer, RootInfo};

    fn app() -> App {
        App::without_backend(Options {
            target: Target::Socket("/nonexistent".into()),
            spawn: false,
            query: Some("tax".into()),
            view: View::Search,
            settings_path: None,
            dry_run: true,
        })
    }

    #[test]
    fn the_start_query_is_asked_for_and_du_opens_at_the_first_root() {
        let mut a = app();
        assert!(matches!(&a.outbox[0], Request::Search { params, .. } if params.query == "tax"));
        a.outbox.clear();
        a.apply(Reply::Status(StatusInfo {
            state: "ready".into(),
            roots: vec![RootInfo {
                path: b"/data".to_vec(),
                ..RootInfo::default()
            }],
            ..StatusInfo::default()
        }));
        // Already ready at the first status: nothing to refresh; du is not
        // asked for until shown.
        assert!(
            a.outbox
                .iter()
                .all(|r| !matches!(r, Request::DiskUsage { .. }))
        );
        a.show(View::DiskUsage);
        assert!(
            a.outbox
                .iter()
                .any(|r| matches!(r, Request::DiskUsage { path, .. } if path == b"/data"))
        );
        let Some(Request::DiskUsage { generation, .. }) = a.outbox.last().cloned() else {
            panic!()
        };
        a.apply(Reply::DiskUsage {
            generation,
            answer: Ok(DuAnswer::default()),
        });
        assert!(a.settled());
        // A change while shown asks again.
        a.outbox.clear();
        a.apply(Reply::Changed { events: 3 });
        assert!(matches!(a.outbox[..], [Request::DiskUsage { .. }]));
    }

    /// An app whose first search was answered (one result).
    fn answered() -> App {
        let mut a = app();
        let Request::Search { generation, .. } = a.outbox[0].clone() else {
            panic!()
        };
        a.apply(Reply::Rows {
            generation,
            offset: 0,
            total: 1,
            elapsed_us: 1,
            rows: Vec::new(),
        });
        a
    }

    fn status(state: &str) -> Reply {
        Reply::Status(StatusInfo {
            state: state.into(),
            ..StatusInfo::default()
        })
    }

    #[test]
    fn a_scan_seen_ending_refreshes_the_list_a_first_ready_status_does_not() {
        let mut a = answered();
        a.outbox.clear();
        a.apply(status("ready"));
        a.show(View::Duplicates);
        a.outbox.clear();
        a.apply(status("ready"));
        assert!(a.outbox.is_empty() && !a.dupes_stale);
        a.apply(status("scanning"));
        a.apply(status("ready"));
        assert!(matches!(a.outbox[..], [Request::Search { new: true, .. }]));
        assert!(a.dupes_stale);
    }

    #[test]
    fn while_scanning_changes_are_followed_at_the_status_polls_pace() {
        let mut a = answered();
        a.apply(status("scanning"));
        a.outbox.clear();
        for _ in 0..10 {
            a.apply(Reply::Changed { events: 50 });
        }
        assert!(a.outbox.is_empty(), "no refresh per change batch");
        a.apply(status("scanning"));
        assert!(matches!(a.outbox[..], [Request::Search { new: true, .. }]));
        a.outbox.clear();
        a.apply(status("scanning"));
        assert!(a.outbox.is_empty(), "nothing new, nothing asked");
    }

    #[test]
    fn dupes_start_when_first_shown_and_go_stale_on_changes() {
        let mut a = app();
        a.outbox.clear();
        a.show(View::Duplicates);
        assert!(matches!(a.outbox[..], [Request::Duplicates { .. }]));
        a.show(View::Search);
        a.show(View::Duplicates);
        assert_eq!(a.outbox.len(), 1, "not run again by switching views");
        a.apply(Reply::Changed { events: 1 });
        assert!(a.dupes_stale);
    }
}
