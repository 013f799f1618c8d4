//! `skillet eval --trigger`: the skill's trigger set (`evals/trigger.json`) run against a
//! catalog of the host's skills on each model, and its table. See `skillet_engine::eval`'s
//! `trigger` module for what a run is and how it counts.

use std::io::Write;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::eval_targets::{executor_over, model_label};
use super::exit::Failure;
use super::setup::HostParts;
use skillet_engine::eval::{
    self, EvalPlan, ModelTarget, RunRecord, TRIGGER_FILE, TriggerQuery, TriggerReport,
};
use skillet_engine::service::SkillService;
use skillet_engine::skill::CompiledSkill;
use skillet_protocol::LLMConfig;

/// `skill`'s trigger set, or a usage error saying what to write when it has none.
pub(super) fn trigger_queries(skill: &CompiledSkill) -> Result<Vec<TriggerQuery>, Failure> {
    eval::load_trigger_queries(skill)
        .map_err(|e| Failure::setup(format!("--trigger: {e}")))?
        .ok_or_else(|| {
            Failure::usage(format!(
                "--trigger: {} has no {TRIGGER_FILE} (skill-creator's query set: \
                 [{{\"query\": \"...\", \"should_trigger\": true}}, ...]; docs/EVALS.md)",
                skill.name()
            ))
        })
}

/// What a trigger run needs besides the queries.
pub(super) struct TriggerRun<'a> {
    pub parts: &'a HostParts,
    pub skill: &'a CompiledSkill,
    pub configs: &'a [LLMConfig],
    pub repeat: u32,
    pub concurrency: usize,
    pub timeout_seconds: u64,
}

/// Runs `queries` on every model of `run`, each offered the host's skills as tools.
pub(super) async fn run_trigger_set(
    run: TriggerRun<'_>,
    queries: &[TriggerQuery],
    on_run: &(dyn Fn(&RunRecord) + Send + Sync),
    cancel: &CancellationToken,
) -> Result<Vec<TriggerReport>, Failure> {
    let TriggerRun {
        parts,
        skill,
        configs,
        repeat,
        concurrency,
        timeout_seconds,
    } = run;
    let catalog: Vec<Arc<CompiledSkill>> = parts
        .skills
        .skills()
        .iter()
        .map(|s| Arc::clone(&s.compiled))
        .collect();
    let (registry, tools) = eval::catalog(&catalog);
    let targets = configs
        .iter()
        .map(|config| {
            let executor = executor_over(parts, config, &registry, Some(&tools))?;
            let service: Arc<dyn SkillService> = Arc::new(executor);
            Ok(ModelTarget {
                label: model_label(config),
                service,
                judge: None,
            })
        })
        .collect::<Result<Vec<_>, Failure>>()?;
    let plan = EvalPlan {
        skill: eval::TRIGGER_SKILL.to_owned(),
        cases: eval::trigger_cases(queries),
        repeat,
        concurrency,
        timeout_seconds,
    };
    let records = eval::run_plan(&plan, &targets, on_run, cancel).await;
    Ok(targets
        .iter()
        .map(|t| TriggerReport::build(&t.label, skill.name(), queries, &records))
        .collect())
}

/// The trigger table of each model on stdout.
pub(super) fn print_trigger(reports: &[TriggerReport]) {
    let mut stdout = std::io::stdout().lock();
    let percent =
        |share: Option<f64>| share.map_or_else(|| "—".to_owned(), |s| format!("{:.0}%", s * 100.0));
    for report in reports {
        let _ = writeln!(
            stdout,
            "trigger: {} on {}: precision {} · recall {} · {} of {} queries passed",
            report.skill,
            report.model,
            percent(report.precision),
            percent(report.recall),
            report.queries.iter().filter(|q| q.pass).count(),
            report.queries.len(),
        );
        for query in &report.queries {
            let _ = writeln!(
                stdout,
                "  {} {:>4} picked (should {}trigger){}  {}",
                if query.pass { "ok  " } else { "FAIL" },
                format!("{:.0}%", query.trigger_rate * 100.0),
                if query.should_trigger { "" } else { "not " },
                if query.other_calls.is_empty() {
                    String::new()
                } else {
                    format!(" · called {}", query.other_calls.join(", "))
                },
                query.query,
            );
        }
        let _ = writeln!(stdout);
    }
}
