//! The typed answers the rig peer asks for, one Rust type per skill, written as a rig user
//! writes an output type (`serde` + `schemars` derives), with the constraints of the skill's
//! `output.schema.json` as schemars attributes (and nothing the skill's schema does not say). rig sends the derived schema as the run's
//! structured output (`response_format: json_schema`). Not here: the tools and the agent.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

// `length-check` (bench/peers/skills/length-check): the verdict and the quotient. A plain
// comment, not a doc comment: schemars would send a doc comment as the schema's `description`,
// which the skill's schema does not have.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct LengthCheck {
    pub verdict: Verdict,
    #[schemars(range(min = 0))]
    pub score: f64,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Fits,
    TooLong,
}

// `summarize` (skills/summarize).
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Summary {
    #[schemars(length(min = 1))]
    pub summary: String,
    #[schemars(length(min = 1, max = 5), inner(length(min = 1)))]
    pub key_points: Vec<String>,
}

// `expense-report` (skills/expense-report).
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct ExpenseReport {
    #[schemars(range(min = 0))]
    pub total: f64,
    #[schemars(regex(pattern = r"^[A-Z]{3}$"))]
    pub currency: String,
    #[schemars(length(min = 1))]
    pub largest_item: String,
    pub notes: String,
}

#[cfg(test)]
mod tests {
    use super::{ExpenseReport, LengthCheck, Summary};
    use schemars::{JsonSchema, schema_for};
    use serde_json::Value;

    /// `schema` with its `$ref`s to `$defs` written out and what schemars adds on its own
    /// (`$schema`, `title`, `$defs`, a number's `format`) left out.
    fn plain(schema: &Value, defs: &Value) -> Value {
        match schema {
            Value::Object(map) => {
                if let Some(Value::String(name)) = map.get("$ref") {
                    let name = name.trim_start_matches("#/$defs/");
                    return plain(&defs[name], defs);
                }
                let kept = map.iter().filter(|(k, _)| {
                    !matches!(k.as_str(), "$schema" | "title" | "$defs" | "format")
                });
                Value::Object(kept.map(|(k, v)| (k.clone(), plain(v, defs))).collect())
            }
            Value::Array(items) => Value::Array(items.iter().map(|v| plain(v, defs)).collect()),
            other => other.clone(),
        }
    }

    fn says_what_the_skill_says<T: JsonSchema>(skill_schema: &str) {
        let derived = schema_for!(T).to_value();
        let derived = plain(&derived, &derived["$defs"]);
        let written: Value =
            serde_json::from_str(skill_schema).expect("the skill's schema is JSON");
        let written = plain(&written, &Value::Null);
        assert_eq!(derived["properties"], written["properties"]);
        assert_eq!(derived["required"], written["required"]);
    }

    #[test]
    fn each_output_type_says_what_its_skills_output_schema_says() {
        says_what_the_skill_says::<LengthCheck>(include_str!(
            "../../skills/length-check/assets/output.schema.json"
        ));
        says_what_the_skill_says::<Summary>(include_str!(
            "../../../../skills/summarize/assets/output.schema.json"
        ));
        says_what_the_skill_says::<ExpenseReport>(include_str!(
            "../../../../skills/expense-report/assets/output.schema.json"
        ));
    }
}
