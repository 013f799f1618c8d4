//! Bundled scripts with their dependencies, through the real binary and the real `uv`: a skill
//! whose `requirements.txt` names `pypdf` gets an environment built once (on first use, with a
//! progress event) and reused (a second run builds nothing: no event, the marker untouched);
//! two first uses at once build once; a requirement the resolver cannot satisfy makes the skill
//! `Blocked` with uv's message; an interpreter the sandbox's uid cannot execute gets an error
//! that names it and the `interpreters` setting (document scripts: `cli_document_scripts.rs`).
//! The model is the embedded mock, whose
//! scenario calls `run_skill_script` and answers from what the script printed.
//!
//! uv is `$SKILLET_UV`, else `uv` beside `$SKILLET_PYTHON`, else `<workspace>/.venv/bin/uv`
//! (`mock-llm/tests/python/requirements.txt` pins it). The builds reach PyPI. Without uv the
//! tests are skipped with a notice, and fail under `CI`.

use crate::scripts_support;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use scripts_support::{Host, needs_system_tools, scripts_setting, text, uv};

const PYPDF_SCRIPT: &str =
    "import sys, pypdf\nprint('pypdf', pypdf.__version__, 'in', sys.prefix)\n";
const BUILDING: &str = "building the Python environment of skill";

fn the_environment(host: &Host) -> PathBuf {
    let dirs: Vec<PathBuf> = std::fs::read_dir(host.envs())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("skillet-env.json").is_file())
        .collect();
    assert_eq!(dirs.len(), 1, "one environment: {dirs:?}");
    dirs.into_iter().next().unwrap()
}

#[test]
fn a_script_imports_its_requirement_and_the_environment_is_built_once() {
    let Some(uv) = uv() else { return };
    let host = Host::new(&uv, "");
    host.skill(
        "pdf-info",
        "pypdf==5.4.0\n",
        ("info.py", PYPDF_SCRIPT),
        &format!("pypdf 5.4.0 in {}", host.envs().display()),
    );

    let first = host.run(&["run", "pdf-info", "describe the pdf"]);
    let out = text(&first);
    assert_eq!(first.status.code(), Some(0), "{out}");
    assert!(
        out.contains(BUILDING),
        "the first use builds, and says so: {out}"
    );
    assert_eq!(String::from_utf8_lossy(&first.stdout).trim(), "OK", "{out}");
    let env = the_environment(&host);
    let marker = std::fs::metadata(env.join("skillet-env.json"))
        .unwrap()
        .modified()
        .unwrap();

    let second = host.run(&["run", "pdf-info", "describe the pdf"]);
    let out = text(&second);
    assert_eq!(
        String::from_utf8_lossy(&second.stdout).trim(),
        "OK",
        "{out}"
    );
    assert!(
        !out.contains(BUILDING),
        "the second run builds nothing: {out}"
    );
    assert_eq!(the_environment(&host), env);
    let again = std::fs::metadata(env.join("skillet-env.json"))
        .unwrap()
        .modified()
        .unwrap();
    assert_eq!(marker, again, "the environment was not rebuilt");

    let validate = host.run(&[
        "validate",
        "--scripts",
        host.path().join("skills").to_str().unwrap(),
    ]);
    let out = text(&validate);
    assert_eq!(validate.status.code(), Some(0), "{out}");
    assert!(out.contains("environment: ready (pypdf==5.4.0)"), "{out}");
    // The default `python3` resolves to a program the sandbox can run, as root too (a pyenv
    // shim under /root is passed over with a note).
    let py = out
        .lines()
        .find(|l| l.starts_with("interpreters: .py: "))
        .expect(&out);
    assert!(py.contains(" -> /"), "{py}");
    assert!(!py.contains("error"), "{py}");
}

#[test]
fn two_first_uses_at_once_build_once() {
    let Some(uv) = uv() else { return };
    // uv behind a wrapper that logs each invocation.
    let bin = tempfile::tempdir().unwrap();
    let log = bin.path().join("uv.log");
    let wrapper = bin.path().join("uv");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\necho \"$*\" >> {}\nexec {} \"$@\"\n",
            log.display(),
            uv.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    let host = Host::new(&wrapper, "");
    host.skill(
        "pdf-info",
        "pypdf==5.4.0\n",
        ("info.py", PYPDF_SCRIPT),
        "pypdf 5.4.0 in",
    );
    let children: Vec<_> = (0..2)
        .map(|_| {
            host.command(&["run", "pdf-info", "describe the pdf"])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert_eq!(
            String::from_utf8_lossy(&out.stdout).trim(),
            "OK",
            "{}",
            text(&out)
        );
    }
    let venvs = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .filter(|l| l.contains(" venv "))
        .count();
    assert_eq!(venvs, 1, "uv venv ran once");
    the_environment(&host);
}

#[test]
fn a_requirement_the_resolver_cannot_satisfy_blocks_the_skill_with_its_message() {
    let Some(uv) = uv() else { return };
    let host = Host::new(&uv, "");
    host.skill(
        "broken",
        "skillet-no-such-package-4a7c==1.0\n",
        ("run.py", "print('never')\n"),
        "never",
    );
    let skills = host.path().join("skills");
    let validate = host.run(&["validate", "--prepare", skills.to_str().unwrap()]);
    let out = text(&validate);
    assert_eq!(validate.status.code(), Some(1), "{out}");
    assert!(
        out.contains("environment: error: uv pip install failed"),
        "{out}"
    );
    assert!(out.contains("skillet-no-such-package-4a7c"), "{out}");

    // Served: the build fails at start and discover shows the skill Blocked with uv's words.
    let mut serve = host
        .command(&["serve", "--stdio"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write as _;
    serve
        .stdin
        .take()
        .unwrap()
        .write_all(b"{\"type\":\"skill/discover/req\",\"id\":\"d1\"}\n")
        .unwrap();
    let out = serve.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let response: serde_json::Value = stdout
        .lines()
        .find_map(|l| serde_json::from_str(l).ok())
        .unwrap_or_else(|| panic!("a discover answer: {}", text(&out)));
    let skill = &response["skills"][0];
    assert_eq!(skill["status"], "Blocked", "{response}");
    let failed = skill["metadata"]["environment_failed"]
        .as_str()
        .unwrap_or_default();
    assert!(
        failed.contains("skillet-no-such-package-4a7c"),
        "{response}"
    );
}

#[test]
fn an_interpreter_the_sandbox_cannot_execute_gets_an_error_naming_the_setting() {
    let Some(uv) = uv() else { return };
    // A real program in a directory only its owner may enter, as a pyenv root under /root is.
    let private = tempfile::tempdir().unwrap();
    let home = private.path().join("home");
    std::fs::create_dir(&home).unwrap();
    let program = home.join("sh");
    std::fs::copy("/bin/sh", &program).unwrap();
    std::fs::set_permissions(&home, std::fs::Permissions::from_mode(0o700)).unwrap();
    let host = Host::new(&uv, "");
    let config = host.path().join("skillet.toml");
    let mut toml = std::fs::read_to_string(&config).unwrap();
    toml.push_str(&format!(
        "interpreters = {{ sh = \"{}\" }}\n",
        program.display()
    ));
    std::fs::write(&config, toml).unwrap();
    host.skill(
        "shell",
        "",
        ("hello.sh", "echo hello-from-sh\n"),
        "hello-from-sh",
    );

    let validate = host.run(&[
        "validate",
        "--scripts",
        host.path().join("skills").to_str().unwrap(),
    ]);
    let report = text(&validate);
    if !report.contains("cannot enter") {
        // Not root (no uid drop): children run as this user, who can enter their own directory.
        eprintln!("\n==== not root: the private interpreter is usable here ====\n{report}\n");
        let run = host.run(&["run", "shell", "run it"]);
        assert_eq!(
            String::from_utf8_lossy(&run.stdout).trim(),
            "OK",
            "{}",
            text(&run)
        );
        return;
    }
    assert_eq!(validate.status.code(), Some(1), "{report}");
    assert!(report.contains("interpreters: .sh: error:"), "{report}");
    assert!(
        report.contains(&format!("{}", program.display())),
        "{report}"
    );
    assert!(
        report.contains("[skills.scripts] interpreters = { sh = "),
        "{report}"
    );
    // The script call is refused before the sandbox with the same words: the model sees them.
    host.skill(
        "shell",
        "",
        ("hello.sh", "echo hello-from-sh\n"),
        "set `[skills.scripts] interpreters = { sh = ",
    );
    let run = host.run(&["run", "shell", "run it"]);
    assert_eq!(
        String::from_utf8_lossy(&run.stdout).trim(),
        "OK",
        "{}",
        text(&run)
    );
}

#[test]
fn an_offered_system_tool_installed_outside_the_system_dirs_runs_by_name_with_its_files() {
    // No requirements: uv is never asked for.
    let host = Host::new(Path::new("uv"), "");
    // An installation as LibreOffice's is: a program under `program/` that reads its own files.
    let install = host.path().join("opt").join("mytool");
    std::fs::create_dir_all(install.join("program")).unwrap();
    std::fs::create_dir_all(install.join("share")).unwrap();
    std::fs::write(
        install.join("share").join("greeting.txt"),
        "tool-data-read\n",
    )
    .unwrap();
    let program = install.join("program").join("mytool");
    std::fs::write(
        &program,
        "#!/bin/sh\nhere=$(dirname \"$(readlink -f \"$0\")\")\necho \"mytool got $1\"\n\
         cat \"$here/../share/greeting.txt\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
    scripts_setting(&host, &format!("tools = [\"{}\"]", program.display()));
    host.skill(
        "convert",
        "",
        ("convert.sh", "mytool hello\n"),
        "mytool got hello\\ntool-data-read",
    );
    needs_system_tools(&host, "convert", r#"["mytool"]"#);

    let validate = host.run(&[
        "validate",
        "--scripts",
        host.path().join("skills").to_str().unwrap(),
    ]);
    let report = text(&validate);
    assert!(
        report.contains(&format!("tools: mytool: {}", program.display())),
        "{report}"
    );
    assert!(!report.contains("system tools: error"), "{report}");
    let run = host.run(&["run", "convert", "convert it"]);
    assert_eq!(
        String::from_utf8_lossy(&run.stdout).trim(),
        "OK",
        "the script found the tool by name and the tool read its own files: {}",
        text(&run)
    );
}

#[test]
fn a_tool_the_host_does_not_offer_blocks_its_skill_and_a_missing_program_gets_a_hint() {
    let host = Host::new(Path::new("uv"), "");
    host.skill("needs-office", "", ("recalc.sh", "echo never\n"), "never");
    needs_system_tools(&host, "needs-office", r#"["soffice-not-offered"]"#);
    let discover = host.run(&["discover"]);
    let listing = text(&discover);
    assert!(
        listing.contains(
            "missing system tools: soffice-not-offered (not offered: add it to \
                          `[skills.scripts] tools`)"
        ),
        "{listing}"
    );
    let run = host.run(&["run", "needs-office", "go"]);
    let out = text(&run);
    assert_ne!(run.status.code(), Some(0), "{out}");
    assert!(out.contains("is Blocked"), "{out}");
    let validate = host.run(&[
        "validate",
        "--scripts",
        host.path().join("skills").to_str().unwrap(),
    ]);
    let report = text(&validate);
    assert!(
        report.contains("system tools: error: soffice-not-offered (not offered"),
        "{report}"
    );

    // A skill that declares nothing and whose script runs an absent program: the model gets
    // the script's failure and a hint naming the program and the setting.
    host.skill(
        "undeclared",
        "",
        (
            "run.py",
            "import subprocess\nsubprocess.run(['pdftoppm-absent-xyz', '-v'])\n",
        ),
        "the script could not find the program `pdftoppm-absent-xyz`",
    );
    let run = host.run(&["run", "undeclared", "go"]);
    assert_eq!(
        String::from_utf8_lossy(&run.stdout).trim(),
        "OK",
        "{}",
        text(&run)
    );
}

#[test]
fn without_uv_the_environment_is_built_with_the_interpreters_venv_and_pip() {
    // A machine with Python alone: no uv in the config or on PATH.
    let path = "/usr/bin:/bin";
    let has_venv = std::process::Command::new("/usr/bin/python3")
        .args(["-c", "import venv, ensurepip"])
        .status()
        .is_ok_and(|s| s.success());
    if !has_venv {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI is set but /usr/bin/python3 has no venv/ensurepip (python3-venv)"
        );
        eprintln!("\n==== SKIPPED: no /usr/bin/python3 with venv ====\n");
        return;
    }
    let host = Host::without_uv("");
    host.skill(
        "pdf-info",
        "pypdf==5.4.0\n",
        ("info.py", PYPDF_SCRIPT),
        &format!("pypdf 5.4.0 in {}", host.envs().display()),
    );
    let run = host
        .command(&["run", "pdf-info", "describe the pdf"])
        .env("PATH", path)
        .output()
        .unwrap();
    let out = text(&run);
    assert_eq!(run.status.code(), Some(0), "{out}");
    assert!(out.contains(BUILDING), "{out}");
    assert_eq!(String::from_utf8_lossy(&run.stdout).trim(), "OK", "{out}");
    let marker = std::fs::read_to_string(the_environment(&host).join("skillet-env.json")).unwrap();
    assert!(marker.contains("\"installer\": \"pip\""), "{marker}");
    // Built once: the second run builds nothing.
    let again = host
        .command(&["run", "pdf-info", "describe the pdf"])
        .env("PATH", path)
        .output()
        .unwrap();
    assert!(!text(&again).contains(BUILDING), "{}", text(&again));
    assert_eq!(String::from_utf8_lossy(&again.stdout).trim(), "OK");
}
