//! Helpers for tests that spawn the real `skillet` binary: paths, a test skill folder whose
//! mock scenario adds latency (so calls are in flight long enough to test shutdown), and a
//! JSON-lines child for `serve --stdio`.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

/// The binary under test.
pub const SKILLET: &str = env!("CARGO_BIN_EXE_skillet");

/// The repository's bundled skills.
pub fn bundled_skills() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../skills")
}

/// Copies the folder `from` to `to` (created), recursively.
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// Copies the bundled skill `name` to `root/name` and returns that folder.
pub fn bundled_copy(root: &Path, name: &str) -> PathBuf {
    let dir = root.join(name);
    copy_dir(&bundled_skills().join(name), &dir);
    dir
}

/// Runs the binary in `cwd` with `args`, none of the variables that would pick a provider,
/// model or config from the machine, and no `RUST_LOG`; waits for its output.
pub fn skillet_in(cwd: &Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new(SKILLET)
        .current_dir(cwd)
        .args(args)
        .env_remove("SKILLET_PROVIDER")
        .env_remove("SKILLET_MODEL")
        .env_remove("SKILLET_CONFIG")
        .env_remove("RUST_LOG")
        .output()
        .expect("run skillet")
}

/// Bytes as text, lossily.
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// [`write_skill`] with instructions and a scenario rule of its own, so several such skills in
/// one server each get their own answers (and journal entries named after them).
pub fn write_marked_skill(root: &Path, name: &str, latency_ms: u64, reply: &str) {
    write_skill(root, name, latency_ms, reply);
    let dir = root.join(name);
    let skill_md = std::fs::read_to_string(dir.join("SKILL.md")).unwrap();
    let marker = format!("Skill {name}: echo this text back");
    std::fs::write(
        dir.join("SKILL.md"),
        skill_md.replace("Echo this text back", &marker),
    )
    .unwrap();
    std::fs::write(
        dir.join("mock-scenario.yaml"),
        format!(
            "rules:\n  - name: {name}\n    when: {{system_contains: \"{marker}\"}}\n    \
             reply: {reply}\n    timing: {{latency_ms: {latency_ms}}}\n"
        ),
    )
    .unwrap();
}

/// The approval tests' skills: `gated-calc` (marker `Gated calc:`), whose `calculator` call
/// needs approval (`a2e-approval`), and `gated-slow` (the same, with a 2 s deadline). Their mock
/// answers `{"echo": "approved"}`, `"denied: not on prod"` (the reason `not on prod`),
/// `"denied by policy"` or `"denied"` from what the tool call returned.
pub fn write_gated_skills(root: &Path) {
    for (name, marker, timeout) in [
        ("gated-calc", "Gated calc:", 60),
        ("gated-slow", "Gated slow:", 2),
    ] {
        let dir = root.join(name);
        std::fs::create_dir_all(dir.join("assets")).unwrap();
        std::fs::write(
            dir.join("SKILL.md"),
            format!(
                "---\nname: {name}\ndescription: Computes with a gated calculator (test skill).\n\
                 metadata:\n  a2a-tags: '[\"test\"]'\n  \
                 a2a-input-schema: assets/input.schema.json\n  \
                 a2a-output-schema: assets/output.schema.json\n  \
                 a2e-tools: '[\"calculator\"]'\n  a2e-approval: '[\"calculator\"]'\n  \
                 a2e-max-turns: '3'\n  a2e-timeout-seconds: '{timeout}'\n---\n\
                 {marker} compute {{{{ text }}}} with the calculator.\n"
            ),
        )
        .unwrap();
        std::fs::write(
            dir.join("assets/input.schema.json"),
            r#"{"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false}"#,
        )
        .unwrap();
        std::fs::write(
            dir.join("assets/output.schema.json"),
            r#"{"type":"object","properties":{"echo":{"type":"string"}},"required":["echo"],"additionalProperties":false}"#,
        )
        .unwrap();
        let rule = |n: &str, when: &str, reply: &str| {
            format!(
                "  - name: {name}-{n}\n    when: {{system_contains: \"{marker}\", {when}}}\n    \
                 reply: {reply}\n"
            )
        };
        let scenario = [
            "rules:\n".to_owned(),
            rule(
                "approved",
                "tool_result_contains: \"result\"",
                "{json: {echo: approved}}",
            ),
            rule(
                "reason",
                "tool_result_contains: \"not on prod\"",
                "{json: {echo: \"denied: not on prod\"}}",
            ),
            rule(
                "policy",
                "tool_result_contains: \"policy denied\"",
                "{json: {echo: denied by policy}}",
            ),
            rule(
                "denied",
                "tool_result_contains: \"denied approval\"",
                "{json: {echo: denied}}",
            ),
            rule(
                "call",
                "tool_results: false",
                "{tool_calls: [{name: calculator, arguments: {expression: \"6*7\"}}]}",
            ),
        ]
        .concat();
        std::fs::write(dir.join("mock-scenario.yaml"), scenario).unwrap();
    }
}

/// Writes a skill folder `name` under `root` whose scenario answers `reply` (YAML) after
/// `latency_ms`.
pub fn write_skill(root: &Path, name: &str, latency_ms: u64, reply: &str) {
    let dir = root.join(name);
    std::fs::create_dir_all(dir.join("assets")).unwrap();
    std::fs::write(
        dir.join("SKILL.md"),
        format!(
            "---\nname: {name}\ndescription: Echoes its text back (test skill).\nmetadata:\n  \
             a2a-tags: '[\"test\"]'\n  a2a-input-schema: assets/input.schema.json\n  \
             a2a-output-schema: assets/output.schema.json\n  a2e-category: testing\n  \
             a2e-max-turns: '2'\n---\nEcho this text back: {{{{ text }}}}\n"
        ),
    )
    .unwrap();
    std::fs::write(
        dir.join("assets/input.schema.json"),
        r#"{"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false}"#,
    )
    .unwrap();
    std::fs::write(
        dir.join("assets/output.schema.json"),
        r#"{"type":"object","properties":{"echo":{"type":"string"}},"required":["echo"],"additionalProperties":false}"#,
    )
    .unwrap();
    std::fs::write(
        dir.join("mock-scenario.yaml"),
        format!("rules:\n  - name: {name}\n    when: {{system_contains: \"Echo this text back\"}}\n    reply: {reply}\n    timing: {{latency_ms: {latency_ms}}}\n"),
    )
    .unwrap();
}

/// A temporary skills root with `slow-echo` (valid answer after 600 ms).
pub fn slow_skills() -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    write_skill(root.path(), "slow-echo", 600, "{json: {echo: \"hello\"}}");
    root
}

/// `skillet serve --stdio` as a child, talking JSON lines.
pub struct StdioChild {
    pub child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    cwd: Option<tempfile::TempDir>,
}

impl StdioChild {
    /// Spawns the server with these skill roots (cwd: an empty temporary directory, so no
    /// stray skillet.toml is read).
    pub fn spawn(skill_dirs: &[&Path]) -> Self {
        let cwd = tempfile::tempdir().unwrap();
        let mut command = Command::new(SKILLET);
        command.current_dir(cwd.path()).arg("serve").arg("--stdio");
        for dir in skill_dirs {
            command.arg("--skills-dir").arg(dir);
        }
        let mut server = Self::from_command(command);
        server.cwd = Some(cwd);
        server
    }

    /// Spawns `command` (a `skillet ... serve --stdio` the caller built, with its own cwd and
    /// arguments) without `SKILLET_PROVIDER`/`SKILLET_CONFIG`, stdin and stdout piped, stderr
    /// discarded, killed on drop.
    pub fn from_command(mut command: Command) -> Self {
        let mut child = command
            .env_remove("SKILLET_PROVIDER")
            .env_remove("SKILLET_CONFIG")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("spawn skillet serve --stdio");
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        StdioChild {
            child,
            stdin,
            stdout,
            cwd: None,
        }
    }

    pub async fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(line.as_bytes()).await.unwrap();
        stdin.write_all(b"\n").await.unwrap();
        stdin.flush().await.unwrap();
    }

    /// The next message, or `None` at end of output.
    pub async fn recv(&mut self) -> Option<Value> {
        let mut line = String::new();
        let n = tokio::time::timeout(Duration::from_secs(60), self.stdout.read_line(&mut line))
            .await
            .expect("a message within 60 s")
            .unwrap();
        (n > 0).then(|| serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}")))
    }

    /// Reads until each of `ids` has its final answer; returns everything read.
    pub async fn recv_answers(&mut self, ids: &[&str]) -> Vec<Value> {
        let mut left: Vec<String> = ids.iter().map(|s| s.to_string()).collect();
        let mut messages = Vec::new();
        while !left.is_empty() {
            let message = self.recv().await.expect("output ended before every answer");
            if message["type"] != "skill/event" {
                let id = message["req_id"].as_str().unwrap_or_default().to_owned();
                left.retain(|l| *l != id);
            }
            messages.push(message);
        }
        messages
    }

    pub fn close_stdin(&mut self) {
        self.stdin = None;
    }

    /// Waits for the exit code.
    pub async fn wait(&mut self) -> i32 {
        let status = tokio::time::timeout(Duration::from_secs(60), self.child.wait())
            .await
            .expect("exits within 60 s")
            .unwrap();
        status.code().expect("exited normally, not by a signal")
    }
}

/// Sends SIGTERM to `pid`.
pub fn sigterm(pid: u32) {
    let status = std::process::Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .expect("kill");
    assert!(status.success());
}

/// A call request line.
pub fn call(id: &str, name: &str, arguments: Value) -> String {
    serde_json::json!({"type": "skill/call/req", "id": id, "version": "1.0", "ts": 1716123457.1,
        "name": name, "arguments": arguments, "correlation_id": "", "timeout": 60,
        "streaming": true, "llm_override": null, "metadata": {}})
    .to_string()
}

/// The `skill/call/resp` for `id` among `messages`.
pub fn response_for<'a>(messages: &'a [Value], id: &str) -> &'a Value {
    messages
        .iter()
        .find(|m| m["type"] == "skill/call/resp" && m["req_id"] == id)
        .unwrap_or_else(|| panic!("no response for {id}: {messages:#?}"))
}

/// Asserts every event of call `id` precedes its response and has seq 0, 1, 2, ...
pub fn assert_events_then_response(messages: &[Value], id: &str) {
    let response_at = messages
        .iter()
        .position(|m| m["type"] == "skill/call/resp" && m["req_id"] == id)
        .expect("response");
    let seqs: Vec<u64> = messages
        .iter()
        .enumerate()
        .filter(|(_, m)| m["type"] == "skill/event" && m["req_id"] == id)
        .map(|(i, m)| {
            assert!(i < response_at, "an event of {id} came after its response");
            m["seq"].as_u64().unwrap()
        })
        .collect();
    assert!(!seqs.is_empty(), "streaming call {id} sent no events");
    // Events are emitted in seq order; sorting only guards against delivery races between
    // concurrent emitters (no gaps is the property).
    let mut seqs = seqs;
    seqs.sort_unstable();
    assert_eq!(
        seqs,
        (0..seqs.len() as u64).collect::<Vec<_>>(),
        "seq of {id}"
    );
}

/// The Python interpreter with `modules` importable (`"mcp, pydantic"`): `$SKILLET_PYTHON`, else
/// `<workspace>/.venv/bin/python`. `None` (with a loud notice) when there is none — and a panic
/// under `CI`, where every client must be there.
pub fn python_with(modules: &str) -> Option<PathBuf> {
    let python = match std::env::var_os("SKILLET_PYTHON") {
        Some(p) => PathBuf::from(p),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../.venv/bin/python"),
    };
    let ok = std::process::Command::new(&python)
        .args(["-c", &format!("import {modules}")])
        .current_dir(std::env::temp_dir())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if ok {
        return Some(python);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "CI is set but no Python with {modules}: set SKILLET_PYTHON or install \
         mock-llm/tests/python/requirements.txt into .venv"
    );
    eprintln!("\n==== SKIPPED: no $SKILLET_PYTHON / .venv with {modules} ====\n");
    None
}

/// Runs `tests/python/SCRIPT` with `python` and `args` (bounded to 300 s) and returns its
/// stdout; fails unless it exits 0 and prints `all checks passed`.
pub async fn run_python_script(python: &Path, script: &str, args: &[String]) -> String {
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/python")
        .join(script);
    let run = tokio::process::Command::new(python)
        .arg(&script)
        .args(args)
        .current_dir(std::env::temp_dir())
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env_remove("SKILLET_CONFIG")
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(std::time::Duration::from_secs(300), run)
        .await
        .expect("the client script ends within 300 s")
        .expect("python runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains("all checks passed"),
        "{} failed\nstdout:\n{stdout}\nstderr:\n{stderr}",
        script.display()
    );
    stdout
}
