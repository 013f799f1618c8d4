//! "Did you mean …?": the loaded skill names closest to one that is not loaded, by edit
//! distance, and names that contain (or are contained in) it, at most [`MAX_SUGGESTIONS`]. The one
//! rule for every caller: the facade's `SkillError::UnknownSkill` and the CLI's refusal before a
//! model starts.
//!
//! Not here: how a refusal is worded (each caller's).

/// The most names one refusal suggests.
pub(crate) const MAX_SUGGESTIONS: usize = 3;

/// The names among `known` closest to `typed`, best first: each within an edit distance of a
/// third of the longer name (at least 2), or containing `typed` or contained in it.
pub fn closest_names<'a>(typed: &str, known: impl IntoIterator<Item = &'a str>) -> Vec<&'a str> {
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
        assert_eq!(closest_names("summarise", KNOWN), ["summarize"]);
        assert_eq!(
            closest_names("report", KNOWN),
            ["table-report", "expense-report"]
        );
        assert_eq!(closest_names("Code-Reveiw", KNOWN), ["code-review"]);
        assert!(closest_names("zzzzzzzzzz", KNOWN).is_empty());
    }

    #[test]
    fn at_most_three_names_are_suggested() {
        let many = ["ab-1", "ab-2", "ab-3", "ab-4"];
        assert_eq!(closest_names("ab", many).len(), MAX_SUGGESTIONS);
    }
}
