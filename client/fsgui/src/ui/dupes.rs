//! The duplicates view: the search's progress and summary, then one row
//! per group, headed by its file's name, expanded into its copies (with
//! their hard links) on a click. Each copy has a "keep" box; those not
//! kept go to the trash together, after a question, with the bytes that
//! frees counted as they are chosen. A group always keeps one copy.

use egui::{Label, RichText, Sense, Ui};

use super::{count, size};
use crate::app::{Action, App};

impl App {
    pub(super) fn dupes_view(&mut self, ui: &mut Ui) {
        let mut again = false;
        ui.horizontal(|ui| {
            if ui
                .add_enabled(!self.dupes.running, egui::Button::new("⟳ Search again"))
                .clicked()
            {
                again = true;
            }
            if self.dupes_stale && !self.dupes.running {
                ui.weak("files changed since this search");
            }
        });
        if again {
            self.dupes_stale = false;
            self.expanded_groups.clear();
            let r = self.dupes.start();
            self.send(r);
        }
        if let Some(p) = &self.dupes.progress {
            let (text, done) = match p.stage.as_str() {
                "partial" => (
                    "hashing heads and tails",
                    p.files_done as f32 / p.files_total.max(1) as f32,
                ),
                "full" => (
                    "hashing contents",
                    p.bytes_done as f32 / p.bytes_total.max(1) as f32,
                ),
                _ => ("grouping by size", 0.0),
            };
            ui.add(egui::ProgressBar::new(done).show_percentage().text(format!(
                "{text}: {} of {} files",
                count(p.files_done),
                count(p.files_total)
            )));
        } else if self.dupes.running {
            ui.horizontal(|ui| {
                ui.label("⟳");
                ui.label("looking for files of equal size…");
            });
        }
        if let Some(e) = &self.dupes.error {
            ui.colored_label(ui.visuals().error_fg_color, format!("⚠ {e}"));
        }
        if let Some(s) = &self.dupes.summary {
            ui.label(format!(
                "{} groups · {} reclaimable ({} allocated) · {} same-size files, {} read, {} hashes from the cache",
                count(s.groups),
                size(s.reclaimable_bytes),
                size(s.reclaimable_allocated_bytes),
                count(s.candidates),
                count(s.files_read),
                count(s.cache_hits)
            ));
        } else if !self.dupes.groups.is_empty() {
            ui.label(format!(
                "{} groups so far · {} reclaimable",
                count(self.dupes.groups.len() as u64),
                size(self.dupes.reclaimable())
            ));
        }
        if !self.dupes.discard.is_empty() {
            let mut go = false;
            let mut undo = false;
            ui.horizontal(|ui| {
                ui.label(
                    RichText::new(format!(
                        "Chosen to go: {} copies · frees {}",
                        count(self.dupes.discard.len() as u64),
                        size(self.dupes.discard_bytes())
                    ))
                    .strong(),
                );
                go = ui.button("Move them to the trash…").clicked();
                undo = ui.button("Keep all").clicked();
            });
            if go {
                self.trash_chosen_copies();
            }
            if undo {
                self.dupes.discard.clear();
            }
        }
        ui.separator();
        ui.style_mut().interaction.selectable_labels = false;
        // One flat list of rows (group headers and the copies of expanded
        // groups), drawn only where visible.
        let mut rows: Vec<(usize, Option<usize>)> = Vec::new();
        for (g, group) in self.dupes.groups.iter().enumerate() {
            rows.push((g, None));
            if self.expanded_groups.contains(&g) {
                rows.extend((0..group.copies.len()).map(|c| (g, Some(c))));
            }
        }
        let mut toggle = None;
        let mut act: Option<(Action, Vec<u8>)> = None;
        // (group, copy, keep only this)
        let mut keep: Option<(usize, usize, bool)> = None;
        egui::ScrollArea::vertical()
            .id_salt("fsgui-dupes")
            .auto_shrink([false, false])
            .show_rows(ui, 22.0, rows.len(), |ui, range| {
                for &(g, copy) in &rows[range] {
                    let group = &self.dupes.groups[g];
                    match copy {
                        None => {
                            let open = self.expanded_groups.contains(&g);
                            let header = format!(
                                "{} · {} × {} copies · {} reclaimable",
                                self.dupes.name(g),
                                size(group.size),
                                group.copies.len(),
                                size(group.reclaimable_bytes)
                            );
                            ui.horizontal(|ui| {
                                let sign = if open { "⏷" } else { "⏵" };
                                let a = ui.add(Label::new(sign).sense(Sense::click()));
                                let b = ui.add(
                                    Label::new(RichText::new(header).strong())
                                        .sense(Sense::click()),
                                );
                                ui.weak(format!(
                                    "blake3:{}",
                                    &group.hash[..group.hash.len().min(16)]
                                ));
                                if a.clicked() || b.clicked() {
                                    toggle = Some(g);
                                }
                            });
                        }
                        Some(c) => {
                            let paths = &group.copies[c];
                            let main = paths.first().cloned().unwrap_or_default();
                            let mut kept = !self.dupes.discard.contains(&(g, c));
                            ui.horizontal(|ui| {
                                ui.add_space(24.0);
                                if ui.checkbox(&mut kept, "keep").changed() {
                                    keep = Some((g, c, false));
                                }
                                if ui.small_button("Keep only this").clicked() {
                                    keep = Some((g, c, true));
                                }
                                if ui.small_button("Reveal").clicked() {
                                    act = Some((Action::Reveal, main.clone()));
                                }
                                let label = ui.add(
                                    Label::new(String::from_utf8_lossy(&main))
                                        .sense(Sense::click())
                                        .truncate(),
                                );
                                if label.double_clicked() {
                                    act = Some((Action::Open, main.clone()));
                                }
                                label.context_menu(|ui| {
                                    if let Some(a) = super::file_menu(ui, true) {
                                        act = Some((a, main.clone()));
                                    }
                                });
                                if paths.len() > 1 {
                                    ui.weak(format!("+{} hard links", paths.len() - 1))
                                        .on_hover_text(
                                            paths[1..]
                                                .iter()
                                                .map(|p| String::from_utf8_lossy(p).into_owned())
                                                .collect::<Vec<_>>()
                                                .join("\n"),
                                        );
                                }
                            });
                        }
                    }
                }
            });
        if let Some(g) = toggle
            && !self.expanded_groups.remove(&g)
        {
            self.expanded_groups.insert(g);
        }
        if let Some((g, c, only)) = keep {
            if only {
                self.dupes.keep_only(g, c);
            } else if !self.dupes.toggle_discard(g, c) {
                self.say("a group keeps at least one copy");
            }
        }
        if let Some((a, p)) = act {
            let ctx = ui.ctx().clone();
            let p = match a {
                Action::SearchIn => crate::actions::folder_of(&p, false),
                _ => p,
            };
            self.act(&ctx, a, vec![p]);
        }
    }
}
