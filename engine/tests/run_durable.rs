//! Durable runs against mock-llm over real sockets, with an in-memory checkpoint store: a run
//! dropped mid-turn (its process "died") and started again on a second executor continues at
//! the turn it reached — completed turns are not sent to the model again, tools whose results
//! were checkpointed are not run again, a non-idempotent tool in flight is answered with a tool
//! error instead of running, an idempotent one runs again — and its events go on with the same
//! `seq`. Corrupt, foreign and other calls' checkpoints, and checkpoints of a changed skill, are
//! refused and the run starts at turn 1. Checkpoints never hold a secret, and one over the
//! bound is not written.

mod support;

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use skillet_engine::checkpoint::{Checkpoint, CheckpointStore, MemoryCheckpoints};
use skillet_engine::events::EventSink;
use skillet_engine::protocol::{EventKind, Resumed, SkillCallRequest, SkillResult};
use skillet_engine::run::Limits;
use skillet_engine::service::SkillService;
use skillet_engine::tools::{Tool, ToolOutput, ToolRegistry, idempotent, tool_fn};
use support::*;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

const ANSWER_SCHEMA: &str =
    r#"{"type": "object", "properties": {"result": {}}, "required": ["result"]}"#;

/// Four turns: `lookup`, then `write` (the one in flight when the run dies), then `lookup`
/// again, then the answer.
const FOUR_TURNS: &str = r#"
rules:
  - name: t1
    when: { turn: 1 }
    reply: { tool_calls: [{ name: lookup, arguments: { q: "first" } }] }
  - name: t2
    when: { turn: 2 }
    reply: { tool_calls: [{ name: write, arguments: { text: "once" } }] }
  - name: t3
    when: { turn: 3 }
    reply: { tool_calls: [{ name: lookup, arguments: { q: "third" } }] }
  - name: t4
    when: { turn: 4 }
    reply: { json: { result: "done" } }
"#;

fn skill(body: &str) -> SkillDir {
    SkillSpec::new("durable", body)
        .tools(&["lookup", "write"])
        .max_turns(6)
        .output(serde_json::from_str(ANSWER_SCHEMA).unwrap())
        .write()
}

/// The tools: `lookup` counts its runs and answers; `write` counts its runs, says it started,
/// and never ends while `hang` is set (the process dies while it runs).
struct Tools {
    lookups: Arc<Counter>,
    writes: Arc<Counter>,
    write_started: Arc<Notify>,
}

impl Tools {
    fn new() -> Self {
        Tools {
            lookups: Arc::new(Counter::default()),
            writes: Arc::new(Counter::default()),
            write_started: Arc::new(Notify::new()),
        }
    }

    fn registry(&self, hang: bool, write_idempotent: bool, echo: &str) -> ToolRegistry {
        let lookups = self.lookups.clone();
        let echo = echo.to_owned();
        let lookup = tool_fn(
            "lookup",
            "Looks up",
            json!({"type": "object"}),
            move |args, _| {
                lookups.bump();
                let echo = echo.clone();
                async move { Ok(ToolOutput::text(format!("found {} {echo}", args["q"]))) }
            },
        );
        let (writes, started) = (self.writes.clone(), self.write_started.clone());
        let write: Arc<dyn Tool> =
            tool_fn("write", "Writes", json!({"type": "object"}), move |_, _| {
                writes.bump();
                started.notify_one();
                async move {
                    if hang {
                        std::future::pending::<()>().await;
                    }
                    Ok(ToolOutput::text("written"))
                }
            });
        let write = if write_idempotent {
            idempotent(write)
        } else {
            write
        };
        let mut registry = ToolRegistry::new();
        registry.register_tool(lookup).unwrap();
        registry.register_tool(write).unwrap();
        registry
    }
}

fn harness_on(
    dir: &SkillDir,
    tools: ToolRegistry,
    server: &mock_llm::MockServer,
    store: Arc<dyn CheckpointStore>,
) -> Harness {
    harness_with(
        registry([dir.skill.clone()]),
        tools,
        Some(llm_config(server)),
        Limits::default(),
        |b| b.checkpoints(store),
    )
}

/// Runs `request` on `h` until `write` starts, then drops the call (the process died).
async fn run_until_write_starts(h: &Harness, tools: &Tools, request: SkillCallRequest) {
    let started = tools.write_started.notified();
    let call = SkillService::call(&h.executor, request, None, CancellationToken::new());
    tokio::select! {
        () = started => {}
        response = call => panic!("the call ended before `write` started: {response:?}"),
    }
}

/// Runs the resumed `request` on `h`: checks the event invariants over the whole call and that
/// only the events from `next_seq` on went out live (the earlier ones did, from the dead run).
async fn resume(h: &Harness, request: SkillCallRequest, next_seq: u64) -> SkillResult {
    let live = Arc::new(LiveEvents::default());
    let response = SkillService::call(
        &h.executor,
        request.clone(),
        Some(live.clone() as Arc<dyn EventSink>),
        CancellationToken::new(),
    )
    .await;
    let result = response.data.expect("a result");
    assert_invariants(&result, &request.id);
    let live: Vec<u64> = live.events().iter().map(|e| e.seq).collect();
    let collected: Vec<u64> = result.events.iter().map(|e| e.seq).collect();
    assert_eq!(
        live,
        collected[next_seq as usize..].to_vec(),
        "live from the checkpoint on"
    );
    result
}

/// The turn each chat request the mock received was for (1 + assistant messages sent).
fn turns_requested(server: &mock_llm::MockServer) -> Vec<usize> {
    chat_bodies(server)
        .iter()
        .map(|body| {
            1 + body["messages"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|m| m["role"] == "assistant")
                .count()
        })
        .collect()
}

#[tokio::test]
async fn a_run_that_died_in_turn_2_continues_at_turn_3_without_running_its_tool_again() {
    let dir = skill("Use the tools.");
    let server = start_mock(FOUR_TURNS).await;
    let store = Arc::new(MemoryCheckpoints::new());
    let tools = Tools::new();
    let mut request = request("durable", json!({"topic": "x"}));
    request.streaming = true;

    let first = harness_on(
        &dir,
        tools.registry(true, false, ""),
        &server,
        store.clone(),
    );
    run_until_write_starts(&first, &tools, request.clone()).await;
    let saved = Checkpoint::decode(&store.get(&request.id).expect("a checkpoint")).unwrap();
    assert_eq!((saved.turn(), saved.in_flight()), (2, 1));
    assert_eq!(turns_requested(&server), vec![1, 2]);

    let second = harness_on(
        &dir,
        tools.registry(false, false, ""),
        &server,
        store.clone(),
    );
    let result = &resume(&second, request.clone(), saved.next_seq()).await;
    assert!(result.success, "{result:?}");
    assert_eq!(result.data, Some(json!({"result": "done"})));
    assert_eq!(result.resumed, Some(Resumed { turns_saved: 2 }));
    // Turns 1 and 2 were requested once, by the first run; the second asked for 3 and 4.
    assert_eq!(turns_requested(&server), vec![1, 2, 3, 4]);
    // `write` ran once (in the dead run); `lookup` once per turn that asked for it.
    assert_eq!(tools.writes.get(), 1);
    assert_eq!(tools.lookups.get(), 2);
    let bodies = chat_bodies(&server);
    let results = tool_results_in(&bodies[2]);
    assert_eq!(results.len(), 2, "{results:?}");
    assert!(results[0].contains("found \"first\""), "{results:?}");
    assert!(
        results[1].contains("may or may not have happened"),
        "{results:?}"
    );
    // One sequence of events over both runs, from 0 without gaps (the harness checks it too).
    let seqs: Vec<u64> = result.events.iter().map(|e| e.seq).collect();
    assert_eq!(seqs, (0..seqs.len() as u64).collect::<Vec<_>>());
    assert!(seqs.len() as u64 > saved.next_seq());
    let statuses = messages_of(result, EventKind::Status);
    assert_eq!(statuses.len(), 4, "{statuses:?}");
    let logs = messages_of(result, EventKind::Log);
    assert!(
        logs.iter()
            .any(|l| l.starts_with("resumed from the checkpoint of turn 2")),
        "{logs:?}"
    );
    assert!(
        store.is_empty(),
        "the checkpoint is removed with the result"
    );
    server.shutdown().await;
}

#[tokio::test]
async fn an_idempotent_tool_in_flight_runs_again() {
    let dir = skill("Use the tools.");
    let server = start_mock(FOUR_TURNS).await;
    let store = Arc::new(MemoryCheckpoints::new());
    let tools = Tools::new();
    let request = request("durable", json!({}));
    let first = harness_on(&dir, tools.registry(true, true, ""), &server, store.clone());
    run_until_write_starts(&first, &tools, request.clone()).await;
    let next_seq = Checkpoint::decode(&store.get(&request.id).unwrap())
        .unwrap()
        .next_seq();
    let second = harness_on(
        &dir,
        tools.registry(false, true, ""),
        &server,
        store.clone(),
    );
    let result = resume(&second, request, next_seq).await;
    assert!(result.success, "{result:?}");
    assert_eq!(tools.writes.get(), 2, "the idempotent write ran again");
    let bodies = chat_bodies(&server);
    assert_eq!(tool_results_in(&bodies[2])[1], "written");
    server.shutdown().await;
}

/// Runs the call to its end after putting `bytes` under its id; returns its logs.
async fn run_over(
    bytes: Vec<u8>,
    request: SkillCallRequest,
    dir: &SkillDir,
) -> (Value, Vec<String>, usize) {
    let server = start_mock(FOUR_TURNS).await;
    let store = Arc::new(MemoryCheckpoints::new());
    store.put(&request.id, bytes);
    let tools = Tools::new();
    let h = harness_on(dir, tools.registry(false, false, ""), &server, store);
    let called = h.call(request).await;
    let result = called.result();
    assert!(result.success, "{result:?}");
    assert_eq!(result.resumed, None, "not resumed");
    let requested = turns_requested(&server);
    assert_eq!(requested, vec![1, 2, 3, 4], "started at turn 1");
    server.shutdown().await;
    (
        result.data.clone().unwrap_or_default(),
        messages_of(result, EventKind::Log),
        tools.writes.get(),
    )
}

/// A real checkpoint of `request` on `dir`'s skill, taken in turn 2.
async fn checkpoint_of(dir: &SkillDir, request: &SkillCallRequest) -> Vec<u8> {
    let server = start_mock(FOUR_TURNS).await;
    let store = Arc::new(MemoryCheckpoints::new());
    let tools = Tools::new();
    let h = harness_on(dir, tools.registry(true, false, ""), &server, store.clone());
    run_until_write_starts(&h, &tools, request.clone()).await;
    server.shutdown().await;
    store.get(&request.id).expect("a checkpoint")
}

fn assert_refused(logs: &[String], why: &str) {
    assert!(
        logs.iter()
            .any(|l| l.starts_with("checkpoint refused, starting at turn 1") && l.contains(why)),
        "{why}: {logs:?}"
    );
}

#[tokio::test]
async fn corrupt_and_foreign_checkpoints_are_refused_and_the_run_starts_at_turn_1() {
    let dir = skill("Use the tools.");
    let request = request("durable", json!({}));
    let real = checkpoint_of(&dir, &request).await;
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (real[..real.len() / 2].to_vec(), "corrupt checkpoint"),
        (b"\xff\xfe not text".to_vec(), "not a Skillet checkpoint"),
        (br#"{"answer": 42}"#.to_vec(), "no `format` field"),
        (
            br#"{"format": "other.thing", "version": 1}"#.to_vec(),
            "format `other.thing`",
        ),
        (
            String::from_utf8(real.clone())
                .unwrap()
                .replacen(r#""version":1"#, r#""version":99"#, 1)
                .into_bytes(),
            "format version 99",
        ),
        (
            String::from_utf8(real.clone())
                .unwrap()
                .replacen(r#""turn":2"#, r#""turn":0"#, 1)
                .into_bytes(),
            "no turn completed",
        ),
    ];
    for (bytes, why) in cases {
        let (data, logs, writes) = run_over(bytes, request.clone(), &dir).await;
        assert_eq!(data, json!({"result": "done"}));
        assert_refused(&logs, why);
        assert_eq!(writes, 1, "{why}: run from the start, write included");
    }
}

#[tokio::test]
async fn a_checkpoint_of_other_arguments_under_the_same_id_is_refused() {
    let dir = skill("Use the tools.");
    let request = request("durable", json!({"topic": "a"}));
    let bytes = checkpoint_of(&dir, &request).await;
    let mut other = request.clone();
    other.arguments.insert("topic".into(), json!("b"));
    let (_, logs, _) = run_over(bytes, other, &dir).await;
    assert_refused(&logs, "checkpoint of another call");
}

#[tokio::test]
async fn a_checkpoint_of_a_skill_that_changed_since_is_not_resumed() {
    let request = request("durable", json!({}));
    let bytes = checkpoint_of(&skill("Use the tools."), &request).await;
    let changed = skill("Use the tools, carefully.");
    let (_, logs, _) = run_over(bytes, request, &changed).await;
    assert_refused(&logs, "changed since its checkpoint of turn 2");
}

#[tokio::test]
async fn checkpoints_never_hold_a_secret_the_process_knows() {
    const CANARY: &str = "sk-canary-d0c1e7a9b3f24e55";
    skillet_engine::secrets::REDACTOR.add(secrecy::SecretString::from(CANARY));
    let dir = skill("Use the tools.");
    let server = start_mock(FOUR_TURNS).await;
    let store = Arc::new(MemoryCheckpoints::new());
    let tools = Tools::new();
    let mut config = llm_config(&server);
    config
        .provider_credentials
        .insert("api_key", secrecy::SecretString::from(CANARY));
    let h = harness_with(
        registry([dir.skill.clone()]),
        tools.registry(true, false, CANARY),
        Some(config),
        Limits::default(),
        |b| b.checkpoints(store.clone()),
    );
    let request = request("durable", json!({}));
    run_until_write_starts(&h, &tools, request.clone()).await;
    let bytes = store.get(&request.id).expect("a checkpoint");
    let text = String::from_utf8(bytes).unwrap();
    // The tool quoted the key in turn 1; the checkpoint has the result, redacted.
    assert!(text.contains("found \\\"first\\\""), "{text}");
    assert!(!text.contains(CANARY), "{text}");
    assert!(text.contains("[REDACTED]"), "{text}");
    server.shutdown().await;
}

#[tokio::test]
async fn a_checkpoint_over_the_bound_is_not_written_and_the_log_says_so() {
    let dir = skill("Use the tools.");
    let server = start_mock(FOUR_TURNS).await;
    let store = Arc::new(MemoryCheckpoints::with_max_bytes(256));
    let tools = Tools::new();
    let h = harness_on(
        &dir,
        tools.registry(false, false, ""),
        &server,
        store.clone(),
    );
    let called = h.call(request("durable", json!({}))).await;
    assert!(called.result().success);
    assert!(store.is_empty());
    let logs = messages_of(called.result(), EventKind::Log);
    let over: Vec<_> = logs
        .iter()
        .filter(|l| l.contains("over the bound of 256"))
        .collect();
    assert_eq!(over.len(), 1, "said once: {logs:?}");
    server.shutdown().await;
}

#[tokio::test]
async fn without_a_store_nothing_changes() {
    let dir = skill("Use the tools.");
    let server = start_mock(FOUR_TURNS).await;
    let tools = Tools::new();
    let h = harness(
        registry([dir.skill.clone()]),
        tools.registry(false, false, ""),
        Some(llm_config(&server)),
        Limits::default(),
    );
    let called = tokio::time::timeout(
        Duration::from_secs(30),
        h.call(request("durable", json!({}))),
    )
    .await
    .unwrap();
    assert!(called.result().success);
    assert_eq!(called.result().resumed, None);
    server.shutdown().await;
}

/// A store whose every call may only resume (a task a restarted server found running).
struct ResumeOnly(MemoryCheckpoints);

#[async_trait::async_trait]
impl CheckpointStore for ResumeOnly {
    fn resume_only(&self, _request: &SkillCallRequest) -> bool {
        true
    }

    async fn load(
        &self,
        key: &str,
    ) -> Result<Option<Vec<u8>>, skillet_engine::checkpoint::CheckpointStoreError> {
        self.0.load(key).await
    }

    async fn save(
        &self,
        key: &str,
        checkpoint: Vec<u8>,
    ) -> Result<(), skillet_engine::checkpoint::CheckpointStoreError> {
        self.0.save(key, checkpoint).await
    }

    async fn remove(
        &self,
        key: &str,
    ) -> Result<(), skillet_engine::checkpoint::CheckpointStoreError> {
        self.0.remove(key).await
    }
}

#[tokio::test]
async fn a_resume_only_call_without_a_usable_checkpoint_fails_before_any_model_request() {
    let request = request("durable", json!({}));
    let stale = checkpoint_of(&skill("Use the tools."), &request).await;
    let changed = skill("Use the tools, carefully.");
    for (stored, dir, why) in [
        (None, skill("Use the tools."), "no checkpoint of this call"),
        (
            Some(stale),
            changed,
            "changed since its checkpoint of turn 2",
        ),
    ] {
        let server = start_mock(FOUR_TURNS).await;
        let store = ResumeOnly(MemoryCheckpoints::new());
        if let Some(bytes) = stored {
            store.0.put(&request.id, bytes);
        }
        let tools = Tools::new();
        let h = harness_on(
            &dir,
            tools.registry(false, false, ""),
            &server,
            Arc::new(store),
        );
        let called = h.call(request.clone()).await;
        let result = called.result();
        assert!(!result.success, "{why}: {result:?}");
        assert_eq!(
            result.error_code,
            Some(skillet_engine::protocol::ErrorCode::RuntimeError)
        );
        let error = result.error.as_deref().unwrap_or_default();
        assert!(
            error.starts_with("not resumed after the restart:") && error.contains(why),
            "{error}"
        );
        assert!(!error.contains("starting at turn 1"), "{error}");
        assert!(
            turns_requested(&server).is_empty(),
            "{why}: no model request"
        );
        assert_eq!(
            tools.lookups.get() + tools.writes.get(),
            0,
            "{why}: no tool ran"
        );
        server.shutdown().await;
    }
}
