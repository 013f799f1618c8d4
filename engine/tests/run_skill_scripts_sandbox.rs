//! Hostile bundled scripts, end to end on mock-llm: a script that reads `/etc/shadow`, opens a
//! socket, forks 10,000 processes, allocates 4 GiB or sleeps forever gets the matching tool
//! error or sandbox code, the others still run, and the call ends with exactly one answer and
//! no workspace left behind.

mod support;

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use skillet_engine::files::{FileSupport, FilesConfig, ScriptsConfig, WorkspaceConfig};
use skillet_engine::run::Limits;
use skillet_engine::skill::{self, CompiledSkill};
use skillet_engine::tools::ToolRegistry;
use skillet_sandbox::SandboxPolicy;
use support::*;

fn system_python() -> PathBuf {
    ["/usr/bin/python3", "/usr/local/bin/python3"]
        .into_iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
        .expect("a system python3 (/usr/bin/python3) for the hostile scripts")
}

/// A workspaces root the sandbox's unprivileged uid can enter.
fn open_workspaces() -> tempfile::TempDir {
    let workspaces = tempfile::tempdir().unwrap();
    std::fs::set_permissions(workspaces.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    workspaces
}

/// File support with workspaces under `root` and scripts on (python3 only) in `sandbox`.
fn script_files(root: &Path, sandbox: SandboxPolicy) -> FileSupport {
    FileSupport::new(FilesConfig {
        workspace: WorkspaceConfig {
            root: Some(root.to_owned()),
            ..WorkspaceConfig::default()
        },
        scripts: ScriptsConfig {
            enabled: true,
            interpreters: BTreeMap::from([("py".to_owned(), system_python())]),
            sandbox,
            ..ScriptsConfig::default()
        },
        ..FilesConfig::default()
    })
}

/// A plain skill whose `scripts/` holds the hostile scripts (world-readable, so the sandbox's
/// unprivileged uid can run them).
fn hostile_skill(root: &Path) -> CompiledSkill {
    std::fs::set_permissions(root, std::fs::Permissions::from_mode(0o755)).unwrap();
    let dir = root.join("hostile");
    std::fs::create_dir_all(dir.join("scripts")).unwrap();
    std::fs::write(
        dir.join("SKILL.md"),
        "---\nname: hostile\ndescription: Runs hostile scripts.\nallowed-tools: Bash\n---\nYou run hostile scripts.\n",
    )
    .unwrap();
    let scripts = [
        ("shadow.py", "print(open('/etc/shadow').read())\n"),
        (
            "net.py",
            "import socket, sys\ns = socket.create_connection(('127.0.0.1', int(sys.argv[1])), timeout=2)\ns.sendall(b'escaped')\nprint('connected')\n",
        ),
        (
            "forks.py",
            "import os, time\nfor i in range(10000):\n    if os.fork() == 0:\n        time.sleep(30)\n        os._exit(0)\nprint('forked 10000')\n",
        ),
        ("alloc.py", "b = bytearray(4 * 1024 ** 3)\nprint(len(b))\n"),
        ("sleep.py", "import time\ntime.sleep(10 ** 6)\n"),
        ("fine.py", "import sys\nprint('fine', sys.stdin.read())\n"),
        (
            "path.py",
            "import os\nprint('PATH=' + os.environ.get('PATH', ''))\n",
        ),
    ];
    for (name, text) in scripts {
        std::fs::write(dir.join("scripts").join(name), text).unwrap();
    }
    skill::load_skill_dir(&dir, skillet_engine::skill::SkillSource::Project).expect("loads")
}

#[tokio::test]
async fn hostile_scripts_get_the_matching_error_and_the_call_still_answers_once() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port().to_string();
    let run = |script: &str, args: Value| json!({"name": "run_skill_script", "arguments": {"path": format!("scripts/{script}"), "args": args}});
    let calls = vec![
        run("shadow.py", json!([])),
        run("net.py", json!([port])),
        run("forks.py", json!([])),
        run("alloc.py", json!([])),
        run("sleep.py", json!([])),
        json!({"name": "run_skill_script", "arguments": {"path": "scripts/fine.py", "stdin": "input"}}),
        run("path.py", json!([])),
    ];
    let scenario = format!(
        "rules:\n  - when: {{ turn: 1 }}\n    reply:\n      tool_calls: {}\n  - when: {{ turn: 2 }}\n    reply: {{ text: survived }}\n",
        serde_json::to_string(&calls).unwrap()
    );
    let server = start_mock(&scenario).await;
    let skills = tempfile::tempdir().unwrap();
    let workspaces = open_workspaces();
    let mut sandbox = SandboxPolicy {
        timeout_ms: 3_000,
        ..SandboxPolicy::default()
    };
    sandbox.limits.processes = Some(32);
    let files = script_files(workspaces.path(), sandbox);
    let limits = Limits {
        tool_concurrency: 7,
        ..Limits::default()
    };
    let h = harness_with(
        registry([hostile_skill(skills.path())]),
        ToolRegistry::new(),
        Some(llm_config(&server)),
        limits,
        |b| b.files(files),
    );
    let called = h.call(request("hostile", json!({"prompt": "go"}))).await;
    let result = called.result();
    assert!(result.success, "{result:#?}");
    assert_eq!(result.data, Some(json!("survived")));

    let bodies = chat_bodies(&server);
    let results = tool_results_in(&bodies[1]);
    assert_eq!(results.len(), 7, "{results:#?}");
    let [shadow, socket, forks, alloc, sleep, fine, path] = &results[..] else {
        unreachable!()
    };
    // Reading /etc/shadow: the script runs and fails on its own (the model sees why).
    assert!(shadow.starts_with("Error: {\"exit_status\":1"), "{shadow}");
    assert!(shadow.contains("PermissionError"), "{shadow}");
    assert!(!shadow.contains("root:"), "{shadow}");
    // A socket: no network in the sandbox.
    assert!(socket.starts_with("Error: {\"exit_status\":1"), "{socket}");
    assert!(!socket.contains("connected"), "{socket}");
    assert!(
        socket.contains("Network is unreachable") || socket.contains("PermissionError"),
        "{socket}"
    );
    assert!(
        listener.accept().is_err(),
        "the script reached the host's loopback"
    );
    // 10,000 forks: the process limit stops it.
    assert!(!forks.contains("forked 10000"), "{forks}");
    assert!(forks.starts_with("Error: "), "{forks}");
    assert!(
        forks.contains("BlockingIOError")
            || forks.contains("sandbox_crash")
            || forks.contains("out_of_memory"),
        "{forks}"
    );
    // 4 GiB: out of memory under the sandbox's limit.
    assert!(
        alloc.starts_with("Error: tool `run_skill_script` failed: out_of_memory:"),
        "{alloc}"
    );
    // Forever: the wall clock.
    assert!(
        sleep.starts_with("Error: tool `run_skill_script` failed: timeout:"),
        "{sleep}"
    );
    // And a well-behaved script beside them still works.
    assert!(fine.starts_with("{\"exit_status\":0"), "{fine}");
    assert!(fine.contains("fine input"), "{fine}");
    // The script's PATH is the fixed minimal one, not the host's (issue 30).
    assert!(
        path.contains(&format!("PATH={}\\n", skillet_engine::files::SCRIPT_PATH)),
        "{path}"
    );
    assert_eq!(
        std::fs::read_dir(workspaces.path()).unwrap().count(),
        0,
        "the workspace is removed after the call"
    );
}

#[tokio::test]
async fn a_call_whose_deadline_passes_mid_script_still_answers_once_and_removes_its_workspace() {
    let scenario = "rules:\n  - when: { turn: 1 }\n    reply:\n      tool_calls: [{ name: run_skill_script, arguments: { path: scripts/sleep.py } }]\n  - when: { turn: 2 }\n    reply: { text: never }\n";
    let server = start_mock(scenario).await;
    let skills = tempfile::tempdir().unwrap();
    let workspaces = open_workspaces();
    let files = script_files(workspaces.path(), SandboxPolicy::default());
    let h = harness_with(
        registry([hostile_skill(skills.path())]),
        ToolRegistry::new(),
        Some(llm_config(&server)),
        Limits::default(),
        |b| b.files(files),
    );
    let mut call = request("hostile", json!({"prompt": "go"}));
    call.timeout = 1;
    let called = h.call(call).await;
    let result = called.result();
    assert!(!result.success);
    assert_eq!(
        result.error_code,
        Some(skillet_engine::protocol::ErrorCode::Timeout),
        "{result:#?}"
    );
    assert_eq!(
        std::fs::read_dir(workspaces.path()).unwrap().count(),
        0,
        "the workspace is removed after a call that timed out"
    );
}
