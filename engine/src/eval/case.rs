//! The eval cases of a skill folder: `evals/evals.json`, read once and turned into typed
//! [`EvalCase`]s (arguments assembled, regexes and schemas compiled), or every problem found.
//!
//! The file is the Agent Skills `evals.json` (`skill_name`, `evals[]` with `id`, `prompt`,
//! `expected_output`, `files`, `assertions`), which describes success in natural language for a
//! judge model; Skillet adds what a machine can check: `arguments` (or `arguments_file`) for
//! skills with an input schema, and `expect` (outcome, schema, JSON-pointer checks, the tool
//! trace, turns, cost). `docs/EVALS.md` is the reference.
//!
//! Files are read as the skill loader reads assets (`skill::SkillDir`): only paths inside the
//! skill folder (no `..`, no absolute path, no symlink out), text only, size-capped.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::Deserialize;
use serde_json::{Map, Value};

use super::check::{Check, ExpectationError, ExpectedOutcome, PointerTest};
use super::file_check::RawFileExpectation;
use crate::files::{INPUT_FILES_KEY, input_file_value};
use crate::protocol::ErrorCode;
use crate::schema::CompiledSchema;
use crate::skill::{
    AssetProblem, CompiledSkill, MAX_ASSET_BYTES, ManifestError, SkillDir, read_capped,
    read_capped_bytes,
};

pub use skillet_core::workbench::EVALS_FILE;

/// A skill's eval cases.
#[derive(Debug, Clone)]
pub struct EvalSuite {
    /// The skill they evaluate.
    pub skill_name: String,
    /// The cases, in file order.
    pub cases: Vec<EvalCase>,
}

/// One case: the arguments of a call and the checks its result must pass.
#[derive(Debug, Clone)]
pub struct EvalCase {
    /// The case's `id` as written (a number or a string).
    pub id: String,
    /// Its `name`, else its `id`: what reports and `--case` use.
    pub name: String,
    /// The call's arguments (`prompt` and `files` folded in).
    pub arguments: Map<String, Value>,
    /// What success looks like, for humans.
    pub expected_output: Option<String>,
    /// Natural-language assertions (need a judge model; reported, not graded).
    pub assertions: Vec<String>,
    /// The machine checks, the outcome check first.
    pub checks: Vec<Check>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSuite {
    skill_name: String,
    evals: Vec<RawCase>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum RawId {
    Number(u64),
    Text(String),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCase {
    id: RawId,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    prompt: Option<String>,
    #[serde(default)]
    arguments: Option<Map<String, Value>>,
    #[serde(default)]
    arguments_file: Option<String>,
    #[serde(default)]
    files: Vec<String>,
    #[serde(default)]
    expected_output: Option<String>,
    #[serde(default, alias = "expectations")]
    assertions: Vec<String>,
    #[serde(default)]
    expect: RawExpect,
}

#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawExpect {
    #[serde(default)]
    success: Option<bool>,
    #[serde(default)]
    error_code: Option<ErrorCode>,
    #[serde(default)]
    schema: Option<RawSchema>,
    #[serde(default)]
    output: Vec<RawPointerCheck>,
    #[serde(default)]
    tools: RawTools,
    #[serde(default)]
    max_turns: Option<u32>,
    #[serde(default)]
    max_cost: Option<f64>,
    #[serde(default)]
    files: Vec<RawFileExpectation>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum RawSchema {
    /// `true`: the skill's output schema.
    Own(bool),
    /// A schema file inside the skill folder.
    File(String),
}

#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTools {
    #[serde(default)]
    called: Vec<String>,
    #[serde(default)]
    not_called: Vec<String>,
    #[serde(default)]
    at_most: BTreeMap<String, u32>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPointerCheck {
    pointer: String,
    #[serde(default, deserialize_with = "present")]
    equals: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    contains: Option<Value>,
    #[serde(default)]
    regex: Option<String>,
    #[serde(default)]
    min: Option<f64>,
    #[serde(default)]
    max: Option<f64>,
}

/// A field that is present, even as `null` (`"equals": null` checks for a null).
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

/// Loads `evals/evals.json` of `skill`'s folder; every problem is reported, as
/// `file:location: reason`.
pub fn load_suite(skill: &CompiledSkill) -> Result<EvalSuite, Vec<ManifestError>> {
    let Some(dir) = skill.dir.as_deref() else {
        return Err(vec![ManifestError::error(
            Path::new(skill.name()),
            "evals",
            "the skill has no folder (a native skill); evals live in a skill folder",
        )]);
    };
    let folder = SkillDir::new(dir);
    let file = dir.join(EVALS_FILE);
    let whole =
        |reason: AssetProblem| vec![ManifestError::error(&file, "evals", reason.to_string())];
    let path = folder.resolve(EVALS_FILE).map_err(whole)?;
    let text = read_capped(&path, MAX_ASSET_BYTES).map_err(whole)?;
    let raw: RawSuite = serde_json::from_str(&text).map_err(|e| {
        let mut error = ManifestError::error(&file, "evals", e.to_string());
        error.line = Some(e.line());
        error.column = Some(e.column());
        vec![error]
    })?;
    let mut problems = Vec::new();
    if raw.skill_name != skill.name() {
        problems.push(ManifestError::error(
            &file,
            "skill_name",
            format!(
                "{:?} is not this skill's name {:?}",
                raw.skill_name,
                skill.name()
            ),
        ));
    }
    let loader = CaseLoader {
        folder: &folder,
        file: &file,
        output_schema: skill.output_schema.as_ref(),
    };
    let mut cases = Vec::new();
    let mut names = BTreeSet::new();
    for (index, raw_case) in raw.evals.into_iter().enumerate() {
        match loader.case(index, raw_case) {
            Ok(case) => {
                if !names.insert(case.name.clone()) {
                    problems.push(ManifestError::error(
                        &file,
                        format!("evals[{index}]"),
                        format!("a second case named {:?}", case.name),
                    ));
                }
                cases.push(case);
            }
            Err(mut found) => problems.append(&mut found),
        }
    }
    if cases.is_empty() && problems.is_empty() {
        problems.push(ManifestError::error(&file, "evals", "no cases"));
    }
    if problems.is_empty() {
        Ok(EvalSuite {
            skill_name: raw.skill_name,
            cases,
        })
    } else {
        Err(problems)
    }
}

struct CaseLoader<'a> {
    folder: &'a SkillDir<'a>,
    file: &'a Path,
    output_schema: Option<&'a CompiledSchema>,
}

impl CaseLoader<'_> {
    fn case(&self, index: usize, raw: RawCase) -> Result<EvalCase, Vec<ManifestError>> {
        let mut problems = Vec::new();
        let at = |field: &str| format!("evals[{index}].{field}");
        let mut problem = |field: &str, reason: String| {
            problems.push(ManifestError::error(self.file, at(field), reason));
        };
        let id = match raw.id {
            RawId::Number(n) => n.to_string(),
            RawId::Text(text) => text,
        };
        let name = raw.name.unwrap_or_else(|| id.clone());
        if name.trim().is_empty() {
            problem("name", "a case needs a non-empty id or name".into());
        }

        let mut arguments = match (raw.arguments, &raw.arguments_file) {
            (Some(_), Some(_)) => {
                problem(
                    "arguments",
                    "give arguments or arguments_file, not both".into(),
                );
                Map::new()
            }
            (Some(inline), None) => inline,
            (None, Some(relative)) => match self.folder.read_json(relative) {
                Ok(Value::Object(map)) => map,
                Ok(_) => {
                    problem("arguments_file", format!("{relative}: not a JSON object"));
                    Map::new()
                }
                Err(e) => {
                    problem("arguments_file", format!("{relative}: {}", e.reason));
                    Map::new()
                }
            },
            (None, None) => Map::new(),
        };
        if let Some(prompt) = raw.prompt {
            if arguments.contains_key("prompt") {
                problem("prompt", "the arguments already have a `prompt`".into());
            }
            arguments.insert("prompt".into(), Value::String(prompt));
        }
        if !raw.files.is_empty() {
            if arguments.contains_key(INPUT_FILES_KEY) {
                problem(
                    "files",
                    format!("the arguments already have `{INPUT_FILES_KEY}`"),
                );
            }
            let mut files = Vec::new();
            for (i, relative) in raw.files.iter().enumerate() {
                match self.input_file(relative) {
                    Ok(file) => files.push(file),
                    Err(reason) => problem(&format!("files[{i}]"), reason),
                }
            }
            arguments.insert(INPUT_FILES_KEY.into(), Value::Array(files));
        }

        let checks = self.checks(raw.expect, &mut problem);
        if problems.is_empty() {
            Ok(EvalCase {
                id,
                name,
                arguments,
                expected_output: raw.expected_output,
                assertions: raw.assertions,
                checks,
            })
        } else {
            Err(problems)
        }
    }

    fn checks(&self, expect: RawExpect, problem: &mut impl FnMut(&str, String)) -> Vec<Check> {
        let outcome = match (expect.success, expect.error_code) {
            (Some(true), Some(code)) => {
                problem(
                    "expect.error_code",
                    format!("{code} contradicts \"success\": true"),
                );
                ExpectedOutcome::Success
            }
            (_, Some(code)) => ExpectedOutcome::Code(code),
            (Some(false), None) => ExpectedOutcome::AnyFailure,
            (Some(true) | None, None) => ExpectedOutcome::Success,
        };
        let mut checks = vec![Check::Outcome(outcome)];
        match expect.schema {
            None | Some(RawSchema::Own(false)) => {}
            Some(RawSchema::Own(true)) => match self.output_schema {
                Some(schema) => checks.push(Check::Schema {
                    schema: schema.clone(),
                    origin: "the output schema".into(),
                }),
                None => problem("expect.schema", "the skill has no output schema".into()),
            },
            Some(RawSchema::File(relative)) => match self.schema_file(&relative) {
                Ok(schema) => checks.push(Check::Schema {
                    schema,
                    origin: relative,
                }),
                Err(reason) => problem("expect.schema", reason),
            },
        }
        for (i, raw) in expect.output.into_iter().enumerate() {
            match pointer_check(raw) {
                Ok(check) => checks.push(check),
                Err(reason) => problem(&format!("expect.output[{i}]"), reason.to_string()),
            }
        }
        let tools = expect.tools;
        checks.extend(tools.called.into_iter().map(Check::ToolCalled));
        checks.extend(tools.not_called.into_iter().map(Check::ToolNotCalled));
        checks.extend(
            tools
                .at_most
                .into_iter()
                .map(|(name, n)| Check::ToolAtMost(name, n)),
        );
        if let Some(turns) = expect.max_turns {
            checks.push(Check::MaxTurns(turns));
        }
        if let Some(cost) = expect.max_cost {
            if cost.is_finite() && cost >= 0.0 {
                checks.push(Check::MaxCost(cost));
            } else {
                problem("expect.max_cost", format!("{cost} is not a cost"));
            }
        }
        for (i, raw) in expect.files.into_iter().enumerate() {
            match raw.compile() {
                Ok(file) => checks.push(Check::File(file)),
                Err(reason) => problem(&format!("expect.files[{i}]"), reason.to_string()),
            }
        }
        checks
    }

    fn schema_file(&self, relative: &str) -> Result<CompiledSchema, String> {
        let document = self
            .folder
            .read_json(relative)
            .map_err(|e| format!("{relative}: {}", e.reason))?;
        CompiledSchema::compile(&document).map_err(|e| format!("{relative}: {e}"))
    }

    /// An input file as the `_files` argument carries it, encoded as `skillet run --file`
    /// sends one ([`input_file_value`]): its name, and its content as text when it is UTF-8,
    /// else base64. It lands in the run's workspace like any caller's file.
    fn input_file(&self, relative: &str) -> Result<Value, String> {
        let path = self.folder.resolve(relative).map_err(|e| e.to_string())?;
        let bytes =
            read_capped_bytes(&path, MAX_ASSET_BYTES).map_err(|e| format!("{relative}: {e}"))?;
        let name = Path::new(relative)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| relative.to_owned());
        Ok(input_file_value(&name, bytes))
    }
}

fn pointer_check(raw: RawPointerCheck) -> Result<Check, ExpectationError> {
    if !(raw.pointer.is_empty() || raw.pointer.starts_with('/')) {
        return Err(ExpectationError::NotAPointer(raw.pointer));
    }
    let range = (raw.min.is_some() || raw.max.is_some()).then_some(PointerTest::Range {
        min: raw.min,
        max: raw.max,
    });
    let regex = match raw.regex {
        Some(pattern) => Some(PointerTest::Regex(
            regex::Regex::new(&pattern)
                .map_err(|error| ExpectationError::Regex { pattern, error })?,
        )),
        None => None,
    };
    let tests: Vec<PointerTest> = [
        raw.equals.map(PointerTest::Equals),
        raw.contains.map(PointerTest::Contains),
        regex,
        range,
    ]
    .into_iter()
    .flatten()
    .collect();
    let [test] = <[PointerTest; 1]>::try_from(tests)
        .map_err(|tests| ExpectationError::NotOneTest(tests.len()))?;
    if let PointerTest::Range {
        min: Some(min),
        max: Some(max),
    } = &test
        && min > max
    {
        return Err(ExpectationError::Range {
            min: *min,
            max: *max,
        });
    }
    Ok(Check::Output {
        pointer: raw.pointer,
        test,
    })
}

#[cfg(test)]
#[path = "case_tests.rs"]
mod tests;
