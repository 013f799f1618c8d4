//! "Did you mean …?" for a skill name that is not loaded: the closest loaded names by edit
//! distance, and names that contain (or are contained in) what was typed, at most
//! [`MAX_SUGGESTIONS`]. Commands refuse the unknown name with [`unknown_skill`] before they
//! start a model, so a typo costs no mock or provider start-up.
//!
//! Not here: the registry (`skillet_engine::skill`), the rejection a served call gets (`run`'s executor).

use std::sync::Arc;

use super::exit::{Failure, Outcome};
use super::setup::HostParts;
use crate::config::ProviderChoice;
use skillet_engine::skill::RegisteredSkill;

/// The most names one refusal suggests.
pub const MAX_SUGGESTIONS: usize = 3;

/// The names among `known` closest to `typed`, best first: each within an edit distance of a
/// third of the longer name (at least 2), or containing `typed` or contained in it.
pub fn closest<'a>(typed: &str, known: impl IntoIterator<Item = &'a str>) -> Vec<&'a str> {
    let typed_lower = typed.to_lowercase();
    let mut scored: Vec<(usize, &str)> = known
        .into_iter()
        .filter_map(|name| {
            let lower = name.to_lowercase();
            let distance = edit_distance(&typed_lower, &lower);
            let longest = typed_lower.chars().count().max(lower.chars().count());
            let near = distance <= (longest / 3).max(2);
            let overlaps = !typed_lower.is_empty()
                && (lower.contains(&typed_lower) || typed_lower.contains(&lower));
            (near || overlaps).then_some((distance, name))
        })
        .collect();
    scored.sort_unstable();
    scored.dedup();
    scored
        .into_iter()
        .take(MAX_SUGGESTIONS)
        .map(|(_, name)| name)
        .collect()
}

/// The refusal of an unknown skill `typed` (exit 3, as a call rejected with `unknown_skill`),
/// naming the closest of `known`; `not_started` says what the refusal spared (e.g. "the
/// embedded mock was not started").
pub fn unknown_skill<'a>(
    typed: &str,
    known: impl IntoIterator<Item = &'a str>,
    not_started: &str,
) -> Failure {
    let near = closest(typed, known);
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
    Err(unknown_skill(name, skills.iter().map(|s| s.name()), spared))
}

/// Levenshtein distance over characters (two rows).
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    let mut current = vec![0; b.len() + 1];
    for (i, ca) in a.chars().enumerate() {
        current[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(ca != *cb);
            current[j + 1] = substitution.min(previous[j + 1] + 1).min(current[j] + 1);
        }
        std::mem::swap(&mut previous, &mut current);
    }
    previous[b.len()]
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
    fn edit_distance_counts_insertions_deletions_and_substitutions() {
        assert_eq!(edit_distance("", ""), 0);
        assert_eq!(edit_distance("summarise", "summarize"), 1);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("abc", ""), 3);
    }

    #[test]
    fn a_typo_suggests_the_nearest_name_first_and_a_fragment_the_names_containing_it() {
        assert_eq!(closest("summarise", KNOWN), ["summarize"]);
        assert_eq!(closest("report", KNOWN), ["table-report", "expense-report"]);
        assert_eq!(closest("Code-Reveiw", KNOWN), ["code-review"]);
        assert!(closest("zzzzzzzzzz", KNOWN).is_empty());
    }

    #[test]
    fn at_most_three_names_are_suggested() {
        let many = ["ab-1", "ab-2", "ab-3", "ab-4"];
        assert_eq!(closest("ab", many).len(), MAX_SUGGESTIONS);
    }

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
