//! Plots, as PNG and SVG files (`--plot DIR`) and as inline SVG for the
//! HTML report.
//!
//! Charts are built from exported records only: trace rows
//! ([`TraceRow`], the same rows `--trace` writes as CSV), per-run metric
//! values and RPC latencies from [`crate::batch::RunRecord`]. Text is drawn
//! with Noto Sans, bundled in the binary (the `notosans` crate, SIL Open
//! Font License 1.1) and registered with plotters' `ab_glyph` renderer, so
//! plotting needs no system fonts. SVG files name the font family
//! `sans-serif` and let the viewer pick its own.
//!
//! | file | what |
//! |---|---|
//! | `cwnd-FLOW` | cwnd, ssthresh and packets in flight (segments) over time; ca_state other than Open shaded |
//! | `goodput` | each flow's delivery rate (Mbit/s) over time, in bins of 1/150 of the run |
//! | `dist-METRIC` | compare/reproduce: every run of every arm (dots), the median (bar) and its 95 % CI (band) |
//! | `ARM-seed1-cwnd-FLOW`, `ARM-seed1-goodput` | compare/reproduce: the first run (seed 1) of each arm |
//! | `rpc-cdf-FLOW` | compare/reproduce with RPC flows: latency CDF per arm, all runs pooled, log x axis |

use crate::batch::FlowTrace;
use crate::compare::Comparison;
use crate::error::{Error, Result};
use crate::metrics::{RpcLatencies, Unit};
use crate::outputs::Outputs;
use crate::report::window_rate;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::path::Path;
use tcplab_core::time::Duration;
use tcplab_core::CaState;
use tcplab_sim::result::{LinkResult, QueueSample, TraceRow};

/// Size of every chart, pixels.
pub const SIZE: (u32, u32) = (960, 540);
/// Bins of a goodput-over-time chart.
pub const GOODPUT_BINS: u64 = 150;
/// Horizontal resolution that traces are thinned to (see [`thin`]).
const THIN_BUCKETS: usize = 1200;
/// Linux `TCP_INFINITE_SSTHRESH`: ssthresh before the first reduction.
const TCP_INFINITE_SSTHRESH: u32 = 0x7fff_ffff;

const FONT: &str = "sans-serif";

/// Registers the bundled font once per process.
fn register_fonts() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let _ = plotters::style::register_font(FONT, FontStyle::Normal, notosans::REGULAR_TTF);
        let _ = plotters::style::register_font(FONT, FontStyle::Bold, notosans::BOLD_TTF);
    });
}

/// A named line of a chart.
#[derive(Clone, Debug)]
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
}

/// One arm's values on a distribution chart (already in display units).
#[derive(Clone, Debug)]
pub struct ArmValues {
    pub name: String,
    pub values: Vec<f64>,
    pub median: f64,
    pub ci: [f64; 2],
}

/// A chart and its data.
#[derive(Clone, Debug)]
pub enum Chart {
    /// cwnd / ssthresh / inflight of one flow, ca_state shaded.
    FlowState { title: String, rows: Vec<TraceRow> },
    /// Lines over a linear x axis.
    Lines { title: String, x_desc: String, y_desc: String, series: Vec<Series> },
    /// Per-arm distribution of one metric; `decimals` of the y labels.
    Strip { title: String, y_desc: String, arms: Vec<ArmValues>, decimals: Option<usize> },
    /// CDFs over a log x axis (values > 0).
    Cdf { title: String, x_desc: String, series: Vec<Series> },
    /// Lines over a log x axis (x > 0), y from 0.
    LogX { title: String, x_desc: String, y_desc: String, series: Vec<Series> },
}

type Draw = std::result::Result<(), String>;

fn err<E: std::fmt::Display>(e: E) -> String {
    e.to_string()
}

impl Chart {
    pub fn title(&self) -> &str {
        match self {
            Chart::FlowState { title, .. }
            | Chart::Lines { title, .. }
            | Chart::Strip { title, .. }
            | Chart::Cdf { title, .. }
            | Chart::LogX { title, .. } => title,
        }
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Draw {
        root.fill(&WHITE).map_err(err)?;
        match self {
            Chart::FlowState { title, rows } => draw_flow_state(root, title, rows),
            Chart::Lines { title, x_desc, y_desc, series } => draw_lines(root, title, x_desc, y_desc, series),
            Chart::Strip { title, y_desc, arms, decimals } => draw_strip(root, title, y_desc, arms, *decimals),
            Chart::Cdf { title, x_desc, series } => {
                draw_log_x(root, title, x_desc, "fraction of RPCs ≤ x", 1.0, SeriesLabelPosition::LowerRight, series)
            }
            Chart::LogX { title, x_desc, y_desc, series } => {
                let (_, _, _, y1) = bounds(series);
                let y1 = if y1.is_finite() && y1 > 0.0 { y1 * 1.08 } else { 1.0 };
                draw_log_x(root, title, x_desc, y_desc, y1, SeriesLabelPosition::UpperRight, series)
            }
        }?;
        root.present().map_err(err)
    }

    /// The chart as an SVG document.
    pub fn to_svg(&self) -> Result<String> {
        register_fonts();
        let mut s = String::new();
        {
            let root = SVGBackend::with_string(&mut s, SIZE).into_drawing_area();
            self.draw(&root).map_err(|e| Error::msg(format!("cannot draw {:?}: {e}", self.title())))?;
        }
        Ok(s)
    }

    /// Writes `DIR/STEM.png` and `DIR/STEM.svg`.
    pub fn write(&self, out: &mut Outputs, dir: &Path, stem: &str) -> Result<()> {
        register_fonts();
        let svg = self.to_svg()?;
        out.write(&dir.join(format!("{stem}.svg")), svg.as_bytes())?;
        self.write_png(out, dir, stem)
    }

    /// `DIR/STEM.png` only (for pages kept in the repository).
    pub fn write_png(&self, out: &mut Outputs, dir: &Path, stem: &str) -> Result<()> {
        register_fonts();
        let png = dir.join(format!("{stem}.png"));
        out.track(&png);
        let root = BitMapBackend::new(&png, SIZE).into_drawing_area();
        self.draw(&root).map_err(|e| Error::at(png.display().to_string(), format!("cannot write plot: {e}")))
    }
}

/// A file-name-safe version of a name (`A-Z a-z 0-9 _ - .`, others `_`).
pub fn file_stem(name: &str) -> String {
    let s: String =
        name.chars().map(|c| if c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.') { c } else { '_' }).collect();
    if s.is_empty() || s.starts_with('.') {
        format!("_{s}")
    } else {
        s
    }
}

fn caption_style() -> TextStyle<'static> {
    (FONT, 20).into_font().into()
}

fn state_color(s: CaState) -> RGBColor {
    match s {
        CaState::Open => WHITE,
        CaState::Disorder => RGBColor(240, 200, 60),
        CaState::Cwr => RGBColor(90, 150, 240),
        CaState::Recovery => RGBColor(245, 140, 50),
        CaState::Loss => RGBColor(220, 50, 50),
    }
}

/// Spans of time spent in each non-Open ca_state: (state, from s, to s).
/// A state holds from its row until the next row with another state.
fn state_spans(rows: &[TraceRow]) -> Vec<(CaState, f64, f64)> {
    let mut spans = Vec::new();
    let mut i = 0;
    while i < rows.len() {
        let s = rows[i].ca_state;
        let mut j = i + 1;
        while j < rows.len() && rows[j].ca_state == s {
            j += 1;
        }
        if s != CaState::Open {
            let end = rows.get(j).unwrap_or(&rows[j - 1]).time;
            spans.push((s, rows[i].time.as_secs_f64(), end.as_secs_f64()));
        }
        i = j;
    }
    spans
}

/// Thins a trace to about `buckets` time buckets, keeping in each bucket
/// its first and last rows and the rows with the lowest and highest cwnd
/// and inflight, plus every row next to a ca_state change: the sawtooth and
/// the state shading survive, a 120 s trace at 10 ms stays a small SVG.
pub fn thin(rows: &[TraceRow], buckets: usize) -> Vec<TraceRow> {
    if rows.len() <= buckets * 6 || rows.len() < 2 {
        return rows.to_vec();
    }
    let t0 = rows[0].time.as_nanos();
    let span = (rows[rows.len() - 1].time.as_nanos() - t0).max(1);
    let bucket = |r: &TraceRow| ((r.time.as_nanos() - t0) as u128 * buckets as u128 / span as u128) as usize;
    let mut keep = vec![false; rows.len()];
    let mut start = 0;
    while start < rows.len() {
        let b = bucket(&rows[start]);
        let mut end = start;
        while end < rows.len() && bucket(&rows[end]) == b {
            end += 1;
        }
        let idx = start..end;
        keep[start] = true;
        keep[end - 1] = true;
        for key in [|r: &TraceRow| r.cwnd, |r: &TraceRow| r.inflight] {
            if let Some(i) = idx.clone().min_by_key(|&i| key(&rows[i])) {
                keep[i] = true;
            }
            if let Some(i) = idx.clone().max_by_key(|&i| key(&rows[i])) {
                keep[i] = true;
            }
        }
        start = end;
    }
    for i in 1..rows.len() {
        if rows[i].ca_state != rows[i - 1].ca_state {
            keep[i - 1] = true;
            keep[i] = true;
        }
    }
    rows.iter().zip(keep).filter(|(_, k)| *k).map(|(r, _)| *r).collect()
}

fn draw_flow_state<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, title: &str, rows: &[TraceRow]) -> Draw {
    let finite_ssthresh = |r: &TraceRow| r.ssthresh < TCP_INFINITE_SSTHRESH;
    let x_max = rows.last().map_or(1.0, |r| r.time.as_secs_f64()).max(1e-3);
    let y_max = rows
        .iter()
        .map(|r| {
            let s = if finite_ssthresh(r) { r.ssthresh } else { 0 };
            r.cwnd.max(r.inflight).max(s)
        })
        .max()
        .unwrap_or(10)
        .max(4) as f64
        * 1.08;
    let mut chart = ChartBuilder::on(root)
        .caption(title, caption_style())
        .margin(12)
        .x_label_area_size(45)
        .y_label_area_size(65)
        .build_cartesian_2d(0.0..x_max, 0.0..y_max)
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc("time (s)")
        .y_desc("segments")
        .y_label_formatter(&|v| format!("{v:.0}"))
        .axis_desc_style((FONT, 16))
        .label_style((FONT, 14))
        .light_line_style(RGBColor(235, 235, 235))
        .draw()
        .map_err(err)?;
    let spans = state_spans(rows);
    let min_w = x_max / 600.0;
    for state in [CaState::Disorder, CaState::Cwr, CaState::Recovery, CaState::Loss] {
        let mine: Vec<(f64, f64)> =
            spans.iter().filter(|s| s.0 == state).map(|s| (s.1, s.2.max(s.1 + min_w))).collect();
        if mine.is_empty() {
            continue;
        }
        let c = state_color(state);
        chart
            .draw_series(mine.into_iter().map(|(a, b)| Rectangle::new([(a, 0.0), (b, y_max)], c.mix(0.25).filled())))
            .map_err(err)?
            .label(format!("ca_state {}", state.name()))
            .legend(move |(x, y)| Rectangle::new([(x, y - 6), (x + 18, y + 6)], c.mix(0.45).filled()));
    }
    type Value = Box<dyn Fn(&TraceRow) -> Option<f64>>;
    let lines: [(&str, RGBColor, u32, Value); 3] = [
        ("ssthresh", RGBColor(200, 90, 0), 2, Box::new(move |r| finite_ssthresh(r).then(|| f64::from(r.ssthresh)))),
        ("cwnd", RGBColor(20, 70, 200), 3, Box::new(|r| Some(f64::from(r.cwnd)))),
        // Thin, on top: where in flight equals cwnd both stay visible.
        ("in flight", RGBColor(40, 170, 70), 1, Box::new(|r| Some(f64::from(r.inflight)))),
    ];
    for (name, color, width, value) in lines {
        let pts: Vec<(f64, f64)> = rows.iter().filter_map(|r| value(r).map(|v| (r.time.as_secs_f64(), v))).collect();
        chart
            .draw_series(LineSeries::new(pts, color.stroke_width(width)))
            .map_err(err)?
            .label(name)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(3)));
    }
    legend(&mut chart)
}

fn legend<'a, DB: DrawingBackend + 'a, X: plotters::coord::ranged1d::Ranged, Y: plotters::coord::ranged1d::Ranged>(
    chart: &mut ChartContext<'a, DB, Cartesian2d<X, Y>>,
) -> Draw {
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.85))
        .border_style(RGBColor(160, 160, 160))
        .label_font((FONT, 15))
        .draw()
        .map_err(err)
}

const PALETTE: [RGBColor; 6] = [
    RGBColor(20, 70, 200),
    RGBColor(210, 60, 40),
    RGBColor(40, 160, 70),
    RGBColor(150, 60, 180),
    RGBColor(230, 140, 0),
    RGBColor(0, 150, 160),
];

fn bounds(series: &[Series]) -> (f64, f64, f64, f64) {
    let pts = series.iter().flat_map(|s| s.points.iter()).filter(|p| p.0.is_finite() && p.1.is_finite());
    pts.fold((f64::INFINITY, f64::NEG_INFINITY, f64::INFINITY, f64::NEG_INFINITY), |b, p| {
        (b.0.min(p.0), b.1.max(p.0), b.2.min(p.1), b.3.max(p.1))
    })
}

fn draw_lines<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    x_desc: &str,
    y_desc: &str,
    series: &[Series],
) -> Draw {
    let (x0, x1, _, y1) = bounds(series);
    let (x0, x1) = if x0.is_finite() && x1 > x0 { (x0.min(0.0), x1) } else { (0.0, 1.0) };
    let y1 = if y1.is_finite() && y1 > 0.0 { y1 * 1.08 } else { 1.0 };
    let mut chart = ChartBuilder::on(root)
        .caption(title, caption_style())
        .margin(12)
        .x_label_area_size(45)
        .y_label_area_size(65)
        .build_cartesian_2d(x0..x1, 0.0..y1)
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc(y_desc)
        .axis_desc_style((FONT, 16))
        .label_style((FONT, 14))
        .light_line_style(RGBColor(235, 235, 235))
        .draw()
        .map_err(err)?;
    for (i, s) in series.iter().enumerate() {
        let c = PALETTE[i % PALETTE.len()];
        chart
            .draw_series(LineSeries::new(s.points.iter().copied(), c.stroke_width(2)))
            .map_err(err)?
            .label(s.name.as_str())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], c.stroke_width(3)));
    }
    legend(&mut chart)
}

/// Lines over a log x axis (points with x > 0) and a linear y axis from 0
/// to `y1`: CDFs, and costs over orders of magnitude.
fn draw_log_x<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    x_desc: &str,
    y_desc: &str,
    y1: f64,
    legend_at: SeriesLabelPosition,
    series: &[Series],
) -> Draw {
    let positive: Vec<Series> = series
        .iter()
        .map(|s| Series { name: s.name.clone(), points: s.points.iter().copied().filter(|p| p.0 > 0.0).collect() })
        .collect();
    let (x0, x1, _, _) = bounds(&positive);
    let (x0, x1) = if x0.is_finite() && x1 > x0 {
        (x0 / 1.2, x1 * 1.2)
    } else if x0.is_finite() {
        (x0 / 2.0, x0 * 2.0)
    } else {
        (1.0, 10.0)
    };
    let mut chart = ChartBuilder::on(root)
        .caption(title, caption_style())
        .margin(12)
        .x_label_area_size(45)
        .y_label_area_size(65)
        .build_cartesian_2d((x0..x1).log_scale(), 0.0..y1)
        .map_err(err)?;
    // plotters labels a log axis that spans less than a decade sparsely:
    // draw 1-2-5 ticks (or 1..9 when those are too few) by hand.
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(0)
        .x_label_formatter(&|_| String::new())
        .x_desc(x_desc)
        .y_desc(y_desc)
        .axis_desc_style((FONT, 16))
        .label_style((FONT, 14))
        .light_line_style(RGBColor(235, 235, 235))
        .draw()
        .map_err(err)?;
    let label_style = TextStyle::from((FONT, 14).into_font()).pos(Pos::new(HPos::Center, VPos::Top));
    for t in log_ticks(x0, x1) {
        chart
            .draw_series(std::iter::once(PathElement::new(vec![(t, 0.0), (t, y1)], RGBColor(215, 215, 215))))
            .map_err(err)?;
        let (px, py) = chart.backend_coord(&(t, 0.0));
        root.draw(&PathElement::new(vec![(px, py), (px, py + 5)], BLACK)).map_err(err)?;
        root.draw(&Text::new(format_tick(t), (px, py + 8), label_style.clone())).map_err(err)?;
    }
    for (i, s) in positive.iter().enumerate() {
        let c = PALETTE[i % PALETTE.len()];
        chart
            .draw_series(LineSeries::new(s.points.iter().copied(), c.stroke_width(2)))
            .map_err(err)?
            .label(s.name.as_str())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], c.stroke_width(3)));
    }
    chart
        .configure_series_labels()
        .position(legend_at)
        .background_style(WHITE.mix(0.85))
        .border_style(RGBColor(160, 160, 160))
        .label_font((FONT, 15))
        .draw()
        .map_err(err)
}

/// Tick values for a log axis over `[lo, hi]`: 1, 2, 5 times powers of
/// ten, or every 1..9 multiple when that gives fewer than four.
fn log_ticks(lo: f64, hi: f64) -> Vec<f64> {
    if !(lo > 0.0 && hi > lo && lo.is_finite() && hi.is_finite()) {
        return Vec::new();
    }
    let (d0, d1) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
    let pick = |mults: &[f64]| -> Vec<f64> {
        (d0..=d1).flat_map(|d| mults.iter().map(move |m| m * 10f64.powi(d))).filter(|t| *t >= lo && *t <= hi).collect()
    };
    let coarse = pick(&[1.0, 2.0, 5.0]);
    if coarse.len() >= 4 {
        coarse
    } else {
        pick(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0])
    }
}

fn format_tick(t: f64) -> String {
    if t >= 1.0 {
        format!("{t:.0}")
    } else {
        let s = format!("{t:.6}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

fn draw_strip<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    y_desc: &str,
    arms: &[ArmValues],
    decimals: Option<usize>,
) -> Draw {
    let all = arms.iter().flat_map(|a| a.values.iter().chain(a.ci.iter())).copied().filter(|x| x.is_finite());
    let (lo, hi) = all.fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), x| (l.min(x), h.max(x)));
    // Non-negative quantities start at zero, so that a tiny difference
    // does not fill the chart; the tables give the exact numbers.
    let (lo, hi) = if !lo.is_finite() {
        (0.0, 1.0)
    } else if lo >= 0.0 && hi > 0.0 {
        (0.0, hi * 1.08)
    } else if hi > lo {
        let pad = (hi - lo) * 0.08;
        (lo - pad, hi + pad)
    } else {
        let pad = if lo == 0.0 { 1.0 } else { lo.abs() * 0.05 };
        (lo - pad, hi + pad)
    };
    let n = arms.len().max(1);
    let names: Vec<String> = arms.iter().map(|a| a.name.clone()).collect();
    let fmt = move |x: &f64| {
        let r = x.round();
        if (x - r).abs() < 1e-6 && r >= 0.0 {
            names.get(r as usize).cloned().unwrap_or_default()
        } else {
            String::new()
        }
    };
    let mut chart = ChartBuilder::on(root)
        .caption(title, caption_style())
        .margin(12)
        .x_label_area_size(45)
        .y_label_area_size(75)
        .build_cartesian_2d(-0.5..(n as f64 - 0.5), lo..hi)
        .map_err(err)?;
    let yfmt = move |v: &f64| format!("{v:.0$}", decimals.unwrap_or(0));
    let mut mesh = chart.configure_mesh();
    mesh.disable_x_mesh()
        .x_labels(2 * n + 1)
        .x_label_formatter(&fmt)
        .y_desc(y_desc)
        .axis_desc_style((FONT, 16))
        .label_style((FONT, 15))
        .light_line_style(RGBColor(235, 235, 235));
    if decimals.is_some() {
        mesh.y_label_formatter(&yfmt);
    }
    mesh.draw().map_err(err)?;
    for (i, a) in arms.iter().enumerate() {
        let c = PALETTE[i % PALETTE.len()];
        let x = i as f64;
        // The 95 % CI of the median as a band, the median as a bar.
        chart
            .draw_series(std::iter::once(Rectangle::new(
                [(x - 0.22, a.ci[0]), (x + 0.22, a.ci[1])],
                c.mix(0.15).filled(),
            )))
            .map_err(err)?;
        chart
            .draw_series(std::iter::once(PathElement::new(
                vec![(x - 0.3, a.median), (x + 0.3, a.median)],
                c.stroke_width(3),
            )))
            .map_err(err)?;
        // Every run as a dot, spread sideways (golden-ratio offsets, deterministic).
        let dots = a.values.iter().enumerate().map(|(k, v)| {
            let off = ((k as f64 * 0.618_034).fract() - 0.5) * 0.36;
            Circle::new((x + off, *v), 4, c.mix(0.75).filled())
        });
        chart.draw_series(dots).map_err(err)?;
    }
    Ok(())
}

// ---- chart sets --------------------------------------------------------------

/// Goodput (Mbit/s) of each flow in `GOODPUT_BINS` bins over `[0, end]`,
/// from the trace's delivered counts (linear between samples).
pub fn goodput_series(traces: &[FlowTrace], end: Duration) -> Vec<Series> {
    let bin = Duration::from_nanos((end.as_nanos() / GOODPUT_BINS).max(1_000_000));
    let bins = (end.as_nanos() / bin.as_nanos()).max(1);
    traces
        .iter()
        .map(|t| Series {
            name: format!("flow {}", t.id),
            points: (1..=bins)
                .map(|k| {
                    let at = Duration::from_nanos(k * bin.as_nanos());
                    let rate = window_rate(&t.rows, at, bin, t.mss).unwrap_or(0.0);
                    ((at.as_secs_f64() - bin.as_secs_f64() / 2.0), rate / 1e6)
                })
                .collect(),
        })
        .collect()
}

/// The charts of one run: `cwnd-FLOW` per flow and `goodput`; stems are
/// prefixed with `stem_prefix`, titles with `title_prefix`.
pub fn run_charts(traces: &[FlowTrace], sim_s: f64, stem_prefix: &str, title_prefix: &str) -> Vec<(String, Chart)> {
    let mut v: Vec<(String, Chart)> = traces
        .iter()
        .map(|t| {
            (
                format!("{stem_prefix}cwnd-{}", file_stem(&t.id)),
                Chart::FlowState {
                    title: format!("{title_prefix}flow {}: cwnd, ssthresh, in flight", t.id),
                    rows: thin(&t.rows, THIN_BUCKETS),
                },
            )
        })
        .collect();
    if !traces.is_empty() {
        let end = Duration::from_nanos((sim_s * 1e9).round() as u64);
        v.push((
            format!("{stem_prefix}goodput"),
            Chart::Lines {
                title: format!("{title_prefix}goodput over time"),
                x_desc: "time (s)".into(),
                y_desc: "goodput (Mbit/s)".into(),
                series: goodput_series(traces, end),
            },
        ));
    }
    v
}

/// The step series of one field of a queue trace (rows only where it
/// changed), held to `end_s`.
fn queue_steps(rows: &[QueueSample], end_s: f64, field: impl Fn(&QueueSample) -> f64) -> Vec<(f64, f64)> {
    let mut points = Vec::with_capacity(2 * rows.len() + 1);
    for q in rows {
        let t = q.time.as_secs_f64();
        if let Some(&(_, prev)) = points.last() {
            points.push((t, prev));
        }
        points.push((t, field(q)));
    }
    if let Some(&(t, last)) = points.last() {
        if end_s > t {
            points.push((end_s, last));
        }
    }
    points
}

/// `queue-LINK-FROM-TO`: packets waiting and drops so far, for every link
/// direction whose queue ever held a packet (from the run's queue traces).
pub fn queue_charts(links: &[LinkResult], sim_s: f64) -> Vec<(String, Chart)> {
    links
        .iter()
        .filter(|l| l.queue_trace.iter().any(|q| q.packets > 0 || q.drops > 0))
        .map(|l| {
            let stem = file_stem(&crate::runner::queue_stem(&l.id));
            let chart = Chart::Lines {
                title: format!("link {}: queue", l.id),
                x_desc: "time (s)".into(),
                y_desc: "packets".into(),
                series: vec![
                    Series {
                        name: "waiting".into(),
                        points: queue_steps(&l.queue_trace, sim_s, |q| f64::from(q.packets)),
                    },
                    Series {
                        name: "dropped so far".into(),
                        points: queue_steps(&l.queue_trace, sim_s, |q| q.drops as f64),
                    },
                ],
            };
            (stem, chart)
        })
        .collect()
}

/// The charts of a comparison: a distribution per metric, the first run
/// of every arm, and RPC latency CDFs when there are RPC flows.
pub fn compare_charts(cmp: &Comparison) -> Vec<(String, Chart)> {
    let mut v = Vec::new();
    for (i, m) in cmp.metrics.iter().enumerate() {
        let u: Unit = m.unit();
        let arms = cmp
            .arms
            .iter()
            .filter_map(|a| {
                let s = a.summary[i].as_ref()?;
                Some(ArmValues {
                    name: a.name.clone(),
                    values: a.values(i).iter().map(|x| x / u.scale).collect(),
                    median: s.median / u.scale,
                    ci: [s.ci95[0] / u.scale, s.ci95[1] / u.scale],
                })
            })
            .collect();
        v.push((
            format!("dist-{}", file_stem(&m.name)),
            Chart::Strip {
                title: format!("{} over {} runs per arm", m.describe(), cmp.runs),
                y_desc: format!("{} ({})", m.name, u.display),
                arms,
                decimals: (u.decimals == 0).then_some(0),
            },
        ));
    }
    for a in &cmp.arms {
        if let Some(first) = a.runs.first() {
            let stem = format!("{}-seed{}-", file_stem(&a.name), first.seed);
            let title = format!("{} (seed {}): ", a.name, first.seed);
            v.extend(run_charts(&first.traces, first.sim_s, &stem, &title));
        }
    }
    let mut rpc_flows: Vec<String> =
        cmp.arms.iter().flat_map(|a| a.runs.iter().flat_map(|r| r.rpc.iter().map(|(f, _)| f.clone()))).collect();
    rpc_flows.sort();
    rpc_flows.dedup();
    for f in rpc_flows {
        let series = cmp
            .arms
            .iter()
            .map(|a| {
                let mut pooled = RpcLatencies::default();
                for (_, l) in a.runs.iter().flat_map(|r| r.rpc.iter().filter(|(id, _)| *id == f)) {
                    pooled.pool(l);
                }
                Series { name: a.name.clone(), points: pooled.cdf_us() }
            })
            .collect();
        v.push((
            format!("rpc-cdf-{}", file_stem(&f)),
            Chart::Cdf {
                title: format!("flow {f}: RPC latency, all runs"),
                x_desc: "latency (µs, log scale)".into(),
                series,
            },
        ));
    }
    v
}

/// Writes every chart of `charts` to `dir` (PNG and SVG); returns the stems.
pub fn write_all(out: &mut Outputs, dir: &Path, charts: &[(String, Chart)]) -> Result<usize> {
    for (stem, c) in charts {
        c.write(out, dir, stem)?;
    }
    Ok(charts.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(ms: u64, cwnd: u32, ca: CaState) -> TraceRow {
        TraceRow {
            time: Duration::from_millis(ms),
            cwnd,
            ssthresh: if ms < 50 { TCP_INFINITE_SSTHRESH } else { 20 },
            srtt_us: 1000,
            inflight: cwnd.saturating_sub(1),
            ca_state: ca,
            delivered: ms * 2,
            pacing_rate: 0,
            reordering: 3,
            dctcp_alpha: None,
        }
    }

    #[test]
    fn test_state_spans() {
        let rows = [
            row(0, 10, CaState::Open),
            row(10, 12, CaState::Recovery),
            row(20, 6, CaState::Recovery),
            row(30, 6, CaState::Open),
        ];
        assert_eq!(state_spans(&rows), [(CaState::Recovery, 0.01, 0.03)]);
    }

    #[test]
    fn test_thin_keeps_extremes_and_state_changes() {
        let rows: Vec<TraceRow> = (0..20_000u64)
            .map(|i| row(i, (i % 97) as u32 + 1, if i == 12_345 { CaState::Loss } else { CaState::Open }))
            .collect();
        let t = thin(&rows, 100);
        assert!(t.len() < rows.len() / 10, "{}", t.len());
        assert!(t.iter().any(|r| r.ca_state == CaState::Loss));
        assert!(t.iter().any(|r| r.cwnd == 97) && t.iter().any(|r| r.cwnd == 1));
        assert_eq!(t.first().unwrap().time, rows[0].time);
        assert_eq!(t.last().unwrap().time, rows[rows.len() - 1].time);
    }

    #[test]
    fn test_charts_render_to_svg_with_text() {
        let rows: Vec<TraceRow> = (0..100u64)
            .map(|i| row(i * 10, (i % 30) as u32 + 2, if i % 30 == 0 { CaState::Recovery } else { CaState::Open }))
            .collect();
        let svg = Chart::FlowState { title: "flow f1".into(), rows }.to_svg().unwrap();
        assert!(svg.starts_with("<svg") && svg.contains("segments") && svg.contains("time (s)"), "{}", &svg[..200]);
        assert!(svg.contains("ca_state Recovery"));
        let strip = Chart::Strip {
            decimals: None,
            title: "goodput".into(),
            y_desc: "goodput (Mbit/s)".into(),
            arms: vec![
                ArmValues { name: "reno".into(), values: vec![1.0, 2.0, 3.0], median: 2.0, ci: [1.0, 3.0] },
                ArmValues { name: "cubic".into(), values: vec![5.0; 3], median: 5.0, ci: [5.0, 5.0] },
            ],
        };
        let svg = strip.to_svg().unwrap();
        assert!(svg.contains("\nreno\n") && svg.contains("\ncubic\n"), "arm names label the x axis");
        let cdf = Chart::Cdf {
            title: "rpc".into(),
            x_desc: "latency (µs)".into(),
            series: vec![Series {
                name: "a".into(),
                points: RpcLatencies::from_samples(&[100_000, 200_000, 5_000_000]).cdf_us(),
            }],
        };
        assert!(cdf.to_svg().unwrap().contains("fraction of RPCs"));
        // Degenerate data draws too.
        let empty = Chart::Lines { title: "x".into(), x_desc: "t".into(), y_desc: "y".into(), series: vec![] };
        assert!(empty.to_svg().is_ok());
        assert!(Chart::FlowState { title: "x".into(), rows: vec![] }.to_svg().is_ok());
    }

    #[test]
    fn test_log_ticks() {
        assert_eq!(log_ticks(150.0, 2600.0), [200.0, 500.0, 1000.0, 2000.0]);
        assert_eq!(log_ticks(1.0, 1e4).len(), 13);
        assert_eq!(log_ticks(310.0, 480.0), [400.0]);
        assert!(log_ticks(0.0, 10.0).is_empty());
        assert_eq!(format_tick(0.05), "0.05");
        assert_eq!(format_tick(2000.0), "2000");
    }

    #[test]
    fn test_queue_charts_draw_steps_for_queues_that_held_packets() {
        let q = |ms: u64, packets: u32, drops: u64| QueueSample {
            time: Duration::from_millis(ms),
            packets,
            bytes: u64::from(packets) * 1500,
            drops,
        };
        let link = |id: &str, queue_trace: Vec<QueueSample>| LinkResult {
            id: id.into(),
            utilization: 0.0,
            tx_packets: 0,
            tx_bytes: 0,
            drops: 0,
            loss_drops: 0,
            police_drops: 0,
            ce_marks: 0,
            peak_queue_packets: 0,
            throttled: 0,
            queue_trace,
        };
        let links = [link("b:sw->rx", vec![q(10, 3, 0), q(30, 5, 2)]), link("b:rx->sw", vec![q(10, 0, 0)])];
        let charts = queue_charts(&links, 0.05);
        assert_eq!(charts.len(), 1, "the idle direction has no chart");
        assert_eq!(charts[0].0, "queue-b-sw-rx");
        let Chart::Lines { series, .. } = &charts[0].1 else { panic!("a line chart") };
        assert_eq!(series[0].points, [(0.01, 3.0), (0.03, 3.0), (0.03, 5.0), (0.05, 5.0)]);
        assert_eq!(series[1].points, [(0.01, 0.0), (0.03, 0.0), (0.03, 2.0), (0.05, 2.0)]);
        assert!(charts[0].1.to_svg().unwrap().contains("waiting"));
    }

    #[test]
    fn test_file_stem() {
        assert_eq!(file_stem("rpc.p99.9"), "rpc.p99.9");
        assert_eq!(file_stem("my arm/2"), "my_arm_2");
        assert_eq!(file_stem(".."), "_..");
        assert_eq!(file_stem(""), "_");
    }
}
