//! `[approvals]`: what the host does with tool calls that need a person's approval.
//!
//! Which tools need it is said where each tool is declared — `[tools.NAME] approval =
//! "always"` for a command tool, `[skills.scripts] approval = "always"` for
//! `run_skill_script` — or here by name (`tools`) for tools the host does not declare in a
//! table of their own (a toolkit's tools, the built-in file tools). A skill's
//! `metadata.a2e-approval` adds to these for its own calls and cannot remove any.
//!
//! `default` is the decision for calls whose door cannot ask anyone (A2E over stdio or HTTP,
//! NATS, an MCP client without elicitation): `"deny"` (the default; the model reads a tool
//! error) or `"allow"`. MCP clients with elicitation and A2A callers are asked instead.
//!
//! Not here: asking (the doors in `skillet-host`) and the gate itself
//! (`skillet_engine::run::approval`).

use serde::Deserialize;
use skillet_engine::run::{ApprovalPolicy, ToolApproval, Unasked};

use super::{Config, ToolConfig};

/// `[approvals]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ApprovalsConfig {
    /// The decision for calls nobody can be asked about (default `deny`).
    pub default: Unasked,
    /// Registered tool names whose every call needs approval, besides the tables that say so.
    pub tools: Vec<String>,
}

impl Config {
    /// The engine's approval policy from `[approvals]`, `[tools.NAME] approval` and
    /// `[skills.scripts] approval`.
    pub fn approval_policy(&self) -> ApprovalPolicy {
        let mut policy = ApprovalPolicy::new().when_unasked(self.approvals.default);
        for (name, tool) in &self.tools {
            let ToolConfig::Command(command) = tool;
            if command.approval == ToolApproval::Always {
                policy = policy.require(name.clone());
            }
        }
        if self.skills.scripts.approval == ToolApproval::Always {
            policy = policy.require("run_skill_script");
        }
        for name in &self.approvals.tools {
            policy = policy.require(name.clone());
        }
        policy
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    fn policy(text: &str) -> ApprovalPolicy {
        Config::from_toml_str(text, Path::new("/etc/skillet/skillet.toml"))
            .unwrap_or_else(|e| panic!("{e}"))
            .approval_policy()
    }

    #[test]
    fn every_place_that_requires_approval_adds_to_the_policy() {
        let policy = policy(
            "[approvals]\ndefault = \"allow\"\ntools = [\"create_issue\"]\n\n\
             [skills.scripts]\napproval = \"always\"\n\n\
             [tools.gated]\nkind = \"command\"\ndescription = \"d\"\nprogram = \"/bin/true\"\n\
             approval = \"always\"\n\n\
             [tools.free]\nkind = \"command\"\ndescription = \"d\"\nprogram = \"/bin/true\"\n",
        );
        for gated in ["create_issue", "run_skill_script", "gated"] {
            assert!(policy.requires(gated), "{gated}");
        }
        assert!(!policy.requires("free"));
        assert_eq!(policy.unasked(), Unasked::Allow);
    }

    #[test]
    fn by_default_nothing_is_gated_and_unasked_calls_are_denied() {
        let policy = policy("");
        assert!(!policy.requires("run_skill_script"));
        assert_eq!(policy.unasked(), Unasked::Deny);
        let err = Config::from_toml_str(
            "[approvals]\ndefault = \"maybe\"\n",
            Path::new("/etc/skillet/skillet.toml"),
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("maybe") || err.contains("variant"), "{err}");
    }
}
