//! The MCP adapter against an rmcp client over an in-memory stream, with an in-test service
//! whose skill can flip between `Published` and `Blocked`: `tools/list_changed` and
//! `prompts/list_changed` are sent when it flips, a `Blocked` skill is neither listed nor callable, and a call beyond the host's shared
//! concurrency limit is a retryable `isError` result. (The official Python SDK tests of the
//! same server are in `tests/tests/mcp_server_python.rs`.)

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use rmcp::model::{CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation};
use rmcp::service::{NotificationContext, RoleClient, RunningService};
use rmcp::{ClientHandler, ServiceExt};
use serde_json::{Value, json};
use skillet_core::events::EventSink;
use skillet_core::service::SkillService;
use skillet_host::HostCore;
use skillet_host::mcp::serve_stream;
use skillet_protocol::{
    SkillCallRequest, SkillCallResponse, SkillDiscoverRequest, SkillDiscoverResponse, SkillStatus,
};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use super::support::{EchoService, echo_definition};

/// The echo service, whose skill is `Blocked` while `blocked` is set.
#[derive(Default)]
struct SwitchableService {
    echo: EchoService,
    blocked: AtomicBool,
}

#[async_trait]
impl SkillService for SwitchableService {
    fn discover(&self, request: &SkillDiscoverRequest) -> SkillDiscoverResponse {
        let mut skill = echo_definition();
        if self.blocked.load(Ordering::SeqCst) {
            skill.status = SkillStatus::Blocked;
        }
        SkillDiscoverResponse::new(&request.id, vec![skill])
    }

    async fn call(
        &self,
        request: SkillCallRequest,
        events: Option<Arc<dyn EventSink>>,
        cancel: CancellationToken,
    ) -> SkillCallResponse {
        self.echo.call(request, events, cancel).await
    }

    fn agent_card(&self) -> Result<skillet_core::card::AgentCard, skillet_core::card::CardError> {
        self.echo.agent_card()
    }
}

#[derive(Clone, Default)]
struct Client {
    tools_changed: Arc<Notify>,
    prompts_changed: Arc<Notify>,
}

impl ClientHandler for Client {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.tools_changed.notify_one();
    }

    async fn on_prompt_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.prompts_changed.notify_one();
    }

    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("test", "0"),
        )
        .with_protocol_version(rmcp::model::ProtocolVersion::LATEST_WITH_INITIALIZE)
    }
}

async fn connect(core: &HostCore) -> (RunningService<RoleClient, Client>, Client) {
    let (client_io, server_io) = tokio::io::duplex(1 << 16);
    let (server_read, server_write) = tokio::io::split(server_io);
    tokio::spawn(serve_stream(
        core.clone(),
        server_read,
        server_write,
        Duration::from_secs(1),
        1 << 20,
        std::future::pending(),
    ));
    let client = Client::default();
    let running = client
        .clone()
        .serve(tokio::io::split(client_io))
        .await
        .expect("MCP handshake");
    (running, client)
}

fn echo_call(delay_ms: u64) -> CallToolRequestParams {
    let Value::Object(arguments) = json!({"delay_ms": delay_ms}) else {
        unreachable!()
    };
    CallToolRequestParams::new("echo").with_arguments(arguments)
}

#[tokio::test]
async fn a_skill_that_becomes_blocked_is_announced_unlisted_and_uncallable() {
    let service = Arc::new(SwitchableService::default());
    let (client, events) = connect(&HostCore::new(service.clone(), 4)).await;
    let tools = client.peer().list_all_tools().await.unwrap();
    assert_eq!(
        tools.iter().map(|t| t.name.as_ref()).collect::<Vec<_>>(),
        ["echo"]
    );
    let ok = client.peer().call_tool(echo_call(0)).await.unwrap();
    assert_eq!(ok.is_error, Some(false));
    assert_eq!(ok.structured_content.unwrap()["delay_ms"], 0);

    service.blocked.store(true, Ordering::SeqCst);
    tokio::time::timeout(Duration::from_secs(10), events.tools_changed.notified())
        .await
        .expect("notifications/tools/list_changed within 10 s");
    tokio::time::timeout(Duration::from_secs(10), events.prompts_changed.notified())
        .await
        .expect("notifications/prompts/list_changed within 10 s: a Blocked skill is no prompt");
    assert!(client.peer().list_all_prompts().await.unwrap().is_empty());
    let tools = client.peer().list_all_tools().await.unwrap();
    assert!(
        tools.is_empty(),
        "a Blocked skill is not offered: {tools:?}"
    );
    let refused = client.peer().call_tool(echo_call(0)).await.unwrap_err();
    assert!(
        refused.to_string().contains("unknown tool"),
        "calling a Blocked skill is an unknown tool: {refused}"
    );
    let _ = client.cancel().await;
}

#[tokio::test]
async fn a_call_beyond_the_concurrency_limit_is_a_retryable_error_result() {
    let core = HostCore::new(Arc::new(SwitchableService::default()), 1);
    let (client, _events) = connect(&core).await;
    let peer = client.peer().clone();
    let slow = tokio::spawn(async move { peer.call_tool(echo_call(1500)).await });
    // Wait until the slow call holds the only slot.
    for _ in 0..1000 {
        if core.in_flight() == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert_eq!(core.in_flight(), 1, "the slow call is running");
    let busy = client.peer().call_tool(echo_call(0)).await.unwrap();
    assert_eq!(busy.is_error, Some(true));
    let meta = busy.meta.expect("_meta").0;
    assert_eq!(meta["a2e_code"], "runtime_error");
    assert_eq!(meta["retryable"], true);
    let slow = slow.await.unwrap().unwrap();
    assert_eq!(slow.is_error, Some(false), "the running call is unaffected");
    assert_eq!(core.in_flight(), 0, "the slot is free again");
    let _ = client.cancel().await;
}

/// A raw MCP session over an in-memory stream: JSON lines in, JSON lines out, and the server's
/// task (to see that it is still running).
struct RawSession {
    write: tokio::io::WriteHalf<tokio::io::DuplexStream>,
    lines: tokio::io::Lines<tokio::io::BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>>,
    server: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl RawSession {
    fn start(core: &HostCore) -> Self {
        Self::start_with(core, 1 << 20)
    }

    fn start_with(core: &HostCore, max_line_bytes: usize) -> Self {
        Self::start_full(core, max_line_bytes, Duration::from_secs(1))
    }

    fn start_full(core: &HostCore, max_line_bytes: usize, grace: Duration) -> Self {
        use tokio::io::AsyncBufReadExt;
        let (client_io, server_io) = tokio::io::duplex(1 << 16);
        let (server_read, server_write) = tokio::io::split(server_io);
        let server = tokio::spawn(serve_stream(
            core.clone(),
            server_read,
            server_write,
            grace,
            max_line_bytes,
            std::future::pending(),
        ));
        let (read, write) = tokio::io::split(client_io);
        RawSession {
            write,
            lines: tokio::io::BufReader::new(read).lines(),
            server,
        }
    }

    async fn send(&mut self, message: Value) {
        use tokio::io::AsyncWriteExt;
        let mut line = message.to_string();
        line.push('\n');
        self.write.write_all(line.as_bytes()).await.unwrap();
    }

    /// `initialize`, its answer read, and `notifications/initialized`.
    async fn initialize(&mut self) {
        self.send(initialize_request()).await;
        self.answer().await;
        self.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
    }

    async fn answer(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(30), self.lines.next_line())
            .await
            .expect("an answer within 30 s")
            .unwrap()
            .expect("the session is still open");
        serde_json::from_str(&line).unwrap()
    }
}

fn initialize_request() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"}}})
}

/// Issue 30: `serve --mcp` exited (code 5) when a notification arrived before `initialize`.
#[tokio::test]
async fn a_notification_before_initialize_is_dropped_and_the_session_goes_on() {
    let core = HostCore::new(Arc::new(SwitchableService::default()), 2);
    let mut session = RawSession::start(&core);
    session
        .send(
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                     "params": {"requestId": 7, "reason": "early"}}),
        )
        .await;
    session.send(initialize_request()).await;
    let answer = session.answer().await;
    assert_eq!(answer["id"], 1, "{answer}");
    assert!(answer["result"]["serverInfo"].is_object(), "{answer}");
    assert!(!session.server.is_finished());
}

/// Issue 30: a `tools/call` whose `arguments` is not an object got -32601 (method not found).
#[tokio::test]
async fn a_tools_call_with_non_object_arguments_is_invalid_params() {
    let core = HostCore::new(Arc::new(SwitchableService::default()), 2);
    let mut session = RawSession::start(&core);
    session.initialize().await;
    session
        .send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                     "params": {"name": "echo", "arguments": 5}}))
        .await;
    let answer = session.answer().await;
    assert_eq!(answer["id"], 2, "{answer}");
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
}

/// Issue 30: over stdio rmcp read lines up to its own 16 MiB, not `max_message_bytes`, and then
/// dropped a longer line without a word: the client's request waited for its own timeout.
#[tokio::test]
async fn a_line_over_max_message_bytes_is_answered_and_the_session_goes_on() {
    let service = Arc::new(SwitchableService::default());
    let core = HostCore::new(service.clone(), 2);
    let mut session = RawSession::start_with(&core, 4096);
    session.initialize().await;
    session
        .send(json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
                     "params": {"name": "echo", "arguments": {"pad": "x".repeat(8192)}}}))
        .await;
    session
        .send(json!({"jsonrpc": "2.0", "id": 6, "method": "ping"}))
        .await;
    let refused = session.answer().await;
    assert_eq!(
        refused["id"], 5,
        "the oversized call gets its answer: {refused}"
    );
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(message.contains("4096-byte limit"), "{message}");
    let answer = session.answer().await;
    assert_eq!(answer["id"], 6, "{answer}");
    assert!(answer.get("result").is_some(), "{answer}");
    assert_eq!(
        service.echo.completed.load(Ordering::SeqCst),
        0,
        "the oversized call never ran"
    );
    assert!(!session.server.is_finished());
}

/// Issue 30: a host that writes its calls and closes its input (a shell pipe) lost their
/// answers: rmcp ended the session at the end of input while the calls were still running.
#[tokio::test]
async fn calls_in_flight_at_the_end_of_input_are_still_answered() {
    use tokio::io::AsyncWriteExt;
    let core = HostCore::new(Arc::new(SwitchableService::default()), 4);
    let mut session = RawSession::start(&core);
    session.initialize().await;
    for id in [7, 8] {
        session
            .send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                         "params": {"name": "echo", "arguments": {"delay_ms": 300}}}))
            .await;
    }
    session.write.shutdown().await.unwrap();
    let mut answered = Vec::new();
    while answered.len() < 2 {
        let answer = session.answer().await;
        if answer.get("id").is_some() && answer.get("method").is_none() {
            assert!(answer.get("result").is_some(), "{answer}");
            answered.push(answer["id"].as_u64().unwrap());
        }
    }
    answered.sort_unstable();
    assert_eq!(answered, [7, 8]);
    let ended = tokio::time::timeout(Duration::from_secs(10), session.server).await;
    assert!(
        matches!(ended, Ok(Ok(Ok(())))),
        "the session ends once answered: {ended:?}"
    );
}

/// A call the client cancelled gets no answer, its run stops, and it no longer holds the end of
/// the session for the whole grace period (rmcp drops a cancelled request's answer unsent, so
/// `eof_drain` counts the request answered when it reads the cancellation).
#[tokio::test]
async fn a_cancelled_call_is_not_answered_and_does_not_hold_the_end_of_input() {
    use tokio::io::AsyncWriteExt;
    let service = Arc::new(SwitchableService::default());
    let core = HostCore::new(service.clone(), 4);
    let mut session = RawSession::start_full(&core, 1 << 20, Duration::from_secs(120));
    session.initialize().await;
    session
        .send(json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
                     "params": {"name": "echo", "arguments": {"delay_ms": 60_000}}}))
        .await;
    session
        .send(json!({"jsonrpc": "2.0", "id": 10, "method": "tools/call",
                     "params": {"name": "echo", "arguments": {"delay_ms": 0}}}))
        .await;
    // Call 10's notifications and answer (call 9's notifications may come between).
    loop {
        let line = session.answer().await;
        if line.get("method").is_none() {
            assert_eq!(line["id"], 10, "{line}");
            break;
        }
    }
    session
        .send(
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                     "params": {"requestId": 9, "reason": "not needed"}}),
        )
        .await;
    session.write.shutdown().await.unwrap();
    let mut rest = Vec::new();
    let ended = tokio::time::timeout(Duration::from_secs(20), async {
        while let Ok(Some(line)) = session.lines.next_line().await {
            rest.push(line);
        }
        session.server.await
    })
    .await;
    assert!(
        matches!(ended, Ok(Ok(Ok(())))),
        "the session ends without waiting out the 120 s grace: {ended:?}"
    );
    assert!(
        rest.iter().all(|line| !line.contains("\"id\":9")),
        "nothing answers the cancelled call: {rest:?}"
    );
    assert_eq!(service.echo.cancelled.load(Ordering::SeqCst), 1);
}

/// A `tools/call` whose `_meta` names a protocol version is left to rmcp, which checks it: an
/// unsupported one is refused and the call never runs. A plain call is answered in the shape
/// of the version `initialize` negotiated (no 2026-07-28 `resultType`).
#[tokio::test]
async fn a_call_naming_a_protocol_version_is_checked_and_a_plain_one_has_the_negotiated_shape() {
    let service = Arc::new(SwitchableService::default());
    let core = HostCore::new(service.clone(), 2);
    let mut session = RawSession::start(&core);
    session.initialize().await;
    session
        .send(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                     "params": {"name": "echo", "arguments": {},
                                "_meta": {"io.modelcontextprotocol/protocolVersion": "1999-01-01"}}}))
        .await;
    let refused = session.answer().await;
    assert_eq!(refused["id"], 3, "{refused}");
    assert!(refused["error"]["code"].is_i64(), "{refused}");
    assert_eq!(service.echo.completed.load(Ordering::SeqCst), 0);
    session
        .send(json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
                     "params": {"name": "echo", "arguments": {"text": "hi"}}}))
        .await;
    let answer = loop {
        let line = session.answer().await;
        if line.get("method").is_none() {
            break line;
        }
    };
    assert_eq!(answer["id"], 4, "{answer}");
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    assert!(answer["result"].get("resultType").is_none(), "{answer}");
    assert!(
        answer["result"]["structuredContent"].is_object(),
        "{answer}"
    );
    assert_eq!(service.echo.completed.load(Ordering::SeqCst), 1);
}
