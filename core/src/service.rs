//! [`SkillService`]: the contract between the transports (`skillet-host`) and the engine.
//!
//! A transport decodes messages and hands discover and call requests to a service; the service
//! answers with the response messages. Keeping this a trait lets every transport be tested with
//! any service and lets a host embed the engine behind its own transport.

use std::sync::Arc;

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;

use serde_json::{Map, Value};
use skillet_protocol::{
    ErrorCode, ProtocolError, SkillCallRequest, SkillCallResponse, SkillDiscoverRequest,
    SkillDiscoverResponse, SkillStatus,
};

use crate::approval::Approver;
use crate::card::{AgentCard, CardError};
use crate::events::EventSink;
use crate::folder::ServedFolder;
use crate::schema::Violation;

/// Answers A2E requests.
#[async_trait]
pub trait SkillService: Send + Sync {
    /// Answers a `skill/discover/req`.
    fn discover(&self, request: &SkillDiscoverRequest) -> SkillDiscoverResponse;

    /// Runs a `skill/call/req` to its one `skill/call/resp`.
    ///
    /// When `request.streaming` is true, events are delivered live to `events` (when given)
    /// before the response is returned; they are always collected into the result. `cancel`
    /// stops the call: in-flight provider and tool work ends and the response reports it.
    /// Rejections before execution (`unknown_skill`, `unauthorized`, input `schema_violation`)
    /// come back in the response's `error`; execution outcomes in its `data`.
    async fn call(
        &self,
        request: SkillCallRequest,
        events: Option<Arc<dyn EventSink>>,
        cancel: CancellationToken,
    ) -> SkillCallResponse;

    /// Runs a call as [`SkillService::call`] does, asking `approver` before each tool call
    /// that needs a person's approval ([`crate::approval`]); a door that can ask (MCP elicitation,
    /// A2A `INPUT_REQUIRED`) calls this. A call through [`SkillService::call`] has nobody to
    /// ask and follows the host's policy. The default ignores `approver`: a service without
    /// approvals has no call to gate; a service that wraps another must forward this method,
    /// or its callers' approvers are never asked.
    async fn call_with_approver(
        &self,
        request: SkillCallRequest,
        events: Option<Arc<dyn EventSink>>,
        cancel: CancellationToken,
        approver: Arc<dyn Approver>,
    ) -> SkillCallResponse {
        let _ = approver;
        self.call(request, events, cancel).await
    }

    /// The A2A Agent Card (v1.0) describing the skills this service offers, typed until a
    /// transport writes it; an error when no valid card can be made (no skills, a skill
    /// without tags).
    fn agent_card(&self) -> Result<AgentCard, CardError>;

    /// Whether a call to the skill `name` may run now (it exists and is `Published`). The
    /// default asks [`SkillService::discover`], building every definition; a service with an
    /// index of its skills answers from it (adapters ask this per call).
    fn is_runnable(&self, name: &str) -> bool {
        self.discover(&SkillDiscoverRequest::default())
            .skills
            .iter()
            .any(|skill| skill.name == name && skill.status == SkillStatus::Published)
    }

    /// The opening of a run of the published skill `name` with `arguments`, for a host that
    /// runs the skill on its own model (MCP prompts): the arguments are checked against the
    /// input schema and the instructions rendered exactly as a call would. Errors:
    /// `unknown_skill` (no such published skill, or a service without prompts — the default)
    /// and `schema_violation` (the arguments break the schema, or a placeholder has no value).
    fn prompt(
        &self,
        name: &str,
        arguments: &Map<String, Value>,
    ) -> Result<SkillPrompt, ProtocolError> {
        let _ = arguments;
        Err(ProtocolError::new(
            ErrorCode::UnknownSkill,
            format!("this service offers no prompt for `{name}`"),
        ))
    }

    /// The folder of the published skill `name`, for a host that serves its files (MCP
    /// resources, the skills extension); `None` for an unknown, unpublished or folderless
    /// (native) skill, and from a service that serves no files (the default).
    fn skill_folder(&self, name: &str) -> Option<Arc<dyn ServedFolder>> {
        let _ = name;
        None
    }

    /// Checks `arguments` (input files already taken out) against the input schema of the
    /// published skill `name`, for a door that refuses bad input in its own error shape before
    /// it starts anything (an A2A task). Every violation, or `Ok` when the skill has no input
    /// schema, is unknown, or the service checks nothing here (the default): a call checks
    /// its input again either way.
    fn check_input(
        &self,
        name: &str,
        arguments: &Map<String, Value>,
    ) -> Result<(), Vec<Violation>> {
        let _ = (name, arguments);
        Ok(())
    }
}

/// What a run of a skill would start its conversation with (see [`SkillService::prompt`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillPrompt {
    /// The system prompt: the rendered instructions and, with an output schema, the output
    /// format section.
    pub instructions: String,
    /// The first user message (the `prompt` text, or the arguments as JSON); `None` when
    /// there are no arguments.
    pub request: Option<String>,
}
