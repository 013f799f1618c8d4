//! The NATS wire as other clients see it, on a real `nats-server -js` (skipped with a notice
//! when it is missing, a failure under `CI`): `skillet discover/call --nats`, bad call messages
//! answered and acked, reply subjects a worker refuses, a raw A2E call from `nats-py`, and the
//! BENCHMARKS.md measurement (ignored by default).

use crate::cli_support;
use crate::nats_support;

use std::time::Duration;

use futures::StreamExt;
use serde_json::{Value, json};

use nats_support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn discover_over_nats_lists_the_workers_skills() {
    let Some(server) = NatsServer::start("discover").await else {
        return;
    };
    let skills = echo_skills(0);
    let worker = Worker::spawn(&server, skills.path(), &nats_toml(&server, ""));
    worker.ready().await;
    let output = tokio::process::Command::new(cli_support::SKILLET)
        .args(["discover", "--json", "--nats", &server.url()])
        .current_dir(worker.dir.path())
        .output()
        .await
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let discover: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(discover["type"], "skill/discover/resp");
    assert_eq!(discover["skills"][0]["name"], "echo");
    let call = tokio::process::Command::new(cli_support::SKILLET)
        .args([
            "call",
            "echo",
            "--nats",
            &server.url(),
            "--json",
            "--args",
            r#"{"text":"hi"}"#,
        ])
        .current_dir(worker.dir.path())
        .output()
        .await
        .unwrap();
    assert!(call.status.success(), "{call:?}");
    let response: Value = serde_json::from_slice(&call.stdout).unwrap();
    assert_eq!(response["data"]["data"]["echo"], "hello");
    let bad = tokio::process::Command::new(cli_support::SKILLET)
        .args([
            "call",
            "echo",
            "--nats",
            &server.url(),
            "--args",
            r#"{"text":"hi"}"#,
            "--id",
            "a.b",
        ])
        .current_dir(worker.dir.path())
        .output()
        .await
        .unwrap();
    assert!(
        !bad.status.success(),
        "an id with a dot cannot go over NATS"
    );
}

/// The Python interpreter with the test venv (`$SKILLET_PYTHON`, else `<workspace>/.venv`).
fn python() -> Option<std::path::PathBuf> {
    if let Some(p) = std::env::var_os("SKILLET_PYTHON") {
        return Some(p.into());
    }
    let venv = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../.venv/bin/python");
    venv.exists().then_some(venv)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nats_py_sends_a_raw_a2e_call_and_reads_events_and_answer_from_the_documented_subjects() {
    let Some(python) = python() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI is set but no Python found: set SKILLET_PYTHON or create .venv"
        );
        eprintln!("\n==== SKIPPED nats-py test: no $SKILLET_PYTHON and no .venv ====\n");
        return;
    };
    let Some(server) = NatsServer::start("nats_py").await else {
        return;
    };
    let skills = echo_skills(50);
    let worker = Worker::spawn(&server, skills.path(), &nats_toml(&server, ""));
    worker.ready().await;
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/nats_support/raw_call.py");
    let output = tokio::time::timeout(
        Duration::from_secs(90),
        tokio::process::Command::new(python)
            .arg(script)
            .args([&server.url(), "echo", "py-call-1"])
            .output(),
    )
    .await
    .expect("the script ends within 90 s")
    .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["stream"], "SKILLET_CALLS");
    let answer = &report["answer"];
    assert_eq!(answer["type"], "skill/call/resp");
    assert_eq!(answer["req_id"], "py-call-1");
    assert_eq!(answer["data"]["data"]["echo"], "hello");
    assert_eq!(
        report["stored"], *answer,
        "the stored answer is the published one"
    );
    let events = report["events"].as_array().unwrap();
    assert!(!events.is_empty(), "streamed events");
    for (seq, event) in events.iter().enumerate() {
        assert_eq!(event["type"], "skill/event");
        assert_eq!(event["req_id"], "py-call-1");
        assert_eq!(event["seq"], seq as u64);
    }
}

/// The BENCHMARKS.md figure (prints, asserts nothing about speed):
/// `cargo test -p skillet --test nats nats_wire:: -- --ignored --nocapture throughput`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a measurement for BENCHMARKS.md, not a check"]
async fn throughput_and_added_latency_nats_vs_stdio() {
    let Some(server) = NatsServer::start("throughput").await else {
        return;
    };
    let skills = echo_skills(0);
    let (sequential, parallel) = (50usize, 400usize);

    // stdio: one `serve --stdio` child.
    let mut stdio = cli_support::StdioChild::spawn(&[skills.path()]);
    let warm = cli_support::call("warm", "echo", json!({"text": "hi"}));
    stdio.send(&warm).await;
    stdio.recv_answers(&["warm"]).await;
    let started = std::time::Instant::now();
    for i in 0..sequential {
        let id = format!("s{i}");
        stdio
            .send(&cli_support::call(&id, "echo", json!({"text": "hi"})))
            .await;
        stdio.recv_answers(&[&id]).await;
    }
    let stdio_latency = started.elapsed() / sequential as u32;
    let started = std::time::Instant::now();
    let ids: Vec<String> = (0..parallel).map(|i| format!("p{i}")).collect();
    for id in &ids {
        stdio
            .send(&cli_support::call(id, "echo", json!({"text": "hi"})))
            .await;
    }
    let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
    stdio.recv_answers(&refs).await;
    let stdio_rate = parallel as f64 / started.elapsed().as_secs_f64();
    stdio.close_stdin();

    // NATS: one worker, same concurrency limit as serve's default.
    let extra = "concurrency = 64";
    let worker = Worker::spawn(&server, skills.path(), &nats_toml(&server, extra));
    worker.ready().await;
    let client = client(&nats_config(&server, extra)).await;
    let wait = Duration::from_secs(120);
    client.call(&echo_call("warm"), None, wait).await.unwrap();
    let started = std::time::Instant::now();
    for i in 0..sequential {
        let mut request = echo_call(&format!("ns{i}"));
        request.streaming = true;
        client.call(&request, None, wait).await.unwrap();
    }
    let nats_latency = started.elapsed() / sequential as u32;
    let started = std::time::Instant::now();
    let answered = futures::stream::iter(0..parallel)
        .map(|i| {
            let client = client.clone();
            async move {
                let mut request = echo_call(&format!("np{i}"));
                request.streaming = true;
                client.call(&request, None, wait).await.unwrap()
            }
        })
        .buffer_unordered(64)
        .count()
        .await;
    let nats_rate = answered as f64 / started.elapsed().as_secs_f64();
    eprintln!(
        "stdio: {stdio_latency:?}/call sequential, {stdio_rate:.0} calls/s ({parallel} pipelined)\n\
         NATS:  {nats_latency:?}/call sequential, {nats_rate:.0} calls/s ({parallel}, 64 at once, 1 worker)\n\
         added latency per call through NATS: {:?}",
        nats_latency.saturating_sub(stdio_latency)
    );
}

/// Publishes raw bytes to a call subject with a reply inbox; returns the answer.
async fn raw_answer(client: &async_nats::Client, subject: &str, id: &str, payload: &str) -> Value {
    let inbox = client.new_inbox();
    let mut answers = client.subscribe(inbox.clone()).await.unwrap();
    let js = async_nats::jetstream::new(client.clone());
    let mut headers = async_nats::HeaderMap::new();
    headers.insert("Skillet-Reply", inbox.as_str());
    headers.insert("Nats-Msg-Id", id);
    js.publish_with_headers(subject.to_owned(), headers, payload.to_owned().into())
        .await
        .unwrap()
        .await
        .unwrap();
    let message = tokio::time::timeout(Duration::from_secs(30), answers.next())
        .await
        .expect("an answer within 30 s")
        .unwrap();
    serde_json::from_slice(&message.payload).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_call_messages_are_answered_and_acked_and_the_worker_keeps_working() {
    let Some(server) = NatsServer::start("bad_messages").await else {
        return;
    };
    let skills = echo_skills(0);
    let worker = Worker::spawn(&server, skills.path(), &nats_toml(&server, ""));
    worker.ready().await;
    let nats = async_nats::connect(server.url()).await.unwrap();
    let cases = [
        ("skillet.call.echo", "m1", "{\"type\": ", "parse_error"),
        ("skillet.call.echo", "m2", "[1,2]", "invalid_message"),
        (
            "skillet.call.echo",
            "m3",
            r#"{"type":"skill/call/req","id":"a.b","version":"1.0","name":"echo","arguments":{"text":"x"}}"#,
            "invalid_message",
        ),
        (
            "skillet.call.other",
            "m4",
            r#"{"type":"skill/call/req","id":"m4","version":"1.0","name":"echo","arguments":{"text":"x"}}"#,
            "invalid_message",
        ),
        (
            "skillet.call.echo",
            "m5",
            r#"{"type":"skill/call/req","id":"m5","version":"9.9","name":"echo","arguments":{}}"#,
            "version_mismatch",
        ),
        (
            "skillet.call.nope",
            "m6",
            r#"{"type":"skill/call/req","id":"m6","version":"1.0","name":"nope","arguments":{}}"#,
            "unknown_skill",
        ),
    ];
    for (subject, msg_id, payload, code) in cases {
        let answer = raw_answer(&nats, subject, msg_id, payload).await;
        assert_eq!(answer["type"], "skill/call/resp", "{payload}");
        assert_eq!(answer["error"]["code"], code, "{payload}: {answer}");
    }
    // A reply subject in a `$` namespace is not published to (here it would overwrite another
    // call's stored answer): the answer is only stored.
    let js = async_nats::jetstream::new(nats.clone());
    let mut headers = async_nats::HeaderMap::new();
    headers.insert("Skillet-Reply", "$KV.skillet-results.victim");
    js.publish_with_headers(
        "skillet.call.echo",
        headers,
        r#"{"type":"skill/call/req","id":"m8","version":"1.0","name":"echo","arguments":{"text":"x"}}"#.into(),
    )
    .await
    .unwrap()
    .await
    .unwrap();
    let results = js.get_key_value("skillet-results").await.unwrap();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while results.get("m8").await.unwrap().is_none() {
        assert!(tokio::time::Instant::now() < deadline, "m8 stored");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let mut stream = js.get_stream("SKILLET_CALLS").await.unwrap();
    while stream.info().await.unwrap().state.messages > 0 {
        assert!(tokio::time::Instant::now() < deadline, "m8 acked");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        results.get("victim").await.unwrap().is_none(),
        "the worker published into the results bucket"
    );
    // Still working, and nothing was left unacked for redelivery.
    let ok = raw_answer(
        &nats,
        "skillet.call.echo",
        "m7",
        r#"{"type":"skill/call/req","id":"m7","version":"1.0","name":"echo","arguments":{"text":"x"}}"#,
    )
    .await;
    assert_eq!(ok["data"]["data"]["echo"], "hello", "{ok}");
    assert_eq!(stream.info().await.unwrap().state.messages, 0);
}

/// Publishes a call on `subject` with `Nats-Msg-Id` `msg_id` and `Skillet-Reply` `reply`, and
/// waits for the stream to take it.
async fn publish_call(
    nats: &async_nats::Client,
    subject: &str,
    msg_id: &str,
    reply: &str,
    id: &str,
) {
    let js = async_nats::jetstream::new(nats.clone());
    let mut headers = async_nats::HeaderMap::new();
    headers.insert("Skillet-Reply", reply);
    headers.insert("Nats-Msg-Id", msg_id);
    let payload = format!(
        r#"{{"type":"skill/call/req","id":"{id}","version":"1.0","name":"echo","arguments":{{"text":"x"}}}}"#
    );
    js.publish_with_headers(subject.to_owned(), headers, payload.into())
        .await
        .unwrap()
        .await
        .unwrap();
}

/// Issue 30: a call on the wrong subject stored its rejection under its id (a later legitimate
/// call with that id got the rejection), and a reply subject could be the work queue itself or
/// another call's events subject.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_subject_takes_no_id_and_skillet_subjects_are_refused_as_replies() {
    let Some(server) = NatsServer::start("subject_checks").await else {
        return;
    };
    let skills = echo_skills(0);
    let worker = Worker::spawn(&server, skills.path(), &nats_toml(&server, ""));
    worker.ready().await;
    let nats = async_nats::connect(server.url()).await.unwrap();
    let js = async_nats::jetstream::new(nats.clone());

    // On another skill's subject: rejected, and the id stays free.
    let inbox = nats.new_inbox();
    let mut answers = nats.subscribe(inbox.clone()).await.unwrap();
    publish_call(&nats, "skillet.call.other", "wrong-w1", &inbox, "w1").await;
    let rejected = tokio::time::timeout(Duration::from_secs(30), answers.next())
        .await
        .expect("an answer")
        .unwrap();
    let rejected: Value = serde_json::from_slice(&rejected.payload).unwrap();
    assert_eq!(rejected["error"]["code"], "invalid_message", "{rejected}");
    let legit = raw_answer(
        &nats,
        "skillet.call.echo",
        "w1",
        r#"{"type":"skill/call/req","id":"w1","version":"1.0","name":"echo","arguments":{"text":"x"}}"#,
    )
    .await;
    assert_eq!(legit["data"]["data"]["echo"], "hello", "{legit}");

    // Replies on the work queue or on another call's events are never published.
    let mut queue = nats.subscribe("skillet.call.>").await.unwrap();
    let mut events = nats.subscribe("skillet.events.victim").await.unwrap();
    nats.flush().await.unwrap();
    publish_call(&nats, "skillet.call.echo", "r1", "skillet.call.echo", "r1").await;
    publish_call(
        &nats,
        "skillet.call.echo",
        "r2",
        "skillet.events.victim",
        "r2",
    )
    .await;
    let results = js.get_key_value("skillet-results").await.unwrap();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    for id in ["r1", "r2"] {
        while results.get(id).await.unwrap().is_none() {
            assert!(tokio::time::Instant::now() < deadline, "{id} answered");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let mut on_queue = 0;
    while let Ok(Some(_)) = tokio::time::timeout(Duration::from_millis(100), queue.next()).await {
        on_queue += 1;
    }
    assert_eq!(
        on_queue, 2,
        "only the two calls themselves went to the work queue"
    );
    assert!(
        tokio::time::timeout(Duration::from_millis(100), events.next())
            .await
            .is_err(),
        "an answer was published as another call's event"
    );
}
