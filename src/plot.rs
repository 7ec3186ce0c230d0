//! Figures as SVG text: a run's trace (`optc run --plot`) and a regularization path.
//!
//! Everything is drawn through one small description — a [`Figure`] of [`Panel`]s side by side,
//! each with its [`Line`]s — so the trace and the path figures share fonts, colours, tick rules
//! and the log axes. Log axes are drawn as linear axes in log₁₀ space with ticks chosen here
//! (decades, or 1-2-5 steps within a decade), because plotters' own log ticks label every
//! mantissa (2e-5, 3e-5, ...) and cannot run right to left, which a path against a decreasing λ
//! needs. The functions return the SVG as text: the caller writes it through
//! [`crate::output::OutputFile`], so a plot is replaced atomically like every other output.

use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Why a figure could not be drawn (plotters reports backend and layout failures).
#[derive(Debug, thiserror::Error)]
#[error("cannot draw the plot: {0}")]
pub struct PlotError(String);

fn fail<E: std::fmt::Display>(e: E) -> PlotError {
    PlotError(e.to_string())
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scale {
    Linear,
    /// Base 10; values ≤ 0 are left out (they have no place on it).
    Log,
}

#[derive(Clone, Debug)]
pub struct Axis {
    /// With its unit, e.g. `time (s)`.
    pub label: String,
    pub scale: Scale,
    /// Values decrease left to right (a path solved from the largest λ down).
    pub reversed: bool,
    /// A linear axis that starts at 0 (epochs, seconds): a curve's shape is then not hidden by
    /// an axis that begins at its first point.
    pub from_zero: bool,
}

impl Axis {
    pub fn linear(label: &str) -> Axis {
        Axis { label: label.into(), scale: Scale::Linear, reversed: false, from_zero: false }
    }

    pub fn log(label: &str) -> Axis {
        Axis { label: label.into(), scale: Scale::Log, ..Axis::linear(label) }
    }

    pub fn from_zero(self) -> Axis {
        Axis { from_zero: true, ..self }
    }

    pub fn reversed(self) -> Axis {
        Axis { reversed: true, ..self }
    }

    /// Where a value goes on the drawing's (always increasing) coordinate; None if it cannot be
    /// shown.
    fn forward(&self, v: f64) -> Option<f64> {
        let t = match self.scale {
            Scale::Log if v > 0.0 && v.is_finite() => v.log10(),
            Scale::Log => return None,
            Scale::Linear if v.is_finite() => v,
            Scale::Linear => return None,
        };
        Some(if self.reversed { -t } else { t })
    }

    /// The value at a coordinate (inverse of [`Axis::forward`]).
    fn back(&self, t: f64) -> f64 {
        let t = if self.reversed { -t } else { t };
        match self.scale {
            Scale::Log => 10f64.powf(t),
            Scale::Linear => t,
        }
    }
}

#[derive(Clone, Debug)]
pub struct Line {
    /// Its legend entry; an empty label leaves it out of the legend.
    pub label: String,
    pub points: Vec<(f64, f64)>,
    /// An index into the palette: the same quantity keeps its colour across panels.
    pub colour: usize,
    pub dashed: bool,
    /// Dots at the points (few points, e.g. one per λ of a path).
    pub markers: bool,
}

impl Line {
    pub fn new(label: &str, colour: usize, points: Vec<(f64, f64)>) -> Line {
        Line { label: label.into(), points, colour, dashed: false, markers: false }
    }

    pub fn dashed(self) -> Line {
        Line { dashed: true, ..self }
    }

    pub fn markers(self) -> Line {
        Line { markers: true, ..self }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Corner {
    UpperLeft,
    UpperRight,
    LowerLeft,
    LowerRight,
}

#[derive(Clone, Debug)]
pub struct Panel {
    pub title: String,
    pub x: Axis,
    pub y: Axis,
    pub lines: Vec<Line>,
    pub legend: Corner,
}

#[derive(Clone, Debug)]
pub struct Figure {
    pub title: String,
    pub panels: Vec<Panel>,
}

/// Okabe and Ito's palette: told apart with the common colour-vision deficiencies and in grey.
const PALETTE: [RGBColor; 8] = [
    RGBColor(0, 114, 178),
    RGBColor(213, 94, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(230, 159, 0),
    RGBColor(86, 180, 233),
    RGBColor(0, 0, 0),
    RGBColor(240, 228, 66),
];

const PANEL_WIDTH: u32 = 520;
const HEIGHT: u32 = 440;
const FONT: &str = "sans-serif";

/// Draws the panels side by side under the figure's title.
pub fn render(figure: &Figure) -> Result<String, PlotError> {
    let mut svg = String::new();
    {
        let width = PANEL_WIDTH * figure.panels.len().max(1) as u32;
        let root = SVGBackend::with_string(&mut svg, (width, HEIGHT)).into_drawing_area();
        root.fill(&WHITE).map_err(fail)?;
        let root = root.titled(&figure.title, (FONT, 22).into_font().style(FontStyle::Bold)).map_err(fail)?;
        let areas = root.split_evenly((1, figure.panels.len().max(1)));
        for (panel, area) in figure.panels.iter().zip(&areas) {
            draw_panel(panel, area)?;
        }
        root.present().map_err(fail)?;
    }
    Ok(svg)
}

fn draw_panel(panel: &Panel, area: &DrawingArea<SVGBackend, plotters::coord::Shift>) -> Result<(), PlotError> {
    // Each line, in drawing coordinates, broken where a point cannot be shown (a zero on a
    // log axis) rather than joined across the hole.
    let segments: Vec<Vec<Vec<(f64, f64)>>> = panel
        .lines
        .iter()
        .map(|l| {
            let mut runs = vec![vec![]];
            for &(x, y) in &l.points {
                match (panel.x.forward(x), panel.y.forward(y)) {
                    (Some(x), Some(y)) => runs.last_mut().expect("one run").push((x, y)),
                    _ if runs.last().is_some_and(|r| !r.is_empty()) => runs.push(vec![]),
                    _ => {}
                }
            }
            runs.retain(|r| !r.is_empty());
            runs
        })
        .collect();
    let all = || segments.iter().flatten().flatten();
    let xs = span(all().map(|p| p.0), &panel.x);
    let ys = span(all().map(|p| p.1), &panel.y);
    let (x_ticks, x_light) = ticks(&panel.x, xs);
    let (y_ticks, y_light) = ticks(&panel.y, ys);
    let y_label_width = y_ticks.iter().map(|t| tick_text(&panel.y, *t).chars().count()).max().unwrap_or(1);

    let mut chart = ChartBuilder::on(area)
        .caption(&panel.title, (FONT, 18))
        .margin_top(8)
        .margin_left(8)
        .margin_right(20)
        .margin_bottom(8)
        .x_label_area_size(52)
        .y_label_area_size(34 + 9 * y_label_width as u32)
        .build_cartesian_2d(
            Ticked { lo: xs.0, hi: xs.1, bold: x_ticks, light: x_light },
            Ticked { lo: ys.0, hi: ys.1, bold: y_ticks, light: y_light },
        )
        .map_err(fail)?;
    let x_axis = panel.x.clone();
    let y_axis = panel.y.clone();
    let x_fmt = move |t: &f64| tick_text(&x_axis, *t);
    let y_fmt = move |t: &f64| tick_text(&y_axis, *t);
    chart
        .configure_mesh()
        .x_desc(panel.x.label.as_str())
        .y_desc(panel.y.label.as_str())
        .x_label_formatter(&x_fmt)
        .y_label_formatter(&y_fmt)
        .label_style((FONT, 14))
        .axis_desc_style((FONT, 16))
        .bold_line_style(RGBColor(200, 200, 200).stroke_width(1))
        .light_line_style(RGBColor(236, 236, 236).stroke_width(1))
        .axis_style(BLACK.stroke_width(1))
        .draw()
        .map_err(fail)?;

    let mut labelled = 0;
    for (line, runs) in panel.lines.iter().zip(&segments) {
        let colour = PALETTE[line.colour % PALETTE.len()];
        let style = colour.stroke_width(2);
        for (k, run) in runs.iter().enumerate() {
            if line.markers {
                chart.draw_series(run.iter().map(|p| Circle::new(*p, 3, colour.filled()))).map_err(fail)?;
            }
            let drawn = if line.dashed {
                chart.draw_series(DashedLineSeries::new(run.iter().copied(), 8, 5, style)).map_err(fail)?
            } else {
                chart.draw_series(LineSeries::new(run.iter().copied(), style)).map_err(fail)?
            };
            if k == 0 && !line.label.is_empty() {
                labelled += 1;
                let dashed = line.dashed;
                // A dashed line's sample shows its gap, so the legend tells the two kinds apart.
                let (first, second) = if dashed { ((0, 9), (14, 24)) } else { ((0, 24), (0, 24)) };
                drawn.label(line.label.as_str()).legend(move |at| {
                    EmptyElement::at(at)
                        + PathElement::new(vec![(first.0, 0), (first.1, 0)], style)
                        + PathElement::new(vec![(second.0, 0), (second.1, 0)], style)
                });
            }
        }
    }
    if segments.iter().all(|runs| runs.is_empty()) {
        let (w, h) = chart.plotting_area().dim_in_pixel();
        let note = Text::new(
            if panel.y.scale == Scale::Log { "nothing above zero to show on a log scale" } else { "no data" },
            (w as i32 / 2, h as i32 / 2),
            (FONT, 15).into_font().color(&RGBColor(110, 110, 110)).pos(Pos::new(HPos::Center, VPos::Center)),
        );
        chart.plotting_area().strip_coord_spec().draw(&note).map_err(fail)?;
    }
    if labelled > 0 {
        chart
            .configure_series_labels()
            .position(match panel.legend {
                Corner::UpperLeft => SeriesLabelPosition::UpperLeft,
                Corner::UpperRight => SeriesLabelPosition::UpperRight,
                Corner::LowerLeft => SeriesLabelPosition::LowerLeft,
                Corner::LowerRight => SeriesLabelPosition::LowerRight,
            })
            .margin(10)
            .legend_area_size(30)
            .label_font((FONT, 14))
            .background_style(WHITE.mix(0.9))
            .border_style(RGBColor(160, 160, 160))
            .draw()
            .map_err(fail)?;
    }
    Ok(())
}

/// A linear coordinate with the ticks chosen here. plotters' own `with_key_points` does the
/// same but loses the label formatter of an `f64` range; this keeps the default one, which the
/// mesh's own formatter then replaces.
struct Ticked {
    lo: f64,
    hi: f64,
    bold: Vec<f64>,
    light: Vec<f64>,
}

impl Ranged for Ticked {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, v: &f64, limit: (i32, i32)) -> i32 {
        let f = if self.hi > self.lo { (v - self.lo) / (self.hi - self.lo) } else { 0.5 };
        limit.0 + (f * f64::from(limit.1 - limit.0)).round() as i32
    }

    fn key_points<H: KeyPointHint>(&self, hint: H) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            self.light.clone()
        } else {
            self.bold.clone()
        }
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.lo..self.hi
    }
}

/// The shown range of an axis, in drawing coordinates, with a little room around the data.
fn span(values: impl Iterator<Item = f64>, axis: &Axis) -> (f64, f64) {
    let (mut lo, mut hi) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| (a.min(v), b.max(v)));
    if !(lo.is_finite() && hi.is_finite()) {
        (lo, hi) = match axis.scale {
            Scale::Log => (-1.0, 0.0),
            Scale::Linear => (0.0, 1.0),
        };
    }
    if axis.scale == Scale::Linear && axis.from_zero {
        if axis.reversed {
            hi = hi.max(0.0);
        } else {
            lo = lo.min(0.0);
        }
        // Epochs and seconds end where the data ends: room after the last point is empty paper.
        return if hi > lo { (lo, hi) } else { (lo, lo + 1.0) };
    }
    let width = hi - lo;
    let pad = match axis.scale {
        // A tenth of a decade, at least.
        Scale::Log => (0.05 * width).max(0.1),
        Scale::Linear if width > 0.0 => 0.05 * width,
        Scale::Linear => 0.05 * lo.abs().max(1.0),
    };
    (lo - pad, hi + pad)
}

/// Labelled ticks and light grid lines of an axis over `range` (drawing coordinates).
fn ticks(axis: &Axis, range: (f64, f64)) -> (Vec<f64>, Vec<f64>) {
    let (a, b) = (axis.back(range.0), axis.back(range.1));
    let (lo, hi) = (a.min(b), a.max(b));
    let inside = |v: &f64| *v >= lo * (1.0 - 1e-12) && *v <= hi * (1.0 + 1e-12);
    let values = match axis.scale {
        Scale::Linear => {
            let step = nice_step((hi - lo) / 5.0);
            let first = (lo / step).ceil() as i64;
            let last = (hi / step).floor() as i64;
            let bold: Vec<f64> = (first..=last).map(|k| k as f64 * step).collect();
            let light: Vec<f64> = (2 * first - 1..=2 * last + 1)
                .filter(|k| k % 2 != 0)
                .map(|k| k as f64 * step / 2.0)
                .filter(|v| *v >= lo && *v <= hi)
                .collect();
            (bold, light)
        }
        Scale::Log => {
            let (d0, d1) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
            let decades: Vec<f64> = (d0..=d1).map(|d| 10f64.powi(d)).filter(inside).collect();
            let every = (decades.len() / 7 + 1).max(1);
            let mantissas: &[f64] = if decades.len() >= 2 { &[1.0] } else { &[1.0, 2.0, 5.0] };
            let mut bold: Vec<f64> = (d0..=d1)
                .filter(|d| decades.len() < 2 || ((d - d0) as usize).is_multiple_of(every))
                .flat_map(|d| mantissas.iter().map(move |m| m * 10f64.powi(d)))
                .filter(inside)
                .collect();
            if bold.len() < 2 {
                // Less than a factor of 2.5 shown: linear steps read better.
                let step = nice_step((hi - lo) / 4.0);
                bold = ((lo / step).ceil() as i64..=(hi / step).floor() as i64).map(|k| k as f64 * step).collect();
            }
            let light = if decades.len() <= 3 {
                (d0..=d1).flat_map(|d| (1..10).map(move |m| m as f64 * 10f64.powi(d))).filter(inside).collect()
            } else {
                decades.clone()
            };
            (bold, light)
        }
    };
    let to_axis = |v: Vec<f64>| -> Vec<f64> { v.into_iter().filter_map(|v| axis.forward(v)).collect() };
    (to_axis(values.0), to_axis(values.1))
}

/// 1, 2, 2.5 or 5 times a power of ten, at least `raw`.
fn nice_step(raw: f64) -> f64 {
    if !(raw > 0.0 && raw.is_finite()) {
        return 1.0;
    }
    let p = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 2.5, 5.0, 10.0].iter().map(|m| m * p).find(|s| *s >= raw * (1.0 - 1e-9)).unwrap_or(10.0 * p)
}

/// A tick's label: plain numbers where they are short, powers of ten where they are not.
fn tick_text(axis: &Axis, t: f64) -> String {
    let v = axis.back(t);
    if v == 0.0 {
        return "0".into();
    }
    let a = v.abs();
    // Ticks come back from log₁₀ a hair off: 10^log₁₀(0.001) = 0.0009999999999999998.
    if (1e-3 * (1.0 - 1e-9)..1e5 * (1.0 - 1e-9)).contains(&a) {
        // Shortest form up to 4 significant digits, without float noise (0.30000000000000004).
        let s = format!("{:.3e}", v).parse::<f64>().unwrap_or(v);
        return format!("{s}");
    }
    let e = (a.log10() + 1e-9).floor() as i32;
    let m = v / 10f64.powi(e);
    let power = format!("10{}", superscript(e));
    if (m.abs() - 1.0).abs() < 1e-6 {
        if m < 0.0 {
            format!("−{power}")
        } else {
            power
        }
    } else {
        format!("{}×{power}", format!("{m:.2}").trim_end_matches('0').trim_end_matches('.'))
    }
}

fn superscript(e: i32) -> String {
    let digits = ['⁰', '¹', '²', '³', '⁴', '⁵', '⁶', '⁷', '⁸', '⁹'];
    let mut s: String = e.unsigned_abs().to_string().chars().map(|c| digits[c as usize - '0' as usize]).collect();
    if e < 0 {
        s.insert(0, '⁻');
    }
    s
}

/// One epoch of a run, as the trace figure needs it.
#[derive(Clone, Debug)]
pub struct TraceRow {
    pub epoch: usize,
    pub seconds: f64,
    pub objective: f64,
    /// The certified bound on F − F*, where the model has one.
    pub gap: Option<f64>,
    /// Held-out error (a fraction) or, for regression, MSE.
    pub test: Option<f64>,
}

/// The trace of a run: relative suboptimality against epochs and against seconds, and the
/// held-out error against epochs when there is one.
///
/// F* is unknown, so suboptimality is drawn two ways: (F − F_min)/|F_min|, F_min the least F the
/// run saw (exact at the end of a converged run, and optimistic before: the last point is 0 and
/// leaves the log axis), and, where the model has a certificate, the relative duality gap
/// gap/|F|, a certified upper bound on (F − F*)/|F|.
pub fn plot_trace(title: &str, rows: &[TraceRow], regression: bool) -> Result<String, PlotError> {
    let f_min = rows.iter().map(|r| r.objective).fold(f64::INFINITY, f64::min);
    let scale = f_min.abs().max(f64::MIN_POSITIVE);
    let sub = |x: &dyn Fn(&TraceRow) -> f64| -> Vec<Line> {
        let mut lines = vec![Line::new(
            "(F − F_min) / |F_min|",
            0,
            rows.iter().map(|r| (x(r), (r.objective - f_min) / scale)).collect(),
        )];
        if rows.iter().any(|r| r.gap.is_some()) {
            let gap = rows.iter().filter_map(|r| Some((x(r), r.gap? / r.objective.abs().max(f64::MIN_POSITIVE))));
            lines.push(Line::new("duality gap / |F| (certified)", 1, gap.collect()).dashed());
        }
        lines
    };
    let y = Axis::log("relative suboptimality");
    let mut panels = vec![
        Panel {
            title: "(a) against epochs".into(),
            x: Axis::linear("epoch").from_zero(),
            y: y.clone(),
            lines: sub(&|r| r.epoch as f64),
            legend: Corner::UpperRight,
        },
        Panel {
            title: "(b) against time".into(),
            x: Axis::linear("time (s)").from_zero(),
            y,
            lines: sub(&|r| r.seconds),
            legend: Corner::UpperRight,
        },
    ];
    if rows.iter().any(|r| r.test.is_some()) {
        let (label, factor) = if regression { ("test MSE", 1.0) } else { ("test error (%)", 100.0) };
        panels.push(Panel {
            title: "(c) held-out data".into(),
            x: Axis::linear("epoch").from_zero(),
            y: Axis::linear(label),
            lines: vec![Line::new(
                "",
                2,
                rows.iter().filter_map(|r| Some((r.epoch as f64, factor * r.test?))).collect(),
            )],
            legend: Corner::UpperRight,
        });
    }
    render(&Figure { title: title.into(), panels })
}

/// One point of a regularization path.
#[derive(Clone, Debug, Default)]
pub struct PathPoint {
    /// The parameter's value (λ).
    pub lambda: f64,
    pub nnz: usize,
    /// Held-out error (a fraction) or, for regression, MSE.
    pub test: Option<f64>,
    /// The non-zero weights as (0-based feature, value); empty when not kept. The ten that grow
    /// largest along the path are drawn.
    pub weights: Vec<(usize, f64)>,
}

/// How many coefficient paths a path figure draws: more become a tangle no legend can name.
const COEFFICIENT_PATHS: usize = 10;

/// A regularization path: non-zeros, the held-out error (when measured) and the paths of the
/// largest weights (when kept) against λ on a log axis. λ decreases left to right, as glmnet
/// draws it and as the path is solved: the model grows denser to the right.
pub fn plot_path(title: &str, param: &str, points: &[PathPoint], regression: bool) -> Result<String, PlotError> {
    let x = Axis::log(&format!("{param} (log scale, decreasing)")).reversed();
    let mut panels = vec![Panel {
        title: "(a) sparsity".into(),
        x: x.clone(),
        y: Axis::linear("non-zero weights").from_zero(),
        lines: vec![Line::new("", 0, points.iter().map(|p| (p.lambda, p.nnz as f64)).collect()).markers()],
        legend: Corner::UpperLeft,
    }];
    if points.iter().any(|p| p.test.is_some()) {
        let (label, factor) = if regression { ("test MSE", 1.0) } else { ("test error (%)", 100.0) };
        panels.push(Panel {
            title: "(b) held-out data".into(),
            x: x.clone(),
            y: Axis::linear(label),
            lines: vec![
                Line::new("", 2, points.iter().filter_map(|p| Some((p.lambda, factor * p.test?))).collect()).markers()
            ],
            legend: Corner::UpperRight,
        });
    }
    // The features whose weight gets largest anywhere on the path.
    // A map: a dense path has every feature non-zero at its small end.
    let mut biggest = std::collections::HashMap::<usize, f64>::new();
    for p in points {
        for &(j, v) in &p.weights {
            let e = biggest.entry(j).or_insert(0.0);
            *e = e.max(v.abs());
        }
    }
    let mut largest: Vec<(usize, f64)> = biggest.into_iter().collect();
    largest.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    largest.truncate(COEFFICIENT_PATHS);
    if !largest.is_empty() {
        let lines = largest
            .iter()
            .enumerate()
            .map(|(k, &(j, _))| {
                let at = |p: &PathPoint| p.weights.iter().find(|(i, _)| *i == j).map_or(0.0, |e| e.1);
                let line = Line::new(&format!("w{}", j + 1), k, points.iter().map(|p| (p.lambda, at(p))).collect());
                // Eight colours for ten lines: the last two are dashed.
                if k >= PALETTE.len() {
                    line.dashed()
                } else {
                    line
                }
            })
            .collect();
        panels.push(Panel {
            title: format!("({}) largest weights", ["a", "b", "c"][panels.len()]),
            x,
            y: Axis::linear("weight"),
            lines,
            legend: Corner::UpperLeft,
        });
    }
    render(&Figure { title: title.into(), panels })
}

/// One value of a cross-validation, as [`plot_cv`] draws it.
#[derive(Clone, Debug)]
pub struct CvPoint {
    pub lambda: f64,
    /// The mean held-out loss and its standard error (NaN where no fold converged).
    pub loss: f64,
    pub se: f64,
    /// The fit on all of the data there.
    pub nnz: usize,
}

/// A cross-validation in glmnet's form: (a) the mean held-out loss against the parameter (log
/// scale, decreasing), one standard error either side as a bar, λ_min and λ_1se as dashed
/// lines; (b) the non-zero weights of the fit on all of the data, with the same two lines.
pub fn plot_cv(title: &str, param: &str, points: &[CvPoint], min: f64, one_se: f64) -> Result<String, PlotError> {
    let x = Axis::log(&format!("{param} (log scale, decreasing)")).reversed();
    let shown: Vec<&CvPoint> = points.iter().filter(|p| p.loss.is_finite()).collect();
    let bars = shown.iter().map(|p| Line::new("", 0, vec![(p.lambda, p.loss - p.se), (p.lambda, p.loss + p.se)]));
    let (lo, hi) = shown
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), p| (lo.min(p.loss - p.se), hi.max(p.loss + p.se)));
    let nnz_top = points.iter().map(|p| p.nnz).max().unwrap_or(0) as f64;
    let marks = |(lo, hi): (f64, f64)| {
        [(min, "λ_min", 1), (one_se, "λ_1se", 2)]
            .into_iter()
            .map(move |(at, name, colour)| Line::new(name, colour, vec![(at, lo), (at, hi)]).dashed())
    };
    let mut loss =
        vec![Line::new("mean held-out loss ± 1 s.e.", 0, shown.iter().map(|p| (p.lambda, p.loss)).collect()).markers()];
    loss.extend(bars);
    if lo.is_finite() {
        loss.extend(marks((lo, hi)));
    }
    let mut nnz = vec![Line::new("", 6, points.iter().map(|p| (p.lambda, p.nnz as f64)).collect()).markers()];
    nnz.extend(marks((0.0, nnz_top.max(1.0))));
    render(&Figure {
        title: title.into(),
        panels: vec![
            Panel {
                title: "(a) cross-validation".into(),
                x: x.clone(),
                y: Axis::linear("held-out loss"),
                lines: loss,
                legend: Corner::UpperRight,
            },
            Panel {
                title: "(b) sparsity of the fit on all rows".into(),
                x,
                y: Axis::linear("non-zero weights").from_zero(),
                lines: nnz,
                legend: Corner::UpperLeft,
            },
        ],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The elements a reader of the file relies on: one SVG document, drawn lines, the labels.
    fn assert_svg(svg: &str, expect: &[&str]) {
        let t = svg.trim();
        assert!(t.starts_with("<svg"), "{}", &t[..t.len().min(200)]);
        assert!(t.ends_with("</svg>"));
        assert!(t.contains("<polyline") || t.contains("<path"), "no lines drawn");
        for e in expect {
            assert!(svg.contains(e), "missing {e:?}");
        }
        // Balanced: every element opened is closed (a cheap stand-in for an XML parse).
        let opened = t.matches("<text").count();
        assert_eq!(opened, t.matches("</text>").count());
    }

    #[test]
    fn a_path_draws_sparsity_test_error_and_the_largest_weights() {
        let points: Vec<PathPoint> = (0..20)
            .map(|k| {
                let lambda = 0.1 * 0.7f64.powi(k);
                let weights: Vec<(usize, f64)> = (0..(k as usize).min(15))
                    .map(|j| (j * 3, (k as f64 - j as f64) * 0.1 * (-1f64).powi(j as i32)))
                    .collect();
                PathPoint { lambda, nnz: weights.len(), test: Some(0.3 - 0.01 * k as f64), weights }
            })
            .collect();
        let svg = plot_path("l1_logistic.opt on a9a", "λ", &points, false).expect("drawn");
        assert_svg(
            &svg,
            &["(a) sparsity", "(b) held-out data", "(c) largest weights", "test error (%)", "\nw1\n", "λ (log"],
        );
        // Ten coefficient paths at most, named in the legend.
        assert!(svg.contains("\nw28\n") && !svg.contains("\nw34\n"), "w34 is among the smallest and is not drawn");
    }

    #[test]
    fn a_path_without_test_data_or_weights_has_one_panel() {
        let points: Vec<PathPoint> = [1.0, 0.1, 0.01]
            .iter()
            .enumerate()
            .map(|(k, &lambda)| PathPoint { lambda, nnz: k * 4, ..Default::default() })
            .collect();
        let svg = plot_path("path", "λ", &points, true).expect("drawn");
        assert_svg(&svg, &["(a) sparsity"]);
        assert!(!svg.contains("(b)"));
    }

    #[test]
    fn a_cross_validation_draws_its_loss_bars_marks_and_sparsity() {
        let points: Vec<CvPoint> = (0..12)
            .map(|k| {
                let lambda = 0.1 * 0.6f64.powi(k);
                CvPoint { lambda, loss: 0.3 + 0.002 * (k as f64 - 8.0).powi(2), se: 0.004, nnz: 3 * k as usize }
            })
            .collect();
        let svg = plot_cv("cv", "λ", &points, points[8].lambda, points[6].lambda).expect("drawn");
        assert_svg(&svg, &["(a) cross-validation", "(b) sparsity", "held-out loss", "λ_min", "λ_1se", "λ (log"]);
        // A value no fold converged at leaves a gap, not a failure.
        let mut holes = points.clone();
        holes[3].loss = f64::NAN;
        assert_svg(&plot_cv("cv", "λ", &holes, holes[8].lambda, holes[6].lambda).expect("drawn"), &["λ_min"]);
    }

    #[test]
    fn a_trace_with_a_certificate_and_test_data_has_three_panels() {
        let rows: Vec<TraceRow> = (1..=30)
            .map(|e| TraceRow {
                epoch: e,
                seconds: 0.01 * e as f64,
                objective: 0.3 + 0.5f64.powi(e as i32),
                gap: Some(0.6f64.powi(e as i32)),
                test: Some(0.16 + 0.02 / e as f64),
            })
            .collect();
        let svg = plot_trace("trace", &rows, false).expect("drawn");
        assert_svg(&svg, &["(a) against epochs", "(b) against time", "(c) held-out data", "duality gap", "time (s)"]);
    }

    #[test]
    fn a_single_epoch_still_draws_a_figure() {
        let rows = [TraceRow { epoch: 1, seconds: 0.1, objective: 0.5, gap: None, test: None }];
        let svg = plot_trace("trace", &rows, false).expect("drawn");
        assert!(svg.contains("nothing above zero"));
    }

    #[test]
    fn ticks_are_decades_or_round_numbers() {
        let y = Axis::log("y");
        let (bold, _) = ticks(&y, (-6.3, -0.2));
        let shown: Vec<String> = bold.iter().map(|t| tick_text(&y, *t)).collect();
        assert_eq!(shown, ["10⁻⁶", "10⁻⁵", "10⁻⁴", "0.001", "0.01", "0.1"]);
        let x = Axis::log("λ").reversed();
        let (bold, _) = ticks(&x, (-(0.5f64.log10()), -(2e-4f64.log10())));
        let shown: Vec<String> = bold.iter().map(|t| tick_text(&x, *t)).collect();
        assert_eq!(shown, ["0.001", "0.01", "0.1"]);
        let lin = Axis::linear("epoch").from_zero();
        let (bold, _) = ticks(&lin, span([1.0, 30.0].into_iter(), &lin));
        assert_eq!(bold, [0.0, 10.0, 20.0, 30.0]);
    }
}
