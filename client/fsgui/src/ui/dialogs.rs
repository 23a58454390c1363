//! The questions the window asks before it acts: move to the trash (what,
//! how much it frees, that the trash can give it back), the new name, the
//! program to open with. One modal at a time; Enter answers yes, Esc (or a
//! click beside it) no.

use egui::{Id, Key, Modifiers, RichText, Ui};

use super::size;
use crate::app::{App, Dialog};

/// Paths listed in a question before "and N more".
const LISTED: usize = 8;

impl App {
    pub(super) fn dialogs(&mut self, ui: &mut Ui) {
        let Some(dialog) = self.dialog.as_mut() else {
            return;
        };
        let ctx = ui.ctx().clone();
        let mut yes = ctx.input_mut(|i| i.consume_key(Modifiers::NONE, Key::Enter));
        let mut no = false;
        let bytes = match dialog {
            Dialog::Trash {
                from_dupes: true, ..
            } => Some(self.dupes.discard_bytes()),
            _ => None,
        };
        let programs = self.settings.open_with.clone();
        // A dialog just opened, or a name was refused: the text box gets
        // the focus with its text selected, before it reads this frame's keys.
        let focus_text = std::mem::take(&mut self.focus_dialog);
        // Until it has it (a modal's first frames may not grant it yet).
        let mut focused = true;
        let modal = egui::Modal::new(Id::unique("fsgui-dialog")).show(&ctx, |ui| {
            ui.set_max_width(520.0);
            match dialog {
                Dialog::Trash { paths, .. } => {
                    let what = match paths.len() {
                        1 => "this".to_owned(),
                        n => format!("these {n} items"),
                    };
                    ui.heading(format!("Move {what} to the trash?"));
                    for p in paths.iter().take(LISTED) {
                        ui.label(String::from_utf8_lossy(p));
                    }
                    if paths.len() > LISTED {
                        ui.weak(format!("and {} more", paths.len() - LISTED));
                    }
                    if let Some(b) = bytes {
                        ui.label(format!("This frees {}.", size(b)));
                    }
                    ui.weak("The trash keeps them until it is emptied: your file manager can put them back.");
                    ui.horizontal(|ui| {
                        yes |= ui.button(RichText::new("Move to trash").strong()).clicked();
                        no |= ui.button("Cancel").clicked();
                    });
                }
                Dialog::Rename { path, name, error } => {
                    ui.heading("Rename");
                    ui.weak(String::from_utf8_lossy(path));
                    let id = Id::unique("fsgui-rename");
                    if focus_text {
                        focus_all(ui, id, name);
                    }
                    let edit = ui.add(
                        egui::TextEdit::singleline(name)
                            .id(id)
                            .desired_width(480.0),
                    );
                    focused = !focus_text || edit.has_focus();
                    if let Some(e) = error {
                        ui.colored_label(ui.visuals().error_fg_color, format!("⚠ {e}"));
                    }
                    ui.horizontal(|ui| {
                        yes |= ui.button(RichText::new("Rename").strong()).clicked();
                        no |= ui.button("Cancel").clicked();
                    });
                }
                Dialog::OpenWith { paths, program } => {
                    ui.heading("Open with…");
                    ui.weak(match paths.len() {
                        1 => String::from_utf8_lossy(&paths[0]).into_owned(),
                        n => format!("{n} files"),
                    });
                    ui.label("Program (and its arguments; the files come last):");
                    let id = Id::unique("fsgui-open-with");
                    if focus_text {
                        focus_all(ui, id, program);
                    }
                    let edit = ui.add(
                        egui::TextEdit::singleline(program)
                            .id(id)
                            .hint_text("gimp, code, libreoffice --writer, …")
                            .desired_width(480.0),
                    );
                    focused = !focus_text || edit.has_focus();
                    if !programs.is_empty() {
                        ui.horizontal_wrapped(|ui| {
                            ui.weak("Recent:");
                            for p in &programs {
                                if ui.small_button(p).clicked() {
                                    *program = p.clone();
                                    yes = true;
                                }
                            }
                        });
                    }
                    ui.horizontal(|ui| {
                        yes |= ui.button(RichText::new("Open").strong()).clicked();
                        no |= ui.button("Cancel").clicked();
                    });
                }
            }
        });
        if !focused {
            self.focus_dialog = true;
            ctx.request_repaint();
        }
        if modal.should_close() {
            no = true;
        }
        if yes {
            self.confirm();
        } else if no {
            self.dialog = None;
        }
        if self.dialog.is_none() {
            self.focus_query = self.view == crate::app::View::Search;
        }
    }
}

/// Gives the text box `id` the focus, with all of `text` selected.
fn focus_all(ui: &mut Ui, id: Id, text: &str) {
    ui.memory_mut(|m| m.request_focus(id));
    let mut state = egui::TextEdit::load_state(ui.ctx(), id).unwrap_or_default();
    state
        .cursor
        .set_char_range(Some(egui::text::CCursorRange::select_all_str(text)));
    state.store(ui.ctx(), id);
}
