//! `[auth]` on a real `skillet serve --nats` worker against a real `nats-server`, driven by
//! nats-py (the official Python client, `nats_support/auth_calls.py`): each call's
//! `Authorization: Bearer` header is verified like an HTTP request's —
//! - no header, a wrong key (canary), a revoked key: `unauthorized` on the reply subject,
//!   nothing run, nothing stored;
//! - a key or a JWT (the test's own issuer, `auth_support`) runs the skills its scopes grant;
//!   another skill is `unauthorized`;
//! - the per-identity limit answers a retryable `runtime_error`;
//! - the audit file names the identities; the canary is in no log line and no answer;
//! - a call id belongs to the first identity that sent it: another identity reusing it while
//!   the call runs, or after it was answered, is refused `invalid_message` and given nothing;
//! - `skillet call --nats` sends the key its `[nats] bearer_env` names.
//!
//! `nats-server` missing, or no Python with nats-py: skipped with a notice (a failure under `CI`).

use crate::auth_support;
use crate::cli_support;
use crate::nats_support;

use std::time::Duration;

use serde_json::{Value, json};

use auth_support::{CANARY, Jwks, KEY_A, KEY_LIMITED, KEY_REVOKED, SigningKey, claims};
use nats_support::{NatsServer, Worker, nats_toml};

fn python_with_nats() -> Option<std::path::PathBuf> {
    let python = match std::env::var_os("SKILLET_PYTHON") {
        Some(p) => std::path::PathBuf::from(p),
        None => std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../.venv/bin/python"),
    };
    let ok = std::process::Command::new(&python)
        .args(["-c", "import nats"])
        .status()
        .is_ok_and(|s| s.success());
    if ok {
        return Some(python);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "CI is set but no Python with nats-py: set SKILLET_PYTHON"
    );
    eprintln!("\n==== SKIPPED nats auth test: no $SKILLET_PYTHON / .venv with nats-py ====\n");
    None
}

fn auth_toml(jwks_url: &str) -> String {
    let sha = skillet_host::auth::sha256_hex;
    format!(
        r#"
[auth]
audit_file = "audit.jsonl"

[auth.scopes.run-echo]
skills = ["echo"]

[[auth.api_keys]]
id = "key-a"
sha256 = "{a}"
scopes = ["run-echo"]

[[auth.api_keys]]
id = "key-revoked"
sha256 = "{revoked}"
scopes = ["run-echo"]
revoked = true

[[auth.api_keys]]
id = "key-limited"
sha256 = "{limited}"
scopes = ["run-echo"]
calls_per_minute = 1

[[auth.jwt]]
issuer = "{issuer}"
jwks_uri = "{jwks_url}"
audience = "{audience}"
"#,
        a = sha(KEY_A),
        revoked = sha(KEY_REVOKED),
        limited = sha(KEY_LIMITED),
        issuer = auth_support::ISSUER,
        audience = auth_support::AUDIENCE,
    )
}

fn code(answer: &Value) -> &str {
    answer["error"]["code"].as_str().unwrap_or("")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_nats_call_runs_only_as_the_identity_its_authorization_header_proves() {
    let Some(python) = python_with_nats() else {
        return;
    };
    let Some(server) = NatsServer::start("nats_auth").await else {
        return;
    };
    let signer = SigningKey::new("k1");
    let jwks = Jwks::serve(vec![signer.jwk()]).await;
    let skills = tempfile::tempdir().unwrap();
    cli_support::write_skill(skills.path(), "echo", 0, "{json: {echo: \"hello\"}}");
    cli_support::write_skill(skills.path(), "other", 0, "{json: {echo: \"other\"}}");
    let toml = format!("{}{}", nats_toml(&server, ""), auth_toml(&jwks.url));
    let worker = Worker::spawn(&server, skills.path(), &toml);
    worker.ready().await;

    let token = signer.sign(&claims("alice", "run-echo"));
    let bearer = |secret: &str| Value::String(format!("Bearer {secret}"));
    let cases = json!([
        {"id": "no-header", "skill": "echo", "authorization": null},
        {"id": "wrong-key", "skill": "echo", "authorization": bearer(CANARY)},
        {"id": "revoked-key", "skill": "echo", "authorization": bearer(KEY_REVOKED)},
        {"id": "key-a", "skill": "echo", "authorization": bearer(KEY_A)},
        // The same id from another identity (a fresh Nats-Msg-Id, so JetStream does not drop
        // it as a duplicate): neither run nor given key-a's stored answer; key-a itself is.
        {"id": "key-a", "as": "jwt-reuses-key-a", "msg_id": "key-a-2", "skill": "echo",
         "authorization": bearer(&token)},
        {"id": "key-a", "as": "key-a-again", "msg_id": "key-a-3", "skill": "echo",
         "authorization": bearer(KEY_A)},
        {"id": "key-a-other", "skill": "other", "authorization": bearer(KEY_A)},
        {"id": "jwt", "skill": "echo", "authorization": bearer(&token)},
        {"id": "limited-1", "skill": "echo", "authorization": bearer(KEY_LIMITED)},
        {"id": "limited-2", "skill": "echo", "authorization": bearer(KEY_LIMITED)},
    ]);
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/nats_support/auth_calls.py");
    let output = tokio::time::timeout(
        Duration::from_secs(120),
        tokio::process::Command::new(python)
            .arg(script)
            .arg(server.url())
            .arg(cases.to_string())
            .output(),
    )
    .await
    .expect("the script ends within 120 s")
    .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let answers: Value = serde_json::from_slice(&output.stdout).unwrap();

    for id in ["no-header", "wrong-key", "revoked-key", "key-a-other"] {
        let answer = &answers[id];
        assert_eq!(answer["type"], "skill/call/resp", "{id}: {answer}");
        assert_eq!(answer["req_id"], id, "{answer}");
        assert_eq!(code(answer), "unauthorized", "{id}: {answer}");
        assert!(answer["data"].is_null(), "{id}: nothing ran: {answer}");
    }
    for id in ["key-a", "jwt", "limited-1"] {
        let answer = &answers[id];
        assert_eq!(answer["data"]["success"], true, "{id}: {answer}");
        assert_eq!(answer["data"]["data"]["echo"], "hello", "{id}: {answer}");
    }
    let reused = &answers["jwt-reuses-key-a"];
    assert_eq!(code(reused), "invalid_message", "{reused}");
    assert!(
        reused["data"].is_null(),
        "another identity's answer given: {reused}"
    );
    assert_eq!(answers["key-a-again"]["data"]["data"]["echo"], "hello");
    let limited = &answers["limited-2"];
    assert_eq!(code(limited), "runtime_error", "{limited}");
    assert_eq!(limited["error"]["retryable"], true, "{limited}");

    // Refusals are not stored: the results bucket has only the calls that ran.
    let js = async_nats::jetstream::new(async_nats::connect(server.url()).await.unwrap());
    let bucket = js.get_key_value("skillet-results").await.unwrap();
    for id in ["no-header", "wrong-key", "key-a-other", "limited-2"] {
        assert!(bucket.get(id).await.unwrap().is_none(), "{id} was stored");
    }
    assert!(bucket.get("key-a").await.unwrap().is_some());

    let audit_path = worker.dir.path().join("audit.jsonl");
    let mut audit = String::new();
    for _ in 0..200 {
        audit = std::fs::read_to_string(&audit_path).unwrap_or_default();
        if audit.lines().count() >= 7 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let records: Vec<Value> = audit
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let outcome = |req_id: &str| {
        records
            .iter()
            .filter(|r| r["req_id"] == req_id)
            .map(|r| {
                format!(
                    "{} {}",
                    r["identity"].as_str().unwrap(),
                    r["outcome"].as_str().unwrap()
                )
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(outcome("key-a")[0], "key-a ok", "{audit}");
    assert_eq!(
        outcome("key-a-other"),
        ["key-a refused:unauthorized"],
        "{audit}"
    );
    assert_eq!(
        outcome("jwt"),
        [format!("{}#alice ok", auth_support::ISSUER)],
        "{audit}"
    );
    assert_eq!(
        outcome("key-a")
            .iter()
            .filter(|o| o.ends_with("refused:id_taken"))
            .collect::<Vec<_>>(),
        [&format!("{}#alice refused:id_taken", auth_support::ISSUER)],
        "{audit}"
    );
    assert_eq!(
        outcome("revoked-key"),
        ["key-revoked refused:revoked_key"],
        "{audit}"
    );
    assert_eq!(
        outcome("limited-2"),
        ["key-limited refused:rate_limited"],
        "{audit}"
    );

    // Discover shows each sender only what it may run: `echo` to key-a (whose scope names
    // it), nothing to a sender without a credential or with a wrong one.
    let nats = async_nats::connect(server.url()).await.unwrap();
    let discover = |authorization: Option<String>| {
        let nats = nats.clone();
        async move {
            let mut headers = async_nats::HeaderMap::new();
            if let Some(value) = authorization {
                headers.insert("Authorization", value.as_str());
            }
            let body = json!({"type": "skill/discover/req", "id": "d1", "version": "1.0",
                              "ts": 1.0});
            let reply = nats
                .request_with_headers("skillet.discover", headers, body.to_string().into())
                .await
                .unwrap();
            let answer: Value = serde_json::from_slice(&reply.payload).unwrap();
            assert_eq!(answer["type"], "skill/discover/resp", "{answer}");
            answer["skills"]
                .as_array()
                .unwrap_or_else(|| panic!("{answer}"))
                .iter()
                .map(|s| s["name"].as_str().unwrap().to_owned())
                .collect::<Vec<_>>()
        }
    };
    assert_eq!(discover(Some(format!("Bearer {KEY_A}"))).await, ["echo"]);
    assert!(discover(None).await.is_empty());
    assert!(discover(Some(format!("Bearer {CANARY}"))).await.is_empty());

    let log = worker.lines().join("\n");
    for secret in [CANARY, KEY_A, KEY_REVOKED, KEY_LIMITED, token.as_str()] {
        assert!(!log.contains(secret), "a secret reached the log:\n{log}");
        assert!(!audit.contains(secret), "a secret reached the audit file");
        assert!(
            !answers.to_string().contains(secret),
            "a secret in an answer"
        );
    }
}

/// `skillet call --nats` in `dir` (its `skillet.toml` names `bearer_env = "TEST_NATS_BEARER"`)
/// with that variable set to `bearer` (or unset).
async fn skillet_call(
    dir: &std::path::Path,
    url: &str,
    bearer: Option<&str>,
) -> std::process::Output {
    let mut command = tokio::process::Command::new(cli_support::SKILLET);
    command
        .args([
            "call",
            "echo",
            "--nats",
            url,
            "--json",
            "--args",
            r#"{"text":"hi"}"#,
        ])
        .current_dir(dir)
        .env_remove("SKILLET_CONFIG")
        .env_remove("TEST_NATS_BEARER");
    if let Some(bearer) = bearer {
        command.env("TEST_NATS_BEARER", bearer);
    }
    tokio::time::timeout(Duration::from_secs(90), command.output())
        .await
        .expect("the call ends within 90 s")
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn skillet_call_over_nats_sends_the_key_its_bearer_env_names() {
    let Some(server) = NatsServer::start("nats_auth_call").await else {
        return;
    };
    let jwks = Jwks::serve(vec![SigningKey::new("k1").jwk()]).await;
    let skills = tempfile::tempdir().unwrap();
    cli_support::write_skill(skills.path(), "echo", 0, "{json: {echo: \"hello\"}}");
    let toml = format!("{}{}", nats_toml(&server, ""), auth_toml(&jwks.url));
    let worker = Worker::spawn(&server, skills.path(), &toml);
    worker.ready().await;
    let caller = tempfile::tempdir().unwrap();
    std::fs::write(
        caller.path().join("skillet.toml"),
        nats_toml(&server, "bearer_env = \"TEST_NATS_BEARER\""),
    )
    .unwrap();

    let ok = skillet_call(caller.path(), &server.url(), Some(KEY_A)).await;
    assert!(ok.status.success(), "{ok:?}");
    let answer: Value = serde_json::from_slice(&ok.stdout).unwrap();
    assert_eq!(answer["data"]["data"]["echo"], "hello", "{answer}");

    let wrong = skillet_call(caller.path(), &server.url(), Some(CANARY)).await;
    assert!(!wrong.status.success(), "{wrong:?}");
    let out = format!(
        "{}{}",
        String::from_utf8_lossy(&wrong.stdout),
        String::from_utf8_lossy(&wrong.stderr)
    );
    assert!(out.contains("unauthorized"), "{out}");
    assert!(!out.contains(CANARY), "{out}");

    let unset = skillet_call(caller.path(), &server.url(), None).await;
    assert!(!unset.status.success());
    let stderr = String::from_utf8_lossy(&unset.stderr);
    assert!(stderr.contains("TEST_NATS_BEARER"), "{stderr}");
    assert!(!worker.lines().join("\n").contains(CANARY));
}

/// Publishes one call on JetStream as `authorization` and returns its answer (the reply
/// subject's first message).
async fn publish_call(
    nats: &async_nats::Client,
    id: &str,
    msg_id: &str,
    authorization: &str,
) -> async_nats::Subscriber {
    let inbox = nats.new_inbox();
    let answers = nats.subscribe(inbox.clone()).await.unwrap();
    let mut headers = async_nats::HeaderMap::new();
    headers.insert("Authorization", authorization);
    headers.insert("Nats-Msg-Id", msg_id);
    headers.insert("Skillet-Reply", inbox.as_str());
    let call = json!({"type": "skill/call/req", "id": id, "name": "echo",
                      "arguments": {"text": "hello"}});
    async_nats::jetstream::new(nats.clone())
        .publish_with_headers("skillet.call.echo", headers, call.to_string().into())
        .await
        .unwrap()
        .await
        .unwrap();
    answers
}

async fn answer_of(mut answers: async_nats::Subscriber) -> Value {
    use futures::StreamExt;
    let message = tokio::time::timeout(Duration::from_secs(30), answers.next())
        .await
        .expect("answered within 30 s")
        .unwrap();
    serde_json::from_slice(&message.payload).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_id_in_flight_belongs_to_the_first_identity_that_sent_it() {
    let Some(server) = NatsServer::start("nats_auth_claim").await else {
        return;
    };
    let signer = SigningKey::new("k1");
    let jwks = Jwks::serve(vec![signer.jwk()]).await;
    let skills = tempfile::tempdir().unwrap();
    cli_support::write_skill(skills.path(), "echo", 1500, "{json: {echo: \"hello\"}}");
    let toml = format!("{}{}", nats_toml(&server, ""), auth_toml(&jwks.url));
    let worker = Worker::spawn(&server, skills.path(), &toml);
    worker.ready().await;
    let nats = async_nats::connect(server.url()).await.unwrap();
    let token = signer.sign(&claims("mallory", "run-echo"));

    let first = publish_call(&nats, "in-flight", "m1", &format!("Bearer {KEY_A}")).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let second = publish_call(&nats, "in-flight", "m2", &format!("Bearer {token}")).await;
    let refused = answer_of(second).await;
    assert_eq!(code(&refused), "invalid_message", "{refused}");
    assert!(refused["data"].is_null(), "{refused}");
    let answered = answer_of(first).await;
    assert_eq!(answered["data"]["data"]["echo"], "hello", "{answered}");
}
