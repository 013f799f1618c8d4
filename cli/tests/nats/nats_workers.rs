//! Delivery semantics of `skillet serve --nats` workers on a real `nats-server -js` (Debian's
//! `nats-server`; the tests skip with a notice when it is missing, and fail under `CI`): 3
//! workers share 300 calls, each answered exactly once; a worker killed with SIGKILL mid-call →
//! another worker answers it; a call delivered too often is answered `runtime_error`; the server
//! restarted mid-run → every call is answered; a duplicate submission runs once;
//! `max_ack_pending` and the per-worker concurrency hold; SIGTERM drains. The model is each
//! worker's embedded mock-llm, scripted by the test skill's `mock-scenario.yaml`.
//! The wire seen by other clients is tested in `nats_wire.rs`.

use crate::nats_support;

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use futures::StreamExt;
use skillet_protocol::{ErrorCode, SkillCallResponse};

use nats_support::*;

/// `(req_id → count)` of a log message over workers.
fn counts(workers: &[&Worker], message: &str) -> HashMap<String, usize> {
    let mut counts = HashMap::new();
    for worker in workers {
        for event in worker.events(message) {
            *counts.entry(event.req_id).or_default() += 1;
        }
    }
    counts
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_workers_share_300_calls_each_answered_exactly_once() {
    let Some(server) = NatsServer::start("three_workers_share_300_calls").await else {
        return;
    };
    let skills = echo_skills(10);
    let extra = "concurrency = 4\nmax_ack_pending = 12";
    let toml = nats_toml(&server, extra);
    let mut workers = Worker::spawn_ready(3, &server, skills.path(), &toml).await;
    let client = client(&nats_config(&server, extra)).await;
    let ids: Vec<String> = (0..300).map(|i| format!("share-{i}")).collect();
    let responses: Vec<SkillCallResponse> = futures::stream::iter(ids.clone())
        .map(|id| {
            let client = client.clone();
            async move {
                client
                    .call(&echo_call(&id), None, Duration::from_secs(120))
                    .await
                    .unwrap_or_else(|e| panic!("{id}: {e}"))
            }
        })
        .buffer_unordered(60)
        .collect()
        .await;
    assert_eq!(responses.len(), 300);
    let mut seen = HashSet::new();
    for response in &responses {
        assert_succeeded(response, &response.req_id.clone());
        assert!(
            seen.insert(response.req_id.clone()),
            "two answers for {}",
            response.req_id
        );
    }
    assert_eq!(seen, ids.iter().cloned().collect::<HashSet<_>>());

    // Exactly once: every id was run and answered by one worker, once.
    let refs: Vec<&Worker> = workers.iter().collect();
    let answered = counts(&refs, "call answered");
    assert_eq!(answered.len(), 300, "answered ids");
    assert!(
        answered.values().all(|&n| n == 1),
        "an id answered twice: {answered:?}"
    );
    assert_eq!(counts(&refs, "call started").values().sum::<usize>(), 300);
    // Spread: every worker took a real share.
    let shares: Vec<usize> = workers
        .iter()
        .map(|w| w.events("call answered").len())
        .collect();
    eprintln!("calls per worker: {shares:?}");
    assert!(shares.iter().all(|&n| n >= 30), "uneven spread: {shares:?}");

    // Work-queue retention: acked calls are gone from the stream.
    let js = async_nats::jetstream::new(client.connection().clone());
    let mut stream = js.get_stream("SKILLET_CALLS").await.unwrap();
    assert_eq!(stream.info().await.unwrap().state.messages, 0);

    // Graceful stop: SIGTERM → exit 0.
    for worker in &mut workers {
        assert_eq!(worker.terminate().await, 0);
    }
}

/// Starts one worker on a slow call, kills it with SIGKILL once the call runs, starts another:
/// returns the answer and the second worker.
async fn kill_mid_call(
    server: &NatsServer,
    extra: &str,
    id: &str,
) -> (SkillCallResponse, Worker, Worker) {
    let skills = echo_skills(3000);
    let toml = nats_toml(server, extra);
    let mut first = Worker::spawn(server, skills.path(), &toml);
    first.ready().await;
    let client = client(&nats_config(server, extra)).await;
    let call = {
        let client = client.clone();
        let request = echo_call(id);
        tokio::spawn(async move { client.call(&request, None, Duration::from_secs(90)).await })
    };
    first
        .wait_for_line(&format!("req_id={id}"), Duration::from_secs(30))
        .await;
    first.kill9().await;
    let second = Worker::spawn(server, skills.path(), &toml);
    let response = call.await.unwrap().expect("an answer");
    std::mem::forget(skills);
    (response, first, second)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_whose_worker_is_killed_mid_call_is_answered_by_another_worker() {
    let Some(server) = NatsServer::start("kill_mid_call").await else {
        return;
    };
    let extra = "concurrency = 1\nack_wait_seconds = 1.5\nmax_deliveries = 3";
    let (response, first, second) = kill_mid_call(&server, extra, "killed-1").await;
    assert_succeeded(&response, "killed-1");
    assert!(first.events("call answered").is_empty());
    let answered = second.events("call answered");
    assert_eq!(answered.len(), 1, "{:?}", second.lines());
    assert_eq!(answered[0].req_id, "killed-1");
    assert_eq!(answered[0].delivery, 2, "the redelivery ran it");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_delivered_more_than_max_deliveries_is_answered_runtime_error_not_run() {
    let Some(server) = NatsServer::start("max_deliveries").await else {
        return;
    };
    let extra = "concurrency = 1\nack_wait_seconds = 1.5\nmax_deliveries = 1";
    let (response, _first, second) = kill_mid_call(&server, extra, "doomed-1").await;
    let error = response.error.expect("rejected");
    assert_eq!(error.code, ErrorCode::RuntimeError);
    assert!(error.retryable);
    assert!(
        error.message.contains("delivered 1 times"),
        "{}",
        error.message
    );
    assert!(second.events("call started").is_empty(), "not run again");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_duplicate_submission_runs_once_and_a_late_one_gets_the_stored_answer() {
    let Some(server) = NatsServer::start("duplicate").await else {
        return;
    };
    let skills = echo_skills(300);
    let extra = "concurrency = 2\nduplicate_window_seconds = 2";
    let worker = Worker::spawn(&server, skills.path(), &nats_toml(&server, extra));
    worker.ready().await;
    let client = client(&nats_config(&server, extra)).await;
    let request = echo_call("dup-1");
    let wait = Duration::from_secs(30);
    client.submit(&request, None, wait).await.unwrap();
    client.submit(&request, None, wait).await.unwrap();
    let response = client.call(&request, None, wait).await.unwrap();
    assert_succeeded(&response, "dup-1");
    // Past the dedupe window the message reaches a worker, which replays the stored answer.
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let again = client.call(&request, None, wait).await.unwrap();
    assert_eq!(again.id, response.id, "the same stored answer");
    worker
        .wait_for_line("replaying the stored answer", wait)
        .await;
    assert_eq!(
        worker.events("call started").len(),
        1,
        "{:?}",
        worker.lines()
    );
    assert_eq!(worker.events("call answered").len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_ack_pending_and_worker_concurrency_bound_the_calls_in_flight() {
    let Some(server) = NatsServer::start("max_ack_pending").await else {
        return;
    };
    let skills = echo_skills(250);
    let extra = "concurrency = 3\nmax_ack_pending = 4";
    let toml = nats_toml(&server, extra);
    let workers = Worker::spawn_ready(2, &server, skills.path(), &toml).await;
    let client = client(&nats_config(&server, extra)).await;
    let js = async_nats::jetstream::new(client.connection().clone());
    let stream = js.get_stream("SKILLET_CALLS").await.unwrap();
    let mut consumer: async_nats::jetstream::consumer::PullConsumer =
        stream.get_consumer("skillet-workers").await.unwrap();
    assert_eq!(consumer.info().await.unwrap().config.max_ack_pending, 4);
    let calls = tokio::spawn({
        let client = client.clone();
        async move {
            futures::stream::iter(0..24)
                .map(|i| {
                    let client = client.clone();
                    async move {
                        let id = format!("pending-{i}");
                        let response = client
                            .call(&echo_call(&id), None, Duration::from_secs(120))
                            .await
                            .unwrap();
                        assert_succeeded(&response, &id);
                    }
                })
                .buffer_unordered(24)
                .collect::<Vec<()>>()
                .await
        }
    });
    let mut most_pending = 0;
    while !calls.is_finished() {
        let pending = consumer.info().await.unwrap().num_ack_pending;
        most_pending = most_pending.max(pending);
        tokio::time::sleep(Duration::from_millis(40)).await;
    }
    calls.await.unwrap();
    assert!(most_pending <= 4, "ack pending reached {most_pending}");
    assert!(
        most_pending >= 2,
        "the test saw calls pending ({most_pending})"
    );
    let mut total = 0;
    for worker in &workers {
        let started = worker.events("call started");
        total += started.len();
        let most = started
            .iter()
            .filter_map(|e| e.in_flight)
            .max()
            .unwrap_or(0);
        assert!(most <= 3, "a worker ran {most} calls at once");
    }
    assert_eq!(total, 24);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workers_and_client_survive_a_server_restart_and_every_call_is_answered() {
    let Some(mut server) = NatsServer::start("server_restart").await else {
        return;
    };
    let skills = echo_skills(400);
    let extra = "concurrency = 4\nmax_ack_pending = 8\nack_wait_seconds = 5";
    let toml = nats_toml(&server, extra);
    let workers = Worker::spawn_ready(2, &server, skills.path(), &toml).await;
    let client = client(&nats_config(&server, extra)).await;
    let calls = tokio::spawn({
        let client = client.clone();
        async move {
            futures::stream::iter(0..30)
                .map(|i| {
                    let client = client.clone();
                    async move {
                        let id = format!("restart-{i}");
                        let response = client
                            .call(&echo_call(&id), None, Duration::from_secs(120))
                            .await
                            .unwrap_or_else(|e| panic!("{id}: {e}"));
                        assert_succeeded(&response, &id);
                        id
                    }
                })
                .buffer_unordered(30)
                .collect::<Vec<String>>()
                .await
        }
    });
    // Restart once calls are running.
    workers[0]
        .wait_for_line("call started", Duration::from_secs(30))
        .await;
    server.restart().await;
    let answered = tokio::time::timeout(Duration::from_secs(150), calls)
        .await
        .expect("every call answered after the restart")
        .unwrap();
    assert_eq!(answered.len(), 30);
    for worker in &workers {
        assert!(
            worker.lines().iter().any(|l| l.contains("disconnected")),
            "the worker saw the restart"
        );
    }
    let refs: Vec<&Worker> = workers.iter().collect();
    let stored: HashSet<String> = counts(&refs, "call answered").into_keys().collect();
    for id in &answered {
        assert!(stored.contains(id), "{id} answered by a worker");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_stops_pulling_finishes_the_calls_in_flight_answers_acks_and_exits_0() {
    let Some(server) = NatsServer::start("graceful").await else {
        return;
    };
    let skills = echo_skills(1500);
    let extra = "concurrency = 3";
    let mut worker = Worker::spawn(&server, skills.path(), &nats_toml(&server, extra));
    worker.ready().await;
    let client = client(&nats_config(&server, extra)).await;
    let calls: Vec<_> = (0..3)
        .map(|i| {
            let client = client.clone();
            tokio::spawn(async move {
                client
                    .call(
                        &echo_call(&format!("grace-{i}")),
                        None,
                        Duration::from_secs(60),
                    )
                    .await
            })
        })
        .collect();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while worker.events("call started").len() < 3 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "{:?}",
            worker.lines()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(worker.terminate().await, 0);
    for (i, call) in calls.into_iter().enumerate() {
        let response = call
            .await
            .unwrap()
            .expect("answered before the worker exited");
        assert_succeeded(&response, &format!("grace-{i}"));
    }
    assert_eq!(worker.events("call answered").len(), 3);
    let js = async_nats::jetstream::new(client.connection().clone());
    let mut stream = js.get_stream("SKILLET_CALLS").await.unwrap();
    assert_eq!(
        stream.info().await.unwrap().state.messages,
        0,
        "every call acked before exit"
    );
}
