//! The judge: a model that grades a case's natural-language `expectations` (the Agent Skills
//! and skill-creator `assertions`) against what one run showed, each with a verdict and its
//! evidence.
//!
//! The judge is a skill run like any other: [`JUDGE_SKILL`] is a definition skill (literal
//! instructions, an output schema) in a registry of its own, run through the judge model's
//! [`SkillService`], so it gets the negotiated structured-output mode, the repair turns and the
//! limits of every run. It sees one case only: the request, `expected_output`, how the run
//! ended, its data, the text of the files it produced, the tool calls it made (with their
//! arguments, from the transcript), and the expectations, numbered. It never sees the eval file
//! or other cases.
//!
//! A judge that fails, or whose answer leaves an expectation out, leaves that expectation
//! ungraded with the reason: an ungraded expectation is never passed.
//!
//! Not here: deciding which model judges (the CLI), the machine checks (`check`).

use std::fmt::Write as _;
use std::sync::Arc;

use serde::Serialize;
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use super::case::EvalCase;
use super::observation::{Observation, RunOutcome};
use crate::protocol::{SkillCallRequest, SkillDefinition, TRANSCRIPT_METADATA, Transcript};
use crate::service::SkillService;
use crate::skill::{CompiledSkill, Registry};

/// The judge skill's name (the mock's scenario rules can match its instructions' first line).
pub const JUDGE_SKILL: &str = "skillet-judge";

/// The first line of the judge's instructions: what a scripted judge's `system_contains` names.
pub const JUDGE_HEADING: &str = "You grade one run of an AI skill against expectations.";

/// The most text of one produced file the judge is shown.
const MAX_FILE_CHARS: usize = 8_000;
/// The most text of all produced files together.
const MAX_FILES_CHARS: usize = 24_000;
/// The most text of the run's data, and of one tool call's arguments or result.
const MAX_DATA_CHARS: usize = 12_000;
const MAX_TOOL_CHARS: usize = 1_000;

/// A model that grades expectations: the service that runs [`JUDGE_SKILL`] on it (see
/// [`judge_registry`]) and its name in reports.
#[derive(Clone)]
pub struct Judge {
    /// `provider/model`.
    pub label: String,
    /// Runs the judge skill.
    pub service: Arc<dyn SkillService>,
    /// Each judge call's timeout in seconds (0: the host's limits).
    pub timeout_seconds: u64,
}

impl std::fmt::Debug for Judge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Judge").field("label", &self.label).finish()
    }
}

/// One expectation's grade, in skill-creator's `grading.json` shape (`text`, `passed`,
/// `evidence`) plus whether a judge graded it at all.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Grade {
    /// The expectation as written.
    pub text: String,
    /// Whether the judge found it true (never true when not graded).
    pub passed: bool,
    /// What the judge quoted or saw; for an ungraded expectation, why it is not graded.
    pub evidence: String,
    /// Whether a judge graded it (false: the judge failed or left it out).
    pub graded: bool,
}

impl Grade {
    /// An expectation left ungraded for `reason`.
    pub fn ungraded(text: &str, reason: &str) -> Grade {
        Grade {
            text: text.to_owned(),
            passed: false,
            evidence: format!("ungraded: {reason}"),
            graded: false,
        }
    }
}

/// A registry holding only the judge skill, for the executor the judge runs on.
pub fn judge_registry() -> Arc<Registry> {
    builtin_registry(judge_definition())
}

/// A registry holding one of eval's own skills, built from its definition: a prompt in,
/// literal instructions (the judge here, the trigger catalog's assistant).
pub(super) fn builtin_registry(definition: Value) -> Arc<Registry> {
    let definition: SkillDefinition =
        serde_json::from_value(definition).expect("eval's own skill definitions are well-formed");
    let name = definition.name.clone();
    let compiled = CompiledSkill::from_definition(definition)
        .unwrap_or_else(|e| panic!("eval's own skill {name} compiles: {e:?}"));
    let registry = Registry::new();
    registry
        .register(compiled)
        .expect("an empty registry takes any one skill");
    Arc::new(registry)
}

/// The input of eval's own skills: one `prompt`, sent to the model as the user message.
pub(super) fn prompt_input() -> Value {
    json!({
        "type": "object",
        "properties": {"prompt": {"type": "string"}},
        "required": ["prompt"]
    })
}

/// The judge's definition: a prompt in, the grades out.
fn judge_definition() -> Value {
    json!({
        "name": JUDGE_SKILL,
        "version": "1.0.0",
        "description": "Grades a skill run's natural-language expectations with evidence.",
        "triggers": [],
        "status": "Published",
        "input_schema": prompt_input(),
        "output_schema": {
            "type": "object",
            "properties": {
                "case": {"type": "string"},
                "expectations": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "index": {"type": "integer", "minimum": 1},
                            "passed": {"type": "boolean"},
                            "evidence": {"type": "string", "minLength": 1}
                        },
                        "required": ["index", "passed", "evidence"],
                        "additionalProperties": false
                    }
                }
            },
            "required": ["case", "expectations"],
            "additionalProperties": false
        },
        "instructions": JUDGE_INSTRUCTIONS,
        "when_to_use": "Grading eval expectations.",
        "argument_hint": "{prompt}",
        "source": "system",
        "max_turns": 3
    })
}

const JUDGE_INSTRUCTIONS: &str = "You grade one run of an AI skill against expectations.

The user message shows the request the skill was given, what success looks like, how the run \
ended, the data it returned, the files it produced and the tool calls it made, then a numbered \
list of expectations.

For each expectation decide whether what you were shown proves it true:
- passed: true only on clear evidence in the run's output, files or tool calls that the \
expectation holds and reflects real completion of the task, not surface compliance (a file \
with the right name but wrong content does not pass).
- passed: false when there is no evidence, the evidence contradicts it, or it is superficial.
- evidence: quote the text or describe what you saw (or did not see), in one or two sentences.

Grade every expectation, by its number, and nothing else. Judge only what is shown; do not \
assume work that is not visible.

Answer with JSON only, naming the case from the heading: {\"case\": \"<case name>\", \
\"expectations\": [{\"index\": 1, \"passed\": true, \"evidence\": \"...\"}, ...]}";

/// Grades `case`'s expectations against `seen` (a run of `skill`) with `judge`. Every
/// expectation comes back, in order, graded or not.
pub(super) async fn grade(
    judge: &Judge,
    skill: &str,
    case: &EvalCase,
    seen: &Observation,
    transcript: Option<&Transcript>,
    cancel: CancellationToken,
) -> Vec<Grade> {
    if case.assertions.is_empty() {
        return Vec::new();
    }
    let mut arguments = Map::new();
    arguments.insert(
        "prompt".into(),
        Value::String(judge_prompt(skill, case, seen, transcript)),
    );
    let mut request = SkillCallRequest::new(JUDGE_SKILL, arguments);
    request.timeout = judge.timeout_seconds;
    request.streaming = false;
    let response = judge.service.call(request, None, cancel).await;
    let answer = match (&response.error, &response.data) {
        (Some(error), _) => Err(format!("the judge's call was refused: {}", error.message)),
        (None, Some(result)) if result.success => Ok(result.data.clone().unwrap_or(Value::Null)),
        (None, Some(result)) => Err(format!(
            "the judge ({}) failed: {}",
            judge.label,
            result.error.as_deref().unwrap_or("no reason given")
        )),
        (None, None) => Err("the judge's response carries neither data nor error".into()),
    };
    match answer {
        Ok(answer) => grades_of(&case.name, &case.assertions, &answer, &judge.label),
        Err(reason) => case
            .assertions
            .iter()
            .map(|text| Grade::ungraded(text, &reason))
            .collect(),
    }
}

/// Reads the judge's answer: one grade per expectation, by index; an expectation the answer
/// leaves out (or grades twice) is ungraded. An answer that does not name `case` is about
/// another run (or made up: the mock's schema synthesis when no rule scripts the judge), and
/// grades nothing.
pub(crate) fn grades_of(
    case: &str,
    expectations: &[String],
    answer: &Value,
    judge: &str,
) -> Vec<Grade> {
    if answer["case"].as_str().map(str::trim) != Some(case) {
        let reason = format!(
            "the judge ({judge}) answered about case {}, not {case:?} (on the embedded mock, \
             script the judge in mock-scenario.yaml: docs/EVALS.md)",
            answer["case"]
        );
        return expectations
            .iter()
            .map(|text| Grade::ungraded(text, &reason))
            .collect();
    }
    let items = answer["expectations"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    expectations
        .iter()
        .enumerate()
        .map(|(i, text)| {
            let mut matching = items
                .iter()
                .filter(|item| item["index"].as_u64() == Some(i as u64 + 1));
            match (matching.next(), matching.next()) {
                (Some(item), None) => match (item["passed"].as_bool(), item["evidence"].as_str()) {
                    (Some(passed), Some(evidence)) if !evidence.trim().is_empty() => Grade {
                        text: text.clone(),
                        passed,
                        evidence: evidence.trim().to_owned(),
                        graded: true,
                    },
                    _ => Grade::ungraded(
                        text,
                        &format!("the judge ({judge}) gave no verdict with evidence for it"),
                    ),
                },
                (Some(_), Some(_)) => {
                    Grade::ungraded(text, &format!("the judge ({judge}) graded it twice"))
                }
                (None, _) => Grade::ungraded(
                    text,
                    &format!("the judge ({judge}) did not grade expectation {}", i + 1),
                ),
            }
        })
        .collect()
}

/// The judge's user message: everything it may see of one run, as sections.
pub(crate) fn judge_prompt(
    skill: &str,
    case: &EvalCase,
    seen: &Observation,
    transcript: Option<&Transcript>,
) -> String {
    let mut text = String::new();
    let _ = writeln!(
        text,
        "# A run of the skill `{skill}` (case `{}`)\n",
        case.name
    );
    text.push_str("## The request\n");
    match (case.arguments.get("prompt"), case.arguments.len()) {
        (Some(Value::String(prompt)), 1) => text.push_str(prompt),
        _ => {
            let mut shown = case.arguments.clone();
            // Input files are listed by name; their content is the caller's, not the run's.
            if let Some(Value::Array(files)) = shown.remove(crate::files::INPUT_FILES_KEY) {
                let names: Vec<&str> = files.iter().filter_map(|f| f["name"].as_str()).collect();
                let _ = writeln!(text, "Input files: {}", names.join(", "));
            }
            text.push_str(&cut(&Value::Object(shown).to_string(), MAX_DATA_CHARS));
        }
    }
    text.push_str("\n\n");
    if let Some(expected) = &case.expected_output {
        let _ = writeln!(text, "## What success looks like\n{expected}\n");
    }
    text.push_str("## How the run ended\n");
    match &seen.outcome {
        RunOutcome::Succeeded => text.push_str("It succeeded.\n\n"),
        RunOutcome::Failed { code, message } => {
            let _ = writeln!(text, "It failed ({code}): {message}\n");
        }
        RunOutcome::Rejected { code, message } => {
            let _ = writeln!(text, "It was refused before running ({code}): {message}\n");
        }
    }
    text.push_str("## The data it returned\n");
    match &seen.data {
        Some(Value::String(answer)) => text.push_str(&cut(answer, MAX_DATA_CHARS)),
        Some(data) => {
            let pretty = serde_json::to_string_pretty(data).unwrap_or_default();
            let _ = write!(text, "```json\n{}\n```", cut(&pretty, MAX_DATA_CHARS));
        }
        None => text.push_str("(none)"),
    }
    text.push_str("\n\n## Files it produced\n");
    if seen.files.is_empty() {
        text.push_str("(none)\n");
    }
    let mut budget = MAX_FILES_CHARS;
    for file in &seen.files {
        let _ = writeln!(
            text,
            "### {} ({}, {} bytes)",
            file.name, file.media_type, file.size
        );
        match &file.text {
            Some(content) if budget > 0 => {
                let shown = cut(content, MAX_FILE_CHARS.min(budget));
                budget = budget.saturating_sub(shown.chars().count());
                let _ = writeln!(text, "{shown}");
            }
            Some(_) => text.push_str("(not shown: the files above used the space)\n"),
            None => text.push_str("(binary content; no text could be extracted)\n"),
        }
    }
    text.push_str("\n## Tool calls it made\n");
    text.push_str(&tool_calls(seen, transcript));
    text.push_str("\n## Expectations to grade\n");
    for (i, expectation) in case.assertions.iter().enumerate() {
        let _ = writeln!(text, "{}. {expectation}", i + 1);
    }
    text
}

/// The tool calls with arguments and results from the transcript, else their names.
fn tool_calls(seen: &Observation, transcript: Option<&Transcript>) -> String {
    let mut lines = String::new();
    if let Some(transcript) = transcript {
        for turn in &transcript.turns {
            let Some(answer) = &turn.answer else { continue };
            for call in &answer.tool_calls {
                let _ = writeln!(
                    lines,
                    "- {}({})",
                    call.name,
                    cut(&call.arguments.to_string(), MAX_TOOL_CHARS)
                );
                let result = turn
                    .sent
                    .iter()
                    .chain(transcript.turns.iter().flat_map(|t| t.sent.iter()))
                    .find(|m| m.call_id.as_deref() == Some(call.id.as_str()));
                if let Some(result) = result {
                    let _ = writeln!(lines, "  result: {}", cut(&result.text, MAX_TOOL_CHARS));
                }
            }
        }
    } else {
        for name in &seen.tool_calls {
            let _ = writeln!(lines, "- {name}");
        }
    }
    if lines.is_empty() {
        lines.push_str("(none)\n");
    }
    lines
}

/// `text`, cut to `max` characters with a note of what was left out.
fn cut(text: &str, max: usize) -> String {
    let count = text.chars().count();
    if count <= max {
        return text.to_owned();
    }
    let kept: String = text.chars().take(max).collect();
    format!("{kept}\n[... {} more characters not shown]", count - max)
}

/// Asks a run for its transcript (the judge reads the tool calls' arguments from it).
pub(crate) fn request_transcript(request: &mut SkillCallRequest) {
    request
        .metadata
        .insert(TRANSCRIPT_METADATA.into(), Value::Bool(true));
}

#[cfg(test)]
#[path = "judge_tests.rs"]
mod tests;
