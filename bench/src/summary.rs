//! Several runs of several modes → medians per mode and the ratios of each mode to the floors
//! (`raw`, `replay`, and each transport's floor: `relay`, `stdio-relay`, `mcp-relay`): what
//! `BENCHMARKS.md` quotes.
//!
//! Not here: taking one run (`run`).

use serde::Serialize;

use crate::measure::RunReport;

/// The median of `values` (mean of the middle two for an even count); 0 for none.
pub fn median(values: &mut [f64]) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    values.sort_by(f64::total_cmp);
    let mid = values.len() / 2;
    if values.len() % 2 == 1 {
        values[mid]
    } else {
        f64::midpoint(values[mid - 1], values[mid])
    }
}

/// Medians of one mode's runs.
#[derive(Debug, Clone, Serialize)]
pub struct ModeMedians {
    /// The mode.
    pub mode: String,
    /// Runs taken.
    pub runs: usize,
    /// Failed calls over all runs.
    pub failures: u64,
    /// Median calls/s.
    pub calls_per_s: f64,
    /// Median turns/s.
    pub turns_per_s: f64,
    /// Median p50 latency.
    pub p50_ms: f64,
    /// Median p99 latency.
    pub p99_ms: f64,
    /// Median CPU µs per turn (client + server).
    pub cpu_us_per_turn: f64,
    /// Median peak RSS of the bench process, KiB.
    pub peak_rss_kib: f64,
    /// Median peak RSS of the `skillet serve` child, KiB.
    pub server_peak_rss_kib: f64,
    /// Median wall time, s.
    pub wall_s: f64,
}

/// A mode compared with a floor (`raw`, the parsing floor, `replay`, the byte replay, or a
/// transport floor): >1 means the mode costs more (CPU, latency) or does less (throughput: floor
/// calls/s over the mode's).
#[derive(Debug, Clone, Serialize)]
pub struct Ratios {
    /// The floor compared with.
    pub floor: String,
    /// The mode.
    pub mode: String,
    /// CPU per turn, mode / floor.
    pub cpu_per_turn: f64,
    /// p50 latency, mode / floor.
    pub p50: f64,
    /// Throughput, floor / mode.
    pub throughput: f64,
}

/// The floors, in the order their ratios are listed.
const FLOORS: [&str; 5] = ["raw", "replay", "relay", "stdio-relay", "mcp-relay"];

/// Whether `mode` is compared with `floor`: the model-request floors (`raw`, and `replay` below
/// it) with every other mode, each transport floor only with the transports it is the floor of:
/// `relay` (one HTTP exchange per call) with `wire` and `mcp-http`, `stdio-relay` (A2E lines
/// over pipes) with `stdio`, `mcp-relay` (MCP lines over pipes) with `mcp`.
fn compared_with(floor: &str, mode: &str) -> bool {
    match floor {
        "raw" => mode != "raw" && mode != "replay",
        "replay" => mode != "replay",
        "relay" => mode == "wire" || mode == "mcp-http",
        "stdio-relay" => mode == "stdio",
        "mcp-relay" => mode == "mcp",
        _ => false,
    }
}

/// Everything one `skillet-bench` invocation measured.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    /// Every run, in the order taken.
    pub runs: Vec<RunReport>,
    /// Medians per mode.
    pub medians: Vec<ModeMedians>,
    /// Ratios to each floor that was run (`raw`, `replay`, `relay`, `stdio-relay`, `mcp-relay`).
    pub ratios: Vec<Ratios>,
}

impl Summary {
    /// Summarises `runs` (modes in order of first appearance).
    pub fn of(runs: Vec<RunReport>) -> Summary {
        let mut modes: Vec<String> = Vec::new();
        for run in &runs {
            if !modes.contains(&run.mode) {
                modes.push(run.mode.clone());
            }
        }
        let medians: Vec<ModeMedians> = modes
            .iter()
            .map(|mode| {
                let of_mode: Vec<&RunReport> = runs.iter().filter(|r| &r.mode == mode).collect();
                let med = |f: fn(&RunReport) -> f64| {
                    median(&mut of_mode.iter().map(|r| f(r)).collect::<Vec<_>>())
                };
                #[allow(clippy::cast_precision_loss)]
                ModeMedians {
                    mode: mode.clone(),
                    runs: of_mode.len(),
                    failures: of_mode.iter().map(|r| r.failures).sum(),
                    calls_per_s: med(|r| r.calls_per_s),
                    turns_per_s: med(|r| r.turns_per_s),
                    p50_ms: med(|r| r.p50_ms),
                    p99_ms: med(|r| r.p99_ms),
                    cpu_us_per_turn: med(|r| r.cpu_us_per_turn),
                    peak_rss_kib: med(|r| r.peak_rss_kib as f64),
                    server_peak_rss_kib: med(|r| r.server_peak_rss_kib as f64),
                    wall_s: med(|r| r.wall_s),
                }
            })
            .collect();
        let ratios = FLOORS
            .iter()
            .filter_map(|floor| medians.iter().find(|m| m.mode == *floor))
            .flat_map(|floor| {
                medians
                    .iter()
                    .filter(|m| compared_with(&floor.mode, &m.mode))
                    .map(|m| Ratios {
                        floor: floor.mode.clone(),
                        mode: m.mode.clone(),
                        cpu_per_turn: m.cpu_us_per_turn / floor.cpu_us_per_turn,
                        p50: m.p50_ms / floor.p50_ms,
                        throughput: floor.calls_per_s / m.calls_per_s,
                    })
                    .collect::<Vec<_>>()
            })
            .collect();
        Summary {
            runs,
            medians,
            ratios,
        }
    }

    /// A table for people.
    pub fn table(&self) -> String {
        let mut out = String::from(
            "mode        runs  calls/s   turns/s   p50 ms   p99 ms  cpu us/turn  rss MiB (server)  fail\n",
        );
        for m in &self.medians {
            out.push_str(&format!(
                "{:<11} {:>4} {:>8.1} {:>9.1} {:>8.1} {:>8.1} {:>12.1} {:>8.1} ({:>6.1}) {:>5}\n",
                m.mode,
                m.runs,
                m.calls_per_s,
                m.turns_per_s,
                m.p50_ms,
                m.p99_ms,
                m.cpu_us_per_turn,
                m.peak_rss_kib / 1024.0,
                m.server_peak_rss_kib / 1024.0,
                m.failures
            ));
        }
        let mut floor = "";
        for r in &self.ratios {
            if r.floor != floor {
                floor = &r.floor;
                out.push_str(&format!(
                    "\n{:<21} cpu/turn   p50   throughput ({floor}/mode)\n",
                    format!("ratio to {floor}")
                ));
            }
            out.push_str(&format!(
                "{:<21} {:>8.2} {:>5.2} {:>8.2}\n",
                r.mode, r.cpu_per_turn, r.p50, r.throughput
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut [4.0, 1.0, 2.0, 3.0]), 2.5);
        assert_eq!(median(&mut []), 0.0);
    }

    fn report(mode: &str, cpu: f64) -> RunReport {
        RunReport {
            mode: mode.into(),
            calls: 1,
            concurrency: 1,
            latency_ms: 0,
            mock: "inproc".into(),
            failures: 0,
            first_failure: None,
            turns: 3,
            wall_s: 1.0,
            calls_per_s: 1.0,
            turns_per_s: 3.0,
            p50_ms: 1.0,
            p99_ms: 1.0,
            max_ms: 1.0,
            client_cpu_s: 0.0,
            server_cpu_s: 0.0,
            mock_cpu_s: 0.0,
            cpu_us_per_turn: cpu,
            peak_rss_kib: 1,
            server_peak_rss_kib: 0,
            load_avg: None,
        }
    }

    #[test]
    fn ratios_are_given_to_both_floors() {
        let summary = Summary::of(vec![
            report("raw", 50.0),
            report("replay", 25.0),
            report("engine", 100.0),
        ]);
        let find = |floor: &str, mode: &str| {
            summary
                .ratios
                .iter()
                .find(|r| r.floor == floor && r.mode == mode)
                .map(|r| r.cpu_per_turn)
        };
        assert_eq!(find("raw", "engine"), Some(2.0));
        assert_eq!(find("replay", "engine"), Some(4.0));
        assert_eq!(find("replay", "raw"), Some(2.0));
        assert_eq!(find("raw", "replay"), None);
    }

    #[test]
    fn the_transport_floor_is_compared_with_the_http_transports_alone() {
        let summary = Summary::of(vec![
            report("raw", 20.0),
            report("relay", 30.0),
            report("engine", 25.0),
            report("wire", 45.0),
            report("stdio", 35.0),
            report("mcp", 40.0),
            report("mcp-http", 60.0),
        ]);
        let relay: Vec<(&str, f64)> = summary
            .ratios
            .iter()
            .filter(|r| r.floor == "relay")
            .map(|r| (r.mode.as_str(), r.cpu_per_turn))
            .collect();
        assert_eq!(relay, vec![("wire", 1.5), ("mcp-http", 2.0)]);
        let of_raw = |mode: &str| {
            summary
                .ratios
                .iter()
                .find(|r| r.floor == "raw" && r.mode == mode)
                .map(|r| r.cpu_per_turn)
        };
        assert_eq!(of_raw("relay"), Some(1.5));
        assert_eq!(of_raw("wire"), Some(2.25));
    }

    #[test]
    fn each_stdio_transport_is_compared_with_its_own_floor_alone() {
        let summary = Summary::of(vec![
            report("raw", 20.0),
            report("relay", 30.0),
            report("stdio-relay", 25.0),
            report("mcp-relay", 32.0),
            report("wire", 45.0),
            report("stdio", 50.0),
            report("mcp", 48.0),
            report("mcp-http", 60.0),
        ]);
        let against = |floor: &str| -> Vec<(&str, f64)> {
            summary
                .ratios
                .iter()
                .filter(|r| r.floor == floor)
                .map(|r| (r.mode.as_str(), r.cpu_per_turn))
                .collect()
        };
        assert_eq!(against("stdio-relay"), vec![("stdio", 2.0)]);
        assert_eq!(against("mcp-relay"), vec![("mcp", 1.5)]);
        assert_eq!(against("relay"), vec![("wire", 1.5), ("mcp-http", 2.0)]);
        // The floors themselves are compared with `raw`, as every mode is.
        let raw = against("raw");
        assert!(raw.contains(&("stdio-relay", 1.25)) && raw.contains(&("mcp-relay", 1.6)));
        // Listed floor by floor, in the order of `FLOORS`.
        let floors: Vec<&str> = summary.ratios.iter().map(|r| r.floor.as_str()).collect();
        let mut order = floors.clone();
        order.dedup();
        assert_eq!(order, vec!["raw", "relay", "stdio-relay", "mcp-relay"]);
        let table = summary.table();
        assert!(table.contains("ratio to stdio-relay"), "{table}");
        assert!(table.contains("ratio to mcp-relay"), "{table}");
    }
}
