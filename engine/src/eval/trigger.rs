//! Trigger evals: does a host's model pick the skill from its description? `evals/trigger.json`
//! is skill-creator's query set — `[{"query": "...", "should_trigger": true}, ...]` — and each
//! query is sent to a model that is offered the host's skills as tools, named and described as
//! an MCP host lists them. A query *triggered* the skill when the model called it.
//!
//! The model sees a catalog, not the skill: [`catalog`] builds one stub tool per skill (name,
//! description, input schema; calling one only answers that it ran) and [`TRIGGER_SKILL`], a
//! definition skill with a generic assistant's instructions that may call them. The runs go
//! through the same runner as the cases ([`trigger_cases`] turns queries into cases), so they
//! are bounded and concurrent like any eval. [`TriggerReport`] sums them up as skill-creator's
//! `run_eval.py` does: a query's trigger rate over its runs, passed at ≥ 0.5 when it should
//! trigger and below 0.5 when it should not, and precision / recall of "picked this skill".
//!
//! Not here: choosing the models (the CLI).

use std::sync::Arc;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::case::EvalCase;
use super::judge::{builtin_registry, prompt_input};
use super::runner::RunRecord;
use crate::skill::{CompiledSkill, ManifestError, Registry, SkillDir, read_capped};
use crate::tools::{Tool, ToolContext, ToolError, ToolOutput, ToolRegistry};

/// The query set, relative to the skill folder.
pub const TRIGGER_FILE: &str = "evals/trigger.json";

/// The skill that holds the catalog: a generic assistant that may call the skills.
pub const TRIGGER_SKILL: &str = "skillet-trigger";

/// The most queries a set may have.
const MAX_QUERIES: usize = 200;

/// One query of the set.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
pub struct TriggerQuery {
    /// What a user asks.
    pub query: String,
    /// Whether the skill should be picked for it.
    pub should_trigger: bool,
}

/// Reads `evals/trigger.json` of `skill`'s folder: `Ok(None)` when there is none.
pub fn load_trigger_queries(
    skill: &CompiledSkill,
) -> Result<Option<Vec<TriggerQuery>>, ManifestError> {
    let Some(dir) = skill.dir.as_deref() else {
        return Ok(None);
    };
    let file = dir.join(TRIGGER_FILE);
    if !file.exists() {
        return Ok(None);
    }
    let whole = |reason: String| ManifestError::error(&file, "trigger", reason);
    let path = SkillDir::new(dir)
        .resolve(TRIGGER_FILE)
        .map_err(|e| whole(e.to_string()))?;
    let text =
        read_capped(&path, crate::skill::MAX_ASSET_BYTES).map_err(|e| whole(e.to_string()))?;
    let queries: Vec<TriggerQuery> = serde_json::from_str(&text).map_err(|e| {
        whole(format!(
            "{e} (expected skill-creator's query set: [{{\"query\": \"...\", \
             \"should_trigger\": true}}, ...])"
        ))
    })?;
    if queries.is_empty() {
        return Err(whole("no queries".into()));
    }
    if queries.len() > MAX_QUERIES {
        return Err(whole(format!(
            "{} queries; at most {MAX_QUERIES}",
            queries.len()
        )));
    }
    if let Some(i) = queries.iter().position(|q| q.query.trim().is_empty()) {
        return Err(whole(format!("query {i} is empty")));
    }
    Ok(Some(queries))
}

/// The catalog a trigger run offers: a registry with [`TRIGGER_SKILL`] declaring every one of
/// `skills` as a tool, and the stub tools themselves.
pub fn catalog(skills: &[Arc<CompiledSkill>]) -> (Arc<Registry>, Arc<ToolRegistry>) {
    let mut tools = ToolRegistry::new();
    let mut names = Vec::new();
    for skill in skills {
        if skill.name() == TRIGGER_SKILL {
            continue;
        }
        let stub = SkillStub::of(skill);
        names.push(json!({"name": stub.name}));
        // Skill names are unique in a registry, so no stub is refused.
        let _ = tools.register_tool(Arc::new(stub));
    }
    let registry = builtin_registry(json!({
        "name": TRIGGER_SKILL,
        "version": "1.0.0",
        "description": "A generic assistant offered the host's skills as tools.",
        "triggers": [],
        "status": "Published",
        "input_schema": prompt_input(),
        "output_schema": {},
        "instructions": TRIGGER_INSTRUCTIONS,
        "when_to_use": "Trigger evals.",
        "argument_hint": "{prompt}",
        "source": "system",
        "tools": names,
        "max_turns": 2
    }));
    (registry, Arc::new(tools))
}

const TRIGGER_INSTRUCTIONS: &str = "You are a helpful assistant in an agent host. The tools \
you are offered are skills the host can run for the user. When one of them fits the user's \
request, call it; when none fits, answer the user directly without calling any.";

/// A skill as a catalog lists it: its name, description and input; calling it only says it
/// ran (the eval asks whether it is picked, not what it does).
struct SkillStub {
    name: String,
    description: String,
    schema: Value,
}

impl SkillStub {
    fn of(skill: &CompiledSkill) -> SkillStub {
        let schema = skill
            .input_schema
            .as_ref()
            .map(|s| s.source().clone())
            .unwrap_or_else(|| {
                json!({
                    "type": "object",
                    "properties": {"prompt": {"type": "string", "description": "The request."}},
                    "required": ["prompt"]
                })
            });
        SkillStub {
            name: skill.name().to_owned(),
            description: skill.spec.description.clone(),
            schema,
        }
    }
}

#[async_trait]
impl Tool for SkillStub {
    fn name(&self) -> &str {
        &self.name
    }
    fn description(&self) -> &str {
        &self.description
    }
    fn input_schema(&self) -> &Value {
        &self.schema
    }
    async fn call(&self, _arguments: Value, _ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text(format!(
            "{} ran; tell the user it is done.",
            self.name
        )))
    }
    fn runs_inline(&self) -> bool {
        true
    }
}

/// The queries as cases of [`TRIGGER_SKILL`]: the query is the prompt; no check (what counts
/// is which tool the model called, read by [`TriggerReport::build`]).
pub fn trigger_cases(queries: &[TriggerQuery]) -> Vec<EvalCase> {
    queries
        .iter()
        .enumerate()
        .map(|(i, query)| {
            let mut arguments = Map::new();
            arguments.insert("prompt".into(), Value::String(query.query.clone()));
            EvalCase {
                id: format!("q{}", i + 1),
                name: format!("q{}", i + 1),
                arguments,
                expected_output: None,
                assertions: Vec::new(),
                checks: Vec::new(),
            }
        })
        .collect()
}

/// One query's results on one model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TriggerResult {
    /// The query.
    pub query: String,
    /// Whether it should trigger the skill.
    pub should_trigger: bool,
    /// Share of its runs in which the model called the skill.
    pub trigger_rate: f64,
    /// Runs made.
    pub runs: u32,
    /// The rate is on the right side of 0.5.
    pub pass: bool,
    /// What the model called instead, over the runs (other skills), in call order.
    pub other_calls: Vec<String>,
}

/// One model's trigger results.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TriggerReport {
    /// `provider/model`.
    pub model: String,
    /// The skill whose description is tested.
    pub skill: String,
    /// Per query, in file order.
    pub queries: Vec<TriggerResult>,
    /// Of the queries that triggered it (rate ≥ 0.5), the share that should have; `None` when
    /// none triggered.
    pub precision: Option<f64>,
    /// Of the queries that should trigger it, the share that did; `None` when none should.
    pub recall: Option<f64>,
    /// Share of queries that passed.
    pub accuracy: f64,
}

impl TriggerReport {
    /// Sums up `records` (one model's runs of [`trigger_cases`]) for `skill`.
    pub fn build(
        model: &str,
        skill: &str,
        queries: &[TriggerQuery],
        records: &[RunRecord],
    ) -> TriggerReport {
        let results: Vec<TriggerResult> = queries
            .iter()
            .enumerate()
            .map(|(i, query)| {
                let name = format!("q{}", i + 1);
                let runs: Vec<&RunRecord> = records
                    .iter()
                    .filter(|r| r.model == model && r.case == name)
                    .collect();
                let hits = runs
                    .iter()
                    .filter(|r| r.observation.tool_calls.iter().any(|t| t == skill))
                    .count();
                let rate = if runs.is_empty() {
                    0.0
                } else {
                    hits as f64 / runs.len() as f64
                };
                let other_calls = runs
                    .iter()
                    .flat_map(|r| r.observation.tool_calls.iter())
                    .filter(|t| *t != skill)
                    .cloned()
                    .collect();
                TriggerResult {
                    query: query.query.clone(),
                    should_trigger: query.should_trigger,
                    trigger_rate: rate,
                    runs: runs.len() as u32,
                    pass: if query.should_trigger {
                        rate >= 0.5
                    } else {
                        rate < 0.5
                    },
                    other_calls,
                }
            })
            .collect();
        let triggered = |r: &TriggerResult| r.trigger_rate >= 0.5;
        let picked: Vec<&TriggerResult> = results.iter().filter(|r| triggered(r)).collect();
        let wanted: Vec<&TriggerResult> = results.iter().filter(|r| r.should_trigger).collect();
        let share = |part: usize, whole: usize| (whole > 0).then(|| part as f64 / whole as f64);
        TriggerReport {
            model: model.to_owned(),
            skill: skill.to_owned(),
            precision: share(
                picked.iter().filter(|r| r.should_trigger).count(),
                picked.len(),
            ),
            recall: share(wanted.iter().filter(|r| triggered(r)).count(), wanted.len()),
            accuracy: share(results.iter().filter(|r| r.pass).count(), results.len())
                .unwrap_or(0.0),
            queries: results,
        }
    }

    /// Whether every query passed.
    pub fn passed(&self) -> bool {
        self.queries.iter().all(|q| q.pass)
    }
}

#[cfg(test)]
#[path = "trigger_tests.rs"]
mod tests;
