//! `--chart=FILE.svg`: line charts as SVG, readable in any browser.
//!
//! A sweep or a comparison gets two panels against the connection count
//! (queries per second, and the 95th percentile latency), one line per
//! result; a single run gets its queries per second and latency over time,
//! from its `--report-interval` intervals. With `--server-stats`, the
//! server's CPU time per query is a third panel of either, and a single
//! run's buffer pool hit ratio a fourth. A capacity search gets its steps'
//! latencies against the rate each achieved, with the bounds. plotters draws them with its SVG
//! backend alone: the text goes into the file as `<text>` elements that the
//! browser sets in its own fonts, so no font library is needed here.

use std::path::{Path, PathBuf};

use plotters::prelude::*;

use super::record::{IntervalResult, StepFigures};
use super::search_record::{SearchStepResult, SearchSummary, SloBound};
use crate::server_stats::ServerFigures;

/// Why a chart could not be made.
#[derive(Debug, thiserror::Error)]
pub enum ChartError {
    #[error("--chart: cannot draw the chart: {0}")]
    Draw(String),
    #[error("--chart: cannot write {}: {source}; check the directory exists and is writable", .path.display())]
    Write { path: PathBuf, source: std::io::Error },
}

/// One line of a panel: a result's points.
#[derive(Debug, Clone, PartialEq)]
pub struct Curve {
    pub label: String,
    pub points: Vec<(f64, f64)>,
}

/// How the x axis is laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum XScale {
    Linear,
    /// Connection counts, which sweeps double: equal steps per doubling.
    Log2,
}

/// One chart of a figure.
struct Panel<'a> {
    title: &'a str,
    y_label: &'a str,
    curves: Vec<Curve>,
    /// Where the lines are not: throughput rises to the top, latency
    /// starts at the bottom.
    legend: SeriesLabelPosition,
}

const WIDTH: u32 = 960;
const PANEL_HEIGHT: u32 = 380;
const FONT: &str = "sans-serif";

/// Distinct on white, and apart for the common colour blindnesses (the
/// Okabe-Ito palette).
const COLOURS: [RGBColor; 7] = [
    RGBColor(0, 114, 178),
    RGBColor(213, 94, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(230, 159, 0),
    RGBColor(86, 180, 233),
    RGBColor(0, 0, 0),
];

/// A sweep's or comparison's chart: QPS and p95 latency against the
/// connection count, one line per `(label, steps)`.
pub fn by_connections(title: &str, results: &[(String, Vec<StepFigures>)]) -> Result<String, ChartError> {
    let curve = |label: &String, points: Vec<(f64, f64)>| Curve { label: label.clone(), points };
    let qps = results
        .iter()
        .map(|(label, steps)| curve(label, steps.iter().map(|s| (f64::from(s.threads), s.qps)).collect()))
        .collect();
    let p95 = results
        .iter()
        .map(|(label, steps)| {
            curve(label, steps.iter().filter_map(|s| s.p95_ms.map(|p| (f64::from(s.threads), p))).collect())
        })
        .collect();
    let mut panels = vec![
        Panel { title: "Queries per second", y_label: "qps", curves: qps, legend: SeriesLabelPosition::LowerRight },
        Panel { title: "95th percentile latency", y_label: "ms", curves: p95, legend: SeriesLabelPosition::UpperLeft },
    ];
    let cpu: Vec<Curve> = results
        .iter()
        .map(|(label, steps)| {
            let cpu = |s: &StepFigures| s.server.and_then(|h| h.cpu_us_per_query).map(|us| (f64::from(s.threads), us));
            curve(label, steps.iter().filter_map(cpu).collect())
        })
        .collect();
    if cpu.iter().any(|c| !c.points.is_empty()) {
        panels.push(Panel { title: SERVER_CPU, y_label: "µs", curves: cpu, legend: SeriesLabelPosition::UpperLeft });
    }
    let all_x = results.iter().flat_map(|(_, steps)| steps.iter().map(|s| f64::from(s.threads)));
    let scale = if spread(all_x) >= 4.0 { XScale::Log2 } else { XScale::Linear };
    draw(title, "connections", scale, &panels)
}

/// A single run's chart: QPS and latency at `percentile` over time.
pub fn over_time(title: &str, intervals: &[IntervalResult], percentile: f64) -> Result<String, ChartError> {
    let qps = intervals.iter().map(|i| (i.time_s, i.rates.qps)).collect();
    let latency = intervals.iter().filter_map(|i| i.latency_ms.at(percentile).map(|ms| (i.time_s, ms))).collect();
    let latency_title = format!("Latency, {percentile}th percentile of each interval");
    let mut panels = vec![
        Panel {
            title: "Queries per second",
            y_label: "qps",
            curves: vec![Curve { label: "qps".to_owned(), points: qps }],
            legend: SeriesLabelPosition::LowerRight,
        },
        Panel {
            title: &latency_title,
            y_label: "ms",
            curves: vec![Curve { label: format!("p{percentile}"), points: latency }],
            legend: SeriesLabelPosition::UpperRight,
        },
    ];
    panels.extend(server_panels(intervals));
    draw(title, "seconds", XScale::Linear, &panels)
}

/// A capacity search's chart: each `--slo` percentile of every step
/// against the rate it achieved, sorted by rate, with each bound as a flat
/// line across.
pub fn search_chart(title: &str, steps: &[SearchStepResult], slo: &[SloBound]) -> Result<String, ChartError> {
    searches_drawn(title, &[(String::new(), steps)], slo)
}

/// Several searches (`wirebench compare`): the first's bounds, each
/// search's steps a line per bound's percentile, labelled by the search.
pub fn searches(title: &str, searches: &[(String, SearchSummary)]) -> Result<String, ChartError> {
    let slo = searches.first().map(|(_, s)| s.slo.clone()).unwrap_or_default();
    let steps: Vec<(String, &[SearchStepResult])> =
        searches.iter().map(|(label, s)| (format!("{label}: "), s.steps.as_slice())).collect();
    searches_drawn(title, &steps, &slo)
}

fn searches_drawn(
    title: &str,
    searches: &[(String, &[SearchStepResult])],
    slo: &[SloBound],
) -> Result<String, ChartError> {
    let (x_lo, x_hi) = padded(searches.iter().flat_map(|(_, steps)| steps.iter().map(|s| s.achieved_tps)));
    // A step past capacity queues for seconds; drawn to scale, it would
    // flatten the bounds into the axis, so latencies are drawn up to a
    // few times the largest bound, and higher ones at that ceiling.
    let ceiling = slo.iter().map(|b| b.max_ms).fold(0.0, f64::max) * SEARCH_CHART_CEILING;
    let mut curves = Vec::new();
    for (label, steps) in searches {
        for (i, bound) in slo.iter().enumerate() {
            let mut points: Vec<(f64, f64)> =
                steps.iter().filter_map(|s| s.latency_ms.get(i).map(|p| (s.achieved_tps, p.ms.min(ceiling)))).collect();
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            curves.push(Curve { label: format!("{label}p{}", bound.percentile), points });
        }
    }
    for bound in slo {
        let label = format!("p{} bound, {} ms", bound.percentile, bound.max_ms);
        curves.push(Curve { label, points: vec![(x_lo, bound.max_ms), (x_hi, bound.max_ms)] });
    }
    let title_of_panel =
        format!("Latency from intended start against the rate achieved, one point per step (drawn up to {ceiling} ms)");
    let panel = Panel { title: &title_of_panel, y_label: "ms", curves, legend: SeriesLabelPosition::UpperLeft };
    draw(title, "events per second achieved", XScale::Linear, &[panel])
}

/// How many times the largest bound a search's chart shows.
const SEARCH_CHART_CEILING: f64 = 4.0;

const SERVER_CPU: &str = "Server CPU time per query (--server-stats)";

/// `--server-stats`' panels over time: the server's CPU per query, and
/// the buffer pool hit ratio; each when some interval has it.
fn server_panels(intervals: &[IntervalResult]) -> Vec<Panel<'static>> {
    let points = |figure: fn(&ServerFigures) -> Option<f64>| -> Vec<(f64, f64)> {
        intervals.iter().filter_map(|i| Some((i.time_s, figure(&i.server.as_ref()?.figures)?))).collect()
    };
    let cpu = points(|f| f.cpu_us_per_query);
    let hit = points(|f| f.buffer_pool_hit_ratio.map(|r| r * 100.0));
    let mut panels = Vec::new();
    if !cpu.is_empty() {
        panels.push(Panel {
            title: SERVER_CPU,
            y_label: "µs",
            curves: vec![Curve { label: "server CPU/query".to_owned(), points: cpu }],
            legend: SeriesLabelPosition::UpperRight,
        });
    }
    if !hit.is_empty() {
        panels.push(Panel {
            title: "InnoDB buffer pool hit ratio (--server-stats)",
            y_label: "%",
            curves: vec![Curve { label: "hit ratio".to_owned(), points: hit }],
            legend: SeriesLabelPosition::LowerRight,
        });
    }
    panels
}

/// Writes `svg` to `path`.
pub fn write_chart(path: &Path, svg: &str) -> Result<(), ChartError> {
    std::fs::write(path, svg).map_err(|source| ChartError::Write { path: path.to_owned(), source })
}

/// Largest over smallest of positive values; 1 for none.
fn spread(values: impl Iterator<Item = f64>) -> f64 {
    let (lo, hi) = values.filter(|v| *v > 0.0).fold((f64::MAX, 0.0f64), |(lo, hi), v| (lo.min(v), hi.max(v)));
    if hi > 0.0 {
        hi / lo
    } else {
        1.0
    }
}

fn drawn<T, E: std::fmt::Display>(result: Result<T, E>) -> Result<T, ChartError> {
    result.map_err(|e| ChartError::Draw(e.to_string()))
}

/// The panels stacked under `title`, as SVG text.
fn draw(title: &str, x_label: &str, scale: XScale, panels: &[Panel<'_>]) -> Result<String, ChartError> {
    let mut svg = String::new();
    {
        let height = PANEL_HEIGHT * panels.len().max(1) as u32 + 50;
        let root = SVGBackend::with_string(&mut svg, (WIDTH, height)).into_drawing_area();
        drawn(root.fill(&WHITE))?;
        let root = drawn(root.titled(title, (FONT, 24)))?;
        for (area, panel) in root.split_evenly((panels.len().max(1), 1)).iter().zip(panels) {
            draw_panel(area, panel, x_label, scale)?;
        }
        drawn(root.present())?;
    }
    Ok(svg)
}

fn draw_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    panel: &Panel<'_>,
    x_label: &str,
    scale: XScale,
) -> Result<(), ChartError> {
    let to_x = |x: f64| if scale == XScale::Log2 { x.max(f64::MIN_POSITIVE).log2() } else { x };
    let points = || panel.curves.iter().flat_map(|c| c.points.iter());
    let (x_lo, x_hi) = padded(points().map(|p| to_x(p.0)));
    let y_hi = points().map(|p| p.1).fold(0.0f64, f64::max);
    let y_hi = if y_hi > 0.0 { y_hi * 1.1 } else { 1.0 };
    let mut chart = drawn(
        ChartBuilder::on(area)
            .caption(panel.title, (FONT, 18))
            .margin(12)
            .x_label_area_size(42)
            .y_label_area_size(80)
            .build_cartesian_2d(x_lo..x_hi, 0.0..y_hi),
    )?;
    let x_ticks = |v: &f64| match scale {
        XScale::Log2 => format!("{}", v.exp2().round()),
        XScale::Linear => format!("{v}"),
    };
    let y_ticks = |v: &f64| if y_hi >= 100.0 { format!("{v:.0}") } else { format!("{v:.2}") };
    let ticks = if scale == XScale::Log2 { (x_hi - x_lo).round() as usize + 1 } else { 10 };
    drawn(
        chart
            .configure_mesh()
            .x_desc(x_label)
            .y_desc(panel.y_label)
            .x_labels(ticks)
            .x_label_formatter(&x_ticks)
            .y_label_formatter(&y_ticks)
            .light_line_style(WHITE.mix(0.0))
            .label_style((FONT, 14))
            .draw(),
    )?;
    for (i, curve) in panel.curves.iter().enumerate() {
        let colour = COLOURS.get(i % COLOURS.len()).copied().unwrap_or(BLACK);
        let line: Vec<(f64, f64)> = curve.points.iter().map(|&(x, y)| (to_x(x), y)).collect();
        drawn(chart.draw_series(LineSeries::new(line.iter().copied(), colour.stroke_width(2))))?
            .label(curve.label.as_str())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], colour.stroke_width(2)));
        drawn(chart.draw_series(line.iter().map(|&p| Circle::new(p, 3, colour.filled()))))?;
    }
    drawn(
        chart
            .configure_series_labels()
            .position(panel.legend.clone())
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .label_font((FONT, 14))
            .draw(),
    )
}

/// The x range of `xs`, widened where it is a single point.
fn padded(xs: impl Iterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) = xs.fold((f64::MAX, f64::MIN), |(lo, hi), x| (lo.min(x), hi.max(x)));
    if lo > hi {
        (0.0, 1.0)
    } else if lo == hi {
        (lo - 1.0, hi + 1.0)
    } else {
        (lo, hi)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::record::RunEnd;

    fn steps(qps: &[(u32, f64)]) -> Vec<StepFigures> {
        qps.iter()
            .map(|&(threads, qps)| StepFigures {
                threads,
                tps: qps,
                qps,
                p95_ms: Some(threads as f64 / 10.0),
                p99_ms: None,
                ignored_errors: 0,
                end: RunEnd::Completed,
                server: None,
            })
            .collect()
    }

    /// plotters writes each text on a line of its own inside `<text>`.
    fn has_text(svg: &str, text: &str) -> bool {
        svg.contains(&format!("\n{text}\n</text>"))
    }

    #[test]
    fn a_comparison_draws_a_line_per_result_with_its_label() {
        let results = vec![
            ("MariaDB 10.0.21".to_owned(), steps(&[(1, 22166.0), (2, 41220.0), (4, 70850.0), (256, 111232.0)])),
            ("MySQL 5.7.9".to_owned(), steps(&[(1, 21499.0), (2, 40552.0), (4, 69816.0), (256, 102345.0)])),
        ];
        let svg = by_connections("oltp_point_select", &results).unwrap();
        assert!(svg.starts_with("<svg"), "{}", &svg[..100]);
        for text in ["oltp_point_select", "MariaDB 10.0.21", "MySQL 5.7.9", "Queries per second", "connections", "256"]
        {
            assert!(has_text(&svg, text), "{text} missing");
        }
        // A line per result in each panel, and its points.
        // Each result's colour: its line and legend mark in both panels.
        for colour in ["#0072B2", "#D55E00"] {
            let strokes = format!("stroke=\"{colour}\" stroke-width=\"2\"");
            assert_eq!(svg.matches(&format!("opacity=\"1\" {strokes}")).count(), 4, "{colour}");
        }
        assert!(svg.matches("<circle").count() >= 16);
    }

    #[test]
    fn one_point_and_no_points_still_draw() {
        let svg = by_connections("one", &[("a".to_owned(), steps(&[(8, 10.0)]))]).unwrap();
        assert!(has_text(&svg, "a"));
        assert!(has_text(&by_connections("none", &[]).unwrap(), "none"));
    }

    #[test]
    fn spread_of_connection_counts() {
        assert_eq!(spread([1.0, 2.0, 4.0].into_iter()), 4.0);
        assert_eq!(spread(std::iter::empty()), 1.0);
        assert_eq!(padded([3.0].into_iter()), (2.0, 4.0));
    }

    /// With `--server-stats`, a single run's chart has the server's CPU per
    /// query and its buffer pool hit ratio over time; without, neither.
    #[test]
    fn a_sampled_runs_chart_has_the_servers_panels() {
        use crate::results::latency_summary::LatencyListing;
        use crate::results::record::IntervalSpan;
        use crate::results::recorded::RecordedHistograms;
        use crate::server_stats::{ClientCounts, ProcessDelta, ServerDelta, ServerResult};
        use crate::stats::{Counters, Interval};
        let listing = LatencyListing::new(&[95.0], Some(95), false, RecordedHistograms::Omitted);
        let interval = |k: u32, sampled: bool| {
            let mut measured = Interval::new(&[]);
            measured.counters = Counters { reads: 1000, events: 1000, ..Counters::default() };
            measured.latencies.events.record_ns(1_000_000);
            let span = IntervalSpan { threads: 2, end_s: f64::from(k), length_s: 1.0, measured_from_unix_s: 0.0 };
            let mut result = IntervalResult::new(span, &measured, &listing, None);
            let status =
                [("Innodb_buffer_pool_read_requests".to_owned(), 4000), ("Innodb_buffer_pool_reads".to_owned(), 4)];
            let process = ProcessDelta { cpu_user_us: 20_000 + u64::from(k) * 1000, ..ProcessDelta::default() };
            let delta = ServerDelta {
                seconds: 1.0,
                status: status.into(),
                threads_running: Some(1),
                process: Some(process),
                sampler_statements: 1,
            };
            let counts = ClientCounts { queries: 1000, transactions: 1000 };
            result.server = sampled.then(|| Box::new(ServerResult::interval(delta, Some(counts))));
            result
        };
        let sampled: Vec<IntervalResult> = (1..=3).map(|k| interval(k, true)).collect();
        let svg = over_time("run", &sampled, 95.0).unwrap();
        assert!(has_text(&svg, SERVER_CPU) && has_text(&svg, "InnoDB buffer pool hit ratio (--server-stats)"));
        assert!(has_text(&svg, "server CPU/query"));
        let plain: Vec<IntervalResult> = (1..=3).map(|k| interval(k, false)).collect();
        let svg = over_time("run", &plain, 95.0).unwrap();
        assert!(!svg.contains("--server-stats"));
    }
}
