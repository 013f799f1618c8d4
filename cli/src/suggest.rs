//! "Did you mean …?" for a skill name that is not loaded (the names from the engine's
//! `skill::suggest`). Commands refuse the unknown name with [`unknown_skill`] before they start
//! a model, so a typo costs no mock or provider start-up.
//!
//! Not here: the registry (`skillet_engine::skill`), the rejection a served call gets (`run`'s executor).

use std::sync::Arc;

use super::exit::{Failure, Outcome};
use super::setup::HostParts;
use crate::config::ProviderChoice;
use skillet_engine::skill::RegisteredSkill;
use skillet_engine::skill::closest_names;

/// The refusal of an unknown skill `typed` (exit 3, as a call rejected with `unknown_skill`),
/// naming the closest of `known`; `not_started` says what the refusal spared (e.g. "the
/// embedded mock was not started").
pub fn unknown_skill<'a>(
    typed: &str,
    known: impl IntoIterator<Item = &'a str>,
    not_started: &str,
) -> Failure {
    let near = closest_names(typed, known);
    let hint = match near.as_slice() {
        [] => String::new(),
        [one] => format!("; did you mean {one}?"),
        many => format!("; did you mean one of: {}?", many.join(", ")),
    };
    Failure {
        outcome: Outcome::Rejected,
        message: format!(
            "unknown_skill: no skill named {typed:?} is loaded{hint} \
             ({not_started}; `skillet discover` lists the skills)"
        ),
    }
}

/// The loaded skill `name`, or its refusal with suggestions ([`unknown_skill`]), for a
/// command that has loaded `parts` but started no model yet; the toolkits `parts` started are
/// shut down before a refusal.
pub async fn loaded_skill(parts: &HostParts, name: &str) -> Result<Arc<RegisteredSkill>, Failure> {
    if let Some(skill) = parts.skills.get(name) {
        return Ok(skill);
    }
    parts.tools.shutdown_toolkits().await;
    let spared = match parts.choice {
        ProviderChoice::EmbeddedMock { .. } => "the embedded mock was not started",
        ProviderChoice::Real { .. } => "no call was made",
    };
    let skills = parts.skills.skills();
    Err(unknown_skill(
        name,
        skills.iter().map(|s| s.compiled.name()),
        spared,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    const KNOWN: [&str; 5] = [
        "summarize",
        "expense-report",
        "code-review",
        "table-report",
        "translate",
    ];

    #[test]
    fn the_refusal_exits_3_names_the_suggestion_and_what_was_spared() {
        let failure = unknown_skill("summarise", KNOWN, "the embedded mock was not started");
        assert_eq!(failure.outcome, Outcome::Rejected);
        assert!(
            failure.message.contains("did you mean summarize?"),
            "{}",
            failure.message
        );
        assert!(
            failure.message.contains("unknown_skill"),
            "{}",
            failure.message
        );
        assert!(
            failure.message.contains("mock was not started"),
            "{}",
            failure.message
        );
    }
}
