//! Issue 48, NATS findings, through the `skillet` binary on a real `nats-server -js` (skipped
//! with a notice when it is missing, a failure under `CI`):
//!
//! - H10: a worker whose NATS server is gone (SIGKILLed) stops on SIGTERM and on SIGINT within
//!   its grace period, idle and with a call in flight (that call is left to redelivery).
//! - H8: no NATS credential and no caller key reaches the output at the highest verbosity:
//!   `skillet call --nats -vvv` (and under `RUST_LOG=trace`) with a canary token and a canary
//!   bearer key, a token written into the URL (a secret the process cannot know), and a worker
//!   at `RUST_LOG=trace` receiving those calls; nor does a caller's key sent to the HTTP doors
//!   (`/a2e`, `/mcp`) of `serve --http` at `RUST_LOG=trace`.

use crate::auth_support;
use crate::cli_support;
use crate::nats_support;
use crate::serve_support;

use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::process::Command;

use cli_support::{SKILLET, write_skill};
use nats_support::{NatsServer, Worker, client, echo_call, nats_toml};

/// The workers' grace period in these tests.
const GRACE_SECONDS: u64 = 2;

/// How long past its grace a worker may take to exit: the cancelled calls' own grace (two
/// seconds, the core's) and a little scheduling.
const MARGIN: Duration = Duration::from_secs(4);

/// The NATS server's token.
const CANARY_TOKEN: &str = "nats-token-CANARY-5b8e21";

/// The caller's API key (the worker's `[auth]` knows its hash only).
const CANARY_KEY: &str = "sk-bearer-CANARY-93d0c4";

/// `skillet serve --nats` over `skills` with `toml`, `verbosity` args and `env`, its stderr in
/// a file.
fn spawn_worker(
    server: &NatsServer,
    skills: &std::path::Path,
    toml: &str,
    verbosity: &[&str],
    env: &[(&str, &str)],
) -> Worker {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("skillet.toml"), toml).unwrap();
    let log = dir.path().join("worker.log");
    let mut command = Command::new(SKILLET);
    command
        .current_dir(dir.path())
        .args(["serve", "--nats", &server.url(), "--skills-dir"])
        .arg(skills)
        .args(verbosity)
        .env_remove("SKILLET_PROVIDER")
        .env_remove("SKILLET_CONFIG")
        .env_remove("RUST_LOG")
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(dir.path().join("worker.out")).unwrap())
        .stderr(std::fs::File::create(&log).unwrap())
        .kill_on_drop(true);
    for (name, value) in env {
        command.env(name, value);
    }
    let child = command.spawn().expect("spawn skillet serve --nats");
    Worker { child, log, dir }
}

/// Sends `signal` (`TERM`, `INT`) to `pid`.
fn send(signal: &str, pid: u32) {
    let status = std::process::Command::new("kill")
        .args([&format!("-{signal}"), &pid.to_string()])
        .status()
        .expect("kill");
    assert!(status.success());
}

/// Starts a worker, kills its server, then sends `signal`: how long the worker took to exit,
/// and its exit code.
async fn stop_without_server(signal: &str, in_flight: bool) -> (Duration, Option<i32>, String) {
    let case = format!("{signal}, in flight: {in_flight}");
    let mut server = NatsServer::start(&format!("security_nats_stop_{signal}_{in_flight}"))
        .await
        .expect("checked by the caller");
    let skills = tempfile::tempdir().unwrap();
    write_skill(skills.path(), "echo", 8000, "{json: {echo: \"hello\"}}");
    let toml = format!(
        "{}\n[server]\nshutdown_grace_seconds = {GRACE_SECONDS}\n",
        nats_toml(&server, "")
    );
    let mut worker = spawn_worker(&server, skills.path(), &toml, &["-v"], &[]);
    worker.ready().await;
    let mut call = None;
    if in_flight {
        let client = client(&nats_support::nats_config(&server, "")).await;
        call = Some(tokio::spawn(async move {
            client
                .call(&echo_call("in-flight"), None, Duration::from_secs(60))
                .await
        }));
        worker
            .wait_for_line("call started", Duration::from_secs(30))
            .await;
    }
    server.kill().await;
    // Let the worker notice: its pulls and the connection fail from now on.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let started = Instant::now();
    send(signal, worker.child.id().expect("the worker runs"));
    let limit = Duration::from_secs(GRACE_SECONDS) + MARGIN;
    let status = tokio::time::timeout(limit + Duration::from_secs(20), worker.child.wait()).await;
    let took = started.elapsed();
    let lines = worker.lines().join("\n");
    let status = match status {
        Ok(status) => status.unwrap(),
        Err(_) => {
            worker.kill9().await;
            panic!("{case}: the worker ignored SIG{signal} for {took:?}:\n{lines}");
        }
    };
    if let Some(call) = call {
        call.abort();
    }
    (took, status.code(), format!("{case}:\n{lines}"))
}

/// Runs the four H10 cases for `signal` (idle and in flight, concurrently).
async fn assert_stops_without_server(signal: &str) {
    if nats_support::nats_server_binary(&format!("security_nats_{signal}")).is_none() {
        return;
    }
    let (idle, busy) = tokio::join!(
        stop_without_server(signal, false),
        stop_without_server(signal, true)
    );
    let limit = Duration::from_secs(GRACE_SECONDS) + MARGIN;
    for (took, code, log) in [idle, busy] {
        eprintln!(
            "SIG{signal}: exited in {took:?} ({})",
            log.lines().next().unwrap_or("")
        );
        assert!(took <= limit, "took {took:?} (limit {limit:?}) — {log}");
        assert_eq!(code, Some(0), "exit code — {log}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_whose_nats_server_is_gone_stops_on_sigterm_within_its_grace() {
    assert_stops_without_server("TERM").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_whose_nats_server_is_gone_stops_on_sigint_within_its_grace() {
    assert_stops_without_server("INT").await;
}

/// `[auth]` with one API key: the canary's.
fn auth_toml() -> String {
    format!(
        "[auth]\n\n[auth.scopes.run-echo]\nskills = [\"echo\"]\n\n[[auth.api_keys]]\nid = \"caller\"\n\
         sha256 = \"{}\"\nscopes = [\"run-echo\"]\n",
        skillet_host::auth::sha256_hex(CANARY_KEY)
    )
}

/// `skillet call echo --nats URL --json` from `dir` with `verbosity` and `rust_log`.
async fn skillet_call(
    dir: &std::path::Path,
    url: &str,
    verbosity: &[&str],
    rust_log: Option<&str>,
) -> std::process::Output {
    let mut command = Command::new(SKILLET);
    command
        .args(verbosity)
        .args(["call", "echo", "--nats", url, "--json", "--args"])
        .arg(r#"{"text":"hi"}"#)
        .current_dir(dir)
        .env_remove("SKILLET_CONFIG")
        .env_remove("RUST_LOG")
        .env("NO_COLOR", "1")
        .env("TEST_NATS_TOKEN", CANARY_TOKEN)
        .env("TEST_NATS_BEARER", CANARY_KEY)
        .stdin(Stdio::null())
        .kill_on_drop(true);
    if let Some(rust_log) = rust_log {
        command.env("RUST_LOG", rust_log);
    }
    tokio::time::timeout(Duration::from_secs(90), command.output())
        .await
        .expect("the call ends within 90 s")
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nats_tokens_and_caller_keys_never_reach_the_output_at_the_highest_verbosity() {
    let config = format!("authorization {{\n  token: \"{CANARY_TOKEN}\"\n}}\n");
    let Some(server) = NatsServer::start_with("security_nats_secrets", &config).await else {
        return;
    };
    let skills = tempfile::tempdir().unwrap();
    write_skill(skills.path(), "echo", 0, "{json: {echo: \"hello\"}}");
    let worker_toml = format!(
        "{}{}",
        nats_toml(&server, "token_env = \"TEST_NATS_TOKEN\""),
        auth_toml()
    );
    let worker = spawn_worker(
        &server,
        skills.path(),
        &worker_toml,
        &[],
        &[("RUST_LOG", "trace"), ("TEST_NATS_TOKEN", CANARY_TOKEN)],
    );
    worker.ready().await;

    let caller = tempfile::tempdir().unwrap();
    std::fs::write(
        caller.path().join("skillet.toml"),
        nats_toml(
            &server,
            "token_env = \"TEST_NATS_TOKEN\"\nbearer_env = \"TEST_NATS_BEARER\"",
        ),
    )
    .unwrap();
    // The token in the URL instead of `token_env`: a secret no setting names.
    let url_with_token = format!("nats://{CANARY_TOKEN}@127.0.0.1:{}", server.port);
    let cases: [(&str, &[&str], Option<&str>); 4] = [
        ("-vvv", &["-vvv"], None),
        ("RUST_LOG=trace", &[], Some("trace")),
        (
            "RUST_LOG raising async_nats",
            &[],
            Some("trace,async_nats::connection=trace"),
        ),
        ("token in the URL, -vvv", &["-vvv"], None),
    ];
    for (i, (case, verbosity, rust_log)) in cases.into_iter().enumerate() {
        let url = if i == 3 {
            url_with_token.clone()
        } else {
            server.url()
        };
        let output = skillet_call(caller.path(), &url, verbosity, rust_log).await;
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "{case}: {stdout}\n{stderr}");
        let answer: Value = serde_json::from_str(stdout.trim())
            .unwrap_or_else(|e| panic!("{case}: not one JSON answer ({e}): {stdout}"));
        assert_eq!(answer["data"]["data"]["echo"], "hello", "{case}: {answer}");
        assert!(
            stderr.lines().count() > 5,
            "{case}: the high verbosity logs something:\n{stderr}"
        );
        for secret in [CANARY_TOKEN, CANARY_KEY] {
            assert!(
                !stdout.contains(secret) && !stderr.contains(secret),
                "{case}: {secret} leaked:\n{stderr}"
            );
        }
    }
    worker
        .wait_for_line("call answered", Duration::from_secs(10))
        .await;
    let log = worker.lines().join("\n");
    assert!(log.lines().count() > 20, "the worker logs at trace:\n{log}");
    for secret in [CANARY_TOKEN, CANARY_KEY] {
        assert!(
            !log.contains(secret),
            "{secret} in the worker's log:\n{log}"
        );
    }
}

/// The HTTP doors under `[auth]` at `RUST_LOG=trace`: a valid caller key (only its hash is
/// configured, so the redaction set does not know it) and a wrong one, on `/a2e` and `/mcp`,
/// reach no log line.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn caller_keys_sent_to_the_http_doors_never_reach_the_log_at_trace() {
    use auth_support::{CANARY, KEY_A, a2e_call, auth_config};

    let jwks = auth_support::Jwks::serve(vec![auth_support::SigningKey::new("k1").jwk()]).await;
    let skills = tempfile::tempdir().unwrap();
    write_skill(skills.path(), "echo-a", 0, "{json: {echo: \"a\"}}");
    let cwd = tempfile::tempdir().unwrap();
    std::fs::write(cwd.path().join("skillet.toml"), auth_config(&jwks.url, "")).unwrap();
    let server = serve_support::ServeHttp::new(SKILLET)
        .cwd(cwd.path())
        .env("RUST_LOG", "trace")
        .skills_dir(skills.path())
        .spawn()
        .await;
    let http = reqwest::Client::new();
    for (key, expected) in [(KEY_A, 200), (CANARY, 401)] {
        let a2e = http
            .post(format!("{}/a2e", server.base))
            .bearer_auth(key)
            .header("content-type", "application/json")
            .body(a2e_call("trace-1", "echo-a"))
            .send()
            .await
            .unwrap();
        assert_eq!(a2e.status().as_u16(), expected, "/a2e with {key}");
        let _ = a2e.text().await;
        let mcp = http
            .post(format!("{}/mcp", server.base))
            .bearer_auth(key)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(
                r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
            )
            .send()
            .await
            .unwrap();
        let _ = mcp.text().await;
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mut log = server.startup_lines.join("\n");
    log.push_str(&server.later_lines.lock().unwrap().join("\n"));
    assert!(log.contains("TRACE"), "the server logs at trace:\n{log}");
    for key in [KEY_A, CANARY] {
        assert!(!log.contains(key), "{key} in the log:\n{log}");
    }
}
