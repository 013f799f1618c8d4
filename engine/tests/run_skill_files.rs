//! Skills that use their files, end to end on mock-llm over real sockets: the bundled
//! `table-report` example reads its reference, runs its script in the sandbox on an input file
//! and returns the produced file as an artifact; with scripts disabled the script tool is not
//! offered; every path escape through every file tool is refused as a tool error; bad input
//! files are rejected; and the workspace is gone after each call.

mod support;

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use skillet_engine::files::{FileSupport, FilesConfig, ScriptsConfig, WorkspaceConfig};
use skillet_engine::protocol::{ErrorCode, EventKind, EventPayload, SkillResult};
use skillet_engine::run::Limits;
use skillet_engine::skill::{self, CompiledSkill};
use skillet_engine::tools::ToolRegistry;
use support::*;

/// File support with workspaces under `root` and scripts on or off.
fn file_support(root: &Path, scripts: bool) -> FileSupport {
    FileSupport::new(FilesConfig {
        workspace: WorkspaceConfig {
            root: Some(root.to_owned()),
            ..WorkspaceConfig::default()
        },
        scripts: ScriptsConfig {
            enabled: scripts,
            interpreters: system_interpreters(),
            ..ScriptsConfig::default()
        },
        ..FilesConfig::default()
    })
}

/// Interpreters the sandbox's unprivileged uid can run: the system's, not a shim under a
/// private home directory (pyenv's `python3` on `PATH` is under `/root`).
fn system_interpreters() -> BTreeMap<String, PathBuf> {
    let python = ["/usr/bin/python3", "/usr/local/bin/python3"]
        .into_iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
        .expect("a system python3 (/usr/bin/python3) for the bundled example's script");
    BTreeMap::from([
        ("py".to_owned(), python),
        ("sh".to_owned(), PathBuf::from("/bin/sh")),
    ])
}

/// A temp dir the sandbox's unprivileged uid can traverse (tempdirs are 0700).
fn open_tempdir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    dir
}

fn harness_for(server: &mock_llm::MockServer, skill: CompiledSkill, files: FileSupport) -> Harness {
    harness_with(
        registry([skill]),
        ToolRegistry::new(),
        Some(llm_config(server)),
        Limits::default(),
        |b| b.files(files),
    )
}

fn artifacts(result: &SkillResult) -> Vec<(String, String, String, bool)> {
    result
        .events
        .iter()
        .filter_map(|e| match &e.payload {
            EventPayload::Artifact {
                name,
                mime,
                chunk,
                is_final,
            } if !name.starts_with("turn-") => {
                Some((name.clone(), mime.clone(), chunk.clone(), *is_final))
            }
            _ => None,
        })
        .collect()
}

/// The run's answer, which these skills give as text.
fn answer_text(result: &SkillResult) -> &str {
    result
        .data
        .as_ref()
        .and_then(Value::as_str)
        .expect("the answer is text")
}

fn offered_tools(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| {
            t["function"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        })
        .collect()
}

fn system_of(body: &Value) -> String {
    body["messages"][0]["content"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// The bundled `table-report` skill on its own mock scenario, with a fresh workspaces root and
/// scripts enabled or not.
async fn table_report_harness(scripts: bool) -> (mock_llm::MockServer, tempfile::TempDir, Harness) {
    let scenario =
        std::fs::read_to_string(bundled_dir("table-report").join("mock-scenario.yaml")).unwrap();
    let server = start_mock(&scenario).await;
    let workspaces = open_tempdir();
    let h = harness_for(
        &server,
        bundled_skill("table-report"),
        file_support(workspaces.path(), scripts),
    );
    (server, workspaces, h)
}

fn table_report_call() -> skillet_engine::protocol::SkillCallRequest {
    request(
        "table-report",
        json!({
            "prompt": "Make a report of these expenses, titled Expenses.",
            "_files": [{"name": "data.csv", "text": "item,amount\nHotel,180\nTaxi,42.5\nLunch,12.3\n"}]
        }),
    )
}

#[tokio::test]
async fn the_example_reads_its_reference_runs_its_script_and_returns_the_report() {
    let (server, workspaces, h) = table_report_harness(true).await;
    let called = h.call(table_report_call()).await;
    let result = called.result();
    assert!(result.success, "{result:#?}");
    assert!(
        answer_text(result).contains("report.md is attached"),
        "{result:#?}"
    );

    let bodies = chat_bodies(&server);
    assert_eq!(bodies.len(), 3, "reference, script, answer");
    let system = system_of(&bodies[0]);
    assert!(system.contains("- reference.md ("), "{system}");
    assert!(system.contains("- scripts/csv_report.py ("), "{system}");
    assert!(
        system.contains("Input files in the workspace: data.csv (43 bytes)"),
        "{system}"
    );
    assert!(
        !bodies[0].to_string().contains("Hotel,180"),
        "input files are not pasted into the conversation"
    );
    let tools = offered_tools(&bodies[0]);
    for tool in [
        "list_skill_files",
        "read_skill_file",
        "read_file",
        "write_file",
        "list_files",
        "run_skill_script",
    ] {
        assert!(tools.iter().any(|t| t == tool), "{tool} in {tools:?}");
    }
    let results = tool_results_in(&bodies[2]);
    assert!(results[0].contains("# Report layout"), "{}", results[0]);
    assert!(results[1].contains("\"exit_status\":0"), "{}", results[1]);
    assert!(
        results[1].contains("wrote report.md: 3 rows, 2 columns"),
        "{}",
        results[1]
    );

    let produced = artifacts(result);
    assert_eq!(
        produced.len(),
        1,
        "only the produced file, not the input: {produced:?}"
    );
    let (name, mime, chunk, is_final) = &produced[0];
    assert_eq!(
        (name.as_str(), mime.as_str(), *is_final),
        ("report.md", "text/markdown", true)
    );
    assert!(chunk.starts_with("# Expenses\n"), "{chunk}");
    assert!(chunk.contains("| amount | 3 | 234.80 | 78.27 |"), "{chunk}");
    let logs = messages_of(result, EventKind::Log);
    assert!(
        logs.iter()
            .any(|l| l.starts_with("files produced: report.md (text/markdown, ")),
        "{logs:?}"
    );
    assert_eq!(
        std::fs::read_dir(workspaces.path()).unwrap().count(),
        0,
        "the workspace is removed after the call"
    );
}

#[tokio::test]
async fn with_scripts_disabled_the_script_tool_is_not_offered_and_the_run_still_answers() {
    let (server, workspaces, h) = table_report_harness(false).await;
    let called = h.call(table_report_call()).await;
    let result = called.result();
    assert!(result.success, "{result:#?}");
    let bodies = chat_bodies(&server);
    let tools = offered_tools(&bodies[0]);
    assert!(tools.iter().any(|t| t == "read_skill_file"), "{tools:?}");
    assert!(!tools.iter().any(|t| t == "run_skill_script"), "{tools:?}");
    assert!(!system_of(&bodies[0]).contains("Run a script of this skill"));
    // The scripted model calls it anyway: an unknown-tool error, and no report.
    let results = tool_results_in(&bodies[2]);
    assert!(
        results[1].starts_with("Error: unknown tool `run_skill_script`"),
        "{}",
        results[1]
    );
    assert!(artifacts(result).is_empty());
    assert!(answer_text(result).contains("could not run"));
    assert_eq!(std::fs::read_dir(workspaces.path()).unwrap().count(), 0);
}

/// A plain skill with a reference, a script, a symlink out of the folder and a symlinked
/// directory out of the folder.
fn escape_skill(root: &Path, outside: &Path) -> CompiledSkill {
    let dir = root.join("escape");
    std::fs::create_dir_all(dir.join("scripts")).unwrap();
    std::fs::write(
        dir.join("SKILL.md"),
        "---\nname: escape\ndescription: Tries every escape.\n---\nYou try every escape.\n",
    )
    .unwrap();
    std::fs::write(dir.join("reference.md"), "fine").unwrap();
    std::fs::write(dir.join("scripts/ok.sh"), "echo ok\n").unwrap();
    std::fs::create_dir_all(dir.join("evals")).unwrap();
    std::fs::write(dir.join("evals/evals.json"), "TOP-SECRET expected answers").unwrap();
    std::os::unix::fs::symlink(outside.join("secret.txt"), dir.join("leak.md")).unwrap();
    std::os::unix::fs::symlink(outside, dir.join("scripts/out")).unwrap();
    skill::load_skill_dir(&dir, skillet_engine::skill::SkillSource::Project).expect("loads")
}

#[tokio::test]
async fn path_escapes_through_every_file_tool_are_refused_and_nothing_leaks() {
    let outside = open_tempdir();
    std::fs::write(outside.path().join("secret.txt"), "TOP-SECRET").unwrap();
    std::fs::write(outside.path().join("evil.sh"), "echo TOP-SECRET\n").unwrap();
    let attempts: Vec<(&str, Value)> = vec![
        (
            "read_skill_file",
            json!({"path": "../escape/../../etc/passwd"}),
        ),
        ("read_skill_file", json!({"path": "/etc/passwd"})),
        ("read_skill_file", json!({"path": "leak.md"})),
        ("read_skill_file", json!({"path": "evals/evals.json"})),
        ("read_skill_file", json!({"path": "./evals/evals.json"})),
        ("read_skill_file", json!({"path": "scripts/out/secret.txt"})),
        ("read_file", json!({"path": "../secret.txt"})),
        ("read_file", json!({"path": "/etc/passwd"})),
        ("read_file", json!({"path": "~/x"})),
        ("write_file", json!({"path": "../evil.txt", "content": "x"})),
        (
            "write_file",
            json!({"path": "/tmp/evil.txt", "content": "x"}),
        ),
        (
            "run_skill_script",
            json!({"path": "../escape/scripts/ok.sh"}),
        ),
        ("run_skill_script", json!({"path": "/bin/sh"})),
        ("run_skill_script", json!({"path": "reference.md"})),
        ("run_skill_script", json!({"path": "scripts/out/evil.sh"})),
    ];
    let calls: Vec<Value> = attempts
        .iter()
        .map(|(name, args)| json!({"name": name, "arguments": args}))
        .collect();
    let scenario = format!(
        "rules:\n  - when: {{ turn: 1 }}\n    reply:\n      tool_calls: {}\n  - when: {{ turn: 2 }}\n    reply: {{ text: refused }}\n",
        serde_json::to_string(&calls).unwrap()
    );
    let server = start_mock(&scenario).await;
    let skills = open_tempdir();
    let workspaces = open_tempdir();
    let h = harness_for(
        &server,
        escape_skill(skills.path(), outside.path()),
        file_support(workspaces.path(), true),
    );
    let called = h.call(request("escape", json!({"prompt": "go"}))).await;
    let result = called.result();
    assert!(result.success, "{result:#?}");
    let bodies = chat_bodies(&server);
    let results = tool_results_in(&bodies[1]);
    assert_eq!(results.len(), attempts.len());
    for ((tool, args), answer) in attempts.iter().zip(&results) {
        assert!(
            answer.starts_with("Error: "),
            "{tool}({args}) was not refused: {answer}"
        );
        assert!(
            !answer.contains("TOP-SECRET"),
            "{tool}({args}) leaked: {answer}"
        );
        assert!(!answer.contains("root:"), "{tool}({args}) leaked: {answer}");
    }
    assert!(!outside.path().join("evil.txt").exists());
    assert!(!Path::new("/tmp/evil.txt").exists());
    assert!(artifacts(result).is_empty());
    assert_eq!(std::fs::read_dir(workspaces.path()).unwrap().count(), 0);
}

#[tokio::test]
async fn bad_input_files_are_rejected_before_anything_runs() {
    let server = start_mock("rules: []\n").await;
    let workspaces = open_tempdir();
    let h = harness_for(
        &server,
        bundled_skill("table-report"),
        file_support(workspaces.path(), true),
    );
    for files in [
        json!([{"name": "../x.csv", "text": "a"}]),
        json!([{"name": "x.csv", "base64": "@@"}]),
        json!("data.csv"),
    ] {
        let called = h
            .call(request(
                "table-report",
                json!({"prompt": "go", "_files": files}),
            ))
            .await;
        let error = called.response.error.as_ref().expect("rejected");
        assert_eq!(error.code, ErrorCode::InvalidMessage, "{error:?}");
        assert!(error.message.contains("_files"), "{error:?}");
    }
    assert!(chat_bodies(&server).is_empty());
    assert_eq!(std::fs::read_dir(workspaces.path()).unwrap().count(), 0);
}

/// A Skillet manifest declaring `calculator`, whose `allowed-tools: Read` opts into its files.
fn manifest_with_files(root: &Path) -> CompiledSkill {
    let dir = root.join("notes");
    std::fs::create_dir_all(dir.join("assets")).unwrap();
    std::fs::write(
        dir.join("SKILL.md"),
        "---\nname: notes\ndescription: Reads its notes.\nallowed-tools: Read\nmetadata:\n  a2e-tools: '[\"calculator\"]'\n  a2a-output-schema: assets/out.json\n---\nYou read notes.\n",
    )
    .unwrap();
    std::fs::write(dir.join("assets/out.json"), r#"{"type": "string"}"#).unwrap();
    std::fs::write(dir.join("big.md"), "x".repeat(100_000)).unwrap();
    std::fs::write(dir.join("image.bin"), [0u8, 159, 146, 150]).unwrap();
    skill::load_skill_dir(&dir, skillet_engine::skill::SkillSource::Project).expect("loads")
}

#[tokio::test]
async fn declared_tools_work_beside_file_tools_and_reads_are_capped_per_read_and_per_call() {
    let read = |offset: u64| json!({"name": "read_skill_file", "arguments": {"path": "big.md", "offset": offset}});
    let calls = json!([
        {"name": "calculator", "arguments": {"expression": "6 * 7"}},
        {"name": "read_skill_file", "arguments": {"path": "image.bin"}},
        {"name": "read_skill_file", "arguments": {"path": "big.md", "limit": 1_000_000}},
        read(0),
        read(1000),
        read(5000),
    ]);
    let scenario = format!(
        "rules:\n  - when: {{ turn: 1 }}\n    reply:\n      tool_calls: {calls}\n  - when: {{ turn: 2 }}\n    reply: {{ json: done }}\n"
    );
    let server = start_mock(&scenario).await;
    let skills = open_tempdir();
    let workspaces = open_tempdir();
    let files = FileSupport::new(FilesConfig {
        workspace: WorkspaceConfig {
            root: Some(workspaces.path().to_owned()),
            max_read_bytes: 1000,
            max_read_bytes_per_call: 1500,
            ..WorkspaceConfig::default()
        },
        scripts: ScriptsConfig::default(),
        ..FilesConfig::default()
    });
    let mut tools = ToolRegistry::new();
    for tool in skillet_engine::tools::builtin::all() {
        tools.register_tool(tool).unwrap();
    }
    let h = harness_with(
        registry([manifest_with_files(skills.path())]),
        tools,
        Some(llm_config(&server)),
        Limits::default(),
        |b| b.files(files),
    );
    let called = h.call(request("notes", json!({"prompt": "go"}))).await;
    assert!(called.result().success, "{:#?}", called.result());
    let bodies = chat_bodies(&server);
    let offered = offered_tools(&bodies[0]);
    assert_eq!(
        offered,
        [
            "calculator",
            "list_skill_files",
            "read_skill_file",
            "read_file",
            "write_file",
            "list_files"
        ]
    );
    let system = system_of(&bodies[0]);
    assert!(
        !system.contains("assets/out.json"),
        "manifest assets are not listed: {system}"
    );
    let results = tool_results_in(&bodies[1]);
    assert!(results[0].contains("\"result\":42"), "{}", results[0]);
    assert!(
        results[1].starts_with("Error: ") && results[1].contains("binary"),
        "{}",
        results[1]
    );
    assert!(
        results[2].starts_with("Error: invalid arguments"),
        "{}",
        results[2]
    );
    // The reads of a turn run concurrently: together they get exactly the call's 1500 bytes
    // (1000, the per-read cap, then 500), and the third is refused.
    let mut got: Vec<usize> = results[3..6]
        .iter()
        .filter(|r| !r.starts_with("Error: "))
        .map(|r| {
            let v: Value = serde_json::from_str(r).unwrap_or_else(|_| panic!("{r}"));
            v["text"].as_str().unwrap().len()
        })
        .collect();
    got.sort_unstable();
    assert_eq!(got, [500, 1000], "{results:#?}");
    let refused: Vec<&String> = results[3..6]
        .iter()
        .filter(|r| r.starts_with("Error: "))
        .collect();
    assert_eq!(refused.len(), 1, "{results:#?}");
    assert!(
        refused[0].contains("has read its 1500 bytes"),
        "{}",
        refused[0]
    );
    assert_eq!(std::fs::read_dir(workspaces.path()).unwrap().count(), 0);
}
