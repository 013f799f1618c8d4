//! G4 of issue 30: a toolkit's header secret (`headers = { Authorization = { env = "TK_TOKEN",
//! prefix = "Bearer " } }`) that the MCP server quotes back in its 401 body never reaches a log
//! line, `skillet toolkits` output, a caller's `log` event or `data.events` — at any verbosity.
//! The server is the in-tree `mcp-test-server` with `--quote-headers`; the canary is the
//! token, set only in the environment of the `skillet` process.
//!
//! Not here: a provider's echoed key (`log_redaction.rs`).

use crate::cli_support;
use crate::mcp_support;

use std::path::Path;
use std::process::{Command, Output, Stdio};

use cli_support::SKILLET;

/// The toolkit's token, quoted back by the server.
const CANARY: &str = "tk-canary-g4-7f31c0de9a";

const VERBOSITIES: [&[&str]; 4] = [&[], &["-v"], &["-vv"], &["-vvv"]];

/// A server that refuses every request (it wants another token) and quotes the request's
/// headers in its 401 body. Killed on drop.
struct QuotingServer {
    child: std::process::Child,
    url: String,
}

impl QuotingServer {
    fn start() -> Self {
        let mut child = Command::new(mcp_support::test_server())
            .args([
                "--http",
                "127.0.0.1:0",
                "--require-header",
                "authorization=Bearer the-right-token",
                "--quote-headers",
            ])
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let mut url = String::new();
        std::io::BufRead::read_line(&mut std::io::BufReader::new(stdout), &mut url).unwrap();
        QuotingServer {
            child,
            url: url.trim().to_owned(),
        }
    }
}

impl Drop for QuotingServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A host with the toolkit at boot and on first use, and a skill that declares the lazy one.
fn host_dir(url: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("skillet.toml"),
        format!(
            r#"
[toolkits.remote]
kind = "mcp"
url = "{url}"
headers = {{ Authorization = {{ env = "TK_TOKEN", prefix = "Bearer " }} }}
startup_timeout_seconds = 10

[toolkits.lazy]
kind = "mcp"
url = "{url}"
headers = {{ Authorization = {{ env = "TK_TOKEN", prefix = "Bearer " }} }}
connect = "first-use"
startup_timeout_seconds = 10
"#
        ),
    )
    .unwrap();
    let skill = dir.path().join("skills/uses-lazy");
    std::fs::create_dir_all(&skill).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: uses-lazy\ndescription: Uses the lazy toolkit.\nmetadata:\n  \
         a2e-max-turns: '1'\n  a2e-toolkits: '[\"lazy\"]'\n---\nAnswer briefly.\n",
    )
    .unwrap();
    dir
}

fn skillet(cwd: &Path, verbosity: &[&str], args: &[&str]) -> Output {
    Command::new(SKILLET)
        .current_dir(cwd)
        .args(verbosity)
        .args(args)
        .env("TK_TOKEN", CANARY)
        .env_remove("SKILLET_PROVIDER")
        .env_remove("SKILLET_CONFIG")
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .output()
        .expect("run skillet")
}

fn assert_no_canary(case: &str, output: &Output) {
    for (stream, bytes) in [("stdout", &output.stdout), ("stderr", &output.stderr)] {
        let text = String::from_utf8_lossy(bytes);
        assert!(
            !text.contains(CANARY),
            "{case}: the toolkit token leaked on {stream}:\n{text}"
        );
    }
}

#[test]
fn a_toolkit_token_quoted_in_a_401_body_never_reaches_logs_or_the_toolkits_listing() {
    let server = QuotingServer::start();
    let dir = host_dir(&server.url);
    for verbosity in VERBOSITIES {
        let out = skillet(dir.path(), verbosity, &["toolkits", "--json"]);
        let case = format!("toolkits {verbosity:?}");
        assert_no_canary(&case, &out);
        let stdout = String::from_utf8_lossy(&out.stdout);
        // The failure itself is reported (the quote, redacted), not hidden.
        assert!(stdout.contains("401"), "{case}: {stdout}");
    }
}

#[test]
fn a_first_use_toolkit_failure_reaches_the_caller_redacted() {
    let server = QuotingServer::start();
    let dir = host_dir(&server.url);
    for verbosity in [&[][..], &["-vv"][..]] {
        let out = skillet(
            dir.path(),
            verbosity,
            &["run", "uses-lazy", "--args", "{}", "--json"],
        );
        let case = format!("run {verbosity:?}");
        assert_no_canary(&case, &out);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            stdout.contains("401"),
            "{case}: the failure is reported: {stdout}"
        );
    }
}
