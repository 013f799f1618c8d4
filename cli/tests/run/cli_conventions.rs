//! The `skillet` binary's conventions, spawned for real: where the config file and the skills
//! are looked up (current directory, then the XDG directories, set in the child's environment
//! only), `--help` text, `completions`, no ANSI escapes off a terminal or under `NO_COLOR`,
//! `init` → `validate --strict` → `run` → `eval` on the embedded mock, and an unknown skill
//! refused with the closest names before the mock starts.

use crate::cli_support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

use cli_support::*;

/// Variables that would change what the binary finds or prints: cleared for every child, so
/// the developer's own environment (and `~/.config/skillet`) never leaks into a test.
const CLEARED: [&str; 12] = [
    "SKILLET_PROVIDER",
    "SKILLET_MODEL",
    "SKILLET_CONFIG",
    "SKILLET_BASE_URL",
    "SKILLET_LOG_FORMAT",
    "RUST_LOG",
    "NO_COLOR",
    "CLICOLOR_FORCE",
    "FORCE_COLOR",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "OTEL_EXPORTER_OTLP_ENDPOINT",
];

/// A sandboxed child: its own working directory and `HOME` (both empty temporary directories
/// unless the test fills them), and only the environment the test adds.
struct Sandbox {
    cwd: tempfile::TempDir,
    home: tempfile::TempDir,
}

impl Sandbox {
    fn new() -> Self {
        Sandbox {
            cwd: tempfile::tempdir().unwrap(),
            home: tempfile::tempdir().unwrap(),
        }
    }

    fn cwd(&self) -> &Path {
        self.cwd.path()
    }

    fn home(&self) -> &Path {
        self.home.path()
    }

    fn run(&self, args: &[&str]) -> Output {
        self.run_with(args, &[])
    }

    fn run_with(&self, args: &[&str], env: &[(&str, &Path)]) -> Output {
        let mut command = Command::new(SKILLET);
        command
            .current_dir(self.cwd())
            .args(args)
            .env("HOME", self.home());
        for var in CLEARED {
            command.env_remove(var);
        }
        for (var, value) in env {
            command.env(var, value);
        }
        command.output().expect("run skillet")
    }
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

/// A directory `dir` holding one echo skill `name`.
fn skills_root_with(dir: &Path, name: &str) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    write_skill(dir, name, 0, "{json: {echo: \"hello\"}}");
    dir.to_path_buf()
}

/// A `skillet.toml` at `path` whose skills are those in `skills`.
fn config_naming(path: &Path, skills: &Path) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(
        path,
        format!("skills_dirs = [{:?}]\n", skills.display().to_string()),
    )
    .unwrap();
}

fn discovered(output: &Output) -> Vec<String> {
    assert_eq!(output.status.code(), Some(0), "{}", stderr(output));
    let response: Value = serde_json::from_str(&stdout(output)).expect("discover --json");
    response["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap().to_owned())
        .collect()
}

// ---- config lookup ----

#[test]
fn the_config_in_the_current_directory_is_used_and_named_at_verbose_level_and_by_validate() {
    let sandbox = Sandbox::new();
    let skills = skills_root_with(&sandbox.cwd().join("mine"), "from-cwd-config");
    config_naming(&sandbox.cwd().join("skillet.toml"), &skills);
    // A user config too: the current directory's wins.
    let user_skills = skills_root_with(&sandbox.home().join("other"), "from-user-config");
    config_naming(
        &sandbox.home().join(".config/skillet/skillet.toml"),
        &user_skills,
    );

    let out = sandbox.run(&["-v", "discover", "--json"]);
    assert_eq!(discovered(&out), ["from-cwd-config"]);
    assert!(
        stderr(&out).contains("config: skillet.toml (current directory)"),
        "{}",
        stderr(&out)
    );

    let validated = sandbox.run(&["validate", skills.to_str().unwrap()]);
    assert_eq!(validated.status.code(), Some(0), "{}", stderr(&validated));
    assert!(
        stderr(&validated).contains("config: skillet.toml"),
        "{}",
        stderr(&validated)
    );
}

#[test]
fn without_a_local_config_the_one_in_xdg_config_home_is_used() {
    let sandbox = Sandbox::new();
    let xdg = tempfile::tempdir().unwrap();
    let skills = skills_root_with(&xdg.path().join("skills-here"), "from-xdg-config");
    let file = xdg.path().join("skillet/skillet.toml");
    config_naming(&file, &skills);

    let out = sandbox.run_with(
        &["-v", "discover", "--json"],
        &[("XDG_CONFIG_HOME", xdg.path())],
    );
    assert_eq!(discovered(&out), ["from-xdg-config"]);
    assert!(
        stderr(&out).contains(&format!(
            "config: {} (user config directory)",
            file.display()
        )),
        "{}",
        stderr(&out)
    );
}

#[test]
fn with_xdg_config_home_unset_the_config_under_home_dot_config_is_used() {
    let sandbox = Sandbox::new();
    let skills = skills_root_with(&sandbox.home().join("s"), "from-home-config");
    config_naming(
        &sandbox.home().join(".config/skillet/skillet.toml"),
        &skills,
    );
    assert_eq!(
        discovered(&sandbox.run(&["discover", "--json"])),
        ["from-home-config"]
    );

    // No file anywhere: the built-in defaults, and `validate` says so.
    let bare = Sandbox::new();
    let dir = skills_root_with(&bare.cwd().join("x"), "plain");
    let validated = bare.run(&["validate", dir.to_str().unwrap()]);
    assert!(
        stderr(&validated).contains("config: built-in defaults"),
        "{}",
        stderr(&validated)
    );
}

// ---- skills lookup ----

#[test]
fn without_skills_here_the_ones_in_xdg_data_home_are_used_and_local_ones_win() {
    let sandbox = Sandbox::new();
    let data = tempfile::tempdir().unwrap();
    skills_root_with(&data.path().join("skillet/skills"), "from-xdg-data");
    let env = [("XDG_DATA_HOME", data.path())];

    let out = sandbox.run_with(&["discover", "--json"], &env);
    assert_eq!(discovered(&out), ["from-xdg-data"]);

    skills_root_with(&sandbox.cwd().join("skills"), "from-cwd");
    let out = sandbox.run_with(&["discover", "--json"], &env);
    assert_eq!(discovered(&out), ["from-cwd"]);

    // --skills-dir still wins over both.
    let out = sandbox.run_with(&["--skills-dir", &bundled(), "discover", "--json"], &env);
    assert!(discovered(&out).contains(&"summarize".to_owned()));
}

#[test]
fn with_xdg_data_home_unset_the_skills_under_home_local_share_are_used() {
    let sandbox = Sandbox::new();
    skills_root_with(
        &sandbox.home().join(".local/share/skillet/skills"),
        "from-home-data",
    );
    assert_eq!(
        discovered(&sandbox.run(&["discover", "--json"])),
        ["from-home-data"]
    );
}

// ---- help ----

#[test]
fn help_opens_with_what_skillet_does_and_names_the_env_vars_and_lookups() {
    let sandbox = Sandbox::new();
    let out = sandbox.run(&["--help"]);
    assert_eq!(out.status.code(), Some(0));
    let help = stdout(&out);
    assert!(
        help.starts_with("Skillet runs your skills"),
        "help opens with what Skillet does: {help}"
    );
    for expected in [
        "[env: SKILLET_CONFIG=]",
        "[env: SKILLET_PROVIDER=]",
        "[env: SKILLET_MODEL=]",
        "[env: SKILLET_LOG_FORMAT=]",
        "NO_COLOR",
        "RUST_LOG",
        "XDG_CONFIG_HOME",
        "$XDG_DATA_HOME/skillet/skills",
        "Examples:",
        "skillet init greet",
    ] {
        assert!(
            help.contains(expected),
            "--help lacks {expected:?}:\n{help}"
        );
    }
}

#[test]
fn every_command_has_examples_in_its_help() {
    let sandbox = Sandbox::new();
    for command in [
        "run",
        "discover",
        "validate",
        "serve",
        "call",
        "card",
        "toolkits",
        "eval",
        "init",
        "completions",
    ] {
        let out = sandbox.run(&[command, "--help"]);
        assert_eq!(out.status.code(), Some(0), "{command}");
        let help = stdout(&out);
        assert!(
            help.contains("Examples:") && help.contains(&format!("skillet {command}")),
            "`{command} --help` shows no example:\n{help}"
        );
        assert!(
            help.contains("[env: SKILLET_CONFIG="),
            "`{command} --help` hides the global options' env vars:\n{help}"
        );
    }
}

// ---- completions ----

#[test]
fn completions_are_printed_for_every_supported_shell() {
    let sandbox = Sandbox::new();
    let bash = sandbox.run(&["completions", "bash"]);
    assert_eq!(bash.status.code(), Some(0), "{}", stderr(&bash));
    let script = stdout(&bash);
    assert!(script.contains("skillet"), "{script}");
    assert!(
        script.contains("complete -F"),
        "a bash completion: {script}"
    );
    assert!(script.contains("--skills-dir") && script.contains("init"));
    for shell in ["zsh", "fish", "elvish", "powershell"] {
        let out = sandbox.run(&["completions", shell]);
        assert_eq!(out.status.code(), Some(0), "{shell}: {}", stderr(&out));
        assert!(stdout(&out).contains("skillet"), "{shell}");
    }
}

#[test]
fn completions_for_an_unknown_shell_fail_naming_the_supported_ones() {
    let out = Sandbox::new().run(&["completions", "nosuchshell"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stdout(&out).is_empty());
    let message = stderr(&out);
    assert!(message.contains("invalid value 'nosuchshell'"), "{message}");
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        assert!(message.contains(shell), "{message}");
    }
}

// ---- colour ----

fn has_ansi(output: &Output) -> bool {
    String::from_utf8_lossy(&output.stderr).contains("\x1b[")
}

#[test]
fn no_ansi_escapes_on_a_pipe_or_under_no_color_even_when_forced() {
    let sandbox = Sandbox::new();
    // Fails (exit 3) after logging at -v; clap's error fails too (exit 2).
    let failing_run = ["-v", "--skills-dir", &bundled(), "run", "no-such-skill"];
    let bad_flag = ["run", "summarize", "--frobnicate"];
    let one = Path::new("1");

    let piped = sandbox.run(&failing_run);
    assert_eq!(piped.status.code(), Some(3));
    assert!(
        stderr(&piped).contains("INFO"),
        "it logs: {}",
        stderr(&piped)
    );
    assert!(!has_ansi(&piped), "{:?}", stderr(&piped));
    assert!(!has_ansi(&sandbox.run(&bad_flag)));

    // The control: forced colour does put escapes on the pipe, so the check above can fail.
    let forced = sandbox.run_with(&failing_run, &[("CLICOLOR_FORCE", one)]);
    assert!(has_ansi(&forced), "{:?}", stderr(&forced));
    assert!(has_ansi(
        &sandbox.run_with(&bad_flag, &[("FORCE_COLOR", one)])
    ));

    // NO_COLOR wins over forcing, in the logs and in clap's errors.
    let no_color = [("NO_COLOR", one), ("CLICOLOR_FORCE", one)];
    let out = sandbox.run_with(&failing_run, &no_color);
    assert_eq!(out.status.code(), Some(3));
    assert!(stderr(&out).contains("INFO"));
    assert!(!has_ansi(&out), "{:?}", stderr(&out));
    let out = sandbox.run_with(&bad_flag, &no_color);
    assert_eq!(out.status.code(), Some(2));
    assert!(!has_ansi(&out), "{:?}", stderr(&out));
}

/// `skillet ARGS` on a pseudo-terminal (util-linux `script`), with `env` added; what the
/// terminal showed. `None` where `script` is not installed.
fn on_a_terminal(sandbox: &Sandbox, args: &str, env: &[(&str, &str)]) -> Option<String> {
    let mut command = Command::new("script");
    command
        .current_dir(sandbox.cwd())
        .args(["-qec", &format!("{SKILLET} {args}"), "/dev/null"])
        .env("HOME", sandbox.home());
    for var in CLEARED {
        command.env_remove(var);
    }
    for (var, value) in env {
        command.env(var, value);
    }
    let out = command.output().ok()?;
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn on_a_terminal_logs_are_coloured_unless_no_color_is_set() {
    let sandbox = Sandbox::new();
    let args = "-v run no-such-skill";
    let Some(coloured) = on_a_terminal(&sandbox, args, &[]) else {
        eprintln!("skipped: util-linux `script` is not installed (no pseudo-terminal)");
        return;
    };
    // The control: a terminal gets colour, so the check below can fail.
    assert!(
        coloured.contains("INFO") && coloured.contains("\x1b["),
        "{coloured:?}"
    );
    let plain = on_a_terminal(&sandbox, args, &[("NO_COLOR", "1")]).unwrap();
    assert!(plain.contains("INFO"), "{plain:?}");
    assert!(
        !plain.contains("\x1b["),
        "NO_COLOR on a terminal: {plain:?}"
    );
    // An empty NO_COLOR is unset (no-color.org).
    let empty = on_a_terminal(&sandbox, args, &[("NO_COLOR", "")]).unwrap();
    assert!(empty.contains("\x1b["), "{empty:?}");
}

// ---- init ----

#[test]
fn an_initialised_skill_validates_strictly_runs_on_the_mock_and_passes_its_eval() {
    let sandbox = Sandbox::new();
    let init = sandbox.run(&["init", "greet-people"]);
    assert_eq!(init.status.code(), Some(0), "{}", stderr(&init));
    let folder = sandbox.cwd().join("skills/greet-people");
    for file in [
        "SKILL.md",
        "assets/input.schema.json",
        "assets/output.schema.json",
        "examples/basic.json",
        "mock-scenario.yaml",
        "evals/evals.json",
    ] {
        assert!(folder.join(file).is_file(), "{file} was not written");
        assert!(stdout(&init).contains(file), "init lists {file}");
    }

    let validated = sandbox.run(&["validate", "skills/greet-people", "--strict"]);
    assert_eq!(
        validated.status.code(),
        Some(0),
        "{}{}",
        stdout(&validated),
        stderr(&validated)
    );
    assert!(stdout(&validated).is_empty(), "{}", stdout(&validated));

    // By name, from ./skills, on the embedded mock.
    let run = sandbox.run(&[
        "run",
        "greet-people",
        "--args",
        "@skills/greet-people/examples/basic.json",
    ]);
    assert_eq!(run.status.code(), Some(0), "{}", stderr(&run));
    assert!(
        stderr(&run).contains("embedded mock-llm"),
        "{}",
        stderr(&run)
    );
    let data: Value = serde_json::from_str(&stdout(&run)).expect("the data as JSON");
    assert!(data["greeting"].as_str().unwrap().contains("Ada"), "{data}");

    let eval = sandbox.run(&["eval", "greet-people"]);
    assert_eq!(
        eval.status.code(),
        Some(0),
        "{}{}",
        stdout(&eval),
        stderr(&eval)
    );
    assert!(
        stdout(&eval).contains("1 run, 1 passed"),
        "{}",
        stdout(&eval)
    );
    // Its expectation was graded by the judge the scaffolded scenario scripts.
    let all = stdout(&eval)
        .lines()
        .find(|l| l.starts_with("all "))
        .map(str::to_owned)
        .unwrap_or_default();
    assert!(all.contains(" 1/1 "), "{}", stdout(&eval));
}

#[test]
fn init_writes_into_dir_or_the_first_skills_dir() {
    let sandbox = Sandbox::new();
    let out = sandbox.run(&["init", "alpha", "--dir", "elsewhere"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(sandbox.cwd().join("elsewhere/alpha/SKILL.md").is_file());

    let out = sandbox.run(&["--skills-dir", "roots", "init", "beta"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(sandbox.cwd().join("roots/beta/SKILL.md").is_file());
    let discovered = sandbox.run(&["--skills-dir", "roots", "discover", "--json"]);
    assert_eq!(self::discovered(&discovered), ["beta"]);
}

#[test]
fn init_refuses_an_invalid_name_and_writes_nothing() {
    let sandbox = Sandbox::new();
    for bad in ["Greet", "my_skill", "-lead", "double--dash", "trail-"] {
        // After `--`, so "-lead" is a name and not an option.
        let out = sandbox.run(&["init", "--", bad]);
        assert_eq!(out.status.code(), Some(2), "{bad}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("lowercase letters, digits and single hyphens"),
            "{bad}: {}",
            stderr(&out)
        );
    }
    assert!(
        stderr(&sandbox.run(&["init", "My_Skill"])).contains("e.g. \"my-skill\""),
        "a valid name is suggested"
    );
    assert!(
        !sandbox.cwd().join("skills").exists(),
        "nothing was written"
    );
}

#[test]
fn init_refuses_an_existing_folder_and_leaves_it_untouched() {
    let sandbox = Sandbox::new();
    let folder = sandbox.cwd().join("skills/taken");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join("SKILL.md"), "mine").unwrap();

    let out = sandbox.run(&["init", "taken"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("skills/taken: already exists"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        std::fs::read_to_string(folder.join("SKILL.md")).unwrap(),
        "mine"
    );
    assert!(!folder.join("assets").exists());
}

// ---- unknown skills ----

#[test]
fn an_unknown_skill_is_refused_with_the_closest_name_before_the_mock_starts() {
    let sandbox = Sandbox::new();
    for command in ["run", "eval"] {
        let out = sandbox.run(&["--skills-dir", &bundled(), command, "summarise"]);
        let message = stderr(&out);
        assert_eq!(out.status.code(), Some(3), "{command}: {message}");
        assert!(
            message.contains("no skill named \"summarise\"")
                && message.contains("did you mean summarize?"),
            "{command}: {message}"
        );
        assert!(
            message.contains("the embedded mock was not started"),
            "{command}: {message}"
        );
        // The notice every mock start prints is absent: it really did not start.
        assert!(
            !message.contains("using the embedded mock-llm at"),
            "{command}: {message}"
        );
    }
}

#[test]
fn an_unknown_fragment_suggests_up_to_three_names_and_json_still_prints_a_response() {
    let sandbox = Sandbox::new();
    let out = sandbox.run(&["--skills-dir", &bundled(), "run", "report"]);
    assert_eq!(out.status.code(), Some(3));
    assert!(
        stderr(&out).contains("did you mean one of: table-report, expense-report?"),
        "{}",
        stderr(&out)
    );

    let json = sandbox.run(&["--skills-dir", &bundled(), "run", "sumarize", "--json"]);
    assert_eq!(json.status.code(), Some(3));
    let response: Value = serde_json::from_str(&stdout(&json)).expect("one skill/call/resp");
    assert_eq!(response["type"], "skill/call/resp");
    assert_eq!(response["error"]["code"], "unknown_skill");
    assert!(
        response["error"]["message"]
            .as_str()
            .unwrap()
            .contains("summarize"),
        "{response}"
    );

    let nothing_close = sandbox.run(&["--skills-dir", &bundled(), "run", "zzzzzzzzzzzz"]);
    assert_eq!(nothing_close.status.code(), Some(3));
    assert!(!stderr(&nothing_close).contains("did you mean"));
}
