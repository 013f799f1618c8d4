//! One running plugin process: writing A2E requests to its stdin, and a reader task that routes
//! each line of its stdout to the call it belongs to (by `req_id`).
//!
//! The reader owns the child. When the child's stdout ends, the reader collects its exit report
//! and answers every request still in flight with the code of how it ended (`out_of_memory`,
//! `timeout`, else `sandbox_crash`); the connection is then *ended* and refuses new requests, so
//! the owner (`PluginHost`) starts a new process. Dropping the connection kills the child.
//!
//! A line that breaks the contract (not JSON, not a valid A2E message, a message a plugin never
//! sends, longer than the line limit) answers the call it names (`req_id`) with `skill_error`;
//! when it names no call in flight, every call in flight is answered so (the plugin is
//! misbehaving and no call's answer can be trusted to arrive). The connection stays up.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use skillet_sandbox::{
    ChildWriter, ExitReport, InteractiveChild, InteractiveOptions, SandboxBackend, SandboxCommand,
    SandboxError, SandboxPolicy,
};
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;
use tokio_util::sync::{CancellationToken, DropGuard};

use super::lines::{LineRead, read_line};
use crate::events::EventEmitter;
use crate::handler::HandlerError;
use crate::protocol::{
    ErrorCode, EventPayload, Message, SkillCallRequest, SkillCallResponse, SkillDefinition,
    SkillDiscoverRequest, SkillDiscoverResponse, SkillEvent, decode_value, encode,
};
use crate::sandboxed::config::PluginConfig;
use crate::sandboxed::scratch::ScratchDir;
use crate::sandboxed::{outcome_error_code, quote_head, quote_tail};

/// How long a child that closed its stdout may take to exit before it is killed.
const EXIT_GRACE: Duration = Duration::from_secs(2);

/// What a call in flight receives from the reader.
enum CallUpdate {
    Event(EventPayload),
    Done(Result<Value, HandlerError>),
}

/// A request waiting for its answer.
enum Pending {
    Call(mpsc::UnboundedSender<CallUpdate>),
    Discover(oneshot::Sender<Result<Vec<SkillDefinition>, HandlerError>>),
}

impl Pending {
    fn fail(self, error: HandlerError) {
        // A receiver that is gone gave up on the answer (deadline); nothing to tell.
        match self {
            Pending::Call(tx) => drop(tx.send(CallUpdate::Done(Err(error)))),
            Pending::Discover(tx) => drop(tx.send(Err(error))),
        }
    }
}

/// How the process ended.
#[derive(Debug, Clone)]
pub(super) struct Ended {
    /// The engine stopped it (abandoned call, shutdown), rather than it failing by itself.
    pub(super) planned: bool,
    /// When the reader noticed.
    pub(super) at: Instant,
    code: ErrorCode,
    message: String,
}

impl Ended {
    fn error(&self) -> HandlerError {
        HandlerError::Coded {
            code: self.code,
            message: self.message.clone(),
        }
    }
}

#[derive(Default)]
struct State {
    pending: HashMap<String, Pending>,
    ended: Option<Ended>,
}

/// What the reader task shares with the connection.
struct Shared {
    plugin: String,
    policy: SandboxPolicy,
    state: Mutex<State>,
    /// The owner's count of consecutive crashes; a well-formed answer resets it.
    failures: Arc<AtomicU32>,
    /// Suffixes for request ids that are already in flight.
    id_suffix: AtomicU64,
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn contract_error(&self, detail: &str) -> HandlerError {
        HandlerError::Coded {
            code: ErrorCode::SkillError,
            message: format!("plugin `{}` broke the A2E contract: {detail}", self.plugin),
        }
    }
}

/// A live plugin process.
pub(super) struct Connection {
    shared: Arc<Shared>,
    writer: tokio::sync::Mutex<ChildWriter>,
    stop: CancellationToken,
    pid: Option<u32>,
    _stop_on_drop: DropGuard,
}

/// Why a plugin's process could not be started, or did not say which skills it offers.
#[derive(Debug, Clone, thiserror::Error)]
pub enum PluginStartError {
    /// Its scratch working directory could not be made.
    #[error("could not create its working directory: {0}")]
    Workdir(Arc<std::io::Error>),
    /// The sandbox could not start it.
    #[error(transparent)]
    Spawn(Arc<SandboxError>),
    /// The sandbox gave a child without stdin/stdout.
    #[error("the sandbox returned a child without pipes")]
    NoPipes,
    /// It ended, or answered `skill/discover/req` with an error.
    #[error(transparent)]
    Refused(HandlerError),
    /// It ended before it answered.
    #[error("the plugin ended before answering skill/discover/req")]
    EndedBeforeAnswer,
    /// It did not answer in time.
    #[error("no answer to skill/discover/req within {} ms", after.as_millis())]
    NoAnswer {
        /// The startup timeout.
        after: Duration,
    },
}

impl Connection {
    /// Starts the plugin under its policy and the reader task that serves it.
    pub(super) async fn spawn(
        plugin: &str,
        config: &PluginConfig,
        backend: &dyn SandboxBackend,
        failures: Arc<AtomicU32>,
    ) -> Result<Connection, PluginStartError> {
        let (workdir, scratch) = match &config.workdir {
            Some(dir) => (dir.clone(), None),
            None => {
                let scratch = ScratchDir::create(plugin)
                    .map_err(|e| PluginStartError::Workdir(Arc::new(e)))?;
                (scratch.path().to_owned(), Some(scratch))
            }
        };
        let command = SandboxCommand::new(&config.program, workdir).args(&config.args);
        let mut child = backend
            .spawn_interactive(&command, &config.sandbox, InteractiveOptions::default())
            .await
            .map_err(|e| PluginStartError::Spawn(Arc::new(e)))?;
        let (Some(stdin), Some(stdout)) = (child.take_stdin(), child.take_stdout()) else {
            return Err(PluginStartError::NoPipes);
        };
        let shared = Arc::new(Shared {
            plugin: plugin.to_owned(),
            policy: config.sandbox.clone(),
            state: Mutex::new(State::default()),
            failures,
            id_suffix: AtomicU64::new(0),
        });
        let stop = CancellationToken::new();
        let pid = child.id();
        tokio::spawn(read_loop(
            child,
            BufReader::new(stdout),
            shared.clone(),
            stop.clone(),
            config.max_line_bytes,
            scratch,
        ));
        tracing::info!(plugin, pid, "plugin started");
        Ok(Connection {
            shared,
            writer: tokio::sync::Mutex::new(stdin),
            _stop_on_drop: stop.clone().drop_guard(),
            stop,
            pid,
        })
    }

    /// The process id, when the backend has one.
    pub(super) fn pid(&self) -> Option<u32> {
        self.pid
    }

    /// How the process ended, once it has.
    pub(super) fn ended(&self) -> Option<Ended> {
        self.shared.lock().ended.clone()
    }

    /// Whether it takes new requests: not ended, and not being stopped (the reader may not have
    /// noticed the stop yet).
    pub(super) fn is_live(&self) -> bool {
        !self.stop.is_cancelled() && self.shared.lock().ended.is_none()
    }

    /// Kills the process; requests in flight are answered `sandbox_crash`.
    pub(super) fn stop(&self) {
        self.stop.cancel();
    }

    /// Asks for the plugin's skills, waiting at most `timeout`.
    pub(super) async fn discover(
        &self,
        timeout: Duration,
    ) -> Result<Vec<SkillDefinition>, PluginStartError> {
        let mut request = SkillDiscoverRequest::default();
        let (tx, rx) = oneshot::channel();
        request.id = self
            .register(request.id.clone(), Pending::Discover(tx))
            .map_err(PluginStartError::Refused)?;
        let id = request.id.clone();
        self.send(&Message::DiscoverRequest(request)).await;
        match tokio::time::timeout(timeout, rx).await {
            Ok(Ok(answer)) => answer.map_err(PluginStartError::Refused),
            Ok(Err(_)) => Err(PluginStartError::EndedBeforeAnswer),
            Err(_) => {
                self.shared.lock().pending.remove(&id);
                Err(PluginStartError::NoAnswer { after: timeout })
            }
        }
    }

    /// Sends `request` and waits for its answer, forwarding the plugin's events for it into
    /// `events` (which re-sequences them). Dropping the future abandons the call; see
    /// [`AbandonGuard`].
    pub(super) async fn call(
        &self,
        mut request: SkillCallRequest,
        events: &EventEmitter,
    ) -> Result<Value, HandlerError> {
        let (tx, mut rx) = mpsc::unbounded_channel();
        request.id = self.register(request.id.clone(), Pending::Call(tx))?;
        let mut guard = AbandonGuard {
            connection: self,
            id: request.id.clone(),
            answered: false,
        };
        self.send(&Message::CallRequest(request)).await;
        while let Some(update) = rx.recv().await {
            match update {
                CallUpdate::Event(payload) => {
                    events.emit(payload);
                }
                CallUpdate::Done(result) => {
                    guard.answered = true;
                    return result;
                }
            }
        }
        guard.answered = true;
        Err(HandlerError::Coded {
            code: ErrorCode::SandboxCrash,
            message: format!(
                "plugin `{}` dropped the call without an answer",
                self.shared.plugin
            ),
        })
    }

    /// Records a request in flight under `id` (suffixed when that id is already in flight) and
    /// returns the id used; refuses when the process has ended.
    fn register(&self, id: String, pending: Pending) -> Result<String, HandlerError> {
        let mut state = self.shared.lock();
        if let Some(ended) = &state.ended {
            return Err(ended.error());
        }
        if self.stop.is_cancelled() {
            return Err(HandlerError::Coded {
                code: ErrorCode::SandboxCrash,
                message: format!("plugin `{}` is being stopped", self.shared.plugin),
            });
        }
        let mut id = id;
        while id.is_empty() || state.pending.contains_key(&id) {
            let n = self.shared.id_suffix.fetch_add(1, Ordering::Relaxed);
            id = format!("{id}#{n}");
        }
        state.pending.insert(id.clone(), pending);
        Ok(id)
    }

    /// Writes one message line. A write failure means the child is going away; the reader then
    /// answers the request with how it ended, so the failure itself needs no answer here.
    async fn send(&self, message: &Message) {
        let mut line = encode(message);
        line.push('\n');
        let mut writer = self.writer.lock().await;
        let written = async {
            writer.write_all(line.as_bytes()).await?;
            writer.flush().await
        };
        if let Err(e) = written.await {
            tracing::debug!(plugin = %self.shared.plugin, error = %e, "write to plugin failed");
        }
    }
}

/// Removes an abandoned call (deadline, cancellation) from the requests in flight. If no other
/// call is in flight, the plugin is presumed stuck on it and stopped, so the next call gets a
/// fresh process; with other calls in flight it is left running for them.
struct AbandonGuard<'a> {
    connection: &'a Connection,
    id: String,
    answered: bool,
}

impl Drop for AbandonGuard<'_> {
    fn drop(&mut self) {
        if self.answered {
            return;
        }
        let mut state = self.connection.shared.lock();
        state.pending.remove(&self.id);
        let others = state
            .pending
            .values()
            .any(|p| matches!(p, Pending::Call(_)));
        if !others && state.ended.is_none() {
            drop(state);
            tracing::warn!(
                plugin = %self.connection.shared.plugin,
                req_id = %self.id,
                "call abandoned before the plugin answered; stopping the plugin"
            );
            self.connection.stop();
        }
    }
}

/// Routes the child's stdout until it ends or the connection stops, then answers what is left.
async fn read_loop(
    mut child: InteractiveChild,
    mut stdout: BufReader<skillet_sandbox::ChildReader>,
    shared: Arc<Shared>,
    stop: CancellationToken,
    max_line: usize,
    scratch: Option<ScratchDir>,
) {
    let mut line = Vec::new();
    let planned = loop {
        tokio::select! {
            biased;
            () = stop.cancelled() => break true,
            read = read_line(&mut stdout, max_line, &mut line) => match read {
                LineRead::Line => handle_line(&shared, &line),
                LineRead::TooLong(n) => breach(
                    &shared,
                    None,
                    &format!("wrote a {n}-byte line, over the {max_line}-byte limit"),
                ),
                LineRead::Eof => break false,
            },
        }
    };
    if planned {
        child.kill();
    }
    let report = match tokio::time::timeout(EXIT_GRACE, child.wait()).await {
        Ok(report) => report,
        Err(_) => {
            child.kill();
            child.wait().await
        }
    };
    let ended = describe_end(&shared, &report, planned);
    if planned {
        tracing::info!(plugin = %shared.plugin, "plugin stopped");
    } else {
        tracing::warn!(plugin = %shared.plugin, outcome = %report.outcome, "plugin ended");
    }
    let pending = {
        let mut state = shared.lock();
        state.ended = Some(ended.clone());
        std::mem::take(&mut state.pending)
    };
    for (_, request) in pending {
        request.fail(ended.error());
    }
    drop(scratch);
}

fn describe_end(shared: &Shared, report: &ExitReport, planned: bool) -> Ended {
    let (code, message) = if planned {
        (
            ErrorCode::SandboxCrash,
            format!("plugin `{}` was stopped before it answered", shared.plugin),
        )
    } else {
        let code = outcome_error_code(&report.outcome).unwrap_or(ErrorCode::SandboxCrash);
        let stderr = quote_tail(&report.stderr_tail.to_text_lossy(), &shared.policy);
        let stderr = if stderr.is_empty() {
            String::new()
        } else {
            format!("; stderr: {stderr}")
        };
        (
            code,
            format!(
                "plugin `{}` went away before answering: {}{stderr}",
                shared.plugin, report.outcome
            ),
        )
    };
    Ended {
        planned,
        at: Instant::now(),
        code,
        message,
    }
}

fn handle_line(shared: &Shared, line: &[u8]) {
    if line.iter().all(u8::is_ascii_whitespace) {
        return;
    }
    let value: Value = match serde_json::from_slice(line) {
        Ok(value) => value,
        Err(e) => {
            let text = quote_head(&String::from_utf8_lossy(line), &shared.policy);
            return breach(
                shared,
                None,
                &format!("wrote a line that is not JSON ({e}): {text}"),
            );
        }
    };
    let req_id = value
        .get("req_id")
        .and_then(Value::as_str)
        .map(str::to_owned);
    match decode_value(value) {
        Err(e) => breach(
            shared,
            req_id.as_deref(),
            &format!("wrote an invalid message ({e})"),
        ),
        Ok(Message::Event(event)) => route_event(shared, event),
        Ok(Message::CallResponse(response)) => complete_call(shared, response),
        Ok(Message::DiscoverResponse(response)) => complete_discover(shared, response),
        Ok(other) => breach(
            shared,
            req_id.as_deref(),
            &format!("sent `{}`, which a plugin never sends", other.type_name()),
        ),
    }
}

/// Answers the request `req_id` names with `skill_error`, or every request in flight when it
/// names none of them.
fn breach(shared: &Shared, req_id: Option<&str>, detail: &str) {
    let error = shared.contract_error(detail);
    let failed: Vec<Pending> = {
        let mut state = shared.lock();
        match req_id.and_then(|id| state.pending.remove(id)) {
            Some(one) => vec![one],
            None => state.pending.drain().map(|(_, p)| p).collect(),
        }
    };
    tracing::warn!(plugin = %shared.plugin, requests = failed.len(), "{error}");
    for request in failed {
        request.fail(error.clone());
    }
}

fn route_event(shared: &Shared, event: SkillEvent) {
    let state = shared.lock();
    match state.pending.get(&event.req_id) {
        Some(Pending::Call(tx)) => drop(tx.send(CallUpdate::Event(event.payload))),
        _ => {
            tracing::debug!(plugin = %shared.plugin, req_id = %event.req_id, "event for no call in flight dropped")
        }
    }
}

fn complete_call(shared: &Shared, response: SkillCallResponse) {
    let pending = shared.lock().pending.remove(&response.req_id);
    match pending {
        Some(Pending::Call(tx)) => {
            shared.failures.store(0, Ordering::Relaxed);
            drop(tx.send(CallUpdate::Done(map_response(shared, response))));
        }
        Some(other) => {
            other.fail(shared.contract_error("answered skill/discover/req with skill/call/resp"))
        }
        None => {
            tracing::debug!(plugin = %shared.plugin, req_id = %response.req_id, "answer for no call in flight dropped")
        }
    }
}

fn complete_discover(shared: &Shared, response: SkillDiscoverResponse) {
    let pending = shared.lock().pending.remove(&response.req_id);
    match pending {
        Some(Pending::Discover(tx)) => drop(tx.send(Ok(response.skills))),
        Some(other) => {
            other.fail(shared.contract_error("answered skill/call/req with skill/discover/resp"))
        }
        None => {
            tracing::debug!(plugin = %shared.plugin, req_id = %response.req_id, "discover answer for no request dropped")
        }
    }
}

/// A plugin's final answer as the handler's result: success → its data; a failed result or a
/// rejection → its code and message.
fn map_response(shared: &Shared, response: SkillCallResponse) -> Result<Value, HandlerError> {
    if let Some(error) = response.error {
        return Err(HandlerError::Coded {
            code: error.code,
            message: format!("plugin `{}`: {}", shared.plugin, error.message),
        });
    }
    match response.data {
        Some(result) if result.success => Ok(result.data.unwrap_or(Value::Null)),
        Some(result) => Err(HandlerError::Coded {
            code: result.error_code.unwrap_or(ErrorCode::SkillError),
            message: format!(
                "plugin `{}`: {}",
                shared.plugin,
                result
                    .error
                    .as_deref()
                    .unwrap_or("the skill failed without a message")
            ),
        }),
        None => Err(shared.contract_error("skill/call/resp carries neither `data` nor `error`")),
    }
}
