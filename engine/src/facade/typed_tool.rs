//! Typed tools: [`tool_fn`] makes a [`Tool`] from an async closure over a Rust argument type,
//! its input schema generated from that type with `schemars` ([`input_schema_for`]), its
//! arguments decoded before the closure runs, its output serialized for the model.
//!
//! The result is an ordinary [`FnTool`] (the untyped [`tools::tool_fn`](crate::tools::tool_fn)
//! underneath), so it registers in a [`ToolRegistry`](crate::tools::ToolRegistry) and dispatches
//! like every other tool: the run loop validates the model's arguments against the generated
//! schema first, and anything that still does not decode (or an output that does not
//! serialize) is answered to the model as a tool error, never a failed run.

use std::future::Future;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::typed_schema::input_schema_for;
use crate::tools::{self, FnTool, ToolContext, ToolError, ToolOutput};

/// A tool over typed arguments. `Args` is a struct (its schema an object, as every provider
/// requires of tool arguments), its doc comments become the schema's descriptions; `Out` is
/// any `Serialize` value (a `String` is sent as text, anything else as JSON).
///
/// This is the one way to make a tool of a Rust closure. A tool that needs the call's
/// [`ToolContext`] (its cancellation, deadline or events) implements [`Tool`](crate::tools::Tool)
/// itself; [`tools::tool_fn`](crate::tools::tool_fn) is the layer underneath, for a closure over
/// raw JSON with a schema of your own.
///
/// ```
/// use schemars::JsonSchema;
/// use serde::Deserialize;
/// use skillet_engine::tool_fn;
///
/// /// Arguments of `add`.
/// #[derive(Deserialize, JsonSchema)]
/// struct Add {
///     /// The first term.
///     a: f64,
///     /// The second term.
///     b: f64,
/// }
///
/// let add = tool_fn("add", "Adds two numbers", |args: Add| async move { Ok(args.a + args.b) });
/// let schema = skillet_engine::tools::Tool::input_schema(&*add);
/// assert_eq!(schema["type"], "object");
/// assert_eq!(schema["properties"]["a"]["description"], "The first term.");
/// assert_eq!(schema["required"], serde_json::json!(["a", "b"]));
/// ```
pub fn tool_fn<Args, Out, F, Fut>(
    name: impl Into<String>,
    description: impl Into<String>,
    run: F,
) -> Arc<FnTool>
where
    Args: DeserializeOwned + JsonSchema + Send + 'static,
    Out: Serialize + 'static,
    F: Fn(Args) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Out, ToolError>> + Send + 'static,
{
    let name = name.into();
    let tool_name: Arc<str> = Arc::from(name.as_str());
    let run = Arc::new(run);
    tools::tool_fn(
        name,
        description,
        input_schema_for::<Args>(),
        move |arguments: Value, _ctx: ToolContext| {
            let decoded = serde_json::from_value::<Args>(arguments);
            let run = Arc::clone(&run);
            let tool_name = Arc::clone(&tool_name);
            async move {
                let args = decoded.map_err(|e| {
                    ToolError::Failed(format!("invalid arguments for `{tool_name}`: {e}"))
                })?;
                let output = run(args).await?;
                let content = serde_json::to_value(output).map_err(|e| {
                    ToolError::Failed(format!("`{tool_name}` produced no JSON output: {e}"))
                })?;
                Ok(ToolOutput::json(content))
            }
        },
    )
}
