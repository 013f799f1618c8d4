//! `run_streaming`: the events as a `Stream` while the call runs, then its output; cancelled
//! explicitly or by dropping the stream.

use std::time::Duration;

use futures::StreamExt;
use serde_json::json;
use skillet_engine::protocol::EventPayload;
use skillet_engine::{SkillError, Skillet};

use crate::common::*;

#[tokio::test]
async fn the_stream_yields_every_event_in_order_then_the_output() {
    let server = start_mock(&summarize_scenario()).await;
    let skillet = Skillet::builder()
        .skills_dir(bundled_root())
        .default_spec(mock_spec(&server))
        .build()
        .unwrap();

    let mut run = skillet.run_streaming("summarize", json!({"text": "Stream me."}));
    let mut streamed = Vec::new();
    while let Some(event) = run.next().await {
        streamed.push(event);
    }
    let output = run.finish().await.expect("the run succeeds");

    let seqs: Vec<u64> = streamed.iter().map(|e| e.seq).collect();
    assert_eq!(
        seqs,
        (0..streamed.len() as u64).collect::<Vec<_>>(),
        "seq from 0, no gaps"
    );
    assert_eq!(
        streamed, output.events,
        "the streamed events are the output's"
    );
    let text: String = streamed
        .iter()
        .filter_map(|e| match &e.payload {
            EventPayload::Artifact { chunk, .. } => Some(chunk.as_str()),
            _ => None,
        })
        .collect();
    let streamed_answer: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        streamed_answer, output.data,
        "the model's text streamed as artifacts"
    );
    assert_eq!(chat_bodies(&server)[0]["stream"], true);
    server.shutdown().await;
}

#[tokio::test]
async fn cancel_stops_the_run_and_finish_reports_cancelled() {
    let hang = Scripted::new("m", Behavior::Hang);
    let skillet = Skillet::builder()
        .skills_dir(bundled_root())
        .provider("hang", hang.clone())
        .default_provider("hang")
        .build()
        .unwrap();

    let mut run = skillet.run_streaming("summarize", json!({"text": "x"}));
    let first = run.next().await.expect("a first event");
    assert_eq!(first.seq, 0);
    run.cancel();
    let error = tokio::time::timeout(Duration::from_secs(10), run.finish())
        .await
        .expect("finish returns promptly")
        .unwrap_err();
    assert!(matches!(error, SkillError::Cancelled { .. }), "{error:?}");
}

#[tokio::test]
async fn dropping_the_stream_cancels_the_run() {
    let hang = Scripted::new("m", Behavior::Hang);
    let skillet = Skillet::builder()
        .skills_dir(bundled_root())
        .provider("hang", hang.clone())
        .default_provider("hang")
        .build()
        .unwrap();

    let mut run = skillet.run_streaming("summarize", json!({"text": "x"}));
    run.next().await.expect("a first event");
    while hang.calls() == 0 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert_eq!(hang.dropped(), 0);
    drop(run);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while hang.dropped() == 0 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the run was not cancelled"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}
