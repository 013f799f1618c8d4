//! The skill author's first hour through the real `skillet` binary (issue 49): what a person
//! writing a skill sees when the model's answer is repaired, and when their schema has a typo.
//! Every run uses the embedded mock-llm from an empty working directory.
//!
//! Not here: hot reload (`hot_reload.rs`), the console (`console_*.rs`).

use crate::cli_support;

use std::path::Path;
use std::process::{Command, Output};

use cli_support::*;

fn skillet(cwd: &Path, args: &[&str]) -> Output {
    Command::new(SKILLET)
        .current_dir(cwd)
        .args(args)
        .env_remove("SKILLET_PROVIDER")
        .env_remove("SKILLET_MODEL")
        .env_remove("SKILLET_CONFIG")
        .env_remove("RUST_LOG")
        .env("NO_COLOR", "1")
        .output()
        .expect("run skillet")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn a_repair_turn_says_which_value_failed_and_why() {
    let cwd = tempfile::tempdir().unwrap();
    let skills = bundled_skills().display().to_string();
    let example = bundled_skills().join("code-review/examples/basic.json");
    let out = skillet(
        cwd.path(),
        &[
            "--skills-dir",
            &skills,
            "run",
            "code-review",
            "--args",
            &format!("@{}", example.display()),
            "-v",
        ],
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    // The scenario's first answer gives an unknown severity; the line names it.
    let repair = stderr
        .lines()
        .find(|line| line.contains("final answer rejected"))
        .unwrap_or_else(|| panic!("no repair line in:\n{stderr}"));
    assert!(
        repair.contains("1 problem: /issues/0/severity:"),
        "{repair}"
    );
    assert!(repair.contains("\"critical\""), "{repair}");
    assert!(
        repair.ends_with("asking the model to repair it"),
        "{repair}"
    );
}

#[test]
fn a_schema_typo_beside_additional_properties_false_is_blamed_on_the_typo() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("notes");
    std::fs::create_dir_all(dir.join("assets")).unwrap();
    std::fs::write(
        dir.join("SKILL.md"),
        "---\nname: notes\ndescription: Takes notes.\nmetadata:\n  a2a-output-schema: \
         assets/output.schema.json\n---\nTake notes.\n",
    )
    .unwrap();
    // What `skillet init` scaffolds, with one typo.
    std::fs::write(
        dir.join("assets/output.schema.json"),
        r#"{"type": "object",
            "properties": {"title": {"type": "string", "minLenght": 1}},
            "required": ["title"],
            "additionalProperties": false}"#,
    )
    .unwrap();
    let out = skillet(
        root.path(),
        &["validate", &root.path().display().to_string()],
    );
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}{}", text(&out.stderr));
    assert!(stdout.contains("/properties/title/minLenght"), "{stdout}");
    assert!(stdout.contains("did you mean `minLength`?"), "{stdout}");
    assert!(
        !stdout.contains("keyword `additionalProperties`"),
        "a valid keyword is never blamed: {stdout}"
    );
}

/// A plain skill (no schemas) whose mock model copies the input file `notes.txt` into
/// `out/summary.md` with `write_file` after reading it.
fn file_skill(root: &Path) {
    let dir = root.join("notes-to-summary");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("SKILL.md"),
        "---\nname: notes-to-summary\ndescription: Turns a notes file into a summary file.\n---\n\
         Summarize the notes file into summary.md.\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("mock-scenario.yaml"),
        r##"rules:
  - name: read
    when: { system_contains: "Summarize the notes file", turn: 1 }
    reply:
      tool_calls:
        - name: read_file
          arguments: { path: notes.txt }
  - name: write
    when: { system_contains: "Summarize the notes file", turn: 2, tool_result_contains: "ship it" }
    reply:
      tool_calls:
        - name: write_file
          arguments: { path: out/summary.md, content: "# Summary\n\nship it\n" }
  - name: done
    when: { system_contains: "Summarize the notes file", turn: 3 }
    reply:
      text: "summary.md is attached."
"##,
    )
    .unwrap();
}

#[test]
fn a_plain_skill_takes_its_prompt_and_input_file_and_its_produced_file_is_written() {
    let root = tempfile::tempdir().unwrap();
    file_skill(root.path());
    let skills = root.path().display().to_string();
    let cwd = tempfile::tempdir().unwrap();
    std::fs::write(cwd.path().join("notes.txt"), "meeting: ship it\n").unwrap();
    let run = |extra: &[&str]| {
        let mut args = vec!["--skills-dir", &skills, "run", "notes-to-summary"];
        args.extend_from_slice(extra);
        skillet(cwd.path(), &args)
    };
    // No request: refused before a model starts, with the usage.
    let out = run(&[]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("schema_violation"), "{stderr}");
    assert!(
        stderr.contains("skillet run notes-to-summary \""),
        "{stderr}"
    );

    let out = run(&[
        "summarize my notes",
        "--file",
        "notes.txt",
        "--out",
        "results",
    ]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let written = cwd.path().join("results/out/summary.md");
    assert_eq!(
        std::fs::read_to_string(&written).unwrap(),
        "# Summary\n\nship it\n"
    );
    assert!(stderr.contains("wrote results/out/summary.md"), "{stderr}");
    // The model's streamed text is not a file.
    assert!(!cwd.path().join("results/turn-1").exists());

    // Again: the file exists and is kept without --force.
    std::fs::write(&written, "mine").unwrap();
    let out = run(&[
        "--prompt",
        "summarize my notes",
        "--file",
        "notes.txt",
        "--out",
        "results",
    ]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("use --force"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&written).unwrap(), "mine");
    let out = run(&[
        "summarize my notes",
        "--file",
        "notes.txt",
        "--out",
        "results",
        "--force",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        std::fs::read_to_string(&written).unwrap(),
        "# Summary\n\nship it\n"
    );
}

/// `skillet run summarize` against an OpenAI-compatible server at `base_url`, keyed by the
/// standard `OPENAI_API_KEY`.
fn run_summarize_at(base_url: &str) -> Output {
    let cwd = tempfile::tempdir().unwrap();
    let skills = bundled_skills().display().to_string();
    let example = bundled_skills().join("summarize/examples/basic.json");
    Command::new(SKILLET)
        .current_dir(cwd.path())
        .args(["--skills-dir", &skills, "run", "summarize", "--args"])
        .arg(format!("@{}", example.display()))
        .args(["--provider", "openai", "--model", "gpt-test"])
        .env_remove("SKILLET_PROVIDER")
        .env_remove("SKILLET_MODEL")
        .env_remove("SKILLET_CONFIG")
        .env("OPENAI_BASE_URL", base_url)
        .env("OPENAI_API_KEY", "canary-key-4f1c")
        .env("NO_COLOR", "1")
        .output()
        .expect("run skillet")
}

#[test]
fn a_provider_that_is_down_is_a_setup_error_naming_its_url_and_variable() {
    // A port nothing listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/v1");
    let out = run_summarize_at(&url);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(5), "{stderr}");
    assert!(stderr.contains("failed (runtime_error)"), "{stderr}");
    assert!(
        stderr.contains(&format!("nothing answered at {url}")),
        "{stderr}"
    );
    assert!(stderr.contains("`OPENAI_BASE_URL`"), "{stderr}");
}

#[test]
fn a_refused_key_names_the_variable_it_came_from_and_never_the_key() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        use std::io::{Read, Write};
        for stream in listener.incoming().take(8) {
            let Ok(mut stream) = stream else { continue };
            let mut buffer = [0u8; 65536];
            let _ = stream.read(&mut buffer);
            let body = r#"{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}"#;
            let _ = write!(
                stream,
                "HTTP/1.1 401 Unauthorized\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    let out = run_summarize_at(&url);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(5), "{stderr}");
    assert!(
        stderr.contains("the key came from `OPENAI_API_KEY`"),
        "{stderr}"
    );
    assert!(!stderr.contains("canary-key-4f1c"), "{stderr}");
}

#[test]
fn validate_fails_a_skill_that_run_would_refuse() {
    let root = tempfile::tempdir().unwrap();
    let needs_tool = root.path().join("needs-tool");
    std::fs::create_dir_all(&needs_tool).unwrap();
    std::fs::write(
        needs_tool.join("SKILL.md"),
        "---\nname: needs-tool\ndescription: Uses a tool the host lacks.\nmetadata:\n  \
         a2e-tools: '[\"weather_lookup\"]'\n---\nLook up the weather.\n",
    )
    .unwrap();
    let broken_mock = root.path().join("broken-mock");
    std::fs::create_dir_all(&broken_mock).unwrap();
    std::fs::write(
        broken_mock.join("SKILL.md"),
        "---\nname: broken-mock\ndescription: Its offline scenario is broken.\n---\nDo it.\n",
    )
    .unwrap();
    std::fs::write(
        broken_mock.join("mock-scenario.yaml"),
        "rules:\n  - when: [\n",
    )
    .unwrap();
    let out = skillet(
        root.path(),
        &["validate", &root.path().display().to_string()],
    );
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}{}", text(&out.stderr));
    assert!(
        stdout.contains("tool `weather_lookup` is not offered by this host"),
        "{stdout}"
    );
    assert!(stdout.contains("[tools.weather_lookup]"), "{stdout}");
    assert!(stdout.contains("mock-scenario.yaml:scenario:"), "{stdout}");
}

#[test]
fn the_transcript_shows_the_repair_message_with_the_violation_and_the_second_answer() {
    let cwd = tempfile::tempdir().unwrap();
    let skills = bundled_skills().display().to_string();
    let example = format!(
        "@{}",
        bundled_skills()
            .join("code-review/examples/basic.json")
            .display()
    );
    let args = [
        "--skills-dir",
        &skills,
        "run",
        "code-review",
        "--args",
        &example,
    ];
    let mut with_transcript = args.to_vec();
    with_transcript.push("--transcript");
    let out = skillet(cwd.path(), &with_transcript);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let transcript = &stderr[stderr.find("── transcript ──").expect(&stderr)..];
    assert!(
        transcript.contains("You are a senior engineer"),
        "{transcript}"
    );
    let turn2 = &transcript[transcript.find("── turn 2").expect(transcript)..];
    let turn1 = &transcript[..transcript.find("── turn 2").unwrap()];
    assert!(
        turn1.contains("! rejected: /issues/0/severity: \"critical\""),
        "{turn1}"
    );
    assert!(
        turn2.contains("Your previous answer does not match"),
        "{turn2}"
    );
    assert!(turn2.contains("- /issues/0/severity:"), "{turn2}");
    assert!(turn2.contains("\"severity\":\"error\""), "{turn2}");

    // --json: the same transcript as data, under data.transcript.
    let mut json = with_transcript.clone();
    json.push("--json");
    let out = skillet(cwd.path(), &json);
    let response: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let turns = response["data"]["transcript"]["turns"].as_array().unwrap();
    assert_eq!(turns.len(), 2, "{response}");
    assert_eq!(turns[1]["sent"][0]["role"], "user");
    assert!(
        turns[0]["violations"][0]
            .as_str()
            .unwrap()
            .contains("severity")
    );
    // Without --transcript nothing is recorded.
    let mut plain = args.to_vec();
    plain.push("--json");
    let out = skillet(cwd.path(), &plain);
    let response: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(response["data"].get("transcript").is_none(), "{response}");
}

/// A plain `echo` skill under `root` and a `skillet.toml` whose one provider is `server`
/// (`openai-compatible`, plus the provider lines `extra`): the skills dir and config paths.
fn echo_skill_on(root: &Path, server: &mock_llm::MockServer, extra: &str) -> (String, String) {
    let dir = root.join("echo");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("SKILL.md"),
        "---\nname: echo\ndescription: Answers anything.\n---\nAnswer briefly.\n",
    )
    .unwrap();
    let config = root.join("skillet.toml");
    let url = server.base_url();
    std::fs::write(
        &config,
        format!(
            "[providers.main]\nkind = \"openai-compatible\"\nmodel = \"m\"\nbase_url = \"{url}/v1\"\n{extra}"
        ),
    )
    .unwrap();
    (root.display().to_string(), config.display().to_string())
}

// Multi-threaded: the mock server runs on this runtime while the test waits for the binary.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_key_in_the_request_never_appears_in_its_transcript() {
    use mock_llm::{MockConfig, MockServer, Scenario};
    const CANARY: &str = "sk-canary-transcript-7d1e0c";
    let scenario =
        Scenario::from_yaml_str("rules:\n  - reply:\n      text: \"that is not for me to say\"\n")
            .unwrap();
    let server = MockServer::start(MockConfig::default().with_scenario(scenario))
        .await
        .unwrap();
    let root = tempfile::tempdir().unwrap();
    let (skills, config) = echo_skill_on(root.path(), &server, "api_key_env = \"CANARY_KEY\"\n");
    for extra in [
        &["--transcript"][..],
        &["--transcript", "-vvv"],
        &["--transcript", "--json"],
    ] {
        let prompt = format!("is {CANARY} my key?");
        let mut args = vec!["--config", &config, "--skills-dir", &skills];
        args.extend(["run", "echo", &prompt]);
        args.extend_from_slice(extra);
        let out = Command::new(SKILLET)
            .current_dir(root.path())
            .args(&args)
            .env("CANARY_KEY", CANARY)
            .env_remove("SKILLET_PROVIDER")
            .env_remove("SKILLET_CONFIG")
            .env_remove("RUST_LOG")
            .output()
            .unwrap();
        let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
        assert_eq!(out.status.code(), Some(0), "{extra:?}: {stderr}");
        let said = format!("{stdout}\n{stderr}");
        assert!(said.contains("[REDACTED]"), "{extra:?}: {said}");
        assert!(!said.contains(CANARY), "{extra:?} leaked:\n{said}");
    }
}

#[test]
fn an_interrupted_run_says_cancelled_not_failed() {
    use std::io::BufRead;
    let root = tempfile::tempdir().unwrap();
    write_skill(root.path(), "slow", 20_000, "{json: {echo: \"hello\"}}");
    let mut child = Command::new(SKILLET)
        .current_dir(root.path())
        .args(["--skills-dir", &root.path().display().to_string()])
        .args(["run", "slow", "--args", r#"{"text":"x"}"#])
        .env_remove("SKILLET_PROVIDER")
        .env_remove("SKILLET_MODEL")
        .env_remove("SKILLET_CONFIG")
        .env("NO_COLOR", "1")
        .stderr(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(child.stderr.take().unwrap()).lines();
    let mut seen = Vec::new();
    // Wait until the model is being asked, then stop the run as Ctrl-C would.
    for line in lines.by_ref() {
        let line = line.unwrap();
        let asking = line.contains("turn 1");
        seen.push(line);
        if asking {
            break;
        }
    }
    sigterm(child.id());
    seen.extend(lines.map(Result::unwrap));
    let status = child.wait().unwrap();
    let stderr = seen.join("\n");
    assert_eq!(status.code(), Some(130), "{stderr}");
    assert!(
        stderr.contains("slow cancelled (interrupted) after"),
        "{stderr}"
    );
    // The verdict is Skillet's own line; the engine's closing progress may still say how the
    // run ended inside.
    assert!(
        !stderr
            .lines()
            .any(|line| line.starts_with("skillet:") && line.contains("failed")),
        "{stderr}"
    );
}

#[test]
fn validate_warns_of_a_script_importing_what_no_requirement_declares() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("pdf");
    std::fs::create_dir_all(dir.join("scripts")).unwrap();
    std::fs::write(
        dir.join("SKILL.md"),
        "---\nname: pdf\ndescription: Reads PDF files.\n---\nRun scripts/read.py.\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("scripts/read.py"),
        "import json, os\nfrom pypdf import PdfReader\nimport helper\n",
    )
    .unwrap();
    std::fs::write(dir.join("scripts/helper.py"), "X = 1\n").unwrap();
    let path = dir.display().to_string();
    let out = skillet(root.path(), &["validate", &path]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "a warning: {stdout}");
    assert!(
        stdout.contains("scripts/read.py:import: warning: imports `pypdf`"),
        "{stdout}"
    );
    assert!(
        !stdout.contains("`json`") && !stdout.contains("`helper`"),
        "{stdout}"
    );
    let strict = skillet(root.path(), &["validate", "--strict", &path]);
    assert_eq!(strict.status.code(), Some(1), "{}", text(&strict.stdout));
    // Declared: no warning.
    std::fs::write(dir.join("requirements.txt"), "pypdf>=5\n").unwrap();
    let out = skillet(root.path(), &["validate", &path]);
    assert!(
        !text(&out.stdout).contains("imports `pypdf`"),
        "{}",
        text(&out.stdout)
    );
}

// Multi-threaded: the mock server runs on this runtime while the test waits for the binary.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_asks_the_model_to_stream_only_when_its_text_is_shown_as_it_is_written() {
    use mock_llm::{MockConfig, MockServer, Scenario};
    let scenario = Scenario::from_yaml_str("rules:\n  - reply:\n      text: \"short\"\n").unwrap();
    let server = MockServer::start(MockConfig::default().with_scenario(scenario))
        .await
        .unwrap();
    let root = tempfile::tempdir().unwrap();
    let (skills, config) = echo_skill_on(root.path(), &server, "");
    let mut streamed = Vec::new();
    for extra in [&["--json"][..], &[][..], &["-vv"][..]] {
        let mut args = vec![
            "--config",
            &config,
            "--skills-dir",
            &skills,
            "run",
            "echo",
            "hi",
        ];
        args.extend_from_slice(extra);
        let out = Command::new(SKILLET)
            .current_dir(root.path())
            .args(&args)
            .env_remove("SKILLET_PROVIDER")
            .env_remove("SKILLET_CONFIG")
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{extra:?}: {}",
            text(&out.stderr)
        );
        let last = server.journal().pop().expect("a model request");
        streamed.push((
            last.body.get("stream").cloned(),
            last.body.get("stream_options").is_some(),
        ));
    }
    assert_eq!(
        streamed,
        [
            (None, false),
            (None, false),
            (Some(serde_json::Value::Bool(true)), true)
        ],
        "--json and the plain display get whole answers; -vv shows the text as it is written"
    );
}

#[test]
fn at_vv_the_models_streamed_text_reads_inline_under_a_heading_per_turn() {
    let cwd = tempfile::tempdir().unwrap();
    let skills = bundled_skills().display().to_string();
    let example = format!(
        "@{}",
        bundled_skills()
            .join("code-review/examples/basic.json")
            .display()
    );
    let out = skillet(
        cwd.path(),
        &[
            "--skills-dir",
            &skills,
            "run",
            "code-review",
            "--args",
            &example,
            "-vv",
        ],
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let turn2 = &stderr[stderr.find("[model turn 2]\n").expect(&stderr)..];
    // The whole answer on one line, as the model wrote it, not a line per chunk.
    assert!(
        turn2
            .lines()
            .nth(1)
            .unwrap()
            .starts_with("{\"verdict\":\"request_changes\",\"issues\":")
            && turn2.lines().nth(1).unwrap().ends_with("adding.\"}]}"),
        "{turn2}"
    );
    assert!(!stderr.contains("[artifact turn-"), "{stderr}");
}

#[test]
fn shell_completion_offers_the_provider_kinds_and_any_name_still_parses() {
    let cwd = tempfile::tempdir().unwrap();
    let out = skillet(cwd.path(), &["completions", "bash"]);
    let script = text(&out.stdout);
    assert!(
        script.contains("openai openai-compatible ollama anthropic gemini mock"),
        "{script}"
    );
    // A configured provider's name is not a kind, and is not refused by the parser.
    std::fs::write(
        cwd.path().join("skillet.toml"),
        "[providers.local]\nkind = \"ollama\"\nmodel = \"m\"\n",
    )
    .unwrap();
    let out = skillet(cwd.path(), &["--provider", "local", "validate", "."]);
    assert!(
        !text(&out.stderr).contains("invalid value"),
        "{}",
        text(&out.stderr)
    );
}

/// What bash's registered function asks at a TAB (`COMPLETE=bash`, the word index, the
/// separator): the candidates `skillet` prints, one per line.
fn complete_bash(cwd: &Path, line: &[&str]) -> Vec<String> {
    let out = Command::new(SKILLET)
        .current_dir(cwd)
        .arg("--")
        .args(line)
        .env("COMPLETE", "bash")
        .env("_CLAP_IFS", "\n")
        .env("_CLAP_COMPLETE_INDEX", (line.len() - 1).to_string())
        .env("_CLAP_COMPLETE_COMP_TYPE", "9")
        .env("_CLAP_COMPLETE_SPACE", "true")
        .env_remove("SKILLET_CONFIG")
        .env("XDG_DATA_HOME", cwd.join("no-user-data"))
        .env("XDG_CONFIG_HOME", cwd.join("no-user-config"))
        .output()
        .expect("run skillet");
    assert!(out.status.success(), "{}", text(&out.stderr));
    text(&out.stdout).lines().map(str::to_owned).collect()
}

#[test]
fn tab_after_run_completes_the_names_of_the_skills_run_would_find() {
    let cwd = tempfile::tempdir().unwrap();
    for (root, name) in [
        ("skills", "meeting-notes"),
        ("skills", "memo"),
        ("skills", "summarize"),
        ("elsewhere", "meta-review"),
    ] {
        let dir = cwd.path().join(root).join(name);
        std::fs::create_dir_all(&dir).unwrap();
        let md = format!("---\nname: {name}\ndescription: A skill.\n---\nDo it.\n");
        std::fs::write(dir.join("SKILL.md"), md).unwrap();
    }
    // The default root, ./skills.
    assert_eq!(
        complete_bash(cwd.path(), &["skillet", "run", "me"]),
        ["meeting-notes", "memo"]
    );
    assert_eq!(
        complete_bash(cwd.path(), &["skillet", "eval", "su"]),
        ["summarize"]
    );
    // --skills-dir on the line being completed replaces it, as it does for the run.
    assert_eq!(
        complete_bash(
            cwd.path(),
            &["skillet", "--skills-dir", "elsewhere", "run", "me"]
        ),
        ["meta-review"]
    );
    // And so does the config's skills_dirs.
    std::fs::write(
        cwd.path().join("skillet.toml"),
        "skills_dirs = [\"elsewhere\"]\n",
    )
    .unwrap();
    assert_eq!(
        complete_bash(cwd.path(), &["skillet", "run", "m"]),
        ["meta-review"]
    );
    // The registration a shell sources calls skillet back at each TAB.
    let out = Command::new(SKILLET)
        .env("COMPLETE", "bash")
        .output()
        .unwrap();
    assert!(
        text(&out.stdout).contains("complete -o nospace"),
        "{}",
        text(&out.stdout)
    );
}
