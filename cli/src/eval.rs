//! `skillet eval SKILL [--model MODEL]... [--repeat N]`: runs the skill's eval cases
//! (`evals/evals.json`, see `skillet_engine::eval` and `docs/EVALS.md`) on each model, shows a progress
//! bar (plain lines when stderr is not a terminal), prints one table per model and the failed
//! runs on stdout, and writes the JSON report (`--json-out`), JUnit XML (`--junit`) and, with
//! `--save`, the report into the console's history database (`skillet_host::console::evals`).
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
use std::sync::Arc;
use std::sync::mpsc::{self, Receiver, Sender};
use std::thread::JoinHandle;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::args::{EvalArgs, GlobalArgs};
use super::exit::{Failure, Outcome};
use super::progress::DisplayMode;
use super::run::{skill_folder, skill_name};
use super::setup::{self, Console, HostParts};
use super::shutdown_signal;
use super::suggest;
use crate::config::{Config, ProviderChoice, ProviderShortcuts};
use crate::embedded;
use skillet_engine::eval::{self, EvalCase, EvalPlan, EvalReport, ModelTarget, RunRecord};
use skillet_engine::service::SkillService;
use skillet_host::console::evals as web;
use skillet_protocol::LLMConfig;

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
    let suite = eval::load_suite(&skill.compiled).map_err(|problems| {
        let lines: Vec<String> = problems.iter().map(ToString::to_string).collect();
        Failure::setup(format!(
            "cannot load the evals of {name}:\n{}",
            lines.join("\n")
        ))
    })?;
    let cases = chosen_cases(suite.cases, &args.cases)?;
    let scenario = skill
        .compiled
        .dir
        .as_deref()
        .and_then(embedded::scenario_in);
    let (default, mock) = setup::start_model(&parts, scenario.into_iter().collect()).await?;
    if let Some(mock) = &mock {
        console.notice(mock.notice());
    }
    let targets = model_targets(global, &parts, default)?;

    let plan = EvalPlan {
        skill: name,
        cases,
        repeat: args.repeat,
        concurrency: args.concurrency as usize,
        timeout_seconds: args.timeout.unwrap_or(0),
    };
    let progress = EvalProgress::start(console, plan.run_count(targets.len()));
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
    watcher.abort();
    progress.finish();
    parts.tools.shutdown_toolkits().await;
    drop(mock);

    let labels: Vec<String> = targets.iter().map(|t| t.label.clone()).collect();
    let report = EvalReport::build(&plan, &labels, records);
    print_report(&report);
    let ungraded: usize = plan.cases.iter().map(|c| c.assertions.len()).sum();
    if ungraded > 0 {
        console.notice(format!(
            "{ungraded} natural-language assertion{} not graded (they need a judge model); \
             they are listed in the JSON report",
            if ungraded == 1 { "" } else { "s" }
        ));
    }
    if let Some(path) = &args.json_out {
        write_file(path, &report.to_json(), "--json-out")?;
    }
    if let Some(path) = &args.junit {
        write_file(path, &eval::write_junit(&report), "--junit")?;
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
    let (report, at) = (report.clone(), path.clone());
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

/// One executor per `--model` (or one on `default` without any), each named `provider/model`.
fn model_targets(
    global: &GlobalArgs,
    parts: &HostParts,
    default: LLMConfig,
) -> Result<Vec<ModelTarget>, Failure> {
    if let Some(twice) = global
        .models
        .iter()
        .enumerate()
        .find(|(i, m)| global.models[..*i].contains(m))
        .map(|(_, m)| m)
    {
        return Err(Failure::usage(format!("--model {twice:?} is given twice")));
    }
    let configs = if global.models.is_empty() {
        vec![default]
    } else {
        let mut configs = Vec::new();
        for model in &global.models {
            configs.push(match &parts.choice {
                ProviderChoice::Real { .. } => {
                    let shortcuts = ProviderShortcuts {
                        provider: global.provider.clone(),
                        model: Some(model.clone()),
                        base_url: global.base_url.clone(),
                    };
                    match ProviderChoice::resolve(&parts.config, &shortcuts)
                        .map_err(Failure::setup)?
                    {
                        ProviderChoice::Real { config, .. } => config,
                        ProviderChoice::EmbeddedMock { .. } => with_model(&default, model),
                    }
                }
                ProviderChoice::EmbeddedMock { .. } => with_model(&default, model),
            });
        }
        configs
    };
    configs
        .into_iter()
        .map(|config| {
            let label = model_label(&config);
            let executor =
                setup::build_executor(parts, Some(config), parts.config.card.identity(None))?;
            let service: Arc<dyn SkillService> = Arc::new(executor);
            Ok(ModelTarget { label, service })
        })
        .collect()
}

fn with_model(config: &LLMConfig, model: &str) -> LLMConfig {
    let mut config = config.clone();
    config
        .provider_config
        .get_or_insert_with(Default::default)
        .insert("model".into(), Value::String(model.to_owned()));
    config
}

/// `provider/model`, as the run loop's status lines name it.
fn model_label(config: &LLMConfig) -> String {
    let model = config
        .provider_config
        .as_ref()
        .and_then(|c| c.get("model"))
        .and_then(Value::as_str)
        .unwrap_or("default");
    format!("{}/{model}", config.provider_name)
}

/// The tables, then every failed run with its reasons, on stdout.
fn print_report(report: &EvalReport) {
    let mut stdout = std::io::stdout().lock();
    for model in &report.models {
        let _ = writeln!(stdout, "{}", eval::render_table(&report.skill, model));
    }
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
