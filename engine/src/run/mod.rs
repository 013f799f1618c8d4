//! The run loop: turns a `skill/call/req` into exactly one `skill/call/resp`.
//!
//! [`Executor`] (built with [`ExecutorBuilder`]) implements
//! [`SkillService`](crate::service::SkillService); transports and embedding hosts call it. One
//! executor is shared by every call of a host.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use skillet_engine::run::{Executor, Limits};
//! use skillet_engine::service::SkillService;
//! use skillet_engine::{protocol::SkillCallRequest, skill, tools::ToolRegistry};
//!
//! let skills = Arc::new(skill::Registry::new());
//! skills.register_all(skill::load_skills_root("skills".as_ref(), skill::SkillSource::Project).skills);
//! let default: skillet_engine::protocol::LLMConfig = serde_json::from_value(serde_json::json!({
//!     "provider_name": "ollama", "provider_credentials": {},
//!     "provider_config": {"model": "llama3.2", "base_url": "http://127.0.0.1:11434"}}))?;
//! let executor = Executor::builder()
//!     .skills(skills)
//!     .tools(Arc::new(ToolRegistry::new()))
//!     .default_llm(default)
//!     .limits(Limits::default())
//!     .build()?;
//! let args = serde_json::json!({"text": "hello"}).as_object().cloned().unwrap();
//! let response = executor
//!     .call(SkillCallRequest::new("summarize", args), None, Default::default())
//!     .await;
//! println!("{:?}", response.data.map(|r| r.summary));
//! # Ok(()) }
//! ```
//!
//! # Order of a call
//! look the skill up (`unknown_skill`) → it must be `Published` → validate the arguments
//! against the input schema (`schema_violation`, every violation with its instance path) →
//! authorize the `llm_override` (`unauthorized`) → render the instructions (a missing variable
//! is `schema_violation` naming its path) → resolve the provider (allowed override > skill
//! `llm_config` > host default, see `provider`) → loop at most `max_turns` (the skill's value,
//! else [`Limits::default_max_turns`], never above [`Limits::max_turns_cap`]) under one deadline
//! → gates → result → terminal hooks. `call` documents every rejection and outcome code.
//!
//! # Messages
//! - **system**: the rendered instructions; with an output schema, followed by an "Output
//!   format" section asking for one JSON value matching the (shown) schema. The schema is also
//!   sent as the provider's structured-output parameter.
//! - **first user message**: when the arguments are exactly one string field named `prompt`,
//!   its text; otherwise the arguments object as compact JSON (`{}` when empty).
//! - then per turn the assistant's message, and for each tool call one tool result (errors
//!   included, in call order); after an unusable final answer, a repair user message listing
//!   every problem.
//!
//! # Final output
//! A turn without tool calls is the final answer. Without an output schema, `data` is the
//! answer's text as a JSON string. With one, the answer is parsed as JSON (one fenced
//! ```` ```json ```` block is tolerated), validated, and repaired while turns remain; when they
//! run out the result is `schema_violation` with the violations and the last raw output in
//! `data` (see `result` for the failure `data` shapes and how `summary` is made).
//!
//! # Events
//! Per turn `status` (`turn 2/8 · ollama/llama3.2`) and `progress` (non-decreasing; 100 at the
//! end of every executed call); `log` for tool calls and results (previews cut at 200
//! characters), retries, repairs, and a final token-usage line; `artifact` chunks named `turn-N`
//! for streamed model text, the last with `final: true`. Model text is streamed only when the
//! request asked for `streaming` and its live sink, if any, passes text on
//! (`EventSink::forwards_text`); events are pushed live only then, and always collected into
//! `SkillResult.events` up to [`Limits::event_collect_cap`] (`truncated` says when more were
//! dropped).
//!
//! # Module map
//! `executor` (the shared state and builder) · `call` (one call end to end, every rejection and
//! outcome code) · `call_open` (a call's checkpoint, events, timeout) · `call_run` (the
//! native handler or turn loop made ready) · `ending` (gates, closing events, the result assembled) · `agent` (the turn loop) · `messages` (what the engine says to the model) ·
//! `dispatch` (a turn's tool calls) · `tool_schemas` (compiled tool schemas) · `output` (parse,
//! validate, repair decision) · `provider` (resolution and provider-error mapping) · `provider_registry` (the host's
//! providers by name) · `limits` · `budget` (the cost cap and per-tool call counts) ·
//! `gates` · `hooks` · `durable` (when checkpoints are written and read, resuming a run) ·
//! `native` (programmatic skills) · `result` (outcome → `SkillResult`, how
//! `summary` is made) · `spans` (tracing).

mod agent;
mod approval_gate;
mod budget;
mod call;
mod call_open;
pub(crate) mod call_report;
mod call_run;
mod checkpointing;
mod dispatch;
mod durable;
mod ending;
mod executor;
mod gates;
mod hooks;
mod images;
mod limits;
mod messages;
mod native;
mod opening;
mod output;
mod provider;
mod provider_registry;
mod result;
mod run_state;
mod skill_provider;
mod spans;
mod tool_schemas;
mod transcript;

pub use executor::{BuildError, CardIdentity, Executor, ExecutorBuilder};
pub use gates::{GateContext, GateRejection, PreTerminalGate};
pub use hooks::{CallOutcome, TerminalEvent, TerminalHook};
pub use limits::Limits;
pub use messages::PROMPT_ARGUMENT;
pub use provider::{
    HostDefault, ProviderDenial, ProviderSetupError, ResolvedProvider, spec_from_llm_config,
};
pub use provider_registry::{ProviderRegistry, ProviderRegistryError, RegisteredConfigError};
pub use skill_provider::{
    HostEndpoint, SkillModel, SkillProviderDenial, SkillProviderPolicy, SkillProviderPolicyConfig,
    SkillProviderPolicyError,
};
pub use skillet_core::approval::{
    ApprovalDecision, ApprovalPolicy, ApprovalRequest, Approver, ToolApproval, Unasked,
};
