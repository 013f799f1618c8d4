//! What a run measures and how: CPU time of this process, of a thread (the in-process mock) and
//! of a child (`skillet serve`, a mock child) at nanosecond resolution, peak RSS from `/proc`,
//! latency percentiles, and the [`RunReport`] one run produces.
//!
//! The clock: a thread's CPU time is the kernel's scheduler runtime in nanoseconds
//! (`/proc/.../schedstat`); a process's (this one, a running child) is that summed over its
//! live threads. A thread that exits during a run takes its time with it; tokio's workers live
//! as long as the runtime and its blocking threads idle for 10 s before exiting, so a run loses
//! nothing that matters. The 10 ms clock ticks
//! of `/proc/.../stat` were ±10–20 % on a short run. Linux only, like the engine's sandbox.
//!
//! Not here: running calls (`modes`), summarising several runs (`summary`).

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// CPU seconds used so far by this process's live threads.
pub fn process_cpu_seconds() -> anyhow::Result<f64> {
    child_cpu_seconds(std::process::id())
}

/// CPU seconds used so far by the task at `/proc/<path>` (`self/task/TID` for a thread), from
/// its scheduler runtime in nanoseconds.
pub fn task_cpu_seconds(path: &str) -> anyhow::Result<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{path}/schedstat"))?;
    let ns: u64 = stat
        .split_whitespace()
        .next()
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| anyhow::anyhow!("/proc/{path}/schedstat: unexpected format"))?;
    #[allow(clippy::cast_precision_loss)]
    Ok(ns as f64 / 1e9)
}

/// CPU seconds used so far by the live threads of process `pid` (a child still running).
pub fn child_cpu_seconds(pid: u32) -> anyhow::Result<f64> {
    let mut total = 0.0;
    for entry in std::fs::read_dir(format!("/proc/{pid}/task"))? {
        let tid = entry?.file_name();
        let tid = tid.to_string_lossy();
        // A thread that exits between listing and reading is simply not counted.
        if let Ok(seconds) = task_cpu_seconds(&format!("{pid}/task/{tid}")) {
            total += seconds;
        }
    }
    Ok(total)
}

/// Peak resident set (`VmHWM`, KiB) of the process at `/proc/<path>`.
pub fn peak_rss_kib(path: &str) -> anyhow::Result<u64> {
    let status = std::fs::read_to_string(format!("/proc/{path}/status"))?;
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .ok_or_else(|| anyhow::anyhow!("/proc/{path}/status: no VmHWM"))
}

/// The 1-minute load average, when readable.
pub fn load_average() -> Option<f64> {
    std::fs::read_to_string("/proc/loadavg")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// The `q` quantile (0–1) of sorted `values`, nearest rank.
pub fn quantile(sorted: &[Duration], q: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        clippy::cast_precision_loss
    )]
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

/// What one run of one mode measured. Field names are the `--json` keys.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunReport {
    /// `raw`, `engine`, `wire` or `stdio`.
    pub mode: String,
    /// Calls made.
    pub calls: u64,
    /// Calls in flight at once.
    pub concurrency: u64,
    /// Mock latency per model response.
    pub latency_ms: u64,
    /// Where the mock ran: `inproc` (its own thread here), `child` or `external`.
    pub mock: String,
    /// Calls that did not return the expected output (or failed outright).
    pub failures: u64,
    /// The first failure, for the log.
    pub first_failure: Option<String>,
    /// Model turns served (calls × 3).
    pub turns: u64,
    /// Wall time of the whole run.
    pub wall_s: f64,
    /// Calls per second.
    pub calls_per_s: f64,
    /// Model turns per second.
    pub turns_per_s: f64,
    /// Median call latency.
    pub p50_ms: f64,
    /// 99th percentile call latency.
    pub p99_ms: f64,
    /// Slowest call.
    pub max_ms: f64,
    /// CPU seconds of the client side: this process minus the in-process mock's thread (so
    /// the bench client, plus the executor in `engine` mode).
    pub client_cpu_s: f64,
    /// CPU seconds of the `skillet serve` child (`wire`, `stdio`; 0 otherwise).
    pub server_cpu_s: f64,
    /// CPU seconds of the mock (its thread or child; 0 when external).
    pub mock_cpu_s: f64,
    /// (client + server) CPU microseconds per model turn: what it costs to drive one turn.
    pub cpu_us_per_turn: f64,
    /// Peak RSS of this process, KiB (includes the mock when it runs in-process).
    pub peak_rss_kib: u64,
    /// Peak RSS of the `skillet serve` child, KiB (0 for `raw`, `engine`).
    pub server_peak_rss_kib: u64,
    /// 1-minute load average when the run ended.
    pub load_avg: Option<f64>,
}

impl RunReport {
    /// One line for people.
    pub fn line(&self) -> String {
        format!(
            "{mode:<11} N={calls} C={conc} lat={lat}ms  {cps:>8.1} calls/s {tps:>8.1} turns/s  \
             p50 {p50:>7.1} ms p99 {p99:>7.1} ms  cpu/turn {cpu:>7.1} us \
             (client {ccpu:.2}s server {scpu:.2}s mock {mcpu:.2}s)  rss {rss} MiB{srss}  \
             fail {fail}",
            mode = self.mode,
            calls = self.calls,
            conc = self.concurrency,
            lat = self.latency_ms,
            cps = self.calls_per_s,
            tps = self.turns_per_s,
            p50 = self.p50_ms,
            p99 = self.p99_ms,
            cpu = self.cpu_us_per_turn,
            ccpu = self.client_cpu_s,
            scpu = self.server_cpu_s,
            mcpu = self.mock_cpu_s,
            rss = self.peak_rss_kib / 1024,
            srss = if self.server_peak_rss_kib > 0 {
                format!(" (server {} MiB)", self.server_peak_rss_kib / 1024)
            } else {
                String::new()
            },
            fail = self.failures,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantile_uses_nearest_rank() {
        let values: Vec<Duration> = (1..=100).map(Duration::from_millis).collect();
        assert_eq!(quantile(&values, 0.5), Duration::from_millis(50));
        assert_eq!(quantile(&values, 0.99), Duration::from_millis(99));
        assert_eq!(quantile(&values, 1.0), Duration::from_millis(100));
        assert_eq!(quantile(&[], 0.5), Duration::ZERO);
    }

    #[test]
    fn own_process_counters_are_readable_and_fine_grained() {
        let before = process_cpu_seconds().unwrap();
        // Burn ~5 ms of CPU, less than one 10 ms clock tick, which must still register. The
        // running thread's counter is brought up to date when it is next scheduled: sleep.
        let started = std::time::Instant::now();
        let mut x = 0u64;
        while started.elapsed() < Duration::from_millis(5) {
            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(1));
        }
        std::thread::sleep(Duration::from_millis(1));
        let after = process_cpu_seconds().unwrap();
        assert!(after > before, "{before} -> {after} ({x})");
        assert!(task_cpu_seconds("self").unwrap() > 0.0);
        assert!(child_cpu_seconds(std::process::id()).unwrap() > 0.0);
        assert!(peak_rss_kib("self").unwrap() > 0);
        assert!(task_cpu_seconds("no-such-process").is_err());
    }
}
