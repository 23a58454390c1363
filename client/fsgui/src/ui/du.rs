//! The disk-usage view: the breadcrumb and root picker, the children as
//! size bars, and the treemap beside them; a click on a folder enters it.

use egui::{Align2, Color32, FontId, Label, RichText, Sense, Stroke, StrokeKind, Ui, vec2};

use super::{count, icon, size};
use crate::app::App;
use crate::backend::{RowKind, Usage};
use crate::treemap::squarify;

/// Treemap and bar colours by kind, readable in light and dark themes.
fn kind_color(kind: RowKind, dark: bool) -> Color32 {
    let (r, g, b) = match kind {
        RowKind::Folder => (70, 130, 200),
        RowKind::Image => (200, 120, 60),
        RowKind::Audio => (170, 90, 190),
        RowKind::Video => (200, 70, 90),
        RowKind::Archive => (150, 120, 80),
        RowKind::Code => (60, 160, 120),
        RowKind::Document => (210, 170, 50),
        RowKind::Text => (120, 170, 70),
        RowKind::Symlink | RowKind::Special => (140, 140, 140),
        RowKind::File => (110, 120, 140),
    };
    let c = Color32::from_rgb(r, g, b);
    if dark { c.gamma_multiply(0.85) } else { c }
}

impl App {
    pub(super) fn du_view(&mut self, ui: &mut Ui) {
        let mut go: Option<Vec<u8>> = None;
        let mut go_root: Option<Vec<u8>> = None;
        ui.horizontal(|ui| {
            let crumbs = self.du.breadcrumb();
            if ui
                .add_enabled(crumbs.len() > 1, egui::Button::new("⬆ Up"))
                .clicked()
            {
                go = crumbs
                    .get(crumbs.len().wrapping_sub(2))
                    .map(|c| c.1.clone());
            }
            for (i, (label, path)) in crumbs.iter().enumerate() {
                if i > 0 {
                    ui.weak("›");
                }
                if i + 1 == crumbs.len() {
                    ui.strong(label);
                } else if ui.link(label).clicked() {
                    go = Some(path.clone());
                }
            }
            let roots: Vec<Vec<u8>> = self
                .status
                .as_ref()
                .map(|s| s.roots.iter().map(|r| r.path.clone()).collect())
                .unwrap_or_default();
            if roots.len() > 1 {
                ui.separator();
                egui::ComboBox::from_id_salt("fsgui-du-root")
                    .selected_text("Root")
                    .show_ui(ui, |ui| {
                        for r in roots {
                            if ui.button(String::from_utf8_lossy(&r)).clicked() {
                                go_root = Some(r);
                            }
                        }
                    });
            }
            if self.du.loading {
                ui.label("⟳");
            }
        });
        if let Some(root) = go_root {
            let r = self.du.open(&root, &root);
            self.send(r);
        } else if let Some(path) = go {
            let root = self.du.root.clone();
            let r = self.du.open(&root, &path);
            self.send(r);
        }
        if let Some(e) = &self.du.error {
            ui.colored_label(ui.visuals().error_fg_color, format!("⚠ {e}"));
        }
        let Some(answer) = self.du.answer.clone() else {
            if self.du.path.is_none() {
                ui.weak("waiting for the daemon's roots…");
            }
            return;
        };
        let t = &answer.total;
        ui.label(format!(
            "{} allocated · {} apparent · {} files · {} folders{}",
            size(t.bytes),
            size(t.apparent_bytes),
            count(t.files),
            count(t.dirs),
            if t.incomplete {
                " · incomplete: some folders could not be read"
            } else {
                ""
            }
        ));
        ui.separator();
        let mut enter: Option<Usage> = None;
        let mut act: Option<(crate::app::Action, Vec<u8>)> = None;
        let parent = t.bytes.max(1) as f64;
        let dark = ui.visuals().dark_mode;
        let cursor = self.du.cursor;
        // Side by side when there is room; at the window's smallest sizes
        // the bars above the treemap, each with the whole width.
        let map = if ui.available_width() >= DU_SIDE_BY_SIDE {
            let mut map = (egui::Rect::NOTHING, None);
            ui.columns(2, |cols| {
                (enter, act) = bars(&mut cols[0], &answer, parent, dark, cursor);
                map = treemap(&mut cols[1], &answer.children, dark);
            });
            map
        } else {
            let height = (ui.available_height() * 0.5).max(44.0);
            let width = ui.available_width();
            ui.allocate_ui(vec2(width, height), |ui| {
                ui.set_max_height(height);
                (enter, act) = bars(ui, &answer, parent, dark, cursor);
            });
            ui.separator();
            treemap(ui, &answer.children, dark)
        };
        let (map_rect, map) = map;
        self.du_map_rect = Some(map_rect);
        match map {
            Some((c, None)) => enter = Some(c),
            Some((c, Some(a))) => act = Some((a, c.path)),
            None => {}
        }
        if let Some((a, p)) = act {
            let ctx = ui.ctx().clone();
            let folder = answer
                .children
                .iter()
                .any(|c| c.path == p && c.kind.is_folder());
            let p = match a {
                crate::app::Action::SearchIn => crate::actions::folder_of(&p, folder),
                _ => p,
            };
            self.act(&ctx, a, vec![p]);
        }
        if let Some(c) = enter {
            let r = self.du.enter(&c);
            self.send(r);
        }
    }
}

/// Below this width (points) the bars and the treemap are stacked.
pub const DU_SIDE_BY_SIDE: f32 = 720.0;

/// The children as size bars, largest first; returns the folder clicked
/// and the action chosen in a bar's context menu, if any.
#[allow(clippy::type_complexity)]
fn bars(
    ui: &mut Ui,
    answer: &crate::backend::DuAnswer,
    parent: f64,
    dark: bool,
    cursor: Option<usize>,
) -> (Option<Usage>, Option<(crate::app::Action, Vec<u8>)>) {
    let mut enter = None;
    let mut act = None;
    ui.style_mut().interaction.selectable_labels = false;
    let n = answer.children.len();
    egui::ScrollArea::vertical()
        .id_salt("fsgui-du-bars")
        .auto_shrink([false, false])
        .show_rows(ui, 22.0, n + 1, |ui, range| {
            for i in range {
                let Some(c) = answer.children.get(i) else {
                    let more = answer.children_total.saturating_sub(n as u64);
                    if more > 0 {
                        ui.weak(format!("… {} more", count(more)));
                    }
                    continue;
                };
                let share = c.bytes as f64 / parent;
                if cursor == Some(i) {
                    // The keyboard's bar: highlighted, and kept in view.
                    let row = egui::Rect::from_min_size(
                        ui.cursor().min,
                        vec2(ui.available_width(), 20.0),
                    );
                    ui.painter().rect_filled(
                        row,
                        2.0,
                        ui.visuals().selection.bg_fill.gamma_multiply(0.5),
                    );
                    ui.scroll_to_rect(row, None);
                }
                let r = ui.horizontal(|ui| {
                    let (rect, bar) = ui.allocate_exact_size(vec2(110.0, 14.0), Sense::click());
                    let p = ui.painter();
                    p.rect_filled(rect, 2.0, ui.visuals().extreme_bg_color);
                    let mut fill = rect;
                    fill.set_width(rect.width() * share.clamp(0.0, 1.0) as f32);
                    p.rect_filled(fill, 2.0, kind_color(c.kind, dark));
                    ui.add_sized([72.0, 18.0], Label::new(size(c.bytes)));
                    ui.add_sized(
                        [48.0, 18.0],
                        Label::new(RichText::new(format!("{:.1}%", share * 100.0)).weak()),
                    );
                    ui.label(icon(c.kind));
                    let name = ui.add(Label::new(&c.name).sense(Sense::click()).truncate());
                    if c.incomplete {
                        ui.label("⚠")
                            .on_hover_text("incomplete: a folder could not be read");
                    }
                    bar.union(name)
                });
                let resp = r.inner.on_hover_text(format!(
                    "{}\n{} allocated, {} apparent\n{} files, {} folders",
                    String::from_utf8_lossy(&c.path),
                    size(c.bytes),
                    size(c.apparent_bytes),
                    count(c.files),
                    count(c.dirs)
                ));
                if resp.clicked() && c.kind.is_folder() {
                    enter = Some(c.clone());
                }
                resp.context_menu(|ui| {
                    if let Some(a) = super::file_menu(ui, true) {
                        act = Some((a, c.path.clone()));
                    }
                });
            }
        });
    (enter, act)
}

/// A squarified treemap of `children` filling the rest of `ui`; returns the
/// folder clicked (`None` action), or a tile and the action chosen in its
/// context menu.
#[allow(clippy::type_complexity)]
fn treemap(
    ui: &mut Ui,
    children: &[Usage],
    dark: bool,
) -> (egui::Rect, Option<(Usage, Option<crate::app::Action>)>) {
    let (response, painter) = ui.allocate_painter(ui.available_size(), Sense::click());
    let area = response.rect;
    let values: Vec<u64> = children.iter().map(|c| c.bytes).collect();
    let rects = squarify(&values, area);
    let hover = response
        .hover_pos()
        .and_then(|p| rects.iter().position(|r| r.contains(p)));
    let bg = ui.visuals().panel_fill;
    let text = if dark { Color32::WHITE } else { Color32::BLACK };
    for (i, (c, r)) in children.iter().zip(&rects).enumerate() {
        if r.width() <= 0.0 || r.height() <= 0.0 {
            continue;
        }
        let mut fill = kind_color(c.kind, dark);
        if c.kind.is_folder() {
            // Neighbouring folders in shades, so their edges read.
            fill = fill.gamma_multiply(0.7 + 0.1 * (i % 4) as f32);
        }
        if hover == Some(i) {
            fill = fill.gamma_multiply(1.25);
        }
        painter.rect_filled(*r, 2.0, fill);
        painter.rect_stroke(*r, 2.0, Stroke::new(1.0, bg), StrokeKind::Inside);
        if r.width() > 46.0 && r.height() > 16.0 {
            let label = format!("{}  {}", c.name, size(c.bytes));
            let clip = painter.with_clip_rect(r.shrink(2.0));
            clip.text(
                r.min + vec2(4.0, 3.0),
                Align2::LEFT_TOP,
                label,
                FontId::proportional(12.0),
                text,
            );
        }
    }
    let total: u64 = values.iter().sum();
    if let Some(c) = hover.and_then(|i| children.get(i)) {
        let share = c.bytes as f64 / total.max(1) as f64 * 100.0;
        response.clone().on_hover_text_at_pointer(format!(
            "{}{}\n{} ({share:.1}% of what is shown)\n{} files",
            c.name,
            if c.kind.is_folder() { "/" } else { "" },
            size(c.bytes),
            count(c.files)
        ));
    }
    // The tile the menu is for: the one under the pointer when it opened.
    let menu_id = egui::Id::unique("fsgui-treemap-menu");
    if response.secondary_clicked()
        && let Some(i) = hover
    {
        ui.data_mut(|d| d.insert_temp(menu_id, i));
    }
    let mut chosen = None;
    response.context_menu(|ui| {
        if let Some(a) = super::file_menu(ui, true) {
            chosen = Some(a);
        }
    });
    if let Some(a) = chosen
        && let Some(c) = ui
            .data(|d| d.get_temp::<usize>(menu_id))
            .and_then(|i| children.get(i))
    {
        return (area, Some((c.clone(), Some(a))));
    }
    if response.clicked()
        && let Some(c) = hover.and_then(|i| children.get(i))
        && c.kind.is_folder()
    {
        return (area, Some((c.clone(), None)));
    }
    (area, None)
}
