//! `fsgui`: the desktop window of fsindex (eframe with the glow renderer).
//!
//! `fsgui --query Q --screenshot FILE.png` renders the window with that
//! query's answer, saves it and exits (GUIDE.md's pictures, the Xvfb
//! smoke test); `--bench FILE` measures typing and scrolling (see
//! `fsgui::bench`).

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use clap::Parser;
use fsgui::bench::{Bench, BenchPlan};
use fsgui::{App, Options, View};
use fsindex_client::Target;

/// The desktop window of fsindex: search as you type, disk usage, duplicates.
#[derive(Debug, Parser)]
#[command(version, about)]
struct Args {
    /// Daemon socket (default: the instance's, see FSINDEX_HOME).
    #[arg(long, env = "FSINDEX_SOCKET", value_name = "PATH")]
    socket: Option<PathBuf>,
    /// Daemon URL for a TCP daemon, e.g. http://127.0.0.1:7475 (token from
    /// FSINDEX_TOKEN or the instance's token file).
    #[arg(long, value_name = "URL", conflicts_with = "socket")]
    endpoint: Option<String>,
    /// Do not start fsindexd when none is listening.
    #[arg(long, env = "FSINDEX_NO_SPAWN", value_parser = clap::builder::BoolishValueParser::new(), default_value_t = false)]
    no_spawn: bool,
    /// Start with this query in the search box.
    #[arg(long, short = 'q', value_name = "QUERY")]
    query: Option<String>,
    /// Start in this view.
    #[arg(long, value_enum, default_value = "search")]
    view: ViewArg,
    /// Once the view has its answer, save the window as a PNG and exit.
    #[arg(long, value_name = "FILE.png")]
    screenshot: Option<PathBuf>,
    /// Window size in points, WIDTHxHEIGHT.
    #[arg(long, default_value = "1100x680", value_parser = parse_size)]
    size: (f32, f32),
    /// Measure keystroke latency, scrolling frame times, memory and start-up;
    /// write them as JSON to FILE and exit.
    #[arg(long, value_name = "FILE")]
    bench: Option<PathBuf>,
    /// With --bench: queries typed one key at a time, separated by `;`.
    #[arg(long, default_value = "report;tax 2025;zanzibar;ar")]
    bench_typed: String,
    /// With --bench: a query with many matches to scroll through.
    #[arg(long, default_value = "a")]
    bench_scroll: String,
}

#[derive(Clone, Copy, Debug, clap::ValueEnum)]
enum ViewArg {
    Search,
    Du,
    Dupes,
}

fn parse_size(s: &str) -> Result<(f32, f32), String> {
    let (w, h) = s
        .split_once('x')
        .ok_or_else(|| format!("`{s}`: give WIDTHxHEIGHT, e.g. 1100x680"))?;
    let n = |v: &str| {
        v.trim()
            .parse::<f32>()
            .ok()
            .filter(|x| *x >= 200.0)
            .ok_or_else(|| format!("`{v}`: a size of at least 200"))
    };
    Ok((n(w)?, n(h)?))
}

/// A screenshot being taken: waits for the view to settle, asks for the
/// pixels, saves them.
struct Shot {
    file: PathBuf,
    settled_frames: u32,
    asked: bool,
    image: Arc<Mutex<Option<Arc<egui::ColorImage>>>>,
    deadline: Instant,
}

struct Window {
    app: App,
    shot: Option<Shot>,
    bench: Option<Bench>,
    /// Set when the window should close with a failure.
    failed: Arc<Mutex<Option<String>>>,
}

impl eframe::App for Window {
    fn clear_color(&self, visuals: &egui::Visuals) -> [f32; 4] {
        fsgui::ui::clear_color(visuals)
    }

    fn ui(&mut self, ui: &mut egui::Ui, frame: &mut eframe::Frame) {
        let ctx = ui.ctx().clone();
        if fsgui::trace::enabled() {
            let keys = ctx.input(|i| {
                i.events
                    .iter()
                    .filter(|e| {
                        matches!(
                            e,
                            egui::Event::Text(_) | egui::Event::Key { pressed: true, .. }
                        )
                    })
                    .count()
            });
            let cpu = frame.info().cpu_usage.unwrap_or(0.0) * 1e3;
            fsgui::trace::event(format_args!("frame keys={keys} last_frame_cpu_ms={cpu:.2}"));
        }
        if let Some(b) = &mut self.bench
            && !b.before_frame(&mut self.app, &ctx, frame.info().cpu_usage)
        {
            ctx.send_viewport_cmd(egui::ViewportCommand::Close);
        }
        self.app.ui(ui);
        fsgui::trace::event(format_args!("ui-end"));
        if let Some(shot) = &mut self.shot {
            take_screenshot(shot, &self.app, &ctx, &self.failed);
        }
    }
}

fn take_screenshot(
    shot: &mut Shot,
    app: &App,
    ctx: &egui::Context,
    failed: &Arc<Mutex<Option<String>>>,
) {
    let image = shot.image.lock().ok().and_then(|mut i| i.take());
    if let Some(image) = image {
        let [w, h] = image.size;
        let saved = image::RgbaImage::from_raw(w as u32, h as u32, image.as_raw().to_vec())
            .ok_or_else(|| "the screenshot has the wrong size".to_owned())
            .and_then(|img| img.save(&shot.file).map_err(|e| e.to_string()));
        if let Err(e) = saved
            && let Ok(mut f) = failed.lock()
        {
            *f = Some(format!("saving {}: {e}", shot.file.display()));
        }
        ctx.send_viewport_cmd(egui::ViewportCommand::Close);
        return;
    }
    if shot.asked {
        ctx.request_repaint_after(Duration::from_millis(20));
        return;
    }
    let ready = app.settled() && app.status.is_some();
    shot.settled_frames = if ready { shot.settled_frames + 1 } else { 0 };
    // A few settled frames: layout (column widths, scroll) has converged.
    if shot.settled_frames >= 4 || Instant::now() > shot.deadline {
        if !ready && let Ok(mut f) = failed.lock() {
            *f = Some("the view had no answer within 60 s; saved it as it was".into());
        }
        shot.asked = true;
        let slot = shot.image.clone();
        let waker = ctx.clone();
        ctx.request_screenshot(move |img| {
            if let Ok(mut s) = slot.lock() {
                *s = Some(img);
            }
            waker.request_repaint();
        });
    }
    ctx.request_repaint_after(Duration::from_millis(20));
}

fn main() -> ExitCode {
    let started = Instant::now();
    let args = Args::parse();
    let target = match (&args.endpoint, &args.socket) {
        (Some(url), _) => Target::Url {
            url: url.clone(),
            token: fsindex_client::find_token(None).ok().flatten(),
        },
        (None, Some(s)) => Target::Socket(s.clone()),
        (None, None) => Target::Socket(fsindex_client::default_socket()),
    };
    let view = match args.view {
        ViewArg::Search => View::Search,
        ViewArg::Du => View::DiskUsage,
        ViewArg::Dupes => View::Duplicates,
    };
    let mut options = Options::for_socket(PathBuf::new());
    options.target = target;
    options.spawn = !args.no_spawn;
    options.query = args.query.clone();
    options.view = view;
    if args.bench.is_some() {
        // Benchmark keystrokes are not the user's history.
        options.settings_path = None;
    }
    let native = eframe::NativeOptions {
        viewport: egui::ViewportBuilder::default()
            .with_title("fsgui")
            .with_app_id("fsgui")
            .with_inner_size([args.size.0, args.size.1])
            .with_min_inner_size([480.0, 320.0]),
        // fsgui installs the system's fonts itself (fsgui::fonts).
        system_font_fallback: false,
        // Noise added to every shaded pixel against banding in gradients,
        // which fsgui draws none of; in software GL it is a share of every
        // frame's CPU.
        dithering: false,
        ..Default::default()
    };
    let failed: Arc<Mutex<Option<String>>> = Arc::default();
    let failed_in = failed.clone();
    let shot = args.screenshot.clone().map(|file| Shot {
        file,
        settled_frames: 0,
        asked: false,
        image: Arc::default(),
        deadline: Instant::now() + Duration::from_secs(60),
    });
    let bench = args.bench.clone().map(|out| {
        Bench::new(
            BenchPlan {
                typed: args
                    .bench_typed
                    .split(';')
                    .filter(|q| !q.is_empty())
                    .map(str::to_owned)
                    .collect(),
                scroll_query: args.bench_scroll.clone(),
                scroll_frames: 600,
                scroll_step: 400.0,
                out,
            },
            started,
        )
    });
    let result = eframe::run_native(
        "fsgui",
        native,
        Box::new(move |cc| {
            fsgui::fonts::install(&cc.egui_ctx)?;
            let mut app = App::start_with(options, &cc.egui_ctx)?;
            app.show(view);
            Ok(Box::new(Window {
                app,
                shot,
                bench,
                failed: failed_in,
            }))
        }),
    );
    if let Err(e) = result {
        eprintln!("fsgui: {e}");
        return ExitCode::from(2);
    }
    if let Some(msg) = failed.lock().ok().and_then(|mut f| f.take()) {
        eprintln!("fsgui: {msg}");
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}
