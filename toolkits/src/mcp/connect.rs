//! Opening one MCP session: launching the stdio child or dialling the HTTP endpoint, the MCP
//! handshake, and the first `tools/list`.
//!
//! What happens to a session afterwards (watching it, restarting it, closing it) is the
//! supervisor's job in `toolkit.rs`; this file only knows how to get one going.
//!
//! A header secret is added to the process's redaction set (`skillet_core::secrets`) when it is read,
//! and every error of opening a session is redacted before it leaves: a server may quote the
//! request's headers in a 401 body, which rmcp puts in its error text.

use std::collections::HashMap;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{ClientCapabilities, ClientConfig, Implementation, ProtocolVersion};
use rmcp::service::{NotificationContext, RoleClient, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientHandler, ServiceExt};
use secrecy::{ExposeSecret, SecretString};
use tokio::io::AsyncBufReadExt;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use super::config::{HeaderSource, HttpServer, McpToolkitConfig, McpTransport, StdioServer};

/// Environment variables every stdio server gets (when the host has them), as the official MCP
/// SDKs do: enough for a program to run, nothing that usually holds a secret.
const BASE_CHILD_ENV: &[&str] = &["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"];

/// Longest stderr line of a child forwarded to the logs.
const MAX_STDERR_LINE: usize = 2000;

/// The client side of a session: answers the server and reports tool-list changes.
#[derive(Clone)]
pub(crate) struct ClientEvents {
    /// The toolkit's name, for logs.
    pub toolkit: Arc<str>,
    /// Notified on `notifications/tools/list_changed`.
    pub tools_changed: Arc<Notify>,
}

impl ClientHandler for ClientEvents {
    fn on_tool_list_changed(
        &self,
        _context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + Send + '_ {
        tracing::debug!(toolkit = %self.toolkit, "MCP server says its tool list changed");
        // Re-listing happens in the supervisor: a request sent from inside this callback
        // would wait on the very loop that is running the callback.
        self.tools_changed.notify_one();
        std::future::ready(())
    }

    fn get_info(&self) -> ClientConfig {
        // The newest revision that still has the `initialize` handshake: every server released
        // so far speaks it, and change notifications arrive without a subscription.
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("skillet", env!("CARGO_PKG_VERSION")),
        )
        .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
    }
}

/// A live MCP session and the tools it listed.
pub(crate) struct Session {
    /// The running client; dropping it ends the session.
    pub service: RunningService<RoleClient, ClientEvents>,
    /// Every tool the server listed (before the `available_tools` filter).
    pub tools: Vec<rmcp::model::Tool>,
}

/// Opens a session for `config`; `stop` cancelled ends it (and closes the transport, which for
/// a stdio server means closing its stdin, then SIGTERM, then kill).
pub(crate) async fn open_session(
    config: &McpToolkitConfig,
    events: ClientEvents,
    stop: CancellationToken,
) -> Result<Session, String> {
    let handshake = async {
        let service = match &config.transport {
            McpTransport::Stdio(server) => {
                let transport = spawn_child(server, &events.toolkit)?;
                events
                    .clone()
                    .serve_with_ct(transport, stop)
                    .await
                    .map_err(|e| format!("MCP handshake failed: {e}"))?
            }
            McpTransport::StreamableHttp(server) => {
                let transport = StreamableHttpClientTransport::from_config(http_config(server)?);
                events
                    .clone()
                    .serve_with_ct(transport, stop)
                    .await
                    .map_err(|e| format!("MCP handshake with {} failed: {e}", server.url))?
            }
        };
        let tools = service
            .peer()
            .list_all_tools()
            .await
            .map_err(|e| format!("tools/list failed: {e}"))?;
        Ok(Session { service, tools })
    };
    match tokio::time::timeout(config.startup_timeout, handshake).await {
        Ok(result) => result.map_err(|e: String| skillet_core::secrets::REDACTOR.redact_owned(e)),
        Err(_) => Err(format!(
            "the server did not complete the MCP handshake within {}",
            format_duration(config.startup_timeout)
        )),
    }
}

fn spawn_child(server: &StdioServer, toolkit: &Arc<str>) -> Result<TokioChildProcess, String> {
    let mut command = tokio::process::Command::new(&server.command);
    command.args(&server.args).env_clear().kill_on_drop(true);
    for name in BASE_CHILD_ENV
        .iter()
        .copied()
        .chain(server.env.iter().map(String::as_str))
    {
        if let Some(value) = std::env::var_os(name) {
            command.env(name, value);
        }
    }
    if let Some(cwd) = &server.cwd {
        command.current_dir(cwd);
    }
    let (transport, stderr) = TokioChildProcess::builder(command)
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start {:?}: {e}", server.command))?;
    if let Some(stderr) = stderr {
        tokio::spawn(forward_stderr(toolkit.clone(), stderr));
    }
    Ok(transport)
}

/// Forwards a child's stderr to the logs, line by line, until it closes. Stderr goes to the logs
/// only (never into statuses or results): a server may print anything there.
async fn forward_stderr(toolkit: Arc<str>, stderr: tokio::process::ChildStderr) {
    let mut lines = tokio::io::BufReader::new(stderr).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        let line: String = line.chars().take(MAX_STDERR_LINE).collect();
        tracing::debug!(toolkit = %toolkit, "server stderr: {line}");
    }
}

fn http_config(server: &HttpServer) -> Result<StreamableHttpClientTransportConfig, String> {
    let mut headers = HashMap::new();
    for (name, source) in &server.headers {
        let value: SecretString = match source {
            HeaderSource::Literal(value) => value.clone(),
            HeaderSource::Env { var, prefix } => match std::env::var(var) {
                Ok(value) => {
                    let header = SecretString::from(format!("{prefix}{value}"));
                    skillet_core::secrets::REDACTOR.add(header.clone());
                    skillet_core::secrets::REDACTOR.add(SecretString::from(value));
                    header
                }
                Err(_) => {
                    return Err(format!(
                        "header {name}: environment variable {var} is not set"
                    ));
                }
            },
        };
        let mut header = http::HeaderValue::from_str(value.expose_secret())
            .map_err(|_| format!("header {name}: the value is not a valid header value"))?;
        header.set_sensitive(true);
        let name = http::HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| format!("header {name:?} is not a valid header name"))?;
        headers.insert(name, header);
    }
    Ok(StreamableHttpClientTransportConfig::with_uri(server.url.as_str()).custom_headers(headers))
}

/// `2s`, `1.5s`, `250ms`: durations in messages.
pub(crate) fn format_duration(duration: Duration) -> String {
    if duration < Duration::from_secs(1) {
        format!("{}ms", duration.as_millis())
    } else if duration.subsec_millis() == 0 {
        format!("{}s", duration.as_secs())
    } else {
        format!("{:.1}s", duration.as_secs_f64())
    }
}
