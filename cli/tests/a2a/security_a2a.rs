//! Issue 48, A2A and the console's history under `[auth]`, through `skillet serve --http`
//! with three API keys: `alice` (runs `echo-a`, reads the console), `bob` (runs `echo-a`) and
//! `carol` (runs `echo-b`):
//! - H6: a refusal never says whether a skill exists — an unknown and a forbidden skill get
//!   the same answer, and no error lists a skill the caller may not run;
//! - another identity's task answers as an unknown one, a continuation (`taskId`) included,
//!   and to the push notification config methods;
//! - a repeated `messageId` from the same identity returns the first task and runs nothing;
//! - the console's history shows a caller only the runs of skills its grants let it see.
//!
//! Raw JSON-RPC over reqwest; the embedded mock-llm's journal counts model requests.

use crate::cli_support;
use crate::serve_support;

use serde_json::{Value, json};

use cli_support::{SKILLET, write_skill};
use serve_support::{HttpServer, ServeHttp};

const ALICE: &str = "sk-alice-0123456789abcdef";
const BOB: &str = "sk-bob-0123456789abcdef";
const CAROL: &str = "sk-carol-0123456789abcdef";

struct Server {
    server: HttpServer,
    _cwd: tempfile::TempDir,
    _skills: tempfile::TempDir,
    client: reqwest::Client,
}

impl Server {
    async fn start() -> Server {
        Server::start_with("").await
    }

    /// A server whose `skillet.toml` starts with `first` (tables before `[console]`).
    async fn start_with(first: &str) -> Server {
        let skills = tempfile::tempdir().unwrap();
        write_skill(skills.path(), "echo-a", 0, "{json: {echo: \"a\"}}");
        write_skill(skills.path(), "echo-b", 0, "{json: {echo: \"b\"}}");
        let cwd = tempfile::tempdir().unwrap();
        let sha = skillet_host::auth::sha256_hex;
        std::fs::write(
            cwd.path().join("skillet.toml"),
            format!(
                r#"{first}
[console]
history_db = "history.db"
capture_content = true

[auth.scopes.run-a]
skills = ["echo-a"]

[auth.scopes.run-b]
skills = ["echo-b"]

[[auth.api_keys]]
id = "alice"
sha256 = "{alice}"
scopes = ["run-a", "console"]

[[auth.api_keys]]
id = "bob"
sha256 = "{bob}"
scopes = ["run-a"]

[[auth.api_keys]]
id = "carol"
sha256 = "{carol}"
scopes = ["run-b"]
"#,
                alice = sha(ALICE),
                bob = sha(BOB),
                carol = sha(CAROL),
            ),
        )
        .unwrap();
        Server::serve(cwd, skills).await
    }

    async fn serve(cwd: tempfile::TempDir, skills: tempfile::TempDir) -> Server {
        let server = ServeHttp::new(SKILLET)
            .cwd(cwd.path())
            .skills_dir(skills.path())
            .spawn()
            .await;
        Server {
            server,
            _cwd: cwd,
            _skills: skills,
            client: reqwest::Client::new(),
        }
    }

    /// The same server killed and started again over the same directory.
    async fn restart(self) -> Server {
        let Server {
            mut server,
            _cwd,
            _skills,
            ..
        } = self;
        server.child.kill().await.unwrap();
        Server::serve(_cwd, _skills).await
    }

    /// One JSON-RPC request on `/a2a` as `key`; the answer's JSON.
    async fn rpc(&self, key: &str, method: &str, params: Value) -> Value {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        let text = self
            .client
            .post(format!("{}/a2a", self.server.base))
            .header("A2A-Version", "1.0")
            .bearer_auth(key)
            .json(&body)
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"))
    }

    /// A blocking `SendMessage` of `{"text": "hi"}` with `message_id`, naming `skill` (or none).
    async fn send(&self, key: &str, message_id: &str, skill: Option<&str>) -> Value {
        let mut message = json!({"messageId": message_id, "role": "ROLE_USER",
                                 "parts": [{"data": {"text": "hi"}}]});
        if let Some(skill) = skill {
            message["metadata"] = json!({"skillId": skill});
        }
        self.rpc(key, "SendMessage", json!({"message": message}))
            .await
    }

    /// How many requests reached the model.
    async fn model_requests(&self) -> usize {
        let mock = self.server.mock.as_deref().expect("the embedded mock-llm");
        let base = mock.trim_end_matches('/').trim_end_matches("/v1");
        let journal: Value = self
            .client
            .get(format!("{base}/_mock/requests"))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        journal.as_array().map_or(0, Vec::len)
    }

    /// `GET path` on the console's API as `key`: status and JSON body.
    async fn console(&self, key: &str, path: &str) -> (u16, Value) {
        let response = self
            .client
            .get(format!("{}{path}", self.server.base))
            .bearer_auth(key)
            .send()
            .await
            .unwrap();
        let status = response.status().as_u16();
        (status, response.json().await.unwrap_or(Value::Null))
    }
}

fn completed_task_id(answer: &Value) -> String {
    assert_eq!(
        answer["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{answer}"
    );
    answer["result"]["task"]["id"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn an_unknown_and_a_forbidden_skill_get_the_same_answer_listing_only_the_callers_skills() {
    let server = Server::start().await;
    // bob may run echo-a only: echo-b exists, no-such-skill does not.
    let forbidden = server.send(BOB, "m-1", Some("echo-b")).await;
    let unknown = server.send(BOB, "m-2", Some("no-such-skill")).await;
    assert!(forbidden["error"].is_object(), "{forbidden}");
    assert_eq!(
        forbidden["error"], unknown["error"],
        "a refusal must not tell an existing skill from an unknown one"
    );
    assert_eq!(forbidden["error"]["code"], -32600, "{forbidden}");
    assert!(
        forbidden["error"].to_string().contains("unauthorized"),
        "{forbidden}"
    );
    // Not naming a skill (the card has two) is answered with the ids the caller may run only.
    let unnamed = server.send(BOB, "m-3", None).await;
    let text = unnamed["error"].to_string();
    assert_eq!(unnamed["error"]["code"], -32602, "{unnamed}");
    assert!(text.contains("echo-a"), "{unnamed}");
    for answer in [&forbidden, &unknown, &unnamed] {
        assert!(
            !answer.to_string().contains("echo-b"),
            "an error names a skill bob may not run: {answer}"
        );
    }
    assert_eq!(server.model_requests().await, 0, "nothing ran");
}

#[tokio::test]
async fn another_identitys_task_answers_as_an_unknown_task_to_every_method_and_to_a_continuation() {
    let server = Server::start().await;
    let task = completed_task_id(&server.send(ALICE, "first", Some("echo-a")).await);
    let unknown = "00000000-0000-0000-0000-000000000000";
    // The error of `task` for `key`, with the id written as `ID` (errors name the id asked).
    let error_of = |answer: Value, id: &str| answer["error"].to_string().replace(id, "ID");
    let continuation = |id: &str| {
        json!({"message": {"messageId": format!("reply-{id}"), "role": "ROLE_USER",
                           "taskId": id, "parts": [{"data": {"approve": true}}]}})
    };
    for (method, params) in [
        ("SendMessage", continuation as fn(&str) -> Value),
        ("GetTask", |id: &str| json!({"id": id})),
        ("CancelTask", |id: &str| json!({"id": id})),
    ] {
        let theirs = error_of(server.rpc(BOB, method, params(&task)).await, &task);
        let nobodys = error_of(server.rpc(BOB, method, params(unknown)).await, unknown);
        assert!(theirs.contains("-32001"), "{method}: {theirs}");
        assert_eq!(
            theirs, nobodys,
            "{method}: another identity's task is told apart"
        );
    }
    // Its owner still reads it; the continuation of a finished task is not "not found" to it.
    let own = server.rpc(ALICE, "GetTask", json!({"id": task})).await;
    assert_eq!(own["result"]["id"], task.as_str(), "{own}");
    let own = server.rpc(ALICE, "SendMessage", continuation(&task)).await;
    assert_eq!(own["error"]["code"], -32004, "{own}");
}

#[tokio::test]
async fn with_push_on_another_identitys_task_has_no_push_configs_to_create_read_or_delete() {
    let server =
        Server::start_with("[a2a]\npush = true\npush_allow = [\"https://hooks.example.com\"]\n")
            .await;
    let task = completed_task_id(&server.send(ALICE, "first", Some("echo-a")).await);
    let unknown = "00000000-0000-0000-0000-000000000000";
    let params =
        |id: &str| json!({"taskId": id, "id": "c1", "url": "https://hooks.example.com/a2a"});
    for method in [
        "CreateTaskPushNotificationConfig",
        "GetTaskPushNotificationConfig",
        "ListTaskPushNotificationConfigs",
        "DeleteTaskPushNotificationConfig",
    ] {
        let theirs = server.rpc(BOB, method, params(&task)).await["error"].to_string();
        let nobodys = server.rpc(BOB, method, params(unknown)).await["error"].to_string();
        assert!(theirs.contains("-32001"), "{method}: {theirs}");
        assert_eq!(
            theirs.replace(&task, "ID"),
            nobodys.replace(unknown, "ID"),
            "{method}: another identity's task is told apart"
        );
    }
    let own = server
        .rpc(
            ALICE,
            "ListTaskPushNotificationConfigs",
            json!({"taskId": task}),
        )
        .await;
    assert_eq!(own["result"]["configs"], json!([]), "{own}");
}

#[tokio::test]
async fn a_repeated_message_id_returns_the_first_task_and_runs_the_skill_once_per_identity() {
    let server = Server::start().await;
    let first = completed_task_id(&server.send(ALICE, "retry-1", Some("echo-a")).await);
    assert_eq!(server.model_requests().await, 1);
    let again = server.send(ALICE, "retry-1", Some("echo-a")).await;
    assert_eq!(completed_task_id(&again), first, "{again}");
    assert_eq!(
        again["result"]["task"]["artifacts"]
            .as_array()
            .map(Vec::len),
        Some(1)
    );
    assert_eq!(
        server.model_requests().await,
        1,
        "the repeat ran the skill again"
    );
    // The same id from another identity is its own message.
    let bobs = completed_task_id(&server.send(BOB, "retry-1", Some("echo-a")).await);
    assert_ne!(bobs, first);
    assert_eq!(server.model_requests().await, 2);
    // A new id runs again.
    let next = completed_task_id(&server.send(ALICE, "retry-2", Some("echo-a")).await);
    assert_ne!(next, first);
    assert_eq!(server.model_requests().await, 3);
}

#[tokio::test]
async fn with_state_db_a_message_sent_again_after_a_restart_runs_nothing() {
    let server = Server::start_with("[server]\nstate_db = \"state.db\"\n").await;
    let first = completed_task_id(&server.send(ALICE, "before-restart", Some("echo-a")).await);
    let server = server.restart().await;
    let again = server.send(ALICE, "before-restart", Some("echo-a")).await;
    assert_eq!(completed_task_id(&again), first, "{again}");
    assert_eq!(
        server.model_requests().await,
        0,
        "the repeat ran the skill again"
    );
}

#[tokio::test]
async fn the_console_history_shows_a_caller_only_runs_of_skills_its_grants_let_it_see() {
    let server = Server::start().await;
    completed_task_id(&server.send(CAROL, "c-1", Some("echo-b")).await);
    completed_task_id(&server.send(ALICE, "a-1", Some("echo-a")).await);
    let (status, runs) = server.console(ALICE, "/console/api/runs").await;
    assert_eq!(status, 200, "{runs}");
    let skills: Vec<&str> = runs["runs"]
        .as_array()
        .unwrap_or_else(|| panic!("{runs}"))
        .iter()
        .filter_map(|r| r["skill"].as_str())
        .collect();
    assert_eq!(skills, ["echo-a"], "{runs}");
    let (_, filtered) = server
        .console(ALICE, "/console/api/runs?skill=echo-b")
        .await;
    assert_eq!(filtered["runs"], json!([]), "{filtered}");
    // Read by id: carol's run is "not found" as an id never recorded is.
    let mut seen = Vec::new();
    for id in 1..=3 {
        let (status, run) = server
            .console(ALICE, &format!("/console/api/runs/{id}"))
            .await;
        assert!(!run.to_string().contains("echo-b"), "run {id}: {run}");
        if status == 200 {
            seen.push(run["run"]["skill"].as_str().unwrap_or_default().to_owned());
        } else {
            assert_eq!(status, 404, "run {id}: {run}");
        }
    }
    assert_eq!(seen, ["echo-a"]);
}
