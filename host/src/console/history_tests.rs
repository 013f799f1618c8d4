//! The history store: rows written by the recorder, listed with filters, bounded, content kept
//! only with capture, reopened after a restart.

use super::*;
use crate::console::HistoryRecorder;
use crate::console::query::Outcome;
use crate::record::{CallRecorder, Door, FinishedCall};
use serde_json::{Map, json};
use skillet_protocol::{ErrorCode, ProtocolError, SkillCallResponse, SkillResult};

fn finished<'a>(
    skill: &'a str,
    arguments: &'a Map<String, Value>,
    response: &'a SkillCallResponse,
) -> FinishedCall<'a> {
    FinishedCall {
        req_id: &response.req_id,
        skill,
        caller: "local",
        door: Some(Door::A2e),
        arguments,
        model_override: None,
        started_at: response.created_at - 0.5,
        response,
    }
}

fn ok(req: &str, skill: &str) -> SkillCallResponse {
    SkillCallResponse::result(
        req,
        skill,
        SkillResult::success(Some(json!({"echo": "CANARY-OUTPUT"})), None, 12),
    )
}

fn args() -> Map<String, Value> {
    json!({"text": "CANARY-INPUT"}).as_object().unwrap().clone()
}

#[tokio::test]
async fn recorded_runs_are_listed_newest_first_and_filtered() {
    let dir = tempfile::tempdir().unwrap();
    let history =
        Arc::new(History::open(&dir.path().join("state.db"), HistoryLimits::default()).unwrap());
    let recorder = HistoryRecorder::new(Arc::clone(&history), true);
    let arguments = args();
    let first = ok("r1", "summarize");
    let failed = SkillCallResponse::result(
        "r2",
        "code-review",
        SkillResult::failure(ErrorCode::Timeout, "too slow", 30),
    );
    let rejected = SkillCallResponse::rejected(
        "r3",
        "summarize",
        ProtocolError::new(ErrorCode::SchemaViolation, "/text: not a string"),
    );
    for (skill, response) in [
        ("summarize", &first),
        ("code-review", &failed),
        ("summarize", &rejected),
    ] {
        recorder.record(finished(skill, &arguments, response));
    }
    let all = history.list(RunFilter::default()).await.unwrap();
    let ids: Vec<&str> = all.iter().map(|r| r.req_id.as_str()).collect();
    assert_eq!(ids, ["r3", "r2", "r1"]);
    assert_eq!(all[0].outcome, "rejected");
    assert_eq!(all[0].error_code.as_deref(), Some("schema_violation"));
    assert_eq!(all[1].duration_ms, Some(30));

    let only = |filter: RunFilter| {
        let history = Arc::clone(&history);
        async move {
            history
                .list(filter)
                .await
                .unwrap()
                .into_iter()
                .map(|r| r.req_id)
                .collect::<Vec<_>>()
        }
    };
    let skill = RunFilter {
        skill: Some("summarize".into()),
        ..RunFilter::default()
    };
    assert_eq!(only(skill).await, ["r3", "r1"]);
    let outcome = RunFilter {
        outcome: Some(Outcome::Failure),
        ..RunFilter::default()
    };
    assert_eq!(only(outcome).await, ["r2"]);
    let code = RunFilter {
        error_code: Some("timeout".into()),
        ..RunFilter::default()
    };
    assert_eq!(only(code).await, ["r2"]);
    let limit = RunFilter {
        limit: 1,
        ..RunFilter::default()
    };
    assert_eq!(only(limit).await, ["r3"]);
    let future = RunFilter {
        since: Some(first.created_at + 3600.0),
        ..RunFilter::default()
    };
    assert!(only(future).await.is_empty());
    let paged = RunFilter {
        before: Some(all[1].id),
        ..RunFilter::default()
    };
    assert_eq!(only(paged).await, ["r1"]);

    let record = history.get(all[2].id).await.unwrap().unwrap();
    assert_eq!(record.arguments, Some(json!({"text": "CANARY-INPUT"})));
    let data = &record.response.unwrap()["data"]["data"];
    assert_eq!(data, &json!({"echo": "CANARY-OUTPUT"}));
    assert!(history.get(9999).await.unwrap().is_none());
}

#[tokio::test]
async fn without_content_capture_no_text_of_the_run_is_stored() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.db");
    let history = Arc::new(History::open(&path, HistoryLimits::default()).unwrap());
    let recorder = HistoryRecorder::new(Arc::clone(&history), false);
    let arguments = args();
    let response = ok("r1", "summarize");
    recorder.record(finished("summarize", &arguments, &response));
    let runs = history.list(RunFilter::default()).await.unwrap();
    assert_eq!(runs.len(), 1);
    assert!(!runs[0].content_kept);
    let record = history.get(runs[0].id).await.unwrap().unwrap();
    assert!(record.arguments.is_none() && record.response.is_none() && record.error.is_none());
    let bytes = std::fs::read(&path).unwrap();
    let wal = std::fs::read(dir.path().join("state.db-wal")).unwrap_or_default();
    for file in [&bytes, &wal] {
        let text = String::from_utf8_lossy(file);
        assert!(
            !text.contains("CANARY"),
            "run content reached the database file"
        );
    }
}

#[tokio::test]
async fn the_history_is_bounded_by_count_and_age() {
    let dir = tempfile::tempdir().unwrap();
    let limits = HistoryLimits {
        max_runs: 3,
        max_age: Duration::from_secs(3600),
    };
    let history = Arc::new(History::open(&dir.path().join("h.db"), limits).unwrap());
    let recorder = HistoryRecorder::new(Arc::clone(&history), false);
    let arguments = args();
    let mut old = ok("old", "summarize");
    old.created_at -= 7200.0;
    recorder.record(finished("summarize", &arguments, &old));
    for i in 0..5 {
        let response = ok(&format!("r{i}"), "summarize");
        recorder.record(finished("summarize", &arguments, &response));
    }
    let ids: Vec<String> = history
        .list(RunFilter::default())
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.req_id)
        .collect();
    assert_eq!(ids, ["r4", "r3", "r2"]);
}

#[tokio::test]
async fn runs_survive_a_reopen_and_other_tables_in_the_file_are_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.db");
    {
        let other = Connection::open(&path).unwrap();
        other
            .execute_batch("CREATE TABLE a2a_tasks (id TEXT); INSERT INTO a2a_tasks VALUES ('t');")
            .unwrap();
    }
    {
        let history = Arc::new(History::open(&path, HistoryLimits::default()).unwrap());
        let recorder = HistoryRecorder::new(Arc::clone(&history), true);
        let arguments = args();
        recorder.record(finished("summarize", &arguments, &ok("r1", "summarize")));
        history.flush().await;
    }
    let history = History::open(&path, HistoryLimits::default()).unwrap();
    let runs = history.list(RunFilter::default()).await.unwrap();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].req_id, "r1");
    let other = Connection::open(&path).unwrap();
    let count: i64 = other
        .query_row("SELECT count(*) FROM a2a_tasks", [], |r| r.get(0))
        .unwrap();
    assert_eq!(count, 1);
}

#[test]
fn an_unopenable_path_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("file");
    std::fs::write(&file, "x").unwrap();
    let error = History::open(&file.join("state.db"), HistoryLimits::default()).unwrap_err();
    assert!(error.to_string().contains("state.db"), "{error}");
}

/// Not a check: what the history costs per call (`cargo test -p skillet-host --lib -- --ignored
/// history_cost --nocapture`). The call's own cost is `record` (a row built and queued); the
/// writer thread's, each row's insert, is off the call path.
#[tokio::test]
#[ignore = "a measurement, run by hand"]
async fn history_cost_per_call() {
    let dir = tempfile::tempdir().unwrap();
    let history =
        Arc::new(History::open(&dir.path().join("state.db"), HistoryLimits::default()).unwrap());
    let recorder = HistoryRecorder::new(Arc::clone(&history), true);
    let arguments = args();
    let calls = 1000;
    let responses: Vec<SkillCallResponse> = (0..calls)
        .map(|i| ok(&format!("r{i}"), "summarize"))
        .collect();
    let started = std::time::Instant::now();
    for response in &responses {
        recorder.record(finished("summarize", &arguments, response));
    }
    let on_the_call = started.elapsed();
    let last = format!("r{}", calls - 1);
    loop {
        let newest = history.list(RunFilter::default()).await.unwrap();
        if newest.first().is_some_and(|r| r.req_id == last) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(1)).await;
    }
    let written = started.elapsed();
    println!(
        "history cost per call: record (on the call) {:.1} us, written by the writer thread {:.1} us",
        on_the_call.as_secs_f64() * 1e6 / f64::from(calls),
        written.as_secs_f64() * 1e6 / f64::from(calls)
    );
}

#[tokio::test]
async fn repairs_are_counted_without_content_and_an_older_file_gets_the_columns() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.db");
    // A file written before the history counted repairs: no `repairs` column, one old row.
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch(
            "CREATE TABLE console_runs (id INTEGER PRIMARY KEY AUTOINCREMENT, req_id TEXT NOT NULL,
             skill TEXT NOT NULL, caller TEXT NOT NULL, started_at REAL NOT NULL,
             finished_at REAL NOT NULL, duration_ms INTEGER, outcome TEXT NOT NULL,
             error_code TEXT, error TEXT, model TEXT, input_tokens INTEGER,
             output_tokens INTEGER, cost REAL, currency TEXT, turns INTEGER, arguments TEXT,
             response TEXT);
             INSERT INTO console_runs (req_id, skill, caller, started_at, finished_at, outcome)
             VALUES ('old', 'summarize', 'local', unixepoch() - 2, unixepoch() - 1, 'success');",
        )
        .unwrap();
    }
    let history = Arc::new(History::open(&path, HistoryLimits::default()).unwrap());
    let recorder = HistoryRecorder::new(Arc::clone(&history), false);
    let mut response = ok("new", "code-review");
    let data = response.data.as_mut().unwrap();
    for message in [
        "final answer rejected (1 problem: /a: bad); asking the model to repair it",
        "tool call calculator({})",
    ] {
        data.events.push(skillet_protocol::SkillEvent::new(
            "new",
            0,
            skillet_protocol::EventPayload::Log {
                level: skillet_protocol::LogLevel::Info,
                message: message.to_owned(),
            },
        ));
    }
    recorder.record(finished("code-review", &args(), &response));
    let runs = history.list(RunFilter::default()).await.unwrap();
    let repairs: Vec<(&str, Option<i64>)> = runs
        .iter()
        .map(|r| (r.req_id.as_str(), r.repairs))
        .collect();
    assert_eq!(repairs, [("new", Some(1)), ("old", None)]);
    let doors: Vec<Option<&str>> = runs.iter().map(|r| r.door.as_deref()).collect();
    assert_eq!(doors, [Some("a2e"), None], "the old row's door is unknown");
    assert!(
        !runs[0].content_kept,
        "the count is kept, the content is not"
    );
}

#[tokio::test]
async fn each_run_says_the_door_it_came_through_and_a_list_filters_on_it() {
    let dir = tempfile::tempdir().unwrap();
    let history =
        Arc::new(History::open(&dir.path().join("state.db"), HistoryLimits::default()).unwrap());
    let recorder = HistoryRecorder::new(Arc::clone(&history), false);
    let arguments = args();
    let responses: Vec<(Option<Door>, SkillCallResponse)> =
        [Some(Door::Console), Some(Door::Mcp), Some(Door::Nats), None]
            .into_iter()
            .enumerate()
            .map(|(i, door)| (door, ok(&format!("r{i}"), "summarize")))
            .collect();
    for (door, response) in &responses {
        recorder.record(FinishedCall {
            door: *door,
            ..finished("summarize", &arguments, response)
        });
    }
    let runs = history.list(RunFilter::default()).await.unwrap();
    let doors: Vec<Option<&str>> = runs.iter().map(|r| r.door.as_deref()).collect();
    assert_eq!(doors, [None, Some("nats"), Some("mcp"), Some("console")]);
    let mcp = history
        .list(RunFilter {
            door: Some(Door::Mcp),
            ..RunFilter::default()
        })
        .await
        .unwrap();
    let ids: Vec<&str> = mcp.iter().map(|r| r.req_id.as_str()).collect();
    assert_eq!(ids, ["r1"]);
}
