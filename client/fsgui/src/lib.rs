//! fsgui: the desktop window of fsindex, a client of the daemon like
//! `fsctl` (gRPC through `fsindex-client`, never the daemon crate).
//!
//! Layers, in the direction data flows:
//! - [`backend`]: a tokio runtime on its own thread; requests in, replies
//!   out, a repaint after each reply. Also the plain types the UI shows.
//! - [`search`], [`du`], [`dupes`], [`settings`]: each view's state and
//!   its reducers, with no egui and no I/O, testable without a window.
//! - [`app`]: the window's state, applying replies to the reducers.
//! - [`ui`]: drawing with egui, one module per view; [`App::ui`] is
//!   called by eframe (the binary) and by the kittest harness (the tests)
//!   alike.
//! - [`treemap`]: the squarified layout of the disk-usage view.
//! - [`fonts`]: the system's fonts for scripts egui's own lack.
//! - [`bidi`]: right-to-left names (Arabic, Hebrew) in display order.
//! - [`preview`]: the selected row's text passage or thumbnail, without egui.
//! - [`actions`]: trash, rename, open, open with: what the window does to
//!   files, without egui.
//! - [`shared`]: saved searches and history, the daemon's, shared with
//!   fsctl and MCP.
//! - [`trace`]: `FSGUI_TRACE=1`, a keystroke's steps stamped on stderr.
//! - [`details`]: what Stat adds to the rows drawn (media metadata for the
//!   optional columns and the preview, tags).

pub mod actions;
pub mod app;
pub mod backend;
pub mod bench;
pub mod bidi;
pub mod details;
pub mod du;
pub mod dupes;
pub mod fonts;
pub mod preview;
pub mod search;
pub mod settings;
pub mod shared;
pub mod trace;
pub mod treemap;
pub mod ui;

pub use app::{Action, App, Dialog, Options, View};
