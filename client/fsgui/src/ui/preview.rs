//! The preview pane beside the results: the selected row's name, folder,
//! size and date; the passage of a text file where the query's words first
//! occur, with them highlighted and line numbers; an image's thumbnail;
//! the media metadata the daemon read (date taken, camera, dimensions,
//! duration, a song's tags, a document's pages and author) and the entry's
//! tags; and how to search inside files.

use egui::{RichText, Ui};

use super::{size, when};
use crate::app::App;
use crate::backend::{name_marks, query_words};
use crate::preview::Preview;

impl App {
    pub(super) fn preview_pane(&mut self, ui: &mut Ui) {
        ui.add_space(4.0);
        let Some(row) = self.search.selected_row().cloned() else {
            ui.weak("Select a row to preview it.");
            content_hint(ui);
            return;
        };
        ui.add(egui::Label::new(RichText::new(&row.name).strong()).wrap());
        ui.add(egui::Label::new(RichText::new(&row.folder).weak()).wrap());
        if row.kind.is_folder() {
            ui.label(format!("folder · modified {}", when(row.mtime_ns)));
        } else {
            ui.label(format!(
                "{} · modified {}",
                size(row.size),
                when(row.mtime_ns)
            ));
        }
        self.media_lines(ui, &row);
        ui.separator();
        let words = query_words(&self.search.results.params.query);
        let shown = self.preview.as_ref().filter(|(p, _)| *p == row.path);
        match shown.map(|(_, p)| p) {
            None => {
                ui.weak("loading…");
            }
            Some(Preview::Nothing(why)) => {
                ui.weak(why);
            }
            Some(Preview::Text {
                first, lines, more, ..
            }) => {
                let (first, more) = (*first, *more);
                let lines = lines.clone();
                egui::ScrollArea::vertical()
                    .id_salt("fsgui-preview-text")
                    .auto_shrink([false, true])
                    .max_height(ui.available_height() - 40.0)
                    .show(ui, |ui| {
                        if first > 0 {
                            ui.weak("…");
                        }
                        for (i, line) in lines.iter().enumerate() {
                            ui.horizontal(|ui| {
                                ui.weak(format!("{:>4}", first + i + 1));
                                let marks = name_marks(line, &words);
                                ui.add(
                                    egui::Label::new(super::search::marked(ui, line, &marks))
                                        .truncate(),
                                );
                            });
                        }
                        if more {
                            ui.weak("…");
                        }
                    });
            }
            Some(Preview::Image {
                width,
                height,
                rgba,
                original,
            }) => {
                let fresh = self
                    .preview_texture
                    .as_ref()
                    .is_none_or(|(p, _)| *p != row.path);
                if fresh {
                    let image = egui::ColorImage::from_rgba_unmultiplied(
                        [*width as usize, *height as usize],
                        rgba,
                    );
                    let tex = ui.ctx().load_texture(
                        "fsgui-thumbnail",
                        image,
                        egui::TextureOptions::LINEAR,
                    );
                    self.preview_texture = Some((row.path.clone(), tex));
                }
                let original = *original;
                if let Some((_, tex)) = &self.preview_texture {
                    let fit = (ui.available_width() / tex.size_vec2().x).min(1.0);
                    ui.image((tex.id(), tex.size_vec2() * fit));
                }
                ui.weak(format!("{} × {} pixels", original.0, original.1));
            }
        }
        ui.separator();
        content_hint(ui);
    }
}

impl App {
    /// What Stat says of the row (asked once per version of the file):
    /// its media metadata and tags, as label and value.
    fn media_lines(&mut self, ui: &mut Ui, row: &crate::backend::Row) {
        let now = std::time::Instant::now();
        let asked = self.details.wanted([row], now);
        self.ask_details(asked);
        if self.details.waiting([row]) {
            ui.ctx().request_repaint_after(crate::details::RETRY);
        }
        let Some(d) = self.details.get(row) else {
            return;
        };
        let lines = d.lines();
        if lines.is_empty() {
            return;
        }
        egui::Grid::new("fsgui-preview-media")
            .num_columns(2)
            .spacing([8.0, 2.0])
            .show(ui, |ui| {
                for (label, value) in lines {
                    ui.weak(label);
                    ui.add(egui::Label::new(value).wrap());
                    ui.end_row();
                }
            });
    }
}

/// Content search exists: say how to ask for it.
fn content_hint(ui: &mut Ui) {
    ui.weak("Search inside documents with content:word or content:\"a phrase\" (roots with content indexing on).");
}
