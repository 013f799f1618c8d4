//! Human approval of tool calls, as a contract between the host's policy, the doors that can ask
//! a person, and the run loop that asks.
//!
//! - [`ApprovalPolicy`] is the host's: the tools whose every call needs approval
//!   (`[tools.NAME] approval = "always"`, `[skills.scripts] approval` for `run_skill_script`)
//!   and [`Unasked`], the decision when the call's door cannot ask (`[approvals] default`,
//!   deny unless the host says allow). A skill's `metadata.a2e-approval` adds tool names for its
//!   own calls; it can never remove one of the host's.
//! - [`Approver`] is supplied per call by the door that can ask a person (MCP elicitation or an
//!   input-required result, an A2A task's `INPUT_REQUIRED`); a call without one follows
//!   [`Unasked`].
//!
//! Not here: asking during a run (the engine's run loop, `run::approval_gate`), how a door asks
//! (its own modules in `skillet-host`), the config file's tables (`cli/src/config`).

use std::collections::BTreeSet;

use async_trait::async_trait;
use serde_json::Value;

/// Whether a host-declared tool's calls need approval (`approval = "always"` in
/// `[tools.NAME]` or `[skills.scripts]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolApproval {
    /// Calls run without asking (the default).
    #[default]
    Never,
    /// Every call waits for a person's approval.
    Always,
}

/// What a call that needs approval gets when its door cannot ask anyone (A2E, NATS, an MCP
/// client without elicitation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Unasked {
    /// The call is refused: a tool error the model sees (the default).
    #[default]
    Deny,
    /// The call runs as if approved.
    Allow,
}

/// The host's approval rules: the tools that need approval and what [`Unasked`] calls get.
#[derive(Debug, Clone, Default)]
pub struct ApprovalPolicy {
    tools: BTreeSet<String>,
    unasked: Unasked,
}

impl ApprovalPolicy {
    /// No tool needs approval; unasked calls are denied (which then never happens).
    pub fn new() -> Self {
        Self::default()
    }

    /// Every call of the tool `name` (its registered name, e.g. `run_skill_script`) needs
    /// approval.
    pub fn require(mut self, name: impl Into<String>) -> Self {
        self.tools.insert(name.into());
        self
    }

    /// What a call gets when its door cannot ask (default [`Unasked::Deny`]).
    pub fn when_unasked(mut self, unasked: Unasked) -> Self {
        self.unasked = unasked;
        self
    }

    /// Whether the host requires approval for the tool `name`.
    pub fn requires(&self, name: &str) -> bool {
        self.tools.contains(name)
    }

    /// The decision for calls nobody can be asked about.
    pub fn unasked(&self) -> Unasked {
        self.unasked
    }
}

/// What a person is asked to approve: one tool call, before it runs.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ApprovalRequest {
    /// The skill whose run wants the call.
    pub skill: String,
    /// The tool's registered name.
    pub tool: String,
    /// The model's id for this call.
    pub call_id: String,
    /// The arguments the tool would run with (already checked against its input schema).
    pub arguments: Value,
}

/// A person's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApprovalDecision {
    /// Run the call.
    Approved,
    /// Do not run it; the model reads the reason when one is given.
    Denied {
        /// Why, in the person's words.
        reason: Option<String>,
    },
}

/// Asks a person whether a tool call may run. A door that can ask supplies one per call
/// (`SkillService::call_with_approver`); the call waits for the answer, bounded by its
/// deadline and its cancellation (the future is dropped then, so an implementation cleans up
/// whatever it left pending in `Drop`).
#[async_trait]
pub trait Approver: Send + Sync {
    /// Asks about `request`; a door that fails to ask answers [`ApprovalDecision::Denied`]
    /// with the reason.
    async fn decide(&self, request: ApprovalRequest) -> ApprovalDecision;
}
