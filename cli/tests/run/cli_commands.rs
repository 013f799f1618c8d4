//! The `skillet` binary's commands, spawned for real: exit codes per outcome, `--json` output,
//! `validate` locations, `discover` and `card`. Every run uses the embedded mock-llm (no
//! provider configured) from an empty working directory.

use crate::cli_support;

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

use cli_support::*;

fn skillet(cwd: &Path, args: &[&str]) -> Output {
    skillet_in(cwd, args)
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn bundled() -> String {
    bundled_skills().display().to_string()
}

#[test]
fn run_on_the_embedded_mock_succeeds_prints_the_data_and_says_so_on_stderr() {
    let cwd = tempfile::tempdir().unwrap();
    let out = skillet(
        cwd.path(),
        &[
            "--skills-dir",
            &bundled(),
            "run",
            "summarize",
            "--args",
            r#"{"text":"Rust 1.0 shipped in May 2015."}"#,
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let data: Value = serde_json::from_str(&stdout(&out)).expect("stdout is the data as JSON");
    assert!(data["summary"].is_string());
    assert!(data["key_points"].is_array());
    assert!(
        stderr(&out).contains("embedded mock-llm"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn run_json_prints_one_skill_call_resp_line() {
    let cwd = tempfile::tempdir().unwrap();
    let args_file = cwd.path().join("args.json");
    std::fs::write(&args_file, r#"{"code":"fn main() {}","language":"rust"}"#).unwrap();
    let at_file = format!("@{}", args_file.display());
    let out = skillet(
        cwd.path(),
        &[
            "--skills-dir",
            &bundled(),
            "-q",
            "run",
            "code-review",
            "--args",
            &at_file,
            "--json",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert_eq!(text.lines().count(), 1, "{text}");
    let response: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(response["type"], "skill/call/resp");
    assert_eq!(response["name"], "code-review");
    assert_eq!(response["data"]["success"], true);
    assert!(!response["data"]["events"].as_array().unwrap().is_empty());
    assert!(
        stderr(&out).is_empty(),
        "-q keeps stderr quiet: {}",
        stderr(&out)
    );
}

#[test]
fn a_rejected_call_exits_3_with_the_code_on_stderr() {
    let cwd = tempfile::tempdir().unwrap();
    let unknown = skillet(
        cwd.path(),
        &["--skills-dir", &bundled(), "run", "no-such-skill"],
    );
    assert_eq!(unknown.status.code(), Some(3));
    assert!(
        stderr(&unknown).contains("unknown_skill"),
        "{}",
        stderr(&unknown)
    );

    let invalid = skillet(
        cwd.path(),
        &[
            "--skills-dir",
            &bundled(),
            "run",
            "summarize",
            "--args",
            r#"{"txt":"x"}"#,
            "--json",
        ],
    );
    assert_eq!(invalid.status.code(), Some(3));
    let response: Value = serde_json::from_str(&stdout(&invalid)).unwrap();
    assert_eq!(response["error"]["code"], "schema_violation");
}

#[test]
fn a_skill_that_never_produces_valid_output_exits_1() {
    let skills = tempfile::tempdir().unwrap();
    write_skill(skills.path(), "stubborn", 0, "{text: \"not json at all\"}");
    let out = skillet(
        skills.path(),
        &[
            "--skills-dir",
            &skills.path().display().to_string(),
            "run",
            "stubborn",
            "--args",
            r#"{"text":"x"}"#,
            "--json",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let response: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(response["data"]["success"], false);
    assert_eq!(response["data"]["error_code"], "schema_violation");
}

#[test]
fn a_skill_past_its_timeout_exits_4() {
    let skills = tempfile::tempdir().unwrap();
    write_skill(skills.path(), "sleepy", 5_000, "{json: {echo: \"late\"}}");
    let out = skillet(
        skills.path(),
        &[
            "--skills-dir",
            &skills.path().display().to_string(),
            "run",
            "sleepy",
            "--args",
            r#"{"text":"x"}"#,
            "--timeout",
            "1",
            "--json",
        ],
    );
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    let response: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(response["data"]["error_code"], "timeout");
}

#[test]
fn usage_errors_exit_2_and_setup_errors_exit_5() {
    let cwd = tempfile::tempdir().unwrap();
    let not_object = skillet(
        cwd.path(),
        &[
            "--skills-dir",
            &bundled(),
            "run",
            "summarize",
            "--args",
            "[1,2]",
        ],
    );
    assert_eq!(not_object.status.code(), Some(2));
    assert!(
        stderr(&not_object).contains("JSON object"),
        "{}",
        stderr(&not_object)
    );
    let unknown_flag = skillet(cwd.path(), &["run", "summarize", "--frobnicate"]);
    assert_eq!(unknown_flag.status.code(), Some(2));

    std::fs::write(
        cwd.path().join("bad.toml"),
        "[providers.x]\nkind = \"openai\"\nmodel = \"m\"\napi_key = \"sk-secret-canary\"\n",
    )
    .unwrap();
    let bad_config = skillet(
        cwd.path(),
        &[
            "--config",
            "bad.toml",
            "--skills-dir",
            &bundled(),
            "discover",
        ],
    );
    assert_eq!(bad_config.status.code(), Some(5));
    let message = stderr(&bad_config);
    assert!(message.contains("providers.x.api_key"), "{message}");
    assert!(
        !message.contains("sk-secret-canary"),
        "the key never appears: {message}"
    );

    let no_model = skillet(
        cwd.path(),
        &[
            "--skills-dir",
            &bundled(),
            "--provider",
            "ollama",
            "run",
            "summarize",
        ],
    );
    assert_eq!(no_model.status.code(), Some(5));
    assert!(
        stderr(&no_model).contains("--model"),
        "{}",
        stderr(&no_model)
    );

    let missing_dir = skillet(cwd.path(), &["--skills-dir", "/no/such/dir", "discover"]);
    assert_eq!(missing_dir.status.code(), Some(5));
}

#[test]
fn validate_prints_every_problem_with_its_location_and_exits_1() {
    let root = tempfile::tempdir().unwrap();
    // Two broken skills in one root: each is reported, with its location.
    for (dir, frontmatter) in [
        ("misnamed", "name: other-name\ndescription: d\n"),
        (
            "bogus-key",
            "name: bogus-key\ndescription: d\nmetadata:\n  a2a-bogus: x\n",
        ),
    ] {
        let dir = root.path().join(dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("SKILL.md"),
            format!("---\n{frontmatter}---\nbody\n"),
        )
        .unwrap();
    }
    let out = skillet(
        root.path(),
        &["validate", &root.path().display().to_string()],
    );
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    assert!(text.contains("SKILL.md:frontmatter.name:"), "{text}");
    assert!(text.contains("SKILL.md:metadata.a2a-bogus:"), "{text}");
    for line in text.lines() {
        let mut parts = line.splitn(3, ':');
        let (file, location, reason) = (parts.next(), parts.next(), parts.next());
        assert!(file.is_some_and(|f| f.ends_with("SKILL.md")), "{line}");
        assert!(location.is_some_and(|l| !l.is_empty()), "{line}");
        assert!(reason.is_some_and(|r| !r.trim().is_empty()), "{line}");
    }

    let good = skillet(root.path(), &["validate", &bundled()]);
    assert_eq!(
        good.status.code(),
        Some(0),
        "{}{}",
        stdout(&good),
        stderr(&good)
    );
}

#[test]
fn validate_strict_turns_warnings_into_failure() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("warned");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("SKILL.md"),
        "---\nname: warned\ndescription: d\nauthor: someone\n---\nbody\n",
    )
    .unwrap();
    let path = dir.display().to_string();
    let lenient = skillet(root.path(), &["validate", &path]);
    assert_eq!(lenient.status.code(), Some(0), "{}", stdout(&lenient));
    assert!(stdout(&lenient).contains("warning"), "{}", stdout(&lenient));
    let strict = skillet(root.path(), &["validate", "--strict", &path]);
    assert_eq!(strict.status.code(), Some(1));
}

#[test]
fn discover_filters_by_tag_and_json_is_a_discover_response() {
    let cwd = tempfile::tempdir().unwrap();
    let table = skillet(
        cwd.path(),
        &["--skills-dir", &bundled(), "discover", "--tag", "coding"],
    );
    assert_eq!(table.status.code(), Some(0));
    assert!(stdout(&table).contains("code-review"));
    assert!(!stdout(&table).contains("summarize"));
    let json = skillet(
        cwd.path(),
        &[
            "--skills-dir",
            &bundled(),
            "discover",
            "--category",
            "writing",
            "--json",
        ],
    );
    let response: Value = serde_json::from_str(&stdout(&json)).unwrap();
    assert_eq!(response["type"], "skill/discover/resp");
    let names: Vec<&str> = response["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["summarize"]);
}

#[test]
fn card_prints_a_valid_agent_card_with_tagged_skills() {
    let cwd = tempfile::tempdir().unwrap();
    let out = skillet(
        cwd.path(),
        &[
            "--skills-dir",
            &bundled(),
            "card",
            "--url",
            "https://skills.example/a2e",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let card: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let skills = card["skills"].as_array().unwrap();
    assert!(skills.len() >= 3);
    for skill in skills {
        assert!(!skill["tags"].as_array().unwrap().is_empty(), "{skill}");
        assert!(skill["id"].is_string() && skill["description"].is_string());
    }
    assert!(!card["defaultInputModes"].as_array().unwrap().is_empty());
    assert!(!card["defaultOutputModes"].as_array().unwrap().is_empty());
    assert_eq!(
        card["supportedInterfaces"][0]["url"],
        "https://skills.example/a2e"
    );
    assert_eq!(card["supportedInterfaces"][0]["protocolBinding"], "A2E");

    let empty = tempfile::tempdir().unwrap();
    let none = skillet(
        cwd.path(),
        &["--skills-dir", &empty.path().display().to_string(), "card"],
    );
    assert_eq!(
        none.status.code(),
        Some(1),
        "a card without skills is invalid"
    );
}

/// `serve --stdio` reads pipes on the event loop and anything else (a file) through tokio's
/// blocking `stdin`/`stdout`: both paths answer the same messages the same way.
#[test]
fn serve_stdio_answers_alike_from_a_pipe_a_file_and_into_a_file() {
    use skillet_protocol::{Message, SkillCallRequest, encode};
    use std::io::Write;
    use std::process::Stdio;

    let cwd = tempfile::tempdir().unwrap();
    let arguments: serde_json::Map<String, Value> = serde_json::from_str(
        &std::fs::read_to_string(bundled_skills().join("expense-report/examples/basic.json"))
            .unwrap(),
    )
    .unwrap();
    let mut input = String::new();
    for id in ["c1", "c2"] {
        let mut call = SkillCallRequest::new("expense-report", arguments.clone());
        call.id = id.to_owned();
        call.streaming = false;
        input.push_str(&encode(&Message::CallRequest(call)));
        input.push('\n');
    }
    input.push_str("not json\n");
    let input_file = cwd.path().join("requests.jsonl");
    std::fs::write(&input_file, &input).unwrap();
    let command = || {
        let mut command = Command::new(SKILLET);
        command
            .current_dir(cwd.path())
            .args(["--skills-dir", &bundled(), "serve", "--stdio"])
            .env_remove("SKILLET_PROVIDER")
            .env_remove("SKILLET_MODEL")
            .env_remove("SKILLET_CONFIG")
            .env_remove("RUST_LOG");
        command
    };
    // Answers as (type, req_id or error code), sorted: calls answer in any order.
    let answers = |text: &str| {
        let mut seen: Vec<(String, String)> = text
            .lines()
            .map(|line| {
                let message: Value = serde_json::from_str(line).unwrap();
                let ok = message["data"]["success"] == Value::Bool(true);
                let tag = match message["req_id"].as_str() {
                    Some(id) if !id.is_empty() => format!("{id} success={ok}"),
                    _ => message["error"]["code"].as_str().unwrap_or("?").to_owned(),
                };
                (message["type"].as_str().unwrap_or("?").to_owned(), tag)
            })
            .collect();
        seen.sort();
        seen
    };

    // The requests written into a piped stdin; stdout goes to `output`.
    let fed_through_a_pipe = |output: Stdio| {
        let mut child = command()
            .stdin(Stdio::piped())
            .stdout(output)
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
        child.wait_with_output().unwrap()
    };

    // stdin a pipe, stdout a pipe: both on the event loop.
    let piped = fed_through_a_pipe(Stdio::piped());
    assert_eq!(piped.status.code(), Some(0), "{}", stderr(&piped));
    let expected = answers(&stdout(&piped));
    assert_eq!(expected.len(), 3, "{expected:?}");
    assert!(
        expected
            .iter()
            .any(|(t, tag)| t == "skill/call/resp" && tag == "c1 success=true")
    );
    assert!(
        expected
            .iter()
            .any(|(t, tag)| t == "skill/call/resp" && tag == "c2 success=true")
    );

    // stdin a regular file: the blocking fallback; stdout still a pipe.
    let from_file = command()
        .stdin(std::fs::File::open(&input_file).unwrap())
        .output()
        .unwrap();
    assert_eq!(from_file.status.code(), Some(0), "{}", stderr(&from_file));
    assert_eq!(answers(&stdout(&from_file)), expected);

    // stdout a regular file: the blocking fallback for writing.
    let output_file = cwd.path().join("answers.jsonl");
    let into_file = fed_through_a_pipe(std::fs::File::create(&output_file).unwrap().into());
    assert_eq!(into_file.status.code(), Some(0), "{}", stderr(&into_file));
    assert_eq!(
        answers(&std::fs::read_to_string(&output_file).unwrap()),
        expected
    );
}

/// The stdio transports run on one async worker, every other command on one per CPU, unless
/// `[server] worker_threads` (first) or `TOKIO_WORKER_THREADS` says otherwise; the runtime
/// says its size at debug level. A stdio server with no input ends at once.
#[test]
fn the_stdio_transports_run_on_one_worker_unless_configured() {
    let cwd = tempfile::tempdir().unwrap();
    std::fs::write(
        cwd.path().join("three.toml"),
        "[server]\nworker_threads = 3\n",
    )
    .unwrap();
    let workers = |env: Option<&str>, args: &[&str]| {
        let mut command = Command::new(SKILLET);
        command
            .current_dir(cwd.path())
            .args(["--skills-dir", &bundled(), "-vv"])
            .args(args)
            .env_remove("SKILLET_CONFIG")
            .env_remove("RUST_LOG")
            .env_remove("TOKIO_WORKER_THREADS");
        if let Some(n) = env {
            command.env("TOKIO_WORKER_THREADS", n);
        }
        // `serve --mcp` with no input fails its initialize (exit 5): only the runtime line counts.
        let out = command.output().expect("run skillet");
        let text = stderr(&out);
        let line = text
            .lines()
            .find(|l| l.contains("async runtime started"))
            .unwrap_or_else(|| panic!("no runtime line in {text}"));
        line.split("worker_threads=")
            .nth(1)
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|n| n.parse::<usize>().ok())
            .unwrap_or_else(|| panic!("no count in {line}"))
    };
    let per_cpu = std::thread::available_parallelism().unwrap().get();
    assert_eq!(workers(None, &["serve", "--stdio"]), 1);
    assert_eq!(workers(None, &["serve", "--mcp"]), 1);
    assert_eq!(workers(None, &["discover"]), per_cpu);
    assert_eq!(workers(Some("2"), &["serve", "--stdio"]), 2);
    let configured = ["--config", "three.toml", "serve", "--stdio"];
    assert_eq!(workers(Some("2"), &configured), 3);
    assert_eq!(workers(None, &["--config", "three.toml", "discover"]), 3);

    // A variable tokio could not use is a setup error naming it, not tokio's panic.
    for bad in ["abc", "0"] {
        let out = Command::new(SKILLET)
            .current_dir(cwd.path())
            .args(["--skills-dir", &bundled(), "discover"])
            .env_remove("SKILLET_CONFIG")
            .env("TOKIO_WORKER_THREADS", bad)
            .output()
            .expect("run skillet");
        let text = stderr(&out);
        assert_eq!(out.status.code(), Some(5), "{bad}: {text}");
        assert!(text.contains("TOKIO_WORKER_THREADS"), "{bad}: {text}");
        assert!(!text.contains("panicked"), "{bad}: {text}");
    }
}
