//! The official Python SDKs (`openai`, `anthropic`, `ollama`, `google-genai`) against the `mock-llm` binary: each
//! completes a plain chat, a streamed chat and a tool-call round trip, and sees an injected 429
//! as its own rate-limit error (scripts in `tests/python/`). Also checks the binary's stdout
//! contract, graceful SIGTERM, and that bad input (a scenario file, `TOKIO_WORKER_THREADS`) is an
//! error naming it, not a panic.
//!
//! The interpreter is `$SKILLET_PYTHON` or `<workspace>/.venv/bin/python` (set up with
//! `python3 -m venv .venv && .venv/bin/pip install -r mock-llm/tests/python/requirements.txt`).
//! Without one the test fails when `CI` is set and is skipped loudly otherwise.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

struct KillOnDrop(Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn python() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("SKILLET_PYTHON") {
        return Some(PathBuf::from(p));
    }
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join("../.venv/bin/python");
    venv.exists().then_some(venv)
}

#[test]
fn official_python_clients_chat_stream_call_tools_and_see_rate_limits() {
    let Some(python) = python() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI is set but no Python found: set SKILLET_PYTHON or create .venv (see mock-llm/README.md)"
        );
        eprintln!(
            "\n==== SKIPPED official_python_clients test: no $SKILLET_PYTHON and no .venv ====\n\
             ==== python3 -m venv .venv && .venv/bin/pip install -r mock-llm/tests/python/requirements.txt ====\n"
        );
        return;
    };
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python");
    let child = Command::new(env!("CARGO_BIN_EXE_mock-llm"))
        .args(["--listen", "127.0.0.1:0", "--scenario"])
        .arg(dir.join("scenario.yaml"))
        .stdout(Stdio::piped())
        .spawn()
        .expect("mock-llm binary starts");
    let mut server = KillOnDrop(child);
    let stdout = server.0.stdout.take().expect("stdout piped");
    let mut line = String::new();
    BufReader::new(stdout)
        .read_line(&mut line)
        .expect("address line");
    let base = line
        .trim()
        .strip_prefix("mock-llm listening on ")
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .to_owned();
    assert!(base.starts_with("http://127.0.0.1:"), "{base}");

    for script in [
        "openai_client.py",
        "anthropic_client.py",
        "ollama_client.py",
        "gemini_client.py",
    ] {
        let out = Command::new(&python)
            .arg(dir.join(script))
            .arg(&base)
            .current_dir(&dir)
            // Keep the source tree clean of __pycache__.
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .output()
            .expect("python runs");
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success(),
            "{script} failed\nstdout:\n{stdout}\nstderr:\n{stderr}"
        );
        assert!(
            stdout.contains("429"),
            "{script} did not reach the rate-limit check:\n{stdout}"
        );
        let thinking_check = match script {
            "anthropic_client.py" => Some("ok anthropic thinking blocks"),
            "ollama_client.py" => Some("ok ollama thinking"),
            "gemini_client.py" => Some("ok gemini thinking"),
            _ => None,
        };
        if let Some(check) = thinking_check {
            assert!(
                stdout.contains(check),
                "{script} did not reach the thinking check:\n{stdout}"
            );
        }
    }

    // Graceful shutdown on SIGTERM: the process exits successfully by itself.
    let pid = server.0.id().to_string();
    let killed = Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .expect("kill runs");
    assert!(killed.success());
    let status = server.0.wait().expect("mock-llm exits");
    assert!(
        status.success(),
        "mock-llm exit status after SIGTERM: {status}"
    );
}

#[test]
fn binary_rejects_a_bad_scenario_file_with_its_path() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("bad.yaml");
    std::fs::write(
        &path,
        "rules:\n  - when: {turn: one}\n    reply: {text: x}\n",
    )
    .expect("write");
    let out = Command::new(env!("CARGO_BIN_EXE_mock-llm"))
        .arg("--scenario")
        .arg(&path)
        .output()
        .expect("binary runs");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("bad.yaml"), "{stderr}");
    assert!(
        out.stdout.is_empty(),
        "nothing on stdout when not listening"
    );
}

#[test]
fn binary_refuses_an_unusable_tokio_worker_threads_without_panicking() {
    for bad in ["abc", "0", "-1", ""] {
        let out = Command::new(env!("CARGO_BIN_EXE_mock-llm"))
            .env("TOKIO_WORKER_THREADS", bad)
            .output()
            .expect("binary runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{bad:?}: {stderr}");
        assert!(stderr.contains("TOKIO_WORKER_THREADS"), "{bad:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{bad:?}: {stderr}");
        assert!(out.stdout.is_empty(), "{bad:?}: not listening");
    }
}
