//! Names in any script. egui's bundled fonts cover Latin, Greek, Cyrillic
//! and a set of monochrome symbols; a file name in Japanese, Arabic,
//! Hebrew, Devanagari or Thai, or with a colour emoji, needs the system's
//! fonts. egui 0.37 asks a [`egui::FontProvider`] for any character its
//! fonts lack, and its own `egui_system_font_provider` answers with the
//! operating system's fallback for that script and the user's locale
//! (fontconfig on Linux, opened with `dlopen`, so nothing is needed to
//! build; CoreText on macOS; DirectWrite on Windows), memory-mapping the
//! font it picks. Nothing large is bundled, and the system's choices
//! (fontconfig's rules, the locale's CJK variant) are the user's.
//!
//! One change to the order: egui's monochrome emoji font has single
//! emoji but not the joined ones (👨‍👩‍👧 would be three faces), so
//! the system's emoji font, found once at start, goes ahead of it.
//!
//! Right-to-left names: egui shapes each run with harfrust (Arabic letters
//! joined, a Hebrew or Arabic word laid out right to left) but has no
//! paragraph direction; `crate::bidi` puts the runs in display order.

use std::sync::Arc;
use std::thread::JoinHandle;

use egui::{FallbackRequest, FontDefinitions, FontFamily, FontProvider};
use egui_system_font_provider::SystemFontProvider;

/// A joined emoji the system's emoji font is asked for.
const JOINED_EMOJI: &str = "👨\u{200d}👩\u{200d}👧";
/// egui's bundled monochrome emoji font, which the system's goes before.
const BUNDLED_EMOJI: &str = "NotoEmoji-Regular";

/// Falls back to the system's fonts for characters egui's own lack, and
/// puts the system's emoji font ahead of egui's monochrome one. The fonts
/// are enumerated on a thread (it can take a few hundred milliseconds);
/// the handle ends once the emoji font is in place (tests wait for it).
pub fn install(ctx: &egui::Context) -> std::io::Result<JoinHandle<()>> {
    let provider = Arc::new(SystemFontProvider::new());
    ctx.add_font_provider(provider.clone());
    let ctx = ctx.clone();
    std::thread::Builder::new()
        .name("fsgui-fonts".into())
        .spawn(move || {
            let request = FallbackRequest {
                cluster: JOINED_EMOJI,
                family: &FontFamily::Proportional,
            };
            let Some(emoji) = provider.font_for(&request) else {
                return;
            };
            let mut defs = FontDefinitions::default();
            defs.font_data
                .insert(emoji.name.clone(), Arc::new(emoji.data));
            for family in [FontFamily::Proportional, FontFamily::Monospace] {
                let chain = defs.families.entry(family).or_default();
                let at = chain
                    .iter()
                    .position(|n| n == BUNDLED_EMOJI)
                    .unwrap_or(chain.len());
                chain.insert(at, emoji.name.clone());
            }
            ctx.set_fonts(defs);
            ctx.request_repaint();
        })
}
