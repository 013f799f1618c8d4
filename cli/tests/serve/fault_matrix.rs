//! The fault matrix (issue 18): every way a provider, a tool or a wire line misbehaves, as ONE
//! table ([`ROWS`]) and one driver ([`run_case`]) that runs each row on all three provider APIs
//! (OpenAI chat completions, Anthropic messages, Ollama chat).
//!
//! Each case is real end to end: a `mock-llm` on 127.0.0.1 (ephemeral port) speaking the API
//! with the row's faults, the real providers and run loop behind an [`Executor`], served by the
//! real A2E stdio transport over a socket pair — so the answer, its code and the event `seq`s are
//! the ones a host reads on the wire. Every case asserts:
//! - the outcome: success, an executed failure's `data.error_code`, or a rejection's `error.code`;
//! - exactly one terminal answer (`skill/call/resp`) for the request id, and nothing else
//!   answered;
//! - the wire events of the call carry `seq` 0, 1, 2, … without gaps, and equal the events
//!   collected in the result; a rejected call sends no event; the terminal hook fired once for an
//!   executed call;
//! - an upper bound on the time to the answer (the row's deadline plus a margin: it catches
//!   hangs, not speed);
//! - evidence that the fault was met, not merely survived (a text in the error or the events),
//!   and the number of provider requests it cost (retries), per API where they differ.
//!
//! Every (row, API) case runs concurrently (about 5 s in a debug build). The four wire rows never
//! reach a provider (asserted: the mock sees no request); they run on each API anyway, so the
//! table has no exceptions. Where an API behaves differently the row says so (529, broken
//! streams on Ollama).
//! Not here: per-fault provider details (retry headers, error bodies: `providers/tests`), the
//! run loop's other limits (`run_limits.rs`).

#[path = "../../../engine/tests/support/mod.rs"]
mod support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use skillet_engine::run::{Executor, Limits};
use skillet_engine::tools::{ToolOutput, ToolRegistry, tool_fn};
use skillet_host::Endpoint;
use skillet_host::stdio::{self, StdioOptions};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::oneshot;

use support::{MODEL, SkillSpec, harness, llm_config_for, registry, start_mock};

/// The provider APIs every row runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Api {
    OpenAi,
    Anthropic,
    Ollama,
}

impl Api {
    const ALL: [Api; 3] = [Api::OpenAi, Api::Anthropic, Api::Ollama];

    /// The `provider_name` of the engine's LLM config.
    fn provider(self) -> &'static str {
        match self {
            Api::OpenAi => "openai-compatible",
            Api::Anthropic => "anthropic",
            Api::Ollama => "ollama",
        }
    }
}

/// What the host must read as the call's one answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    /// `data.success: true`.
    Success,
    /// The call ran and failed: `data.success: false` with this `data.error_code`.
    Failed(&'static str),
    /// The call never ran: `error.code` is this, answered under this `req_id`.
    Rejected {
        code: &'static str,
        req_id: &'static str,
    },
}

/// What the host sends.
#[derive(Debug, Clone, Copy)]
enum Send {
    /// A streaming `skill/call/req` for the matrix skill with this `timeout` (seconds).
    Call { timeout: u64 },
    /// That call, then a host shutdown with no grace period as soon as its first event arrived:
    /// the transport cancels the call in flight.
    CallThenCancel,
    /// This line as it is.
    Line(&'static str),
    /// A call line one byte longer than the transport's line limit.
    OversizeLine,
}

/// Where the engine's model lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Model {
    /// The row's mock-llm.
    Mock,
    /// A port nobody listens on (the mock was started, then shut down).
    Refused,
}

/// How many requests the mock must have seen, per API ([`Api::ALL`] order: OpenAI, Anthropic,
/// Ollama); `None` where it cannot be counted (the mock is gone) or varies.
type Requests = [Option<usize>; 3];

/// The same count on every API.
const fn all(n: usize) -> Requests {
    [Some(n); 3]
}

/// Not counted.
const UNCOUNTED: Requests = [None; 3];

/// One row of the matrix.
struct Row {
    /// The fault, as the issue names it.
    name: &'static str,
    /// The mock-llm scenario (YAML), faults included.
    scenario: &'static str,
    /// [`STRICT`] or [`TOOLING`].
    skill: &'static str,
    model: Model,
    send: Send,
    expect: Expect,
    /// Text the answer must contain (its error, or an event's message): the fault was met, not
    /// merely survived.
    evidence: &'static str,
    /// The provider requests the fault cost; all zero for the wire rows (they never reach it).
    requests: Requests,
    /// Upper bound on the time to the answer, seconds: the row's deadline plus a margin.
    bound_secs: u64,
}

/// The request id every call row uses.
const ID: &str = "fm-1";

/// A skill with a JSON output schema and no tools (on Anthropic the answer tool is forced).
const STRICT: &str = "strict";

/// A skill with the three misbehaving tools, free text output, four turns at most.
const TOOLING: &str = "tooling";

/// Seconds of a row's deadline when it has none of its own.
const TIMEOUT: u64 = 30;

/// Margin on top of a row's deadline for [`Row::bound_secs`].
const MARGIN: u64 = 10;

/// The matrix's tool timeout (a tool that sleeps longer is abandoned).
const TOOL_TIMEOUT: Duration = Duration::from_secs(1);

/// `max_attempts` of the test provider config (`support::llm_config_for`).
const ATTEMPTS: usize = 3;

/// Answers every turn with a valid result (the synthesized default), unless a rule says more.
const HEALTHY: &str = "rules: []";

/// Ollama's first stream line already carries text that was delivered to the run, so a stream
/// that breaks or reports an error after it is not retried (a retry could repeat that text);
/// OpenAI's and Anthropic's first chunk carries none, so they retry.
const BROKEN_STREAM: Requests = [Some(ATTEMPTS), Some(ATTEMPTS), Some(1)];

#[rustfmt::skip]
const ROWS: &[Row] = &[
    Row { name: "429 + Retry-After within the deadline (succeeds after the retry)",
        scenario: "rules: [{ fault: { kind: rate_limit, retry_after: 1, times: 1 }, reply: { synthesize: true } }]",
        skill: STRICT, model: Model::Mock, send: Send::Call { timeout: TIMEOUT },
        expect: Expect::Success, evidence: "retrying after HTTP 429 (rate_limited), waiting 1.0s",
        requests: all(2), bound_secs: TIMEOUT + MARGIN },
    Row { name: "429 + Retry-After beyond the deadline (fails at once)",
        scenario: "rules: [{ fault: { kind: rate_limit, retry_after: 30 } }]",
        skill: STRICT, model: Model::Mock, send: Send::Call { timeout: 5 },
        expect: Expect::Failed("timeout"), evidence: "a retry would wait 30.0s, past the deadline",
        requests: all(1), bound_secs: 5 + MARGIN },
    Row { name: "429 + Retry-After beyond the providers' max_retry_after (fails at once)",
        scenario: "rules: [{ fault: { kind: rate_limit, retry_after: 120 } }]",
        skill: STRICT, model: Model::Mock, send: Send::Call { timeout: 600 },
        expect: Expect::Failed("skill_error"), evidence: "rate_limited (HTTP 429) (retry after 120.0s)",
        requests: all(1), bound_secs: TIMEOUT + MARGIN },
    Row { name: "500 on every attempt",
        scenario: "rules: [{ fault: { kind: status, status: 500 } }]",
        skill: STRICT, model: Model::Mock, send: Send::Call { timeout: TIMEOUT },
        expect: Expect::Failed("skill_error"), evidence: "unavailable (HTTP 500)",
        requests: all(ATTEMPTS), bound_secs: TIMEOUT + MARGIN },
    Row { name: "503 then ok",
        scenario: "rules: [{ fault: { kind: status, status: 503, times: 1 }, reply: { synthesize: true } }]",
        skill: STRICT, model: Model::Mock, send: Send::Call { timeout: TIMEOUT },
        expect: Expect::Success, evidence: "retrying after HTTP 503 (unavailable)",
        requests: all(2), bound_secs: TIMEOUT + MARGIN },
    // 529 is Anthropic's `overloaded_error`; OpenAI and Ollama never send it, and to their
    // clients it is one more 5xx. The mock sends it in each API's error shape: same outcome.
    Row { name: "529 overloaded on every attempt",
        scenario: "rules: [{ fault: { kind: overloaded } }]",
        skill: STRICT, model: Model::Mock, send: Send::Call { timeout: TIMEOUT },
        expect: Expect::Failed("skill_error"), evidence: "unavailable (HTTP 529)",
        requests: all(ATTEMPTS), bound_secs: TIMEOUT + MARGIN },
    // Nothing listening is the host's setup, never the skill's: `runtime_error`, and the
    // message names where Skillet looked.
    Row { name: "connection refused",
        scenario: HEALTHY,
        skill: STRICT, model: Model::Refused, send: Send::Call { timeout: TIMEOUT },
        expect: Expect::Failed("runtime_error"), evidence: "is the server running?",
        requests: UNCOUNTED, bound_secs: TIMEOUT + MARGIN },
    Row { name: "connection dropped mid-stream",
        scenario: "rules: [{ fault: { kind: drop_connection, after_chunks: 1 } }]",
        skill: STRICT, model: Model::Mock, send: Send::Call { timeout: TIMEOUT },
        expect: Expect::Failed("skill_error"), evidence: "the body broke off",
        requests: BROKEN_STREAM, bound_secs: TIMEOUT + MARGIN },
    Row { name: "truncated stream (no finish, no terminator)",
        scenario: "rules: [{ fault: { kind: truncate, after_chunks: 1 } }]",
        skill: STRICT, model: Model::Mock, send: Send::Call { timeout: TIMEOUT },
        expect: Expect::Failed("skill_error"), evidence: "failed: truncated",
        requests: BROKEN_STREAM, bound_secs: TIMEOUT + MARGIN },
    Row { name: "in-stream error (overloaded after the first chunk)",
        scenario: "rules: [{ fault: { kind: stream_error, after_chunks: 1, status: 529 } }]",
        skill: STRICT, model: Model::Mock, send: Send::Call { timeout: TIMEOUT },
        expect: Expect::Failed("skill_error"), evidence: "injected HTTP 529 fault",
        requests: BROKEN_STREAM, bound_secs: TIMEOUT + MARGIN },
    Row { name: "stalled stream (silence until the deadline)",
        scenario: "rules: [{ fault: { kind: stall, after_chunks: 1 } }]",
        skill: STRICT, model: Model::Mock, send: Send::Call { timeout: 2 },
        expect: Expect::Failed("timeout"), evidence: "deadline of 2.0s passed while waiting for the provider",
        requests: all(1), bound_secs: 2 + MARGIN },
    Row { name: "malformed body",
        scenario: "rules: [{ fault: { kind: malformed_body } }]",
        skill: STRICT, model: Model::Mock, send: Send::Call { timeout: TIMEOUT },
        expect: Expect::Failed("skill_error"), evidence: "malformed_response",
        requests: all(1), bound_secs: TIMEOUT + MARGIN },
    Row { name: "invalid tool-call JSON (reported to the model, which recovers)",
        scenario: "rules: [{ fault: { kind: invalid_tool_call, problem: not_json, times: 1 }, reply: { synthesize: true } }]",
        skill: TOOLING, model: Model::Mock, send: Send::Call { timeout: TIMEOUT },
        expect: Expect::Success, evidence: "arguments are not valid JSON",
        requests: all(2), bound_secs: TIMEOUT + MARGIN },
    Row { name: "unknown tool (reported to the model, which recovers)",
        scenario: "rules: [{ fault: { kind: invalid_tool_call, problem: unknown_tool, times: 1 }, reply: { synthesize: true } }]",
        skill: TOOLING, model: Model::Mock, send: Send::Call { timeout: TIMEOUT },
        expect: Expect::Success, evidence: "unknown tool `no_such_tool`",
        requests: all(2), bound_secs: TIMEOUT + MARGIN },
    Row { name: "tool panics (reported to the model, which recovers)",
        scenario: "rules: [{ when: { turn: 1 }, reply: { tool_calls: [{ name: boom, arguments: {} }] } }]",
        skill: TOOLING, model: Model::Mock, send: Send::Call { timeout: TIMEOUT },
        expect: Expect::Success, evidence: "tool `boom` panicked",
        requests: all(2), bound_secs: TIMEOUT + MARGIN },
    Row { name: "tool times out (reported to the model, which recovers)",
        scenario: "rules: [{ when: { turn: 1 }, reply: { tool_calls: [{ name: sleepy, arguments: {} }] } }]",
        skill: TOOLING, model: Model::Mock, send: Send::Call { timeout: TIMEOUT },
        expect: Expect::Success, evidence: "did not finish within its 1.0s timeout",
        requests: all(2), bound_secs: TIMEOUT + MARGIN },
    Row { name: "tool loop (same tool, same arguments, every turn)",
        scenario: "rules: [{ reply: { tool_calls: [{ name: same, arguments: { n: 1 } }] } }]",
        skill: TOOLING, model: Model::Mock, send: Send::Call { timeout: TIMEOUT },
        expect: Expect::Failed("skill_error"), evidence: "tool loop: `same` was called 4 times",
        requests: all(4), bound_secs: TIMEOUT + MARGIN },
    // Eight turns: the default max_turns; every one asks for a repair.
    Row { name: "output never valid",
        scenario: "rules: [{ reply: { text: \"not the JSON you asked for\" } }]",
        skill: STRICT, model: Model::Mock, send: Send::Call { timeout: TIMEOUT },
        expect: Expect::Failed("schema_violation"), evidence: "never matched the output schema",
        requests: all(8), bound_secs: TIMEOUT + MARGIN },
    Row { name: "deadline passes while the provider thinks",
        scenario: "rules: [{ timing: { latency_ms: 60000 }, reply: { synthesize: true } }]",
        skill: STRICT, model: Model::Mock, send: Send::Call { timeout: 1 },
        expect: Expect::Failed("timeout"), evidence: "deadline of 1.0s passed",
        requests: all(1), bound_secs: 1 + MARGIN },
    Row { name: "cancellation by the host while the provider thinks",
        scenario: "rules: [{ timing: { latency_ms: 60000 }, reply: { synthesize: true } }]",
        skill: STRICT, model: Model::Mock, send: Send::CallThenCancel,
        expect: Expect::Failed("runtime_error"), evidence: "cancelled by the host",
        requests: all(1), bound_secs: TIMEOUT + MARGIN },
    Row { name: "oversize input line",
        scenario: HEALTHY,
        skill: STRICT, model: Model::Mock, send: Send::OversizeLine,
        expect: Expect::Rejected { code: "invalid_message", req_id: "" }, evidence: "exceeds the 1048576-byte limit",
        requests: all(0), bound_secs: TIMEOUT + MARGIN },
    Row { name: "malformed wire line",
        scenario: HEALTHY,
        skill: STRICT, model: Model::Mock, send: Send::Line(r#"{"type": "skill/call/req", "id": "fm-1", "#),
        expect: Expect::Rejected { code: "parse_error", req_id: "" }, evidence: "malformed JSON",
        requests: all(0), bound_secs: TIMEOUT + MARGIN },
    Row { name: "unknown message type",
        scenario: HEALTHY,
        skill: STRICT, model: Model::Mock, send: Send::Line(r#"{"type":"skill/explode","id":"fm-1","version":"1.0","name":"strict"}"#),
        expect: Expect::Rejected { code: "invalid_message", req_id: ID }, evidence: "unknown message type",
        requests: all(0), bound_secs: TIMEOUT + MARGIN },
    Row { name: "bad protocol version",
        scenario: HEALTHY,
        skill: STRICT, model: Model::Mock, send: Send::Line(r#"{"type":"skill/call/req","id":"fm-1","version":"2.0","name":"strict","arguments":{}}"#),
        expect: Expect::Rejected { code: "version_mismatch", req_id: ID }, evidence: "unsupported protocol version",
        requests: all(0), bound_secs: TIMEOUT + MARGIN },
];

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn every_fault_gets_its_code_one_answer_and_gap_free_events_on_every_api() {
    let cases = ROWS
        .iter()
        .flat_map(|row| Api::ALL.map(|api| (row, api)))
        .map(|(row, api)| async move { (row.name, api, run_case(row, api).await) });
    let outcomes = futures::future::join_all(cases).await;
    let failures: Vec<String> = outcomes
        .into_iter()
        .filter_map(|(name, api, outcome)| outcome.err().map(|e| format!("{name} on {api:?}: {e}")))
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        ROWS.len() * Api::ALL.len(),
        failures.join("\n")
    );
}

/// Runs one row on one API; `Err` says what the host saw that it should not have.
async fn run_case(row: &Row, api: Api) -> Result<(), String> {
    let server = start_mock(row.scenario).await;
    let strict = SkillSpec::new(STRICT, "Answer with the requested JSON.")
        .output(json!({
            "type": "object", "required": ["answer"], "additionalProperties": false,
            "properties": {"answer": {"type": "string"}}
        }))
        .write();
    let tooling = SkillSpec::new(TOOLING, "Use the tools, then answer.")
        .tools(&["boom", "sleepy", "same"])
        .max_turns(4)
        .write();
    let llm = llm_config_for(&server, api.provider(), MODEL);
    // For `Refused`, the stopped mock's port stays bound (never listening, so connections to it
    // are refused) until the case ends: another case's mock, started meanwhile, cannot be
    // given it and answer this case's calls.
    let mut _reserved = None;
    let server = match row.model {
        Model::Mock => Some(server),
        Model::Refused => {
            let addr = server.addr();
            server.shutdown().await;
            _reserved = tokio::net::TcpSocket::new_v4()
                .and_then(|socket| socket.bind(addr).map(|()| socket))
                .ok();
            None
        }
    };
    let h = harness(
        registry([strict.skill.clone(), tooling.skill.clone()]),
        misbehaving_tools(),
        Some(llm),
        Limits {
            tool_timeout: TOOL_TIMEOUT,
            ..Limits::default()
        },
    );
    let started = Instant::now();
    let messages = exchange(&h.executor, row.skill, row.send).await?;
    let elapsed = started.elapsed();
    let bound = Duration::from_secs(row.bound_secs);
    if elapsed > bound {
        return Err(format!("answered after {elapsed:?}, bound {bound:?}"));
    }
    check_answer(row.expect, &messages)?;
    if matches!(row.expect, Expect::Rejected { .. }) {
        if h.hooks.count(ID) != 0 {
            return Err("a rejected call reached the terminal hook".into());
        }
    } else if h.hooks.count(ID) != 1 {
        return Err(format!(
            "the terminal hook fired {} times",
            h.hooks.count(ID)
        ));
    }
    let want = row.requests[Api::ALL.iter().position(|a| *a == api).unwrap()];
    if let (Some(want), Some(server)) = (want, &server)
        && server.journal().len() != want
    {
        return Err(format!(
            "the provider saw {} requests, expected {want}",
            server.journal().len()
        ));
    }
    let text = serde_json::to_string(&messages).unwrap();
    if !text.contains(row.evidence) {
        return Err(format!(
            "no {:?} in what the host read: {text}",
            row.evidence
        ));
    }
    Ok(())
}

/// The tools the rows misbehave with: `boom` panics, `sleepy` outlives [`TOOL_TIMEOUT`], `same`
/// answers the same every time (the model calling it in a loop is the fault).
fn misbehaving_tools() -> ToolRegistry {
    let object = json!({"type": "object"});
    let mut tools = ToolRegistry::new();
    tools
        .register_tool(tool_fn("boom", "panics", object.clone(), |_, _| async {
            panic!("the boom tool always panics")
        }))
        .unwrap();
    tools
        .register_tool(tool_fn("sleepy", "sleeps", object.clone(), |_, _| async {
            tokio::time::sleep(Duration::from_secs(600)).await;
            Ok(ToolOutput::text("woke up"))
        }))
        .unwrap();
    tools
        .register_tool(tool_fn("same", "repeats", object, |_, _| async {
            Ok(ToolOutput::text("the same again"))
        }))
        .unwrap();
    tools
}

/// Serves the executor over the A2E stdio transport on a socket pair, sends the row's input,
/// closes it, and returns every message the host read until the transport ended (`Err` when
/// the output goes silent for longer than any row's bound: a hang).
async fn exchange(executor: &Executor, skill: &str, send: Send) -> Result<Vec<Value>, String> {
    let (ours, theirs) = tokio::net::UnixStream::pair().expect("socket pair");
    let (their_read, their_write) = theirs.into_split();
    let (cancel, cancelled) = oneshot::channel::<()>();
    let options = StdioOptions {
        grace: Duration::ZERO,
        ..StdioOptions::default()
    };
    let endpoint = Endpoint::new(Arc::new(executor.clone()), 16);
    let server = tokio::spawn(stdio::serve(
        endpoint,
        their_read,
        their_write,
        options,
        async {
            let _ = cancelled.await;
        },
    ));
    let (read, mut write) = ours.into_split();
    let line = match send {
        Send::Call { timeout } => call_line(skill, timeout, ""),
        Send::CallThenCancel => call_line(skill, TIMEOUT, ""),
        Send::Line(line) => line.to_owned(),
        Send::OversizeLine => {
            let line = call_line(skill, TIMEOUT, "");
            let pad = options.max_line_bytes + 1 - line.len();
            call_line(skill, TIMEOUT, &"x".repeat(pad))
        }
    };
    write.write_all(line.as_bytes()).await.unwrap();
    write.write_all(b"\n").await.unwrap();
    let mut cancel = match send {
        Send::CallThenCancel => Some(cancel),
        _ => {
            // End of input: the transport answers what is in flight, then ends.
            drop(write);
            None
        }
    };
    let mut reader = BufReader::new(read).lines();
    let mut messages = Vec::new();
    let hang_guard = Duration::from_secs(TIMEOUT + 2 * MARGIN);
    while let Some(line) = tokio::time::timeout(hang_guard, reader.next_line())
        .await
        .map_err(|_| format!("hung: no output for {hang_guard:?}; read so far: {messages:?}"))?
        .expect("the output reads")
    {
        let message: Value = serde_json::from_str(&line).expect("every output line is JSON");
        if message["type"] == "skill/event"
            && let Some(cancel) = cancel.take()
        {
            let _ = cancel.send(());
        }
        messages.push(message);
    }
    server.await.unwrap().expect("the transport's output works");
    Ok(messages)
}

/// A streaming call of `skill`; `pad` (when not empty) is an extra argument.
fn call_line(skill: &str, timeout: u64, pad: &str) -> String {
    let arguments = if pad.is_empty() {
        json!({})
    } else {
        json!({"pad": pad})
    };
    json!({"type": "skill/call/req", "id": ID, "version": "1.0", "ts": 1.0, "name": skill,
        "arguments": arguments, "streaming": true, "timeout": timeout})
    .to_string()
}

/// Checks the one answer, its code, and the call's events.
fn check_answer(expect: Expect, messages: &[Value]) -> Result<(), String> {
    let answers: Vec<&Value> = messages
        .iter()
        .filter(|m| m["type"] == "skill/call/resp")
        .collect();
    let [answer] = answers[..] else {
        return Err(format!(
            "{} terminal answers, expected exactly one: {messages:#?}",
            answers.len()
        ));
    };
    let events: Vec<&Value> = messages
        .iter()
        .filter(|m| m["type"] == "skill/event")
        .collect();
    if events.len() + 1 != messages.len() {
        return Err(format!("unexpected messages: {messages:#?}"));
    }
    let (want_req_id, want_code) = match expect {
        Expect::Success => (ID, None),
        Expect::Failed(code) => (ID, Some(code)),
        Expect::Rejected { code, req_id } => (req_id, Some(code)),
    };
    if answer["req_id"] != want_req_id {
        return Err(format!("answered under req_id {}", answer["req_id"]));
    }
    let got = match (&answer["data"], &answer["error"]) {
        (Value::Object(_), Value::Null) if answer["data"]["success"] == true => None,
        (Value::Object(data), Value::Null) => data["error_code"].as_str(),
        (Value::Null, Value::Object(error)) => error["code"].as_str(),
        _ => return Err(format!("neither data nor error alone: {answer}")),
    };
    let rejected = answer["data"].is_null();
    if got != want_code || rejected != matches!(expect, Expect::Rejected { .. }) {
        return Err(format!("expected {expect:?}, got {answer}"));
    }
    if rejected {
        return match events.is_empty() {
            true => Ok(()),
            false => Err(format!("a rejected call sent events: {events:#?}")),
        };
    }
    let wire_seqs: Vec<Option<u64>> = events.iter().map(|e| e["seq"].as_u64()).collect();
    let gap_free: Vec<Option<u64>> = (0..events.len() as u64).map(Some).collect();
    if events.is_empty() || wire_seqs != gap_free {
        return Err(format!("wire event seqs are not 0, 1, 2, …: {wire_seqs:?}"));
    }
    let collected: Vec<Option<u64>> = answer["data"]["events"]
        .as_array()
        .map(|events| events.iter().map(|e| e["seq"].as_u64()).collect())
        .unwrap_or_default();
    if collected != wire_seqs {
        return Err(format!(
            "collected event seqs {collected:?} differ from the wire's {wire_seqs:?}"
        ));
    }
    if events.iter().any(|e| e["req_id"] != ID) {
        return Err(format!("an event for another request: {events:#?}"));
    }
    Ok(())
}
