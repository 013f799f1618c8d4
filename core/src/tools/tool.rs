//! The [`Tool`] trait, its call context and results, and [`tool_fn`] for closures.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::deadline::Deadline;
use crate::events::EventEmitter;

/// What a tool call may use while it runs.
#[derive(Debug, Clone)]
pub struct ToolContext {
    /// Cancelled when the call is cancelled or its deadline passes; long-running tools should
    /// stop promptly when it fires.
    pub cancel: CancellationToken,
    /// The earlier of the call's deadline and this tool's own timeout.
    pub deadline: Deadline,
    /// The call's event emitter (e.g. for `artifact` chunks of a generated image).
    pub events: EventEmitter,
    /// The model's id for this tool call.
    pub call_id: String,
}

/// A successful tool result, sent back to the model.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutput {
    /// Text or JSON content. Strings are sent as-is; other values as compact JSON.
    pub content: Value,
    /// Whether the tool itself reports a failure (e.g. MCP `isError`); the model sees it as an
    /// error result, the run goes on.
    pub is_error: bool,
    /// Images the tool returned (MCP `image` content), shown to a model that takes images
    /// after the turn's results (`run::images`); empty for most tools.
    pub images: Vec<skillet_providers::ImageInput>,
}

impl ToolOutput {
    /// A text result.
    pub fn text(text: impl Into<String>) -> Self {
        ToolOutput {
            content: Value::String(text.into()),
            is_error: false,
            images: Vec::new(),
        }
    }

    /// A JSON result.
    pub fn json(value: Value) -> Self {
        ToolOutput {
            content: value,
            is_error: false,
            images: Vec::new(),
        }
    }

    /// A result the tool marks as an error.
    pub fn error(text: impl Into<String>) -> Self {
        ToolOutput {
            content: Value::String(text.into()),
            is_error: true,
            images: Vec::new(),
        }
    }

    /// This output with `images` for the model to see beside it.
    pub fn with_images(mut self, images: Vec<skillet_providers::ImageInput>) -> Self {
        self.images = images;
        self
    }

    /// The content as the text the model receives.
    pub fn to_text(&self) -> String {
        match &self.content {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        }
    }
}

/// Why a tool call failed. Every variant is answered to the model as a tool error; none stops
/// the run.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ToolError {
    /// The tool ran and failed.
    #[error("{0}")]
    Failed(String),
    /// The tool's backend is unavailable (e.g. its MCP server died).
    #[error("tool unavailable: {0}")]
    Unavailable(String),
    /// The tool was cancelled.
    #[error("tool call cancelled")]
    Cancelled,
}

/// One callable a model can use.
#[async_trait]
pub trait Tool: Send + Sync {
    /// The tool's name as skills declare it.
    fn name(&self) -> &str;
    /// What the tool does, for the model.
    fn description(&self) -> &str;
    /// JSON Schema of the arguments object.
    fn input_schema(&self) -> &Value;
    /// Runs the tool. Arguments were already validated against [`Tool::input_schema`].
    async fn call(&self, arguments: Value, ctx: ToolContext) -> Result<ToolOutput, ToolError>;
    /// Whether the tool's work is short and never blocks, so it may run on the call's own task
    /// instead of a task of its own (no spawn, no cross-thread wake-up). A panic is still caught
    /// and answered as a tool error either way. Default `false`: a tool that blocks its thread
    /// in its own task cannot hold up the call's timeout, and one on the call's task can.
    fn runs_inline(&self) -> bool {
        false
    }
    /// Whether running the tool twice with the same arguments has the effect of running it once
    /// (a read, a lookup, a put of the same value). A resumed run runs a call that was in flight
    /// when its process died again only when this is true; otherwise the model is told it may or
    /// may not have happened. Default `false`.
    fn idempotent(&self) -> bool {
        false
    }
}

type BoxedToolFuture = Pin<Box<dyn Future<Output = Result<ToolOutput, ToolError>> + Send>>;
type ToolFnBox = dyn Fn(Value, ToolContext) -> BoxedToolFuture + Send + Sync;

/// A tool made from an async closure; see [`tool_fn`].
pub struct FnTool {
    name: String,
    description: String,
    schema: Value,
    inline: bool,
    run: Box<ToolFnBox>,
}

impl std::fmt::Debug for FnTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FnTool")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

/// Makes a tool from an async closure, in one line:
///
/// ```
/// use serde_json::json;
/// use skillet_core::tools::{tool_fn, ToolOutput};
///
/// let echo = tool_fn("echo", "Echoes its input", json!({"type": "object"}), |args, _ctx| async move {
///     Ok(ToolOutput::json(args))
/// });
/// # let _ = echo;
/// ```
pub fn tool_fn<F, Fut>(
    name: impl Into<String>,
    description: impl Into<String>,
    input_schema: Value,
    run: F,
) -> Arc<FnTool>
where
    F: Fn(Value, ToolContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<ToolOutput, ToolError>> + Send + 'static,
{
    Arc::new(FnTool::new(name, description, input_schema, false, run))
}

/// Like [`tool_fn`], for a closure whose work is short and never blocks (pure computation on
/// its arguments): it runs on the call's own task ([`Tool::runs_inline`]).
pub fn inline_tool_fn<F, Fut>(
    name: impl Into<String>,
    description: impl Into<String>,
    input_schema: Value,
    run: F,
) -> Arc<FnTool>
where
    F: Fn(Value, ToolContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<ToolOutput, ToolError>> + Send + 'static,
{
    Arc::new(FnTool::new(name, description, input_schema, true, run))
}

impl FnTool {
    fn new<F, Fut>(
        name: impl Into<String>,
        description: impl Into<String>,
        schema: Value,
        inline: bool,
        run: F,
    ) -> Self
    where
        F: Fn(Value, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ToolOutput, ToolError>> + Send + 'static,
    {
        Self {
            name: name.into(),
            description: description.into(),
            schema,
            inline,
            run: Box::new(move |args, ctx| Box::pin(run(args, ctx))),
        }
    }
}

#[async_trait]
impl Tool for FnTool {
    fn name(&self) -> &str {
        &self.name
    }
    fn description(&self) -> &str {
        &self.description
    }
    fn input_schema(&self) -> &Value {
        &self.schema
    }
    async fn call(&self, arguments: Value, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        (self.run)(arguments, ctx).await
    }
    fn runs_inline(&self) -> bool {
        self.inline
    }
}

/// `tool`, marked [idempotent](Tool::idempotent) (a host's `idempotent = true`).
pub fn idempotent(tool: Arc<dyn Tool>) -> Arc<dyn Tool> {
    Arc::new(Idempotent(tool))
}

/// A tool the host marked idempotent; everything else is the wrapped tool's.
struct Idempotent(Arc<dyn Tool>);

#[async_trait]
impl Tool for Idempotent {
    fn name(&self) -> &str {
        self.0.name()
    }
    fn description(&self) -> &str {
        self.0.description()
    }
    fn input_schema(&self) -> &Value {
        self.0.input_schema()
    }
    async fn call(&self, arguments: Value, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        self.0.call(arguments, ctx).await
    }
    fn runs_inline(&self) -> bool {
        self.0.runs_inline()
    }
    fn idempotent(&self) -> bool {
        true
    }
}
