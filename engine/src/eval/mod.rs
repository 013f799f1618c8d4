//! `skillet eval`'s library half: a skill folder's eval cases, run through a [`SkillService`]
//! once per model and repeat, judged by machine checks, summed up as statistics, and written as
//! a text table, JSON and JUnit XML.
//!
//! | file | concept |
//! |---|---|
//! | `case` | the case file `evals/evals.json` (Agent Skills' format, with Skillet's `expect`), parsed into typed cases |
//! | `check` | one machine check (outcome, schema, JSON pointer, tool trace, turns, cost) and its verdict |
//! | `observation` | what one run showed: outcome, data, the tool trace from its `log` events, turns, repairs, usage |
//! | `runner` | the runs of every model × case × repeat, concurrently and bounded |
//! | `stats` | pass rate with its Wilson interval, medians and p95s, repair rate, failure codes |
//! | `table` | the per-model text table |
//! | `report` | the JSON report and the JUnit XML |
//!
//! Where the line is drawn: this module never builds a provider, an executor or a mock; it is
//! handed one [`SkillService`] per model (the CLI, `host/cli/eval.rs`, builds them the way
//! `run` does). Natural-language `assertions` of the Agent Skills format need a judge model and
//! are carried into the report ungraded; only the `expect` checks decide a verdict.
//! `docs/EVALS.md` is the author-facing version of this doc.
//!
//! ```no_run
//! # async fn example(
//! #     executor: skillet_engine::run::Executor,
//! #     skill: &skillet_engine::skill::CompiledSkill,
//! # ) {
//! use std::sync::Arc;
//!
//! use skillet_engine::eval::{self, EvalPlan, EvalReport, ModelTarget};
//!
//! let suite = eval::load_suite(skill).expect("evals/evals.json loads");
//! let plan = EvalPlan {
//!     skill: suite.skill_name,
//!     cases: suite.cases,
//!     repeat: 3,
//!     concurrency: 4,
//!     timeout_seconds: 0,
//! };
//! let label = "ollama/llama3.2".to_owned();
//! let targets = [ModelTarget { label: label.clone(), service: Arc::new(executor), judge: None }];
//! let records = eval::run_plan(&plan, &targets, &|_| {}, &Default::default()).await;
//! let report = EvalReport::build(&plan, &[label], records);
//! println!("{}", eval::render_table(&report.skill, &report.models[0]));
//! std::fs::write("eval.xml", eval::write_junit(&report)).unwrap();
//! # }
//! ```
//!
//! [`SkillService`]: crate::service::SkillService

mod baseline;
mod benchmark;
mod case;
mod check;
mod file_check;
mod judge;
mod leaks;
mod observation;
mod report;
mod runner;
mod stats;
mod table;
mod trigger;

pub use baseline::without_instructions;
pub use benchmark::{
    Benchmark, BenchmarkMetadata, BenchmarkResult, BenchmarkRun, ExecutionMetrics, Grading,
    GradingSummary, Timing, WITH_SKILL, WITHOUT_SKILL,
};
pub use case::{EVALS_FILE, EvalCase, EvalSuite, load_suite};
pub use check::{Check, CheckFailure, CheckKind, ExpectedOutcome, PointerTest};
pub use file_check::FileExpectation;
pub use judge::{Grade, JUDGE_HEADING, JUDGE_SKILL, Judge, judge_registry};
pub use leaks::{Leak, leaked_values};
pub use observation::{Observation, ObservedFile, RunOutcome};
pub use report::{CaseReport, EvalReport, ModelReport, write_junit};
pub use runner::{EvalPlan, ModelTarget, RunRecord, run_plan};
pub use stats::{Aggregate, ExpectationScore, MeanCost, Repeats, Spread, percentile};
pub use table::render_table;
pub use trigger::{
    TRIGGER_FILE, TRIGGER_SKILL, TriggerQuery, TriggerReport, TriggerResult, catalog,
    load_trigger_queries, trigger_cases,
};
