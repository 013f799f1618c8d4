//! Evals free of leaked answers: a value a case expects (`equals` / `contains` of an `output`
//! check) that the skill's instructions or description already show, so a model that copies the
//! instructions' example passes without doing the work. `skillet validate` warns about each
//! (an error under `--strict`), and `skillet eval` says so before it runs.
//!
//! Not a leak: a value the case's own arguments hold (echoing the input is the task), a value
//! the output schema names (an `enum` or `const` member is the contract), and values too short to
//! mean anything (booleans, `null`, strings under four characters, the numbers 0–9).

use serde_json::Value;

use super::case::EvalSuite;
use super::check::{Check, PointerTest};
use crate::skill::CompiledSkill;

/// A value an eval expects that the skill's own text shows.
#[derive(Debug, Clone, PartialEq)]
pub struct Leak {
    /// The case.
    pub case: String,
    /// The check's pointer into the data.
    pub pointer: String,
    /// The value, as JSON.
    pub value: String,
}

impl std::fmt::Display for Leak {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "case {:?} expects {} at {} and SKILL.md shows it: a model that copies the \
             instructions passes without the work; use other values in the instructions' example",
            self.case,
            self.value,
            if self.pointer.is_empty() {
                "(root)"
            } else {
                &self.pointer
            }
        )
    }
}

/// The expected values of `suite` that `skill`'s instructions or description show.
pub fn leaked_values(skill: &CompiledSkill, suite: &EvalSuite) -> Vec<Leak> {
    let text = format!("{}\n{}", skill.spec.description, skill.spec.instructions);
    let schema = skill
        .output_schema
        .as_ref()
        .map(|s| s.source().to_string())
        .unwrap_or_default();
    let mut leaks = Vec::new();
    for case in &suite.cases {
        let arguments = Value::Object(case.arguments.clone()).to_string();
        for check in &case.checks {
            let Check::Output { pointer, test } = check else {
                continue;
            };
            let value = match test {
                PointerTest::Equals(value) | PointerTest::Contains(value) => value,
                _ => continue,
            };
            let Some(needle) = meaningful(value) else {
                continue;
            };
            let shown = |haystack: &str| appears(haystack, &needle, value.is_number());
            if shown(&text) && !shown(&arguments) && !shown(&schema) {
                leaks.push(Leak {
                    case: case.name.clone(),
                    pointer: pointer.clone(),
                    value: value.to_string(),
                });
            }
        }
    }
    leaks
}

/// The text to look for, for a value that means something.
fn meaningful(value: &Value) -> Option<String> {
    match value {
        Value::String(text) if text.chars().count() >= 4 => Some(text.clone()),
        Value::Number(n)
            if n.as_f64()
                .is_some_and(|x| x.abs() >= 10.0 || x.fract() != 0.0) =>
        {
            Some(n.to_string())
        }
        _ => None,
    }
}

/// Whether `needle` is in `haystack`; a number only as a whole number (`234.8` is not in
/// `1234.85`).
fn appears(haystack: &str, needle: &str, number: bool) -> bool {
    if !number {
        return haystack.contains(needle);
    }
    haystack.match_indices(needle).any(|(at, _)| {
        let before = haystack[..at].chars().next_back();
        let mut after = haystack[at + needle.len()..].chars();
        let continues = match after.next() {
            Some(c) if c.is_ascii_digit() => true,
            // `234.8` followed by `.5` is `234.8.5`-like text only when a digit follows.
            Some('.') => after.next().is_some_and(|c| c.is_ascii_digit()),
            _ => false,
        };
        let starts_inside = before.is_some_and(|c| c.is_ascii_digit() || c == '.');
        !starts_inside && !continues
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::case::EvalCase;
    use serde_json::json;

    fn skill(instructions: &str) -> CompiledSkill {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../skills/summarize");
        let mut skill = crate::skill::load_skill_dir(&root, crate::skill::SkillSource::System)
            .expect("summarize loads");
        skill.spec.instructions = instructions.to_owned();
        skill
    }

    fn suite(checks: Vec<(&str, Value)>, arguments: Value) -> EvalSuite {
        let Value::Object(arguments) = arguments else {
            panic!("arguments are an object")
        };
        EvalSuite {
            skill_name: "summarize".into(),
            cases: vec![EvalCase {
                id: "1".into(),
                name: "c".into(),
                arguments,
                expected_output: None,
                assertions: Vec::new(),
                checks: checks
                    .into_iter()
                    .map(|(pointer, value)| Check::Output {
                        pointer: pointer.into(),
                        test: PointerTest::Equals(value),
                    })
                    .collect(),
            }],
        }
    }

    #[test]
    fn an_expected_value_the_instructions_show_is_a_leak_unless_the_input_or_schema_holds_it() {
        let skill = skill(
            "Reply shaped like {\"total\": 234.8, \"largest_item\": \"Hotel\", \"currency\": \"EUR\"}.",
        );
        let suite = suite(
            vec![
                ("/total", json!(234.8)),
                ("/largest_item", json!("Hotel")),
                ("/currency", json!("EUR")),
                ("/count", json!(3)),
            ],
            json!({"items": [{"description": "Train", "amount": 42.5}]}),
        );
        let leaks = leaked_values(&skill, &suite);
        let values: Vec<&str> = leaks.iter().map(|l| l.value.as_str()).collect();
        assert_eq!(values, ["234.8", "\"Hotel\""]);
        assert!(
            leaks[0]
                .to_string()
                .contains("case \"c\" expects 234.8 at /total")
        );

        let echoed = self::suite(
            vec![("/largest_item", json!("Hotel"))],
            json!({"items": [{"description": "Hotel", "amount": 180}]}),
        );
        assert!(
            leaked_values(&skill, &echoed).is_empty(),
            "the input holds it"
        );
        assert!(leaked_values(&self::skill("No example."), &suite).is_empty());
    }

    #[test]
    fn a_number_counts_only_as_a_whole_number() {
        assert!(appears("total 234.8.", "234.8", true));
        assert!(!appears("total 1234.85", "234.8", true));
        assert!(!appears("total 234.85", "234.8", true));
        assert!(appears("{\"total\":234.8}", "234.8", true));
    }
}
