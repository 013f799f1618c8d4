//! The run of a call that opened, made ready to start: a native handler with its
//! [`HandlerContext`], or the manifest skill's [`TurnLoop`] assembled — first-use toolkits
//! started, tools resolved, the call's files opened (their tools added), the first message and
//! images, the approval gate, the checkpoint to resume from.
//!
//! Not here: what the run is raced against (the deadline and the host's cancellation, `call`),
//! the turns themselves (`agent`), the handler's run (`native`), how the call ends (`ending`).

use std::future::Future;
use std::sync::Arc;

use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::agent::TurnLoop;
use super::approval_gate::ApprovalGate;
use super::budget::RunBudget;
use super::durable::{Durable, Loaded};
use super::executor::ExecutorInner;
use super::images;
use super::messages;
use super::native::run_native;
use super::provider::ResolvedProvider;
use super::result::Outcome;
use super::run_state::RunState;
use crate::deadline::Deadline;
use crate::events::EventEmitter;
use crate::files::{CallFiles, InputFile};
use crate::handler::{HandlerContext, SkillHandler};
use crate::protocol::{ErrorCode, LLMConfig, LogLevel, Resumed, SkillCallRequest};
use crate::skill::RegisteredSkill;
use skillet_core::approval::Approver;

/// What a call's run borrows from the call, whichever way the skill runs.
pub(super) struct RunContext<'a> {
    pub(super) skill: &'a RegisteredSkill,
    pub(super) request: &'a SkillCallRequest,
    pub(super) events: &'a EventEmitter,
    pub(super) state: &'a RunState,
    pub(super) durable: Option<&'a Durable<'a>>,
    pub(super) deadline: Deadline,
    pub(super) cancel: &'a CancellationToken,
    pub(super) approver: Option<&'a Arc<dyn Approver>>,
    /// Whether the model's text streams (see `call_open::Opened::stream`).
    pub(super) stream: bool,
}

/// What the manifest skill's run is given: preflight's part of `PreparedRun::Manifest`, with
/// the call's validated arguments and what the checkpoint store had.
pub(super) struct ManifestInput {
    pub(super) inputs: Vec<InputFile>,
    pub(super) instructions: String,
    pub(super) provider: ResolvedProvider,
    pub(super) arguments: Map<String, Value>,
    pub(super) loaded: Loaded,
}

/// A manifest skill's run, ready to start, and what the call's ending needs from its start.
pub(super) struct ManifestRun<'a> {
    pub(super) turns: TurnLoop<'a>,
    /// The skill's files, the call's workspace and scripts, closed at the end (see `files`).
    pub(super) call_files: Option<Box<CallFiles>>,
    /// The turns a checkpoint had saved, when the run continues one.
    pub(super) resumed_from: Option<Resumed>,
}

/// A native skill's run: `handler` once with `arguments`, at turn 1.
pub(super) fn native_run<'a>(
    cx: &RunContext<'a>,
    handler: Arc<dyn SkillHandler>,
    llm_override: Option<LLMConfig>,
    arguments: Map<String, Value>,
) -> impl Future<Output = Outcome> + Send + 'a {
    let ctx = HandlerContext {
        events: cx.events.clone(),
        deadline: cx.deadline,
        cancel: cx.cancel.child_token(),
        correlation_id: cx.request.correlation_id.clone(),
        metadata: cx.request.metadata.clone(),
        llm_override,
    };
    cx.state.set_turn(1);
    run_native(&cx.skill.compiled, handler, Value::Object(arguments), ctx)
}

impl ExecutorInner {
    /// Assembles a manifest skill's turn loop. Fails (an outcome for the call's ending) only
    /// when the call's files cannot be opened.
    pub(super) async fn manifest_run<'a>(
        &'a self,
        cx: &RunContext<'a>,
        input: ManifestInput,
    ) -> Result<ManifestRun<'a>, Outcome> {
        let ManifestInput {
            inputs,
            instructions,
            provider,
            arguments,
            loaded,
        } = input;
        let skill = &cx.skill.compiled;
        let events = cx.events;
        let span = tracing::Span::current();
        span.record("gen_ai.provider.name", provider.provider.kind().as_str());
        span.record("gen_ai.request.model", provider.provider.model());
        if !skill.toolkits.is_empty() {
            // First-use toolkits connect now, so their tools are offered from the first turn; a
            // toolkit that cannot start leaves the skill without its tools, said in a log.
            let starting = self.tools.ensure_started(&skill.toolkits);
            if let Ok(failures) = tokio::time::timeout_at(cx.deadline.instant(), starting).await {
                for failure in failures {
                    events.log(LogLevel::Warn, failure.to_string());
                }
            }
        }
        let mut tools = self.tools.resolve(&skill.tools, &skill.toolkits);
        let call_files = match self.files.open(skill, &inputs) {
            Ok(files) => files.map(Box::new),
            Err(e) => return Err(Outcome::failure(ErrorCode::RuntimeError, e.to_string(), 0)),
        };
        for tool in call_files.iter().flat_map(|f| f.tools()) {
            tools.add_engine_tool(tool.clone());
        }
        let first_message = messages::first_user_message(&arguments);
        let image_bytes_limit = provider.provider.image_bytes_limit();
        let first_images = images::input_images(&inputs, image_bytes_limit, events);
        let approvals =
            ApprovalGate::new(&self.approvals, skill.name(), &skill.approval, cx.approver);
        let (resume, resumed_from) = match loaded {
            Loaded::Resume(checkpoint) => {
                let turns_saved = checkpoint.turn();
                (Some(checkpoint), Some(Resumed { turns_saved }))
            }
            Loaded::Refused(why) => {
                events.log(LogLevel::Warn, why);
                (None, None)
            }
            Loaded::Fresh => (None, None),
        };
        let turns = TurnLoop {
            budget: RunBudget::new(&self.limits, skill.hints.max_cost_usd, &self.pricing),
            skill,
            provider,
            tools,
            schemas: &self.tool_schemas,
            limits: &self.limits,
            instructions,
            schema_in_instructions: false,
            first_message,
            first_images,
            image_bytes_limit,
            max_turns: self.limits.max_turns(skill.spec.max_turns),
            deadline: cx.deadline,
            cancel: cx.cancel,
            events,
            stream: cx.stream,
            state: cx.state,
            capture_content: self.capture_content,
            reasoning_events: self.reasoning_events,
            approvals,
            durable: cx.durable,
            resume,
        };
        Ok(ManifestRun {
            turns,
            call_files,
            resumed_from,
        })
    }
}
