//! `fsgui --bench FILE`: the window measures itself, under a real
//! renderer. It types scripted queries one key at a time (real key events
//! through the query box) and records keystroke-to-painted-rows latency,
//! then scrolls through a large result at a fixed speed recording frame
//! times, then writes the figures as JSON and closes.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::app::App;

/// What to measure.
#[derive(Clone, Debug)]
pub struct BenchPlan {
    /// Queries typed one character at a time (cleared between them).
    pub typed: Vec<String>,
    /// A query with many matches to scroll through.
    pub scroll_query: String,
    /// Frames of scrolling, and pixels scrolled per frame.
    pub scroll_frames: usize,
    pub scroll_step: f32,
    pub out: PathBuf,
}

#[derive(Debug)]
enum Phase {
    /// Until the daemon is ready and the query box has had a frame.
    Warmup {
        frames: u32,
    },
    Typing {
        query: usize,
        chars: usize,
        /// Keystroke sent, waiting for its rows (latencies count, when
        /// sent, the query asked for before it).
        waiting: Option<(usize, Instant, String)>,
    },
    ScrollStart {
        at: Instant,
    },
    Scrolling {
        frame: usize,
        offset: f32,
        last: Instant,
    },
    /// Jumps across the result (as dragging the scroll bar does): time
    /// until every visible row is loaded and painted.
    Jumping {
        jump: usize,
        at: Option<Instant>,
    },
    Done,
}

/// Drives the window through the plan, one call per frame.
#[derive(Debug)]
pub struct Bench {
    plan: BenchPlan,
    phase: Phase,
    started: Instant,
    pub first_frame: Option<Duration>,
    keystrokes: Vec<f64>,
    /// The query each keystroke asked for, beside its latency.
    keyed: Vec<String>,
    frame_cpu: Vec<f64>,
    frame_wall: Vec<f64>,
    frames_with_gaps: usize,
    scroll_total: u64,
    rss_after_scroll: u64,
    peak_rss: u64,
    max_rows_held: usize,
    jumps: Vec<f64>,
    errors: Vec<String>,
}

/// Jumps made after scrolling.
const JUMPS: usize = 10;

impl Bench {
    pub fn new(plan: BenchPlan, started: Instant) -> Bench {
        Bench {
            plan,
            phase: Phase::Warmup { frames: 0 },
            started,
            first_frame: None,
            keystrokes: Vec::new(),
            keyed: Vec::new(),
            frame_cpu: Vec::new(),
            frame_wall: Vec::new(),
            frames_with_gaps: 0,
            scroll_total: 0,
            rss_after_scroll: 0,
            peak_rss: 0,
            max_rows_held: 0,
            jumps: Vec::new(),
            errors: Vec::new(),
        }
    }

    /// Before the app draws a frame: inject this frame's input. Returns
    /// false once done (the window should close).
    pub fn before_frame(
        &mut self,
        app: &mut App,
        ctx: &egui::Context,
        last_cpu: Option<f32>,
    ) -> bool {
        if self.first_frame.is_none() {
            self.first_frame = Some(self.started.elapsed());
        }
        ctx.request_repaint();
        match &mut self.phase {
            Phase::Warmup { frames } => {
                let ready = app.status.as_ref().is_some_and(|s| s.state == "ready");
                if ready {
                    *frames += 1;
                }
                if *frames > 10 {
                    self.phase = Phase::Typing {
                        query: 0,
                        chars: 0,
                        waiting: None,
                    };
                }
            }
            Phase::Typing {
                query,
                chars,
                waiting,
            } => {
                if let Some((before, at, asked)) = waiting.take() {
                    let answered =
                        app.search.latencies.len() > before || app.search.error.is_some();
                    if app.search.query.trim() == asked {
                        // A space between words: the same query, nothing
                        // asked (see `SearchModel::set_query`).
                    } else if answered {
                        if let Some(d) = app
                            .search
                            .latencies
                            .last()
                            .filter(|_| app.search.latencies.len() > before)
                        {
                            self.keystrokes.push(d.as_secs_f64() * 1e3);
                            self.keyed.push(app.search.query.clone());
                        }
                    } else if at.elapsed() > Duration::from_secs(10) {
                        self.errors
                            .push(format!("no rows 10 s after typing {:?}", app.search.query));
                    } else {
                        *waiting = Some((before, at, asked));
                        return true;
                    }
                }
                let Some(q) = self.plan.typed.get(*query) else {
                    app.type_query("");
                    self.phase = Phase::ScrollStart { at: Instant::now() };
                    return true;
                };
                match q.chars().nth(*chars) {
                    Some(c) => {
                        let before = app.search.latencies.len();
                        let asked = app.search.query.trim().to_owned();
                        ctx.input_mut(|i| i.events.push(egui::Event::Text(c.to_string())));
                        *chars += 1;
                        *waiting = Some((before, Instant::now(), asked));
                    }
                    None => {
                        app.type_query("");
                        *query += 1;
                        *chars = 0;
                    }
                }
            }
            Phase::ScrollStart { at } => {
                if app.search.query != self.plan.scroll_query {
                    let q = self.plan.scroll_query.clone();
                    app.type_query(&q);
                    *at = Instant::now();
                } else if app.settled() && app.search.results.total > 0 {
                    self.scroll_total = app.search.results.total;
                    self.phase = Phase::Scrolling {
                        frame: 0,
                        offset: 0.0,
                        last: Instant::now(),
                    };
                } else if at.elapsed() > Duration::from_secs(30) {
                    self.errors
                        .push("the scroll query did not answer in 30 s".into());
                    self.phase = Phase::Done;
                }
            }
            Phase::Scrolling {
                frame,
                offset,
                last,
            } => {
                if *frame > 1 {
                    if let Some(cpu) = last_cpu {
                        self.frame_cpu.push(f64::from(cpu) * 1e3);
                    }
                    self.frame_wall.push(last.elapsed().as_secs_f64() * 1e3);
                }
                *last = Instant::now();
                if let Some((a, b)) = app.search.visible()
                    && (a..=b).any(|i| app.search.results.row(i).is_none())
                {
                    self.frames_with_gaps += 1;
                }
                self.max_rows_held = self.max_rows_held.max(app.search.results.rows_held());
                *offset += self.plan.scroll_step;
                app.search.scroll_offset = Some(*offset);
                *frame += 1;
                if *frame >= self.plan.scroll_frames {
                    let (rss, peak) = rss();
                    self.rss_after_scroll = rss;
                    self.peak_rss = peak;
                    self.phase = Phase::Jumping { jump: 0, at: None };
                }
            }
            Phase::Jumping { jump, at } => {
                match *at {
                    None => {
                        // Spread over the result, far from the previous spot.
                        let k = (*jump * 7 % JUMPS) as f32 + 0.5;
                        let rows = self.scroll_total as f32 * k / JUMPS as f32;
                        app.search.scroll_offset = Some(rows * crate::ui::ROW_HEIGHT);
                        *at = Some(Instant::now());
                    }
                    Some(t) => {
                        let loaded = app.search.visible().is_some_and(|(a, b)| {
                            a > 0 && (a..=b).all(|i| app.search.results.row(i).is_some())
                        });
                        if loaded {
                            self.jumps.push(t.elapsed().as_secs_f64() * 1e3);
                            *jump += 1;
                            *at = None;
                        } else if t.elapsed() > Duration::from_secs(10) {
                            self.errors
                                .push("a jump's rows did not load in 10 s".into());
                            *jump += 1;
                            *at = None;
                        }
                    }
                }
                if *jump >= JUMPS {
                    self.phase = Phase::Done;
                }
            }
            Phase::Done => {
                if let Err(e) = std::fs::write(&self.plan.out, self.report()) {
                    eprintln!("fsgui: writing {}: {e}", self.plan.out.display());
                }
                return false;
            }
        }
        true
    }

    /// The figures as one JSON object.
    pub fn report(&self) -> String {
        let ms = |v: Option<Duration>| v.map_or(-1.0, |d| d.as_secs_f64() * 1e3);
        format!(
            concat!(
                "{{\"startup_to_first_frame_ms\":{:.1},",
                "\"keystrokes\":{},\"keystroke_ms_p50\":{:.2},\"keystroke_ms_p99\":{:.2},\"keystroke_ms_max\":{:.2},",
                "\"scroll_query\":{:?},\"scroll_matches\":{},\"scroll_frames\":{},",
                "\"frame_cpu_ms_p50\":{:.2},\"frame_cpu_ms_p99\":{:.2},\"frame_cpu_ms_max\":{:.2},",
                "\"frame_interval_ms_p50\":{:.2},\"frame_interval_ms_p99\":{:.2},",
                "\"frames_with_rows_loading\":{},\"max_rows_held\":{},",
                "\"jumps\":{},\"jump_to_rows_ms_p50\":{:.1},\"jump_to_rows_ms_max\":{:.1},",
                "\"rss_bytes\":{},\"peak_rss_bytes\":{},\"errors\":{:?},",
                "\"keys\":[{}]}}\n"
            ),
            ms(self.first_frame),
            self.keystrokes.len(),
            percentile(&self.keystrokes, 50.0),
            percentile(&self.keystrokes, 99.0),
            percentile(&self.keystrokes, 100.0),
            self.plan.scroll_query,
            self.scroll_total,
            self.frame_cpu.len(),
            percentile(&self.frame_cpu, 50.0),
            percentile(&self.frame_cpu, 99.0),
            percentile(&self.frame_cpu, 100.0),
            percentile(&self.frame_wall, 50.0),
            percentile(&self.frame_wall, 99.0),
            self.frames_with_gaps,
            self.max_rows_held,
            self.jumps.len(),
            percentile(&self.jumps, 50.0),
            percentile(&self.jumps, 100.0),
            self.rss_after_scroll,
            self.peak_rss,
            self.errors,
            self.keyed
                .iter()
                .zip(&self.keystrokes)
                .map(|(q, ms)| format!("[{q:?},{ms:.2}]"))
                .collect::<Vec<_>>()
                .join(","),
        )
    }
}

/// Nearest-rank percentile; NaN for no samples.
pub fn percentile(samples: &[f64], p: f64) -> f64 {
    if samples.is_empty() {
        return f64::NAN;
    }
    let mut v = samples.to_vec();
    v.sort_by(f64::total_cmp);
    let rank = ((p / 100.0) * v.len() as f64).ceil().max(1.0) as usize;
    v[rank.min(v.len()) - 1]
}

/// Resident and peak resident memory of this process (Linux; 0 elsewhere).
pub fn rss() -> (u64, u64) {
    let Ok(s) = std::fs::read_to_string("/proc/self/status") else {
        return (0, 0);
    };
    let field = |name: &str| {
        s.lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .map_or(0, |kb| kb * 1024)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

#[cfg(test)]
mod tests {
    #[test]
    fn percentiles() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(super::percentile(&v, 50.0), 50.0);
        assert_eq!(super::percentile(&v, 99.0), 99.0);
        assert_eq!(super::percentile(&v, 100.0), 100.0);
        assert!(super::percentile(&[], 50.0).is_nan());
    }
}
