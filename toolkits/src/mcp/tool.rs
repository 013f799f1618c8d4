//! [`McpTool`]: one tool of an MCP server as a [`Tool`], and how a call travels: the call's
//! deadline (capped by the toolkit's `timeout_seconds`) and cancellation end the MCP request,
//! which sends `notifications/cancelled` to the server; transport failures become
//! `ToolError::Unavailable`, MCP protocol errors `ToolError::Failed`.

use std::sync::{Arc, Weak};

use async_trait::async_trait;
use rmcp::ServiceError;
use rmcp::model::CallToolRequestParams;
use serde_json::Value;

use super::connect::format_duration;
use super::content::to_tool_output;
use super::shared::Shared;
use skillet_core::schema::json_kind;
use skillet_core::tools::{Tool, ToolContext, ToolError, ToolOutput};

/// A tool listed by an MCP server. Its [`Tool::name`] is the MCP name, unchanged (the
/// `ToolRegistry` derives the provider-safe name the model sees and maps it back).
pub struct McpTool {
    name: String,
    description: String,
    schema: Value,
    /// The server's `annotations.idempotentHint` (a resumed run runs an interrupted call of
    /// this tool again only when it is set).
    idempotent: bool,
    shared: Weak<Shared>,
}

impl std::fmt::Debug for McpTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpTool")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl McpTool {
    /// Maps an MCP tool listing of toolkit `toolkit`.
    pub(crate) fn from_mcp(toolkit: &str, tool: rmcp::model::Tool, shared: Weak<Shared>) -> Self {
        let description = tool
            .description
            .as_deref()
            .or(tool.title.as_deref())
            .map(str::to_owned)
            .unwrap_or_else(|| format!("{} (from MCP server {toolkit})", tool.name));
        let mut schema = (*tool.input_schema).clone();
        // MCP requires an object schema; some servers leave `type` out, providers reject that.
        schema
            .entry("type")
            .or_insert_with(|| Value::String("object".into()));
        let idempotent = tool
            .annotations
            .as_ref()
            .and_then(|a| a.idempotent_hint)
            .unwrap_or(false);
        McpTool {
            name: tool.name.into_owned(),
            description,
            schema: Value::Object(schema),
            idempotent,
            shared,
        }
    }
}

#[async_trait]
impl Tool for McpTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn input_schema(&self) -> &Value {
        &self.schema
    }

    fn idempotent(&self) -> bool {
        self.idempotent
    }

    async fn call(&self, arguments: Value, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let shared: Arc<Shared> = self.shared.upgrade().ok_or_else(|| {
            ToolError::Unavailable(format!("MCP tool {} was shut down", self.name))
        })?;
        let own_timeout_binds = shared.config.call_timeout <= ctx.deadline.remaining();
        let deadline = ctx.deadline.min_after(shared.config.call_timeout);
        let arguments = match arguments {
            Value::Object(map) => Some(map),
            Value::Null => None,
            other => {
                return Err(ToolError::Failed(format!(
                    "arguments must be a JSON object, got {}",
                    json_kind(&other)
                )));
            }
        };
        let peer = shared.ready_peer(deadline, &ctx.cancel).await?;
        let mut params = CallToolRequestParams::new(self.name.clone());
        params.arguments = arguments;
        // Dropping the request future (deadline, cancellation) makes rmcp send
        // `notifications/cancelled` for it, so the server stops working on it.
        let result = tokio::select! {
            biased;
            _ = ctx.cancel.cancelled() => return Err(ToolError::Cancelled),
            _ = tokio::time::sleep_until(deadline.instant()) => {
                return Err(ToolError::Failed(if own_timeout_binds {
                    format!(
                        "MCP tool {} timed out after {}",
                        self.name,
                        format_duration(shared.config.call_timeout)
                    )
                } else {
                    format!("MCP tool {} did not finish before the call's deadline", self.name)
                }));
            }
            result = peer.call_tool(params) => result,
        };
        match result {
            Ok(result) => Ok(to_tool_output(
                &self.name,
                &ctx.call_id,
                result,
                &ctx.events,
            )),
            // The server's error text may quote what the host sent it (its headers).
            Err(e) => Err(redacted(service_error(&shared.name, &self.name, e))),
        }
    }
}

fn redacted(error: ToolError) -> ToolError {
    match error {
        ToolError::Failed(text) => ToolError::Failed(skillet_core::secrets::redact(&text)),
        ToolError::Unavailable(text) => {
            ToolError::Unavailable(skillet_core::secrets::redact(&text))
        }
        other => other,
    }
}

fn service_error(toolkit: &str, tool: &str, error: ServiceError) -> ToolError {
    match error {
        ServiceError::TransportClosed | ServiceError::TransportSend(_) => {
            ToolError::Unavailable(format!(
                "MCP server {toolkit} stopped during the call to {tool}; it is being restarted"
            ))
        }
        ServiceError::McpError(e) => ToolError::Failed(format!(
            "MCP tool {tool} failed ({}): {}",
            e.code.0, e.message
        )),
        ServiceError::Cancelled { .. } => ToolError::Cancelled,
        other => ToolError::Failed(format!("MCP tool {tool} failed: {other}")),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn listing_without_type_or_description_is_completed() {
        let listed = rmcp::model::Tool::new_with_raw(
            "fs.read",
            None,
            Arc::new(
                json!({"properties": {}})
                    .as_object()
                    .cloned()
                    .unwrap_or_default(),
            ),
        );
        let tool = McpTool::from_mcp("files", listed, Weak::new());
        assert_eq!(tool.name(), "fs.read");
        assert_eq!(tool.description(), "fs.read (from MCP server files)");
        assert_eq!(tool.input_schema()["type"], "object");
    }
}
