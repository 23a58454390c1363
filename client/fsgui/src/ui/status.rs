//! The status bar: the daemon's state (connecting, scanning, ready), its
//! entries, roots and watching, its notices, and the window's last notice.

use egui::{Align, Color32, Layout, Sense, Ui, vec2};

use super::count;
use crate::app::App;

impl App {
    pub(super) fn status_bar(&mut self, ui: &mut Ui) {
        ui.horizontal(|ui| {
            match (&self.connection, &self.status) {
                (Some(Err(e)), _) => {
                    ui.colored_label(
                        ui.visuals().error_fg_color,
                        format!("⚠ not connected: {e} (trying again every second)"),
                    );
                }
                (_, Some(s)) => {
                    if s.state == "ready" {
                        let (dot, _) = ui.allocate_exact_size(vec2(10.0, 10.0), Sense::hover());
                        ui.painter().circle_filled(
                            dot.center(),
                            4.0,
                            Color32::from_rgb(60, 170, 90),
                        );
                        ui.label("ready");
                    } else {
                        // A still sign, not a spinner: a spinner repaints the
                        // window every frame for as long as the scan lasts.
                        ui.label("⟳");
                        let scanned: u64 = s.roots.iter().map(|r| r.scanned).sum();
                        ui.label(format!("scanning: {} entries so far", count(scanned)));
                    }
                    ui.separator();
                    ui.label(format!("{} entries", count(s.entries)));
                    ui.separator();
                    let roots: Vec<String> = s
                        .roots
                        .iter()
                        .map(|r| String::from_utf8_lossy(&r.path).into_owned())
                        .collect();
                    ui.label(match roots.len() {
                        1 => format!("root {}", roots[0]),
                        n => format!("{n} roots"),
                    })
                    .on_hover_text(roots.join("\n"));
                    ui.separator();
                    let watch = s
                        .roots
                        .iter()
                        .map(|r| r.watch.as_str())
                        .find(|w| *w != "live")
                        .unwrap_or("live");
                    ui.label(if s.watching {
                        format!("watching: {watch}")
                    } else {
                        "not watching".to_owned()
                    });
                    for n in &s.notices {
                        ui.separator();
                        ui.colored_label(ui.visuals().warn_fg_color, n);
                    }
                }
                _ => {
                    ui.label("⟳ connecting to fsindexd…");
                }
            }
            if let Some(n) = &self.notice {
                ui.with_layout(Layout::right_to_left(Align::Center), |ui| {
                    if n.error {
                        ui.colored_label(ui.visuals().error_fg_color, format!("⚠ {}", n.text));
                    } else {
                        ui.label(&n.text);
                    }
                });
            }
        });
    }
}
