//! Durable runs on NATS workers, on a real `nats-server -js` (skipped with a notice when it is
//! missing, a failure under `CI`): a worker killed with SIGKILL in turn 2 of a 4-turn skill,
//! while a non-idempotent tool runs, → another worker answers the redelivered call from the
//! checkpoint the first one wrote to the checkpoints bucket. One mock-llm serves both workers,
//! so its journal shows every model request of the call: turns 1 and 2 once (the first worker),
//! then 3 and 4 (the second). The tool that was in flight is not run again — the model is told
//! it may or may not have happened — and the answer's events have one gap-free `seq`. The same
//! holds when the first worker is stopped gracefully (SIGTERM) and its grace runs out in turn 2:
//! the call it cancels is not answered as failed but left for the next worker.

use crate::nats_support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use mock_llm::{MockConfig, MockServer, Scenario};
use serde_json::{Map, Value, json};
use skillet_engine::events::EventSink;
use skillet_protocol::{EventPayload, Resumed, SkillCallRequest, SkillEvent};

use nats_support::*;

const FOUR_TURNS: &str = r#"
rules:
  - name: t1
    when: { turn: 1 }
    reply: { tool_calls: [{ name: lookup, arguments: { q: "first" } }] }
  - name: t2
    when: { turn: 2 }
    reply: { tool_calls: [{ name: slow_write, arguments: { text: "once" } }] }
  - name: t3
    when: { turn: 3 }
    reply: { tool_calls: [{ name: lookup, arguments: { q: "third" } }] }
  - name: t4
    when: { turn: 4 }
    reply: { json: { result: "done" } }
"#;

/// A skills root with `durable`, which uses `lookup` and `slow_write`.
fn durable_skills() -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("durable");
    std::fs::create_dir_all(dir.join("assets")).unwrap();
    std::fs::write(
        dir.join("SKILL.md"),
        "---\nname: durable\ndescription: Uses two tools over four turns (test skill).\n\
         metadata:\n  a2a-tags: '[\"test\"]'\n  a2a-output-schema: assets/output.schema.json\n  \
         a2e-tools: '[\"lookup\", \"slow_write\"]'\n  a2e-max-turns: '6'\n---\nDo the job.\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("assets/output.schema.json"),
        r#"{"type":"object","properties":{"result":{"type":"string"}},"required":["result"]}"#,
    )
    .unwrap();
    root
}

/// The workers' skillet.toml: the shared mock as the model, the two command tools (`lookup`
/// idempotent, `slow_write` not, and slow enough to be killed in), and `[nats]`.
fn worker_toml(server: &NatsServer, mock: &MockServer) -> String {
    format!(
        "[providers.main]\nkind = \"openai-compatible\"\nmodel = \"mock-model\"\n\
         base_url = \"{}/v1\"\n\n[providers.main.options]\nmax_attempts = 1\n\n\
         [tools.lookup]\nkind = \"command\"\ndescription = \"Looks something up\"\n\
         program = \"/bin/echo\"\nargs = ['{{\"found\": 1}}']\nidempotent = true\n\n\
         [tools.slow_write]\nkind = \"command\"\ndescription = \"Writes something, slowly\"\n\
         program = \"/bin/sleep\"\nargs = [\"120\"]\n\n{}",
        mock.base_url(),
        nats_toml(
            server,
            "concurrency = 1\nack_wait_seconds = 1.5\nmax_deliveries = 3"
        )
    )
}

/// Records the live events and wakes waiters.
#[derive(Default)]
struct Live {
    events: Mutex<Vec<SkillEvent>>,
    notify: tokio::sync::Notify,
}

impl EventSink for Live {
    fn emit(&self, event: &SkillEvent) {
        self.events.lock().unwrap().push(event.clone());
        self.notify.notify_waiters();
    }
}

impl Live {
    async fn wait_for_log(&self, prefix: &str, limit: Duration) {
        let found = || {
            self.events.lock().unwrap().iter().any(
                |e| matches!(&e.payload, EventPayload::Log { message, .. } if message.starts_with(prefix)),
            )
        };
        tokio::time::timeout(limit, async {
            loop {
                let notified = self.notify.notified();
                if found() {
                    return;
                }
                notified.await;
            }
        })
        .await
        .unwrap_or_else(|_| panic!("no live log starting {prefix:?}"));
    }
}

fn log_messages(events: &[SkillEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match &e.payload {
            EventPayload::Log { message, .. } => Some(message.clone()),
            _ => None,
        })
        .collect()
}

/// Per chat request the mock received: the turn it was for and its tool results.
fn requests(mock: &MockServer) -> Vec<(usize, Vec<String>)> {
    mock.journal()
        .into_iter()
        .filter(|e| e.endpoint.ends_with("chat"))
        .map(|e| {
            let messages: Vec<Value> = e.body["messages"].as_array().cloned().unwrap_or_default();
            let turn = 1 + messages.iter().filter(|m| m["role"] == "assistant").count();
            let results = messages
                .iter()
                .filter(|m| m["role"] == "tool")
                .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
                .collect();
            (turn, results)
        })
        .collect()
}

/// How the first worker stops while `slow_write` runs in turn 2.
#[derive(Clone, Copy, PartialEq)]
enum Stop {
    /// SIGKILL: it dies without a word.
    Kill,
    /// SIGTERM with a one-second grace: the stop cancels the call when the grace is over.
    GraceOver,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_killed_in_turn_2_leaves_the_call_to_another_worker_which_continues_at_turn_3() {
    stop_in_turn_2_then_continue_on_another_worker("durable_kill_in_turn_2", Stop::Kill).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_whose_graceful_stop_cancels_turn_2_leaves_the_call_to_another_worker() {
    stop_in_turn_2_then_continue_on_another_worker("durable_grace_over_in_turn_2", Stop::GraceOver)
        .await;
}

async fn stop_in_turn_2_then_continue_on_another_worker(name: &str, stop: Stop) {
    let Some(server) = NatsServer::start(name).await else {
        return;
    };
    let scenario = Scenario::from_yaml_str(FOUR_TURNS).unwrap();
    let mock = MockServer::start(MockConfig::default().with_scenario(scenario))
        .await
        .unwrap();
    let skills = durable_skills();
    let toml = match stop {
        Stop::Kill => worker_toml(&server, &mock),
        Stop::GraceOver => format!(
            "[server]\nshutdown_grace_seconds = 1\n\n{}",
            worker_toml(&server, &mock)
        ),
    };
    let mut first = Worker::spawn(&server, skills.path(), &toml);
    first.ready().await;
    let client = client(&nats_config(&server, "")).await;
    let mut request = SkillCallRequest::new("durable", Map::new());
    request.id = "durable-1".into();
    request.streaming = true;
    let live = Arc::new(Live::default());
    let call = {
        let (client, request, live) = (client.clone(), request.clone(), live.clone());
        tokio::spawn(async move {
            client
                .call(
                    &request,
                    Some(live as Arc<dyn EventSink>),
                    Duration::from_secs(120),
                )
                .await
        })
    };
    live.wait_for_log("tool call slow_write(", Duration::from_secs(60))
        .await;
    match stop {
        Stop::Kill => first.kill9().await,
        Stop::GraceOver => {
            assert_eq!(first.terminate().await, 0, "{:?}", first.lines());
            // Cancelled by its own stop: neither answered nor stored, left for redelivery.
            assert!(
                first.events("call answered").is_empty(),
                "{:?}",
                first.lines()
            );
            let left = first.events("left for redelivery");
            assert_eq!(left.len(), 1, "{:?}", first.lines());
            assert_eq!(left[0].req_id, "durable-1");
        }
    }
    let second = Worker::spawn(&server, skills.path(), &toml);

    let response = call.await.unwrap().expect("an answer");
    assert!(response.error.is_none(), "{response:?}");
    let result = response.data.expect("a result");
    assert!(result.success, "{result:?}");
    assert_eq!(result.data, Some(json!({"result": "done"})));
    assert_eq!(result.resumed, Some(Resumed { turns_saved: 2 }));

    // The journal: turns 1 and 2 requested once (by the first worker), then 3 and 4.
    let requests = requests(&mock);
    let turns: Vec<usize> = requests.iter().map(|(turn, _)| *turn).collect();
    assert_eq!(turns, vec![1, 2, 3, 4], "{requests:?}");
    // Turn 3 saw the in-flight `slow_write` answered as "may or may not have happened".
    let results = &requests[2].1;
    assert_eq!(results.len(), 2, "{results:?}");
    assert!(
        results[1].contains("may or may not have happened"),
        "{results:?}"
    );
    // Not run again: the second worker logged no call of it, and said why.
    let logs = log_messages(&result.events);
    assert!(
        !logs.iter().any(|l| l.starts_with("tool call slow_write(")),
        "{logs:?}"
    );
    assert!(
        logs.iter()
            .any(|l| l.contains("slow_write was in flight") && l.contains("not run again")),
        "{logs:?}"
    );
    assert!(
        logs.iter()
            .any(|l| l.starts_with("resumed from the checkpoint of turn 2")),
        "{logs:?}"
    );
    // One gap-free sequence over both workers.
    let seqs: Vec<u64> = result.events.iter().map(|e| e.seq).collect();
    assert_eq!(seqs, (0..seqs.len() as u64).collect::<Vec<_>>());
    let answered = second.events("call answered");
    assert_eq!(answered.len(), 1, "{:?}", second.lines());
    assert_eq!(answered[0].delivery, 2, "the redelivery ran it");
    mock.shutdown().await;
}
