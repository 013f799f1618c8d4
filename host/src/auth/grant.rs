//! What an identity may do: a [`Grant`] (skill names or globs, tags or categories, whether
//! `llm_override` may be sent) is what one scope allows; [`Permissions`] is the union of the
//! grants of a caller's scopes, checked against a skill's definition.
//!
//! A grant matches a skill when its name matches one of the grant's globs **or** one of the
//! skill's tags (or its category) is among the grant's tags. A grant with neither matches
//! nothing: "everything" is written `skills = ["*"]`, never implied.
//!
//! Not here: who the caller is (`api_key`, `jwt`), admission (the core).

use std::collections::BTreeSet;

use globset::{Glob, GlobSet, GlobSetBuilder};
use skillet_protocol::SkillDefinition;

/// What one scope allows.
#[derive(Debug, Clone)]
pub struct Grant {
    skills: GlobSet,
    /// The globs as written (for the card's `securityRequirements`).
    patterns: Vec<String>,
    tags: BTreeSet<String>,
    llm_override: bool,
}

/// A glob in a grant that does not parse.
#[derive(Debug, thiserror::Error)]
#[error("skill pattern {pattern:?}: {reason}")]
pub struct GrantError {
    pattern: String,
    reason: String,
}

impl Grant {
    /// A grant of the skills whose name matches one of `skills` (globs: `*`, `?`, `[ab]`) or
    /// that carry one of `tags` (a skill's category counts as a tag); `llm_override`: whether
    /// its calls may carry an `llm_override` (the host's `[llm_override]` policy still applies).
    pub fn new(
        skills: &[String],
        tags: &[String],
        llm_override: bool,
    ) -> Result<Grant, GrantError> {
        let mut set = GlobSetBuilder::new();
        for pattern in skills {
            let glob = Glob::new(pattern).map_err(|e| GrantError {
                pattern: pattern.clone(),
                reason: e.kind().to_string(),
            })?;
            set.add(glob);
        }
        let skills_set = set.build().map_err(|e| GrantError {
            pattern: skills.join(","),
            reason: e.to_string(),
        })?;
        Ok(Grant {
            skills: skills_set,
            patterns: skills.to_vec(),
            tags: tags.iter().cloned().collect(),
            llm_override,
        })
    }

    /// Whether this grant covers `skill`.
    pub fn covers(&self, skill: &SkillDefinition) -> bool {
        self.covers_name(&skill.name) || self.covers_tags(skill)
    }

    /// Whether the skill name alone is covered (no definition needed).
    pub fn covers_name(&self, name: &str) -> bool {
        self.skills.is_match(name)
    }

    fn covers_tags(&self, skill: &SkillDefinition) -> bool {
        if self.tags.is_empty() {
            return false;
        }
        let tagged = skill.tags.iter().flatten().any(|t| self.tags.contains(t));
        tagged
            || skill
                .category
                .as_ref()
                .is_some_and(|c| self.tags.contains(c))
    }

    /// Whether calls under this grant may carry `llm_override`.
    pub fn allows_llm_override(&self) -> bool {
        self.llm_override
    }

    /// Whether the grant needs a skill's tags to decide (it has tags).
    pub(crate) fn has_tags(&self) -> bool {
        !self.tags.is_empty()
    }

    /// The skill globs as written.
    pub fn patterns(&self) -> &[String] {
        &self.patterns
    }
}

/// The grants of one caller's scopes, by scope name.
#[derive(Debug, Clone, Default)]
pub struct Permissions {
    grants: Vec<(String, Grant)>,
    scopes: BTreeSet<String>,
}

impl Permissions {
    /// The permissions of a caller holding `scopes`, looking each scope up in `grants` (scopes
    /// with no grant still count for [`Permissions::has_scope`], e.g. the metrics scope).
    pub fn from_scopes<'a>(
        scopes: impl IntoIterator<Item = &'a str>,
        grants: &[(String, Grant)],
    ) -> Permissions {
        let scopes: BTreeSet<String> = scopes.into_iter().map(str::to_owned).collect();
        let grants = grants
            .iter()
            .filter(|(name, _)| scopes.contains(name))
            .cloned()
            .collect();
        Permissions { grants, scopes }
    }

    /// Whether the caller holds `scope`.
    pub fn has_scope(&self, scope: &str) -> bool {
        self.scopes.contains(scope)
    }

    /// The caller's scopes.
    pub fn scopes(&self) -> impl Iterator<Item = &str> {
        self.scopes.iter().map(String::as_str)
    }

    /// Whether some grant covers `skill`; with `llm_override`, one that covers it must also
    /// allow overrides.
    pub fn may_run(&self, skill: &SkillDefinition, llm_override: bool) -> bool {
        self.grants
            .iter()
            .any(|(_, g)| g.covers(skill) && (!llm_override || g.allows_llm_override()))
    }

    /// Decides from the name alone when that is enough: `Some(true)` when a name glob covers
    /// it (with the override rule), `None` when a tag grant might still (look the skill up),
    /// `Some(false)` when nothing can.
    pub fn may_run_name(&self, name: &str, llm_override: bool) -> Option<bool> {
        let allowed = |g: &Grant| !llm_override || g.allows_llm_override();
        if self
            .grants
            .iter()
            .any(|(_, g)| g.covers_name(name) && allowed(g))
        {
            return Some(true);
        }
        if self.grants.iter().any(|(_, g)| g.has_tags() && allowed(g)) {
            return None;
        }
        Some(false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn skill(name: &str, tags: &[&str], category: Option<&str>) -> SkillDefinition {
        let mut def: SkillDefinition = serde_json::from_value(serde_json::json!({
            "name": name, "version": "1", "description": "d", "triggers": [],
            "status": "Published", "input_schema": {}, "output_schema": {},
            "when_to_use": "", "argument_hint": "", "source": "user"
        }))
        .unwrap();
        def.tags = Some(tags.iter().map(|t| (*t).to_owned()).collect());
        def.category = category.map(str::to_owned);
        def
    }

    fn grants() -> Vec<(String, Grant)> {
        vec![
            (
                "summarize".into(),
                Grant::new(&["summar*".into()], &[], false).unwrap(),
            ),
            (
                "text".into(),
                Grant::new(&[], &["text".into()], true).unwrap(),
            ),
        ]
    }

    #[test]
    fn a_caller_runs_what_a_glob_or_a_tag_of_its_scopes_covers_and_nothing_else() {
        let p = Permissions::from_scopes(["summarize"], &grants());
        assert!(p.may_run(&skill("summarize-long", &[], None), false));
        assert!(!p.may_run(&skill("translate", &["text"], None), false));
        let p = Permissions::from_scopes(["text"], &grants());
        assert!(p.may_run(&skill("translate", &["text"], None), false));
        assert!(p.may_run(&skill("poem", &[], Some("text")), false));
        assert!(!p.may_run(&skill("summarize", &[], None), false));
        let none = Permissions::from_scopes(["other"], &grants());
        assert!(!none.may_run(&skill("summarize", &["text"], None), false));
    }

    #[test]
    fn llm_override_needs_a_grant_that_allows_it() {
        let p = Permissions::from_scopes(["summarize", "text"], &grants());
        assert!(!p.may_run(&skill("summarize", &[], None), true));
        assert!(p.may_run(&skill("summarize", &["text"], None), true));
        assert_eq!(p.may_run_name("summarize", false), Some(true));
        assert_eq!(p.may_run_name("x", false), None);
        let only_names = Permissions::from_scopes(["summarize"], &grants());
        assert_eq!(only_names.may_run_name("x", false), Some(false));
    }

    #[test]
    fn a_bad_glob_is_an_error_naming_it() {
        let err = Grant::new(&["a[".into()], &[], false).unwrap_err();
        assert!(err.to_string().contains("a["), "{err}");
    }
}
