//! Runs an eval: every model × case × repeat as one `skill/call/req` through that model's
//! [`SkillService`], at most `concurrency` at a time over all models, each judged by its case's
//! checks as it ends.
//!
//! A run whose outcome check fails (it failed when success was expected, or the reverse) is
//! judged by that check alone: the other checks would judge a run that did not do what the
//! case describes, and their failures would only repeat the first.
//!
//! Not here: building the services (the CLI does, one per model), summing up (`stats`).

use std::sync::Arc;
use std::time::Instant;

use futures::StreamExt;
use serde::Serialize;
use tokio_util::sync::CancellationToken;

use super::case::EvalCase;
use super::check::{CheckFailure, CheckKind};
use super::judge::{Grade, Judge, grade, request_transcript};
use super::observation::Observation;
use crate::protocol::SkillCallRequest;
use crate::service::SkillService;

/// A model to evaluate: the service that runs calls on it, its name in reports, and the judge
/// that grades its runs' expectations.
#[derive(Clone)]
pub struct ModelTarget {
    /// `provider/model`, as reports show it.
    pub label: String,
    /// Runs the calls.
    pub service: Arc<dyn SkillService>,
    /// Grades the cases' natural-language expectations; `None`: they are reported ungraded and
    /// do not count in the verdict.
    pub judge: Option<Judge>,
}

/// What to run.
#[derive(Debug, Clone)]
pub struct EvalPlan {
    /// The skill's name.
    pub skill: String,
    /// The cases to run, in file order (each runs `repeat` times on every model).
    pub cases: Vec<EvalCase>,
    /// Runs of each case per model (at least 1).
    pub repeat: u32,
    /// Runs in flight at once, over all models (at least 1).
    pub concurrency: usize,
    /// Each call's timeout in seconds (0: the skill's and the host's limits).
    pub timeout_seconds: u64,
}

impl EvalPlan {
    /// How many runs the plan makes on `models` models.
    pub fn run_count(&self, models: usize) -> usize {
        models * self.cases.len() * self.repeat.max(1) as usize
    }
}

/// One judged run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunRecord {
    /// The model's label.
    pub model: String,
    /// The case's name.
    pub case: String,
    /// Which repeat (1-based).
    pub repeat: u32,
    /// Whether every check held.
    pub passed: bool,
    /// The checks that did not hold, in the case's order (empty when `passed`).
    pub failures: Vec<CheckFailure>,
    /// The case's expectations as the judge graded them (empty without a judge).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub expectations: Vec<Grade>,
    /// How long the judge took to grade them, in milliseconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub judge_ms: Option<u64>,
    /// What the run showed.
    pub observation: Observation,
}

/// Runs `plan` on every target; `on_run` sees each record as its run ends (for a progress
/// display). Records come back ordered by model, case and repeat. `cancel` stops the runs in
/// flight (they come back failed) and starts no more.
pub async fn run_plan(
    plan: &EvalPlan,
    targets: &[ModelTarget],
    on_run: &(dyn Fn(&RunRecord) + Send + Sync),
    cancel: &CancellationToken,
) -> Vec<RunRecord> {
    // Owned jobs (a target and a case are cheap clones: `Arc`s and small maps), so the stream's
    // future borrows nothing but `plan`, and a caller may spawn it or hand it to a web handler.
    let mut jobs = Vec::with_capacity(plan.run_count(targets.len()));
    for (model_index, target) in targets.iter().enumerate() {
        for (case_index, case) in plan.cases.iter().enumerate() {
            for repeat in 1..=plan.repeat.max(1) {
                jobs.push((
                    model_index,
                    case_index,
                    repeat,
                    target.clone(),
                    case.clone(),
                ));
            }
        }
    }
    let mut records: Vec<((usize, usize, u32), RunRecord)> =
        futures::stream::iter(jobs.into_iter().map(|(m, c, repeat, target, case)| {
            let mut request = SkillCallRequest::new(&plan.skill, case.arguments.clone());
            request.timeout = plan.timeout_seconds;
            request.streaming = false;
            let grader = target.judge.clone().filter(|_| !case.assertions.is_empty());
            if grader.is_some() {
                // The judge reads the tool calls' arguments and results from it.
                request_transcript(&mut request);
            }
            let service = Arc::clone(&target.service);
            let cancel = cancel.child_token();
            let label = target.label;
            let skill = plan.skill.clone();
            async move {
                // Spawned, so the runs of a plan use every runtime thread.
                let handle = tokio::spawn(async move {
                    if cancel.is_cancelled() {
                        return None;
                    }
                    let started = Instant::now();
                    let response = service.call(request, None, cancel.clone()).await;
                    let measured = started.elapsed().as_millis() as u64;
                    let seen = Observation::of_response(&response, measured);
                    let mut record = judge(label, &case, repeat, seen);
                    if let Some(grader) = &grader {
                        let transcript = response
                            .data
                            .as_ref()
                            .and_then(|result| result.transcript.as_deref());
                        record.expectations = if record.outcome_failed() {
                            case.assertions
                                .iter()
                                .map(|text| {
                                    Grade::ungraded(text, "the run did not end as the case expects")
                                })
                                .collect()
                        } else {
                            grade(
                                grader,
                                &skill,
                                &case,
                                &record.observation,
                                transcript,
                                cancel,
                            )
                            .await
                        };
                        record.passed &= record.expectations.iter().all(|g| g.passed);
                    }
                    Some(record)
                });
                let record = handle.await.ok().flatten()?;
                on_run(&record);
                Some(((m, c, repeat), record))
            }
        }))
        .buffer_unordered(plan.concurrency.max(1))
        .filter_map(|done| async move { done })
        .collect()
        .await;
    records.sort_by_key(|(order, _)| *order);
    records.into_iter().map(|(_, record)| record).collect()
}

/// Judges one run by its case's checks.
pub(crate) fn judge(model: String, case: &EvalCase, repeat: u32, seen: Observation) -> RunRecord {
    let mut failures = Vec::new();
    for check in &case.checks {
        if let Err(failure) = check.judge(&seen) {
            let outcome = failure.kind == CheckKind::Outcome;
            failures.push(failure);
            if outcome {
                break;
            }
        }
    }
    RunRecord {
        model,
        case: case.name.clone(),
        repeat,
        passed: failures.is_empty(),
        failures,
        expectations: Vec::new(),
        judge_ms: None,
        observation: seen,
    }
}

impl RunRecord {
    /// Whether the run failed its outcome check (it did not end as the case expects).
    pub fn outcome_failed(&self) -> bool {
        self.failures.iter().any(|f| f.kind == CheckKind::Outcome)
    }

    /// The expectations the judge passed, and how many there are.
    pub fn expectation_score(&self) -> (usize, usize) {
        let passed = self.expectations.iter().filter(|g| g.passed).count();
        (passed, self.expectations.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::check::{Check, ExpectedOutcome, PointerTest};
    use crate::eval::observation::RunOutcome;
    use crate::protocol::LogLevel;
    use crate::protocol::{
        EventPayload, SkillCallResponse, SkillDiscoverRequest, SkillDiscoverResponse, SkillEvent,
        SkillResult,
    };
    use async_trait::async_trait;
    use serde_json::{Map, json};

    /// Answers every call with the arguments as data, after one `calculator` call.
    struct EchoService;

    #[async_trait]
    impl SkillService for EchoService {
        fn discover(&self, _: &SkillDiscoverRequest) -> SkillDiscoverResponse {
            SkillDiscoverResponse::new("r", Vec::new())
        }
        async fn call(
            &self,
            request: SkillCallRequest,
            _: Option<Arc<dyn crate::events::EventSink>>,
            _: CancellationToken,
        ) -> SkillCallResponse {
            let data = serde_json::Value::Object(request.arguments.clone());
            let mut result = SkillResult::success(Some(data), None, 3);
            result.events = vec![
                SkillEvent::new(&request.id, 0, EventPayload::status("turn 1/4 · test/echo")),
                SkillEvent::new(
                    &request.id,
                    1,
                    EventPayload::log(LogLevel::Info, "tool call calculator({})"),
                ),
            ];
            SkillCallResponse::result(&request.id, &request.name, result)
        }
        fn agent_card(&self) -> Result<crate::skill::a2a::AgentCard, crate::skill::a2a::CardError> {
            Err(crate::skill::a2a::CardError::NoSkills)
        }
    }

    fn case(name: &str, n: i64, checks: Vec<Check>) -> EvalCase {
        let mut arguments = Map::new();
        arguments.insert("n".into(), json!(n));
        EvalCase {
            id: name.into(),
            name: name.into(),
            arguments,
            expected_output: None,
            assertions: Vec::new(),
            checks,
        }
    }

    #[tokio::test]
    async fn every_model_case_and_repeat_runs_once_and_comes_back_in_order() {
        let equals_one = Check::Output {
            pointer: "/n".into(),
            test: PointerTest::Equals(json!(1)),
        };
        let plan = EvalPlan {
            skill: "echo".into(),
            cases: vec![
                case(
                    "one",
                    1,
                    vec![Check::Outcome(ExpectedOutcome::Success), equals_one.clone()],
                ),
                case(
                    "two",
                    2,
                    vec![Check::Outcome(ExpectedOutcome::Success), equals_one],
                ),
            ],
            repeat: 3,
            concurrency: 2,
            timeout_seconds: 0,
        };
        let targets: Vec<ModelTarget> = ["a", "b"]
            .into_iter()
            .map(|label| ModelTarget {
                label: label.into(),
                service: Arc::new(EchoService),
                judge: None,
            })
            .collect();
        let seen = std::sync::atomic::AtomicUsize::new(0);
        let on_run = |_: &RunRecord| {
            seen.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        };
        let records = run_plan(&plan, &targets, &on_run, &CancellationToken::new()).await;
        assert_eq!(records.len(), 12);
        assert_eq!(seen.into_inner(), 12);
        let order: Vec<(String, String, u32)> = records
            .iter()
            .map(|r| (r.model.clone(), r.case.clone(), r.repeat))
            .collect();
        assert_eq!(order[0], ("a".into(), "one".into(), 1));
        assert_eq!(order[5], ("a".into(), "two".into(), 3));
        assert_eq!(order[11], ("b".into(), "two".into(), 3));
        assert!(records.iter().filter(|r| r.case == "one").all(|r| r.passed));
        let failed = records.iter().find(|r| r.case == "two").unwrap();
        assert!(!failed.passed);
        assert_eq!(failed.failures[0].code, "output");
        assert_eq!(failed.observation.tool_calls, ["calculator"]);
    }

    #[test]
    fn a_failed_outcome_is_the_only_failure_recorded() {
        let case = case(
            "c",
            1,
            vec![
                Check::Outcome(ExpectedOutcome::Success),
                Check::ToolCalled("calculator".into()),
                Check::MaxTurns(1),
            ],
        );
        let response = SkillCallResponse::result(
            "r",
            "s",
            SkillResult::failure(
                crate::protocol::ErrorCode::SchemaViolation,
                "never valid",
                5,
            ),
        );
        let record = judge("m".into(), &case, 1, Observation::of_response(&response, 5));
        assert_eq!(record.failures.len(), 1, "{:?}", record.failures);
        assert_eq!(record.failures[0].code, "schema_violation");
        assert!(matches!(
            record.observation.outcome,
            RunOutcome::Failed { .. }
        ));
    }
}
