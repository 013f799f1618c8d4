//! `mcp-test-server`: a small, deterministic MCP server for Skillet's MCP toolkit tests.
//!
//! It speaks MCP over stdio (the default) or streamable HTTP (`--http 127.0.0.1:0`, which prints
//! the endpoint URL as its first stdout line). Its tools exist to exercise one client behaviour
//! each:
//!
//! | tool | behaviour |
//! |---|---|
//! | `echo` | returns `text` as text content |
//! | `add` | returns `{"sum": a + b}` as structured content |
//! | `slow` | sleeps `ms` milliseconds (stops early when the client cancels) |
//! | `crash` | exits the process mid-call with status 3 (no reply is ever sent) |
//! | `toggle_tools` | adds or removes the tool `late.tool` and sends `notifications/tools/list_changed` |
//! | `late.tool` | only listed after `toggle_tools`; its name is not provider-safe on purpose |
//! | `image` | returns a 1×1 PNG image block and a text block |
//! | `fail` | returns a result with `isError: true` |
//! | `env` | returns the value of environment variable `name`, or `<unset>` |
//! | `cwd` | returns the working directory |
//! | `cancellations` | returns `{"count": n}`, the `notifications/cancelled` received so far |
//!
//! Options: `--http ADDR` serves streamable HTTP at `http://ADDR/mcp`; `--require-header
//! NAME=VALUE` (HTTP only) answers 401 to requests without that header; `--quote-headers`
//! makes that 401's body quote every header of the request, as some servers and proxies do
//! (a test that the client never prints a credential an upstream echoes); `--exit-at-start
//! CODE` exits before speaking MCP (an unstartable server).
//!
//! This is test infrastructure: nothing here is part of Skillet's engine.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use axum::response::IntoResponse;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelledNotificationParam,
    ContentBlock, ErrorData, JsonObject, ListToolsResult, PaginatedRequestParams,
    ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{NotificationContext, RequestContext, RoleServer};
use rmcp::{ServerHandler, ServiceExt};
use serde_json::{Value, json};

/// A 1×1 transparent PNG, base64-encoded.
const PIXEL_PNG_BASE64: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=";

/// State shared by every session of one server process.
#[derive(Default)]
struct ServerState {
    late_tool_listed: AtomicBool,
    cancellations: AtomicU64,
}

/// The MCP handler; clones share [`ServerState`].
#[derive(Clone, Default)]
struct TestServer {
    state: Arc<ServerState>,
}

fn schema(value: Value) -> Arc<JsonObject> {
    match value {
        Value::Object(map) => Arc::new(map),
        _ => Arc::new(JsonObject::new()),
    }
}

fn no_args() -> Arc<JsonObject> {
    schema(json!({"type": "object", "properties": {}}))
}

impl TestServer {
    fn tools(&self) -> Vec<Tool> {
        let mut tools = vec![
            Tool::new(
                "echo",
                "Returns its text.",
                schema(json!({
                    "type": "object",
                    "properties": {"text": {"type": "string"}},
                    "required": ["text"]
                })),
            ),
            Tool::new(
                "add",
                "Adds two numbers; structured result {sum}.",
                schema(json!({
                    "type": "object",
                    "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
                    "required": ["a", "b"]
                })),
            ),
            Tool::new(
                "slow",
                "Sleeps for ms milliseconds.",
                schema(json!({
                    "type": "object",
                    "properties": {"ms": {"type": "integer", "minimum": 0}},
                    "required": ["ms"]
                })),
            ),
            Tool::new("crash", "Exits the server process mid-call.", no_args()),
            Tool::new(
                "toggle_tools",
                "Adds or removes late.tool and notifies the client.",
                no_args(),
            ),
            Tool::new("image", "Returns a 1x1 PNG.", no_args()),
            Tool::new("fail", "Reports a tool error (isError).", no_args()),
            Tool::new(
                "env",
                "Returns an environment variable of the server process.",
                schema(json!({
                    "type": "object",
                    "properties": {"name": {"type": "string"}},
                    "required": ["name"]
                })),
            ),
            Tool::new("cwd", "Returns the working directory.", no_args()),
            Tool::new(
                "cancellations",
                "Counts the notifications/cancelled received.",
                no_args(),
            ),
        ];
        if self.state.late_tool_listed.load(Ordering::SeqCst) {
            tools.push(Tool::new(
                "late.tool",
                "Appears after toggle_tools.",
                no_args(),
            ));
        }
        tools
    }

    async fn run_tool(
        &self,
        name: &str,
        args: &JsonObject,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let text_arg = |key: &str| -> Result<String, ErrorData> {
            args.get(key)
                .and_then(Value::as_str)
                .map(str::to_owned)
                .ok_or_else(|| ErrorData::invalid_params(format!("missing string {key:?}"), None))
        };
        let number_arg = |key: &str| -> Result<f64, ErrorData> {
            args.get(key)
                .and_then(Value::as_f64)
                .ok_or_else(|| ErrorData::invalid_params(format!("missing number {key:?}"), None))
        };
        match name {
            "echo" => Ok(CallToolResult::success(vec![ContentBlock::text(text_arg(
                "text",
            )?)])),
            "add" => {
                // Integers stay integers, so results compare exactly in tests.
                let ints = (args.get("a").and_then(Value::as_i64))
                    .zip(args.get("b").and_then(Value::as_i64));
                let sum = match ints {
                    Some((a, b)) => json!(a.saturating_add(b)),
                    None => json!(number_arg("a")? + number_arg("b")?),
                };
                Ok(CallToolResult::structured(json!({"sum": sum})))
            }
            "slow" => {
                let ms = args.get("ms").and_then(Value::as_u64).unwrap_or(0);
                tokio::select! {
                    _ = tokio::time::sleep(Duration::from_millis(ms)) => {}
                    _ = context.ct.cancelled() => {
                        return Err(ErrorData::internal_error("cancelled", None));
                    }
                }
                Ok(CallToolResult::success(vec![ContentBlock::text(format!(
                    "slept {ms}ms"
                ))]))
            }
            "crash" => std::process::exit(3),
            "toggle_tools" => {
                let listed = !self
                    .state
                    .late_tool_listed
                    .fetch_xor(true, Ordering::SeqCst);
                if let Err(e) = context.peer.notify_tool_list_changed().await {
                    eprintln!("mcp-test-server: could not notify list change: {e}");
                }
                Ok(CallToolResult::success(vec![ContentBlock::text(format!(
                    "late.tool listed: {listed}"
                ))]))
            }
            "late.tool" if self.state.late_tool_listed.load(Ordering::SeqCst) => Ok(
                CallToolResult::success(vec![ContentBlock::text("late tool ran")]),
            ),
            "image" => Ok(CallToolResult::success(vec![
                ContentBlock::image(PIXEL_PNG_BASE64, "image/png"),
                ContentBlock::text("a 1x1 png"),
            ])),
            "fail" => Ok(CallToolResult::error(vec![ContentBlock::text(
                "the tool failed on purpose",
            )])),
            "env" => {
                let value = std::env::var(text_arg("name")?).unwrap_or_else(|_| "<unset>".into());
                Ok(CallToolResult::success(vec![ContentBlock::text(value)]))
            }
            "cwd" => {
                let dir = std::env::current_dir()
                    .map(|d| d.display().to_string())
                    .unwrap_or_default();
                Ok(CallToolResult::success(vec![ContentBlock::text(dir)]))
            }
            "cancellations" => {
                let count = self.state.cancellations.load(Ordering::SeqCst);
                Ok(CallToolResult::structured(json!({"count": count})))
            }
            other => Err(ErrorData::invalid_params(
                format!("unknown tool {other:?}"),
                None,
            )),
        }
    }
}

impl ServerHandler for TestServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .build(),
        )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = request.arguments.clone().unwrap_or_default();
        self.run_tool(&request.name, &args, context)
            .await
            .map(Into::into)
    }

    async fn on_cancelled(
        &self,
        _notification: CancelledNotificationParam,
        _context: NotificationContext<RoleServer>,
    ) {
        self.state.cancellations.fetch_add(1, Ordering::SeqCst);
    }
}

/// Command-line options.
#[derive(Default)]
struct Options {
    http: Option<String>,
    required_header: Option<(String, String)>,
    quote_headers: bool,
    exit_at_start: Option<i32>,
}

fn parse_options() -> Result<Options, String> {
    let mut options = Options::default();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = |flag: &str| args.next().ok_or(format!("{flag} needs a value"));
        match arg.as_str() {
            "--http" => options.http = Some(value("--http")?),
            "--require-header" => {
                let spec = value("--require-header")?;
                let (name, val) = spec
                    .split_once('=')
                    .ok_or("--require-header takes NAME=VALUE")?;
                options.required_header = Some((name.to_ascii_lowercase(), val.to_owned()));
            }
            "--quote-headers" => options.quote_headers = true,
            "--exit-at-start" => {
                let code = value("--exit-at-start")?;
                options.exit_at_start = Some(
                    code.parse()
                        .map_err(|_| format!("bad exit code {code:?}"))?,
                );
            }
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    Ok(options)
}

async fn serve_stdio() -> Result<(), String> {
    let running = TestServer::default()
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| format!("initialize failed: {e}"))?;
    running
        .waiting()
        .await
        .map_err(|e| format!("server task failed: {e}"))?;
    Ok(())
}

async fn serve_http(
    addr: &str,
    required_header: Option<(String, String)>,
    quote_headers: bool,
) -> Result<(), String> {
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};

    let server = TestServer::default();
    let service = StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    );
    let required = Arc::new(required_header);
    let router =
        axum::Router::new()
            .nest_service("/mcp", service)
            .layer(axum::middleware::from_fn(
                move |request: axum::extract::Request, next: axum::middleware::Next| {
                    let required = required.clone();
                    async move {
                        if let Some((name, value)) = required.as_ref() {
                            let given = request.headers().get(name).and_then(|v| v.to_str().ok());
                            if given != Some(value.as_str()) {
                                let status = axum::http::StatusCode::UNAUTHORIZED;
                                if !quote_headers {
                                    return status.into_response();
                                }
                                let quoted: Vec<String> = request
                                    .headers()
                                    .iter()
                                    .map(|(n, v)| format!("{n}: {}", v.to_str().unwrap_or("?")))
                                    .collect();
                                let body = format!("unauthorized; you sent {}", quoted.join(", "));
                                return (status, body).into_response();
                            }
                        }
                        next.run(request).await
                    }
                },
            ));
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| format!("cannot bind {addr}: {e}"))?;
    let local = listener
        .local_addr()
        .map_err(|e| format!("no local address: {e}"))?;
    println!("http://{local}/mcp");
    axum::serve(listener, router)
        .await
        .map_err(|e| format!("http server failed: {e}"))
}

#[tokio::main]
async fn main() {
    let options = match parse_options() {
        Ok(options) => options,
        Err(e) => {
            eprintln!("mcp-test-server: {e}");
            std::process::exit(2);
        }
    };
    if let Some(code) = options.exit_at_start {
        eprintln!("mcp-test-server: exiting at start with status {code} as asked");
        std::process::exit(code);
    }
    let result = match &options.http {
        Some(addr) => serve_http(addr, options.required_header, options.quote_headers).await,
        None => serve_stdio().await,
    };
    if let Err(e) = result {
        eprintln!("mcp-test-server: {e}");
        std::process::exit(1);
    }
}
