//! G5 of issue 30: an answer larger than the NATS server's `max_payload` once could never be
//! stored; the worker retried the store as if it were transient, JetStream redelivered the
//! call, and the skill ran again and again. Now, on a real `nats-server -js` with a small
//! `max_payload` (skipped with a notice when it is missing, a failure under `CI`):
//! - collected events over the limit are cut (`truncated: true`) and the call succeeds, once;
//! - an output over the limit is one clear `skill_error`, and the skill ran once.

use crate::cli_support;
use crate::nats_support;

use std::time::Duration;

use skillet_protocol::ErrorCode;

use cli_support::write_skill;
use nats_support::*;

const EXTRA: &str = "concurrency = 2\nack_wait_seconds = 2\nmax_deliveries = 3";

/// A skills root with `big`, whose answer's `echo` is `chars` characters long.
fn big_skill(chars: usize) -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    let text = "a".repeat(chars);
    write_skill(
        root.path(),
        "big",
        0,
        &format!("{{json: {{echo: \"{text}\"}}}}"),
    );
    root
}

fn big_call(id: &str, streaming: bool) -> skillet_protocol::SkillCallRequest {
    let mut request = echo_call(id);
    request.name = "big".to_owned();
    request.streaming = streaming;
    request
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn collected_events_over_max_payload_are_cut_and_the_call_runs_once() {
    let Some(server) =
        NatsServer::start_with("events_over_max_payload", "max_payload: 262144\n").await
    else {
        return;
    };
    // 150 kB of output fits in 256 KiB; its streamed chunks, collected as events, do not.
    let skills = big_skill(150_000);
    let worker = Worker::spawn(&server, skills.path(), &nats_toml(&server, EXTRA));
    worker.ready().await;
    let client = client(&nats_config(&server, EXTRA)).await;
    let response = client
        .call(
            &big_call("big-events-1", true),
            None,
            Duration::from_secs(60),
        )
        .await
        .expect("one answer");
    assert!(response.error.is_none(), "{:?}", response.error);
    let data = response.data.expect("a result");
    assert!(data.success, "{:?}", data.error);
    assert!(data.truncated, "the cut is said");
    assert_eq!(
        data.data.unwrap()["echo"].as_str().unwrap().len(),
        150_000,
        "the output itself is whole"
    );
    // Long enough for a redelivery (ack wait 2 s) to have run it again.
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert_eq!(
        worker.events("call started").len(),
        1,
        "{:?}",
        worker.lines()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_output_over_max_payload_is_one_clear_error_and_never_a_rerun() {
    let Some(server) =
        NatsServer::start_with("output_over_max_payload", "max_payload: 65536\n").await
    else {
        return;
    };
    let skills = big_skill(100_000);
    let worker = Worker::spawn(&server, skills.path(), &nats_toml(&server, EXTRA));
    worker.ready().await;
    let client = client(&nats_config(&server, EXTRA)).await;
    let response = client
        .call(
            &big_call("big-output-1", false),
            None,
            Duration::from_secs(30),
        )
        .await
        .expect("one answer, in time");
    let data = response.data.expect("an execution outcome");
    assert!(!data.success);
    assert_eq!(data.error_code, Some(ErrorCode::SkillError));
    let error = data.error.unwrap();
    assert!(error.contains("max_payload"), "{error}");
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert_eq!(
        worker.events("call started").len(),
        1,
        "{:?}",
        worker.lines()
    );
}
