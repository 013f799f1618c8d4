//! The text table `skillet eval` prints per model: one row per case and an `all` row, with the
//! pass rate and its 95 % interval, turns, tokens, cost, latency, repair rate and failure codes.
//! A figure no run reported is `—`.

use std::fmt::Write as _;

use super::report::ModelReport;
use super::stats::{Aggregate, Spread};

/// Shown for a figure no run reported.
const UNKNOWN: &str = "—";

const HEADER: [&str; 11] = [
    "case",
    "runs",
    "pass",
    "pass rate (95% CI)",
    "expectations",
    "turns p50/p95",
    "tokens p50",
    "cost/run",
    "latency p50/p95",
    "repairs",
    "failures",
];

/// The table of one model's results, its title line first.
pub fn render_table(skill: &str, model: &ModelReport) -> String {
    let all = &model.summary;
    let mut out = format!(
        "{skill} on {}: {} case{} × {} repeat{} = {} run{}, {} passed\n",
        model.model,
        model.cases.len(),
        plural(model.cases.len() as u64),
        model.repeat,
        plural(u64::from(model.repeat)),
        all.runs,
        plural(all.runs),
        all.passed,
    );
    let mut rows: Vec<[String; 11]> = vec![HEADER.map(str::to_owned)];
    for case in &model.cases {
        let name = if case.flaky {
            format!("{} (flaky)", case.case)
        } else {
            case.case.clone()
        };
        rows.push(row(&name, &case.summary));
    }
    rows.push(row("all", all));
    let widths: Vec<usize> = (0..HEADER.len())
        .map(|col| {
            rows.iter()
                .map(|r| r[col].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    for row in &rows {
        let mut line = String::new();
        for (col, cell) in row.iter().enumerate() {
            let pad = widths[col] - cell.chars().count();
            // Text columns left, figures right.
            if col == 0 || col == HEADER.len() - 1 {
                let _ = write!(line, "{cell}{}", " ".repeat(pad));
            } else {
                let _ = write!(line, "{}{cell}", " ".repeat(pad));
            }
            if col + 1 < row.len() {
                line.push_str("  ");
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    if let Some(repeats) = &model.repeats {
        let _ = writeln!(
            out,
            "pass@{k} {} (cases passed at least once) · pass^{k} {} (cases passed every time){}",
            percent(repeats.pass_at_k),
            percent(repeats.pass_all_k),
            if repeats.flaky.is_empty() {
                String::new()
            } else {
                format!(" · flaky: {}", repeats.flaky.join(", "))
            },
            k = repeats.k,
        );
    }
    out
}

fn row(name: &str, stats: &Aggregate) -> [String; 11] {
    [
        name.to_owned(),
        stats.runs.to_string(),
        stats.passed.to_string(),
        pass_rate(stats),
        stats.expectations.map_or_else(
            || UNKNOWN.to_owned(),
            |e| format!("{}/{}", e.passed, e.total),
        ),
        spread(stats.turns.as_ref(), ""),
        stats
            .tokens
            .as_ref()
            .map_or_else(|| UNKNOWN.to_owned(), |t| number(t.median)),
        stats.cost.as_ref().map_or_else(
            || UNKNOWN.to_owned(),
            |c| format!("{:.6} {}", c.amount, c.currency),
        ),
        spread(stats.latency_ms.as_ref(), " ms"),
        percent(stats.repair_rate),
        failures(stats),
    ]
}

fn pass_rate(stats: &Aggregate) -> String {
    match stats.pass_rate_ci95 {
        Some([low, high]) => format!(
            "{} ({}–{})",
            percent(stats.pass_rate),
            percent_bare(low),
            percent(high)
        ),
        None => UNKNOWN.to_owned(),
    }
}

fn spread(spread: Option<&Spread>, unit: &str) -> String {
    match spread {
        Some(s) => format!("{}/{}{unit}", number(s.median), number(s.p95)),
        None => UNKNOWN.to_owned(),
    }
}

fn failures(stats: &Aggregate) -> String {
    if stats.failure_codes.is_empty() {
        return UNKNOWN.to_owned();
    }
    let listed: Vec<String> = stats
        .failure_codes
        .iter()
        .map(|(code, n)| format!("{code}×{n}"))
        .collect();
    listed.join(", ")
}

/// An integer as is, anything else with one decimal.
fn number(value: f64) -> String {
    if value.fract() == 0.0 {
        format!("{value:.0}")
    } else {
        format!("{value:.1}")
    }
}

fn percent(share: f64) -> String {
    format!("{}%", percent_bare(share))
}

fn percent_bare(share: f64) -> String {
    format!("{:.0}", share * 100.0)
}

fn plural(n: u64) -> &'static str {
    if n == 1 { "" } else { "s" }
}
