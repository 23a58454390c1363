//! The sidebar beside the search results: the user's bookmarks (a click
//! searches in one) and tags (a click adds `tag:NAME` to the query, or
//! takes it out), the daemon's lists shared with fsctl and MCP (see
//! `crate::shared`). Shown only while there is something in it.

use egui::{RichText, Ui};

use crate::app::App;
use crate::shared::{Call, query_for, tag_term, toggle_term};

impl App {
    /// Whether the sidebar has anything to show.
    pub(super) fn has_places(&self) -> bool {
        !self.shared.bookmarks.is_empty() || !self.shared.tags.is_empty()
    }

    pub(super) fn places_pane(&mut self, ui: &mut Ui) {
        let mut query = None;
        egui::ScrollArea::vertical().show(ui, |ui| {
            ui.horizontal(|ui| {
                ui.label(RichText::new("Bookmarks").strong());
                if ui
                    .small_button("⟳")
                    .on_hover_text("Read the bookmarks and tags again")
                    .clicked()
                {
                    self.send(vec![crate::backend::Request::Shared(Call::Load)]);
                }
            });
            if self.shared.bookmarks.is_empty() {
                ui.weak("none: fsctl bookmark add PATH");
            }
            for b in &self.shared.bookmarks {
                let icon = if b.folder { "📁" } else { "🗋" };
                if ui
                    .selectable_label(false, format!("{icon} {}", b.name))
                    .on_hover_text(String::from_utf8_lossy(&b.path))
                    .clicked()
                {
                    query = Some(query_for(b));
                }
            }
            ui.separator();
            ui.label(RichText::new("Tags").strong());
            if self.shared.tags.is_empty() {
                ui.weak("none: fsctl tag add PATH TAG");
            }
            for t in &self.shared.tags {
                let term = tag_term(&t.name);
                let on = self.search.query.split(' ').any(|w| w == term);
                let label = format!(
                    "{}{} ({})",
                    t.name,
                    if t.from_file { " (file)" } else { "" },
                    t.entries
                );
                if ui
                    .selectable_label(on, label)
                    .on_hover_text(format!("Only entries tagged {}", t.name))
                    .clicked()
                {
                    query = Some(toggle_term(&self.search.query, &term));
                }
            }
        });
        if let Some(q) = query {
            self.type_query(&q);
            self.focus_query = true;
            self.query_cursor_to_end = true;
        }
    }
}
