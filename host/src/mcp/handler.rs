//! [`McpHandler`]: the MCP adapter onto the [`HostCore`] — `tools/list`, `tools/call`,
//! `logging/setLevel` and cancellation for one MCP session, and the dispatch of prompts
//! (`prompts`), completion (`completion`), resources (`resources`) and the skills extension
//! (`skills_ext`), the session's resource subscriptions (`subscriptions`) and, on 2026-07-28,
//! `subscriptions/listen` streams (`listen`), and the Tasks extension's `tasks/get`,
//! `tasks/cancel`, `tasks/update` over calls started as tasks (`tasks`, `tasks_run`); the
//! methods that revision removed are `-32601`
//! on its requests (`revision`). Every method
//! sees only the skills its caller may see (`McpHandler::visible_to`, the one rule), and
//! `resources/read` answers within the session's read budget (`read_budget`).
//!
//! A `tools/call` is admitted in the session's [`CallScope`] under the JSON-RPC request id (the
//! same concurrency limit as A2E, since the core is shared), run by the core with a
//! `DirectSink` (stdio: notifications written onto the output as emitted) or an
//! `EventForwarder` (HTTP: through rmcp's peer) as its event sink, and answered through
//! [`answer::tool_result`]; on 2026-07-28 an approval question answers it as an input-required
//! result whose retry resumes the run (`input_required`). When the client sends
//! `notifications/cancelled` (rmcp cancels the request's token) or goes away, the call is
//! cancelled — provider and tool work stop and the slot frees — and nothing more is sent for it. A `traceparent`/`tracestate` in the request's `_meta` continues the caller's trace.
//!
//! Not here: transports (`serve`), tool shapes (`tools`), result mapping (`answer`).

#![allow(deprecated)] // `logging/setLevel`, `resources/subscribe`: deprecated (SEP-2577, 2026-07-28), still sent by current clients.

use std::sync::Arc;

use rmcp::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, CompleteRequestParams,
    CompleteResult, CustomRequest, CustomResult, ErrorData, GetPromptRequestParams,
    GetPromptResponse, GetSkillRequestParams, GetSkillResult, GetTaskParams, GetTaskResult,
    Implementation, InitializeRequestParams, InitializeResult, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListSkillsResult, ListToolsResult,
    PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse, RequestId,
    ServerCapabilities, ServerConfig, SetLevelRequestParams, SubscribeRequestParams,
    SubscriptionFilter, UnsubscribeRequestParams, UpdateTaskParams,
};
use rmcp::service::{NotificationContext, RequestContext, RoleServer, SubscriptionContext};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use super::coalesce::LineSender;
use super::input_required::{self, PendingApprovals};
use super::list_changed::SessionPeers;
use super::notify::{DirectSink, EventForwarder, SessionLogLevel};
use super::read_budget::{PermitSlot, ReadBudget};
use super::resources::off_thread;
use super::subscriptions::Subscriptions;
use super::tasks::McpTasks;
use super::{answer, approval, listen, revision, tasks_run};
use super::{completion, prompts, resources, skills_ext, tools};
use crate::auth::Caller;
use crate::core::{Admitted, CallScope, HostCore, Refusal};
use skillet_core::events::EventSink;
use skillet_core::service::SkillService;
use skillet_core::telemetry::propagation;
use skillet_protocol::{ErrorCode, SkillCallRequest, SkillDefinition};

/// One MCP session's handler. Each session (a stdio connection, an HTTP session) gets its own
/// via `McpHandler::new_session`; all share the core.
#[derive(Clone, Debug)]
pub struct McpHandler {
    core: HostCore,
    scope: CallScope,
    log_level: SessionLogLevel,
    peers: SessionPeers,
    subscriptions: Subscriptions,
    /// The session's room for skill files being answered (`resources/read`).
    read_budget: ReadBudget,
    /// Over stdio: the session's output, where calls write their notifications themselves.
    notifications: Option<LineSender>,
    /// The server's calls run as tasks (the Tasks extension: `tasks`, `tasks_run`).
    tasks: McpTasks,
    /// 2026-07-28 approval questions waiting for the client's retry (`input_required`).
    approvals: PendingApprovals,
}

impl McpHandler {
    /// A handler for a new session on `core`; `peers` collects sessions for
    /// `notifications/tools/list_changed`.
    pub(crate) fn new_session(core: &HostCore, peers: &SessionPeers) -> Self {
        McpHandler {
            core: core.clone(),
            scope: core.scope().through(crate::record::Door::Mcp),
            log_level: SessionLogLevel::default(),
            peers: peers.clone(),
            subscriptions: Subscriptions::default(),
            read_budget: ReadBudget::default(),
            notifications: None,
            tasks: McpTasks::default(),
            approvals: PendingApprovals::default(),
        }
    }

    /// The same handler, its calls' tasks kept in `tasks` (one store per server, shared by its
    /// sessions).
    pub(crate) fn with_tasks(self, tasks: &McpTasks) -> Self {
        McpHandler {
            tasks: tasks.clone(),
            ..self
        }
    }

    /// The same handler, its 2026-07-28 approval questions kept in `approvals` (one store per
    /// server: the retry answering one may come on another session or none).
    pub(crate) fn with_approvals(self, approvals: &PendingApprovals) -> Self {
        McpHandler {
            approvals: approvals.clone(),
            ..self
        }
    }

    /// A handler for a session whose calls write their notifications to `output` (stdio).
    pub(crate) fn new_stream_session(
        core: &HostCore,
        peers: &SessionPeers,
        output: LineSender,
    ) -> Self {
        McpHandler {
            notifications: Some(output),
            ..McpHandler::new_session(core, peers)
        }
    }

    /// The one authorization rule of every MCP method: the service and the skills the
    /// request's caller may see now — the published skills its grants name, decided by the
    /// core exactly as for `tools/list` and `tools/call`. Prompts, resources, the skills
    /// extension, completion and subscriptions look only among these, so a skill the caller
    /// may not run answers as a name nothing serves ("unknown", "not found"), never
    /// "forbidden". Over stdio the caller is the local parent, who sees every skill.
    fn visible_to(
        &self,
        context: &RequestContext<RoleServer>,
    ) -> (Arc<dyn SkillService>, Vec<SkillDefinition>) {
        let caller = crate::auth::http::caller_of_mcp(&context.extensions);
        let service = Arc::clone(self.core.service());
        let mut skills = tools::published_skills(service.as_ref());
        skills.retain(|skill| self.core.may_see(&caller, skill));
        (service, skills)
    }

    /// A `tools/call` admitted into the session's scope as its A2E call, or the answer it gets
    /// at once: an unknown tool (-32602), a duplicate id (-32600), or a refusal by access,
    /// quota or concurrency (a tool error).
    fn admit_call(
        &self,
        caller: &Caller,
        id: &RequestId,
        meta: &serde_json::Map<String, serde_json::Value>,
        request: CallToolRequestParams,
    ) -> Result<(Admitted, SkillCallRequest), Box<Result<CallToolResponse, ErrorData>>> {
        let name = request.name.clone();
        let call = skill_call(id, meta, request);
        // Access first: a tool the caller may not run is refused alike whether it exists or not.
        let answer = match self.scope.admit_as(caller, &call) {
            Ok(_) if !self.core.service().is_runnable(&name) => Err(ErrorData::invalid_params(
                format!("unknown tool: {name}"),
                None,
            )),
            Ok(admitted) => return Ok((admitted, call)),
            Err(refusal @ (Refusal::Unauthorized | Refusal::Limited { .. })) => {
                let error = refusal.to_protocol_error();
                Ok(answer::error_result(error.code, &error.message, error.retryable).into())
            }
            Err(refusal @ Refusal::Busy { .. }) => {
                let error = refusal.to_protocol_error();
                Ok(answer::error_result(ErrorCode::RuntimeError, &error.message, true).into())
            }
            Err(refusal @ Refusal::DuplicateId(_)) => Err(ErrorData::invalid_request(
                refusal.to_protocol_error().message,
                None,
            )),
        };
        Err(Box::new(answer))
    }

    /// The level a call's log notifications are sent at: a 2026-07-28 request's own `_meta`
    /// `logLevel` (none without one: logging is opt-in there), else the session's.
    fn call_log_level(&self, context: &RequestContext<RoleServer>) -> SessionLogLevel {
        if revision::is_2026(context.protocol_version().as_ref()) {
            SessionLogLevel::per_request(context.meta.log_level())
        } else {
            self.log_level.clone()
        }
    }

    /// The event sink of a `tools/call` request, at its progress token and log level, sending
    /// until `stop`: written onto the output (stdio), or through rmcp's peer by the forwarder
    /// returned with it, to flush before the answer (HTTP).
    fn request_sink(
        &self,
        context: &RequestContext<RoleServer>,
        stop: CancellationToken,
    ) -> (Option<EventForwarder>, Arc<dyn EventSink>) {
        let (token, level) = (
            context.meta.get_progress_token(),
            self.call_log_level(context),
        );
        match &self.notifications {
            Some(output) => (None, DirectSink::start(output.clone(), token, level, stop)),
            None => {
                let (forwarder, sink) =
                    EventForwarder::start(context.peer.clone(), token, level, stop);
                (Some(forwarder), sink)
            }
        }
    }
}

/// The A2E call an MCP `tools/call` becomes: its id is `mcp-` and the JSON-RPC request id
/// (unique in the session while in flight), its arguments the tool's (none: `{}`), streamed.
pub(crate) fn skill_call(
    id: &RequestId,
    context_meta: &serde_json::Map<String, serde_json::Value>,
    request: CallToolRequestParams,
) -> SkillCallRequest {
    let mut call = SkillCallRequest::new(
        request.name.to_string(),
        request.arguments.unwrap_or_default(),
    );
    call.id = format!("mcp-{}", serde_json::to_string(id).unwrap_or_default());
    call.streaming = true;
    // SEP-414: a caller's W3C trace context in `_meta` continues into the call's spans.
    // rmcp hands the request's `_meta` to handlers as `context.meta`.
    for meta in [
        Some(context_meta),
        request.meta.as_deref().map(|meta| &**meta),
    ]
    .into_iter()
    .flatten()
    {
        propagation::adopt_from_meta(meta, &mut call.metadata);
    }
    call
}

impl ServerHandler for McpHandler {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .enable_logging()
                .enable_prompts()
                .enable_prompts_list_changed()
                .enable_completions()
                .enable_resources()
                .enable_resources_subscribe()
                .enable_resources_list_changed()
                .enable_skills()
                .enable_tasks()
                .build(),
        )
        .with_server_info(Implementation::new("skillet", env!("CARGO_PKG_VERSION")))
        .with_instructions(
            "Each tool is a skill: a bounded multi-turn LLM loop that returns a result \
             validated against the tool's outputSchema. Each skill is also a prompt (its \
             instructions, for your own model) and its files are skill:// resources.",
        )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let (_, skills) = self.visible_to(&context);
        Ok(ListToolsResult::with_all_items(tools::tools(&skills)))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let caller = crate::auth::http::caller_of_mcp(&context.extensions);
        // 2026-07-28: approvals are asked by input-required results, and a retry carrying
        // `requestState` resumes the run that asked (`input_required`), admitted once.
        let by_result = revision::is_2026(context.protocol_version().as_ref());
        if by_result && request.request_state.is_some() {
            let stop = context.ct.child_token();
            let (forwarder, sink) = self.request_sink(&context, stop.clone());
            let response = (self.approvals)
                .resume(caller.owner(), sink, request, &context.ct)
                .await;
            return input_required::answered(response, forwarder, &stop).await;
        }
        let binding = (by_result
            && input_required::can_ask(context.client_capabilities().as_ref()))
        .then(|| input_required::Binding::of(caller.owner(), &request));
        let (admitted, call) = match self.admit_call(&caller, &context.id, &context.meta, request) {
            Ok(running) => running,
            Err(answer) => return *answer,
        };
        // SEP-2663: a client that declared the Tasks extension gets every skill call as a task.
        if context
            .client_capabilities()
            .is_some_and(|capabilities| capabilities.supports_tasks())
        {
            return Ok(tasks_run::start(
                &self.core,
                &self.tasks,
                caller.owner(),
                admitted,
                call,
            ));
        }
        let stop = context.ct.child_token();
        let (forwarder, sink) = self.request_sink(&context, stop.clone());
        let cancel = admitted.cancel_token();
        if let Some(binding) = binding {
            let trips = input_required::run(sink);
            let (events, approver) = (Some(trips.events), Some(trips.approver));
            (self.core).spawn_call_asking(admitted, call, events, approver, trips.answered);
            let response = (self.approvals)
                .drive(trips.steps, binding, cancel, &context.ct)
                .await;
            return input_required::answered(response, forwarder, &stop).await;
        }
        // The transport dropping this request (client gone) cancels the call too.
        let _cancel_on_drop = cancel.clone().drop_guard();
        let (answered, answer) = oneshot::channel();
        let approver = approval::approver_for(&context.peer, &context.id);
        self.core
            .spawn_call_asking(admitted, call, Some(sink), approver, move |response| {
                let _ = answered.send(response);
            });
        let response = tokio::select! {
            response = answer => response,
            () = context.ct.cancelled() => {
                cancel.cancel();
                // rmcp sends nothing for a cancelled request; this error goes nowhere.
                return Err(ErrorData::internal_error("cancelled by the client", None));
            }
        };
        let response = response
            .map_err(|_| ErrorData::internal_error("the call ended without an answer", None))?;
        if let Some(forwarder) = forwarder {
            forwarder.flush().await;
        }
        answer::tool_result(response).map(Into::into)
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let (_, skills) = self.visible_to(&context);
        Ok(ListPromptsResult::with_all_items(prompts::prompts(&skills)))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let (service, skills) = self.visible_to(&context);
        prompts::get(service.as_ref(), &skills, request).map(Into::into)
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let (service, skills) = self.visible_to(&context);
        off_thread(move || completion::complete(service.as_ref(), &skills, &request)).await
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let (service, skills) = self.visible_to(&context);
        off_thread(move || resources::list(service.as_ref(), &skills, request.as_ref())).await
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Ok(resources::templates())
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let (service, skills) = self.visible_to(&context);
        let located =
            off_thread(move || resources::locate(service.as_ref(), &skills, &request.uri)).await?;
        // Room for the file's bytes before a byte is read; over HTTP it stays reserved until
        // the answer has left the process (`read_budget`).
        let permit = self.read_budget.reserve(located.size).await?;
        let slot = PermitSlot::of(&context.extensions).unwrap_or_default();
        slot.keep(permit);
        let budget = self.read_budget.clone();
        let (result, more) = off_thread(move || resources::read(located, &budget)).await?;
        if let Some(more) = more {
            slot.keep(more);
        }
        Ok(result.into())
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        Some(listen::accepted(requested))
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let caller = crate::auth::http::caller_of_mcp(&context.request_context().extensions);
        listen::serve(&self.peers, caller, context).await;
        Ok(())
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let (service, skills) = self.visible_to(&context);
        let subscriptions = self.subscriptions.clone();
        off_thread(move || subscriptions.subscribe(service.as_ref(), &skills, &request.uri)).await
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.subscriptions.unsubscribe(&request.uri);
        Ok(())
    }

    async fn list_skills(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListSkillsResult, ErrorData> {
        let (service, skills) = self.visible_to(&context);
        off_thread(move || skills_ext::list(service.as_ref(), &skills, request.as_ref())).await
    }

    async fn get_skill(
        &self,
        request: GetSkillRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetSkillResult, ErrorData> {
        let (service, skills) = self.visible_to(&context);
        off_thread(move || skills_ext::get(service.as_ref(), &skills, &request.uri)).await
    }

    /// `tasks/get` (rmcp has checked the client declared the extension).
    async fn get_task(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        let caller = crate::auth::http::caller_of_mcp(&context.extensions);
        self.tasks
            .get(&request.task_id, caller.owner())
            .map(GetTaskResult::new)
    }

    /// `tasks/cancel`: the run is cancelled; the ack is the same for a finished task.
    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let caller = crate::auth::http::caller_of_mcp(&context.extensions);
        self.tasks.cancel(&request.task_id, caller.owner())
    }

    /// `tasks/update`: a skill's task never asks for input (`input_required`), so there is no
    /// outstanding request an update could answer.
    async fn update_task(
        &self,
        request: UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let caller = crate::auth::http::caller_of_mcp(&context.extensions);
        self.tasks.get(&request.task_id, caller.owner())?;
        match request.input_responses.keys().next() {
            None => Ok(()),
            Some(key) => Err(ErrorData::invalid_params(
                format!(
                    "task {}: no input request {key} is outstanding (a skill's task never asks                      for input)",
                    request.task_id
                ),
                None,
            )),
        }
    }

    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        if revision::is_2026(context.protocol_version().as_ref()) {
            return Err(revision::removed("logging/setLevel"));
        }
        self.log_level.set(request.level);
        Ok(())
    }

    /// The handshake of the `initialize` era; a request naming 2026-07-28 in its `_meta` is
    /// `-32601` (that revision removed it: `revision`).
    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        if revision::meta_is_2026(&context.meta) {
            return Err(revision::removed("initialize"));
        }
        context.peer.set_peer_info(request.clone());
        self.negotiate_initialize(&request)
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        self.peers.add(context.peer, self.subscriptions.clone());
    }

    /// rmcp hands a standard method here when its params did not decode (a `tools/call` whose
    /// `arguments` is not an object): that is invalid params (-32602), not an unknown method.
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        let method = request.method.as_str();
        let speaks_2026 = revision::meta_is_2026(&context.meta)
            || revision::is_2026(context.protocol_version().as_ref());
        if speaks_2026 && revision::REMOVED_METHODS.contains(&method) {
            return Err(revision::removed(method));
        }
        if STANDARD_METHODS.contains(&request.method.as_str()) {
            return Err(ErrorData::invalid_params(
                format!(
                    "{}: the params do not match the method (e.g. `arguments` must be an object)",
                    request.method
                ),
                None,
            ));
        }
        Err(ErrorData::new(
            rmcp::model::ErrorCode::METHOD_NOT_FOUND,
            request.method,
            None,
        ))
    }
}

/// Methods rmcp decodes itself; one reaching [`ServerHandler::on_custom_request`] had params
/// of the wrong shape.
const STANDARD_METHODS: &[&str] = &[
    "tools/call",
    "tools/list",
    "logging/setLevel",
    "initialize",
    "ping",
    "prompts/get",
    "prompts/list",
    "resources/list",
    "resources/read",
    "resources/templates/list",
    "resources/subscribe",
    "resources/unsubscribe",
    "completion/complete",
    "skills/list",
    "skills/get",
];
