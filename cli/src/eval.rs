//! `skillet eval SKILL [--model MODEL]... [--repeat N]`: runs the skill's eval cases
//! (`evals/evals.json`, see `skillet_engine::eval` and `docs/EVALS.md`) on each model, shows a progress
//! bar (plain lines when stderr is not a terminal), prints one table per model and the failed
//! runs on stdout, and writes the JSON report (`--json-out`), JUnit XML (`--junit`) and, with
//! `--save`, the report into the console's history database (`skillet_host::console::save_eval`).
//!
//! Each `--model` runs on the provider `run` would use (`--provider`, else the configured
//! default) with that model; with none, on the default model. With no provider configured the
//! embedded mock answers, from the skill folder's `mock-scenario.yaml`, as for `run`; under
//! `--provider mock` each `--model` is a label on that same mock.
//!
//! Exit: 0 when every run of every model passed, 1 when one did not, 130 when interrupted, and
//! the usual codes otherwise (`exit`).

use std::io::Write;
use std::path::Path;
use std::sync::mpsc::{self, Receiver, Sender};
use std::thread::JoinHandle;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use tokio_util::sync::CancellationToken;

use super::args::{EvalArgs, GlobalArgs};
use super::eval_results::write_results;
use super::eval_targets::{
    JudgeChoice, baseline_registry, build_targets, judge_choice, model_configs,
};
use super::eval_trigger::{TriggerRun, print_trigger, run_trigger_set, trigger_queries};
use super::exit::{Failure, Outcome};
use super::progress::DisplayMode;
use super::run::{skill_folder, skill_name};
use super::setup::{self, Console};
use super::shutdown_signal;
use super::suggest;
use crate::config::Config;
use crate::embedded;
use skillet_engine::eval::{
    self, Benchmark, EvalCase, EvalPlan, EvalReport, RunRecord, TriggerReport, WITH_SKILL,
    WITHOUT_SKILL,
};
use skillet_host::console as web;

/// Runs the command.
pub async fn eval(
    global: &GlobalArgs,
    args: &EvalArgs,
    console: Console,
) -> Result<Outcome, Failure> {
    let extra = skill_folder(&args.skill)?;
    let name = skill_name(&args.skill, extra.as_ref());
    let parts = setup::load_parts(global, console, extra).await?;
    let skill = suggest::loaded_skill(&parts, &name).await?;
    if let Some(dir) = &skill.compiled.dir
        && !dir.join(eval::EVALS_FILE).exists()
    {
        return Err(Failure::setup(format!(
            "{name} has no evals: write {} (the cases, their checks and expectations: \
             docs/EVALS.md; `skillet init NAME` scaffolds a skill with one)",
            dir.join(eval::EVALS_FILE).display()
        )));
    }
    let suite = eval::load_suite(&skill.compiled).map_err(|problems| {
        let lines: Vec<String> = problems.iter().map(ToString::to_string).collect();
        Failure::setup(format!(
            "cannot load the evals of {name}:\n{}",
            lines.join("\n")
        ))
    })?;
    for leak in eval::leaked_values(&skill.compiled, &suite) {
        console.warn(format!("{name}: {leak}"));
    }
    let cases = chosen_cases(suite.cases, &args.cases)?;
    let queries = if args.trigger {
        Some(trigger_queries(&skill.compiled)?)
    } else {
        None
    };
    let scenario = skill
        .compiled
        .dir
        .as_deref()
        .and_then(embedded::scenario_in);
    let (default, mock) = setup::start_model(&parts, scenario.into_iter().collect()).await?;
    if let Some(mock) = &mock {
        console.notice(mock.notice());
    }
    let configs = model_configs(global, &parts, &default)?;
    let judge = judge_choice(args, global, &parts, &default)?;
    let timeout = args.timeout.unwrap_or(0);
    let targets = build_targets(&parts, &configs, &parts.skills, &judge, timeout)?;
    let baseline = if args.baseline {
        let registry = baseline_registry(&parts, &skill.compiled);
        Some(build_targets(&parts, &configs, &registry, &judge, timeout)?)
    } else {
        None
    };

    let plan = EvalPlan {
        skill: name,
        cases,
        repeat: args.repeat,
        concurrency: args.concurrency as usize,
        timeout_seconds: timeout,
    };
    let trigger_runs = queries
        .as_ref()
        .map_or(0, |q| q.len() * configs.len() * args.repeat as usize);
    let runs =
        plan.run_count(targets.len()) * if baseline.is_some() { 2 } else { 1 } + trigger_runs;
    let progress = EvalProgress::start(console, runs);
    let cancel = CancellationToken::new();
    let watcher = {
        let cancel = cancel.clone();
        tokio::spawn(async move {
            shutdown_signal().await;
            cancel.cancel();
        })
    };
    let on_run = |record: &RunRecord| progress.record(record);
    let records = eval::run_plan(&plan, &targets, &on_run, &cancel).await;
    let baseline_records = match &baseline {
        Some(targets) if !cancel.is_cancelled() => {
            Some(eval::run_plan(&plan, targets, &on_run, &cancel).await)
        }
        _ => None,
    };
    let trigger = match &queries {
        Some(queries) if !cancel.is_cancelled() => {
            let run = TriggerRun {
                parts: &parts,
                skill: &skill.compiled,
                configs: &configs,
                repeat: args.repeat,
                concurrency: args.concurrency as usize,
                timeout_seconds: timeout,
            };
            run_trigger_set(run, queries, &on_run, &cancel).await?
        }
        _ => Vec::new(),
    };
    watcher.abort();
    progress.finish();
    parts.tools.shutdown_toolkits().await;
    drop(mock);

    let labels: Vec<String> = targets.iter().map(|t| t.label.clone()).collect();
    let mut report = EvalReport::build(&plan, &labels, records);
    for (model, target) in report.models.iter_mut().zip(&targets) {
        model.judge = target.judge.as_ref().map(|j| j.label.clone());
    }
    if let Some(records) = baseline_records {
        let without = EvalReport::build(&plan, &labels, records).models;
        let timestamp = time::OffsetDateTime::now_utc()
            .format(&time::format_description::well_known::Rfc3339)
            .unwrap_or_default();
        let folder = skill.compiled.dir.as_ref().map(|d| d.display().to_string());
        report.benchmarks = report
            .models
            .iter()
            .zip(&without)
            .map(|(with, without)| {
                Benchmark::build(
                    &plan.cases,
                    with,
                    without,
                    (&plan.skill, folder.clone()),
                    with.judge.clone(),
                    timestamp.clone(),
                )
            })
            .collect();
        report.baseline = Some(without);
    }
    report.passed &= trigger.iter().all(TriggerReport::passed);
    report.trigger = trigger;
    print_report(&report);
    let ungraded: usize = if matches!(judge, JudgeChoice::Off) {
        plan.cases.iter().map(|c| c.assertions.len()).sum()
    } else {
        0
    };
    if ungraded > 0 {
        console.notice(format!(
            "--no-judge: {ungraded} natural-language expectation{} not graded; they are listed \
             in the JSON report",
            if ungraded == 1 { "" } else { "s" }
        ));
    }
    if let Some(path) = &args.json_out {
        write_file(path, &report.to_json(), "--json-out")?;
    }
    if let Some(path) = &args.junit {
        write_file(path, &eval::write_junit(&report), "--junit")?;
    }
    if let Some(dir) = &args.results {
        let written = write_results(
            dir,
            &report.models,
            report.baseline.as_deref(),
            &report.benchmarks,
        )?;
        console.notice(format!(
            "wrote {written} file{} under {} (skill-creator's layout)",
            if written == 1 { "" } else { "s" },
            dir.display()
        ));
    }
    if args.save {
        save(&parts.config, &report, console).await?;
    }
    Ok(if cancel.is_cancelled() {
        Outcome::Interrupted
    } else if report.passed {
        Outcome::Success
    } else {
        Outcome::Failed
    })
}

/// `--save`: the report into the history database the console reads (`[console] history_db`,
/// else beside `[server] state_db`, else the XDG state default).
async fn save(config: &Config, report: &EvalReport, console: Console) -> Result<(), Failure> {
    let settings = &config.console;
    let path = match (
        settings.history,
        settings.history_path_beside(config.server.state_db.as_deref()),
    ) {
        (true, Some(path)) => path,
        (false, _) => {
            return Err(Failure::usage(
                "--save: [console] history = false, so there is no database to save to",
            ));
        }
        (true, None) => {
            return Err(Failure::usage(
                "--save: neither XDG_STATE_HOME nor HOME is set; set [console] history_db",
            ));
        }
    };
    let (report, at) = (report.document(), path.clone());
    let saved = tokio::task::spawn_blocking(move || web::save_eval(&at, &report))
        .await
        .map_err(|e| Failure::setup(format!("--save: {e}")))?;
    saved.map_err(|e| Failure::setup(format!("--save: {e}")))?;
    console.notice(format!(
        "saved the report in {} (the console's skill view shows it)",
        path.display()
    ));
    Ok(())
}

/// The cases `--case` names (by name or id), in file order; all of them without `--case`.
fn chosen_cases(cases: Vec<EvalCase>, wanted: &[String]) -> Result<Vec<EvalCase>, Failure> {
    if let Some(unknown) = wanted
        .iter()
        .find(|w| !cases.iter().any(|c| &c.name == *w || &c.id == *w))
    {
        let names: Vec<&str> = cases.iter().map(|c| c.name.as_str()).collect();
        return Err(Failure::usage(format!(
            "--case {unknown:?}: no such case (the cases: {})",
            names.join(", ")
        )));
    }
    Ok(cases
        .into_iter()
        .filter(|c| wanted.is_empty() || wanted.iter().any(|w| w == &c.name || w == &c.id))
        .collect())
}

/// The tables, then every failed run with its reasons, on stdout.
fn print_report(report: &EvalReport) {
    let mut stdout = std::io::stdout().lock();
    for model in &report.models {
        let _ = writeln!(stdout, "{}", eval::render_table(&report.skill, model));
    }
    drop(stdout);
    print_baseline(report);
    print_trigger(&report.trigger);
    let mut stdout = std::io::stdout().lock();
    let failed: Vec<&RunRecord> = report
        .models
        .iter()
        .flat_map(|m| &m.runs)
        .filter(|r| !r.passed)
        .collect();
    if failed.is_empty() {
        return;
    }
    let _ = writeln!(stdout, "failed runs:");
    for run in failed {
        for failure in &run.failures {
            let _ = writeln!(
                stdout,
                "  {} · {} #{}: {}: {}",
                run.model, run.case, run.repeat, failure.code, failure.message
            );
        }
        for grade in run.expectations.iter().filter(|g| !g.passed) {
            let _ = writeln!(
                stdout,
                "  {} · {} #{}: {}: {:?}: {}",
                run.model,
                run.case,
                run.repeat,
                if grade.graded {
                    "expectation"
                } else {
                    "ungraded"
                },
                grade.text,
                grade.evidence
            );
        }
    }
}

/// With `--baseline`: each model's runs without the skill's instructions, then one line per
/// model comparing the two.
fn print_baseline(report: &EvalReport) {
    let Some(baseline) = &report.baseline else {
        return;
    };
    let mut stdout = std::io::stdout().lock();
    let title = format!("{} without its instructions (baseline)", report.skill);
    for model in baseline {
        let _ = writeln!(stdout, "{}", eval::render_table(&title, model));
    }
    for benchmark in &report.benchmarks {
        let summary = &benchmark.run_summary;
        let mean = |configuration: &str| {
            summary[configuration]["pass_rate"]["mean"]
                .as_f64()
                .map_or_else(|| "—".to_owned(), |m| format!("{:.0}%", m * 100.0))
        };
        let delta = |figure: &str| summary["delta"][figure].as_str().unwrap_or("—").to_owned();
        let _ = writeln!(
            stdout,
            "{}: with the skill {} of checks and expectations held, without it {} \
             (delta {} · time {} s · tokens {})",
            benchmark.metadata.executor_model,
            mean(WITH_SKILL),
            mean(WITHOUT_SKILL),
            delta("pass_rate"),
            delta("time_seconds"),
            delta("tokens"),
        );
    }
}

fn write_file(path: &Path, text: &str, option: &str) -> Result<(), Failure> {
    std::fs::write(path, text)
        .map_err(|e| Failure::setup(format!("{option} {}: {e}", path.display())))
}

/// The progress of an eval on stderr: an indicatif bar on a terminal, a line per finished run
/// otherwise, nothing under `-q`. Drawn on its own OS thread (as `run`'s display is), so
/// terminal writes never block a runtime thread.
struct EvalProgress {
    sender: Option<Sender<FinishedRun>>,
    thread: Option<JoinHandle<()>>,
}

/// What the display shows of a finished run.
struct FinishedRun {
    /// `MODEL · CASE #N`.
    name: String,
    /// `passed`, or `FAILED (CODE): REASON`.
    verdict: String,
    passed: bool,
    latency_ms: u64,
}

impl EvalProgress {
    fn start(console: Console, runs: usize) -> Self {
        let mode = DisplayMode::detect(console.quiet > 0);
        let (sender, receiver) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("skillet-eval-progress".into())
            .spawn(move || draw(mode, runs as u64, receiver))
            .ok();
        EvalProgress {
            sender: Some(sender),
            thread,
        }
    }

    fn record(&self, run: &RunRecord) {
        let verdict = match run.failures.first() {
            None => "passed".to_owned(),
            Some(failure) => format!("FAILED ({}): {}", failure.code, failure.message),
        };
        if let Some(sender) = &self.sender {
            // A dead display thread only loses the display; the report is unaffected.
            let _ = sender.send(FinishedRun {
                name: format!("{} · {} #{}", run.model, run.case, run.repeat),
                verdict,
                passed: run.passed,
                latency_ms: run.observation.latency_ms,
            });
        }
    }

    fn finish(mut self) {
        self.sender = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn draw(mode: DisplayMode, runs: u64, finished: Receiver<FinishedRun>) {
    let bar = (mode == DisplayMode::Bar).then(|| {
        let bar = ProgressBar::with_draw_target(Some(runs), ProgressDrawTarget::stderr());
        let style = ProgressStyle::with_template(&super::color::bar_template(
            "{spinner:.cyan} eval [{bar:24.cyan/blue}] {pos}/{len} runs {wide_msg}",
        ))
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> ");
        bar.set_style(style);
        bar.enable_steady_tick(std::time::Duration::from_millis(100));
        bar
    });
    while let Ok(run) = finished.recv() {
        let line = format!("{} {} in {} ms", run.name, run.verdict, run.latency_ms);
        match (&bar, mode) {
            (Some(bar), _) => {
                if !run.passed {
                    bar.println(format!("  {line}"));
                }
                bar.set_message(run.name);
                bar.inc(1);
            }
            (None, DisplayMode::Lines) => {
                let _ = writeln!(std::io::stderr().lock(), "[eval] {line}");
            }
            (None, _) => {}
        }
    }
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
}
