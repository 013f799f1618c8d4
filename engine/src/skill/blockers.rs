//! [`Blockers`]: why a declared-`Published` skill cannot run on this host right now — tools or
//! toolkits it names that are missing, system tools its scripts need that the host does not
//! offer, the host's verdict on its provider settings, an environment that failed to build, an
//! edit of its folder that no longer loads (`serve --watch`) —
//! and how that reads to a client (the `blocked_reason` text and the metadata keys discover
//! shows).
//!
//! Each resolution (`Registry::resolve_*`) replaces one kind and keeps the others. Not here:
//! computing any of them (the registry's callers do), the registry's snapshot (`registry`).

use serde_json::{Map, Value, json};

/// Everything that blocks one skill; empty when nothing does.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Blockers {
    /// Declared tools the host does not have.
    pub missing_tools: Vec<String>,
    /// Declared toolkits the host does not have.
    pub missing_toolkits: Vec<String>,
    /// System tools (`metadata.a2e-system-tools`) the host does not offer to scripts, each with
    /// why (`soffice (not in [skills.scripts] tools)`).
    pub missing_system_tools: Vec<String>,
    /// Why the host does not allow the skill's own provider settings.
    pub provider_denied: Option<String>,
    /// Why the skill's script environment could not be built.
    pub environment_failed: Option<String>,
    /// Why the skill's folder no longer loads after an edit (hot reload): the registry keeps
    /// the last version that loaded, blocked with this reason, until an edit loads again.
    pub load_failed: Option<String>,
}

impl Blockers {
    /// Whether nothing blocks the skill.
    pub fn is_empty(&self) -> bool {
        self.missing_tools.is_empty()
            && self.missing_toolkits.is_empty()
            && self.missing_system_tools.is_empty()
            && self.provider_denied.is_none()
            && self.environment_failed.is_none()
            && self.load_failed.is_none()
    }

    /// Whether retrying could help: a missing tool or toolkit may be registered later, while the
    /// host's verdicts (provider, environment, system tools) hold until its config changes.
    pub fn may_clear_by_itself(&self) -> bool {
        self.provider_denied.is_none()
            && self.environment_failed.is_none()
            && self.missing_system_tools.is_empty()
            && self.load_failed.is_none()
    }

    /// One phrase per blocker, in a fixed order (`missing tools: calculator`, ...).
    pub fn reasons(&self) -> Vec<String> {
        let mut reasons = Vec::new();
        if !self.missing_tools.is_empty() {
            reasons.push(format!("missing tools: {}", self.missing_tools.join(", ")));
        }
        if !self.missing_toolkits.is_empty() {
            reasons.push(format!(
                "missing toolkits: {}",
                self.missing_toolkits.join(", ")
            ));
        }
        if !self.missing_system_tools.is_empty() {
            reasons.push(format!(
                "missing system tools: {}",
                self.missing_system_tools.join(", ")
            ));
        }
        if let Some(denied) = &self.provider_denied {
            reasons.push(denied.clone());
        }
        if let Some(failed) = &self.environment_failed {
            reasons.push(format!("environment: {failed}"));
        }
        if let Some(failed) = &self.load_failed {
            reasons.push(format!("load: {failed}"));
        }
        reasons
    }

    /// Writes the metadata keys discover shows for a blocked skill: `blocked_reason` and one
    /// key per non-empty kind.
    pub(crate) fn write_metadata(&self, metadata: &mut Map<String, Value>) {
        if !self.missing_tools.is_empty() {
            metadata.insert("missing_tools".to_owned(), json!(self.missing_tools));
        }
        if !self.missing_toolkits.is_empty() {
            metadata.insert("missing_toolkits".to_owned(), json!(self.missing_toolkits));
        }
        if !self.missing_system_tools.is_empty() {
            metadata.insert(
                "missing_system_tools".to_owned(),
                json!(self.missing_system_tools),
            );
        }
        if let Some(denied) = &self.provider_denied {
            metadata.insert("provider_denied".to_owned(), json!(denied));
        }
        if let Some(failed) = &self.environment_failed {
            metadata.insert("environment_failed".to_owned(), json!(failed));
        }
        if let Some(failed) = &self.load_failed {
            metadata.insert("load_failed".to_owned(), json!(failed));
        }
        metadata.insert(
            "blocked_reason".to_owned(),
            Value::String(self.reasons().join("; ")),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_and_metadata_name_every_kind_and_only_those_present() {
        let blockers = Blockers {
            missing_tools: vec!["calculator".into()],
            missing_system_tools: vec!["soffice (not offered)".into()],
            environment_failed: Some("uv failed".into()),
            ..Blockers::default()
        };
        assert!(!blockers.is_empty() && !blockers.may_clear_by_itself());
        assert_eq!(
            blockers.reasons().join("; "),
            "missing tools: calculator; missing system tools: soffice (not offered); \
             environment: uv failed"
        );
        let mut metadata = Map::new();
        blockers.write_metadata(&mut metadata);
        assert_eq!(
            metadata["missing_system_tools"],
            json!(["soffice (not offered)"])
        );
        assert!(!metadata.contains_key("missing_toolkits"));
        assert!(!metadata.contains_key("provider_denied"));
        assert!(Blockers::default().is_empty());
        let tools_only = Blockers {
            missing_tools: vec!["x".into()],
            ..Blockers::default()
        };
        assert!(tools_only.may_clear_by_itself());
    }
}
