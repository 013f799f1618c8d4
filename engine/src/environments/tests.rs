//! Environments with a stand-in `uv` (a shell script that logs each invocation and makes a
//! directory shaped like a venv), so what is built, when and how often is visible without a
//! network. The real uv is driven by the binary's tests (`cli/tests/run/cli_script_environments.rs`).

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use super::build::MARKER;
use super::*;

struct Fixture {
    _tmp: tempfile::TempDir,
    skills: PathBuf,
    root: PathBuf,
    uv: PathBuf,
    log: PathBuf,
}

fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let log = tmp.path().join("uv.log");
    let uv = tmp.path().join("uv");
    std::fs::write(
        &uv,
        format!(
            r#"#!/bin/sh
echo "$*" >> {log}
echo "env index=$UV_DEFAULT_INDEX home=$HOME git=$GIT_ALLOW_PROTOCOL." >> {log}
case "$*" in
  *" venv "*) for last; do :; done; mkdir -p "$last/bin"; ln -s /bin/sh "$last/bin/python" ;;
  *" pip install "*) for last; do :; done
     if [ -e {down} ]; then echo "  x Failed to fetch: https://pypi.org/simple/ (connection refused)" >&2; exit 1; fi
     if grep -q sdist-only "$last"; then
       echo "  Because sdist-only==1.0 has no usable wheels, we can conclude that your requirements are unsatisfiable." >&2
       exit 1
     fi
     if grep -q no-such-package "$last"; then
       echo "  x No solution found when resolving dependencies:" >&2
       echo "  Because no-such-package was not found in the package registry" >&2
       exit 1
     fi ;;
esac
"#,
            log = log.display(),
            down = tmp.path().join("index-down").display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&uv, std::fs::Permissions::from_mode(0o755)).unwrap();
    let skills = tmp.path().join("skills");
    std::fs::create_dir(&skills).unwrap();
    Fixture {
        root: tmp.path().join("envs"),
        skills,
        uv,
        log,
        _tmp: tmp,
    }
}

impl Fixture {
    fn skill(&self, name: &str, requirements: &str) -> SkillFolder {
        let dir = self.skills.join(name);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("SKILL.md"),
            format!("---\nname: {name}\ndescription: Test.\n---\nDo it.\n"),
        )
        .unwrap();
        std::fs::write(dir.join("requirements.txt"), requirements).unwrap();
        SkillFolder::of(
            &crate::skill::load_skill_dir(&dir, crate::skill::SkillSource::Project).unwrap(),
        )
    }

    fn environments(&self) -> Environments {
        let python = Ok(Interpreter {
            extension: "py".into(),
            configured: "python3".into(),
            program: PathBuf::from("/usr/bin/python3"),
            read_only: Vec::new(),
            python_version: Some("3.11.2".into()),
            skipped: Vec::new(),
        });
        Environments::new(
            EnvironmentOptions {
                uv: Some(self.uv.clone()),
                dir: Some(self.root.clone()),
                ..EnvironmentOptions::default()
            },
            Some(&python),
            None,
        )
    }

    fn builds(&self) -> usize {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .filter(|l| l.contains(" venv "))
            .count()
    }
}

fn counting(counter: &AtomicUsize) -> impl Fn(&Requirements) + Send + Sync + '_ {
    move |_| {
        counter.fetch_add(1, Ordering::SeqCst);
    }
}

#[tokio::test]
async fn concurrent_first_uses_build_once_and_later_uses_build_nothing() {
    let f = fixture();
    let skill = f.skill("pdf", "pypdf>=5\n");
    // Two hosts on one cache (two processes, as far as the lock is concerned), three calls.
    let (one, two) = (f.environments(), f.environments());
    let started = AtomicUsize::new(0);
    let on_build = counting(&started);
    let (a, b, c) = tokio::join!(
        one.prepare(&skill, &on_build),
        one.prepare(&skill, &on_build),
        two.prepare(&skill, &on_build),
    );
    let a = a.unwrap().expect("an environment");
    assert_eq!(Some(&a), b.unwrap().as_ref());
    assert_eq!(Some(&a), c.unwrap().as_ref());
    assert_eq!(f.builds(), 1, "uv venv ran once");
    assert!(a.dir.join(MARKER).is_file());
    assert_eq!(a.python(), a.dir.join("bin/python"));
    let marker_written = std::fs::metadata(a.dir.join(MARKER))
        .unwrap()
        .modified()
        .unwrap();

    // A new process later: ready at once, nothing built, on_build never called.
    let later = f.environments();
    assert_eq!(later.state(&skill), EnvironmentState::Ready(a.clone()));
    let before = started.load(Ordering::SeqCst);
    let again = later.prepare(&skill, &on_build).await.unwrap().unwrap();
    assert_eq!(again, a);
    assert_eq!(started.load(Ordering::SeqCst), before);
    assert_eq!(f.builds(), 1);
    let marker_now = std::fs::metadata(a.dir.join(MARKER))
        .unwrap()
        .modified()
        .unwrap();
    assert_eq!(marker_written, marker_now);
    assert!(!leftovers(&f.root), "no staging directory is left");
}

#[tokio::test]
async fn the_same_set_written_two_ways_shares_one_environment() {
    let f = fixture();
    let one = f.skill("one", "pypdf>=5\nreportlab\n");
    let two = f.skill("two", "reportlab\n\npypdf>=5 # for forms\n");
    let envs = f.environments();
    let a = envs.prepare(&one, &|_| {}).await.unwrap().unwrap();
    let b = envs.prepare(&two, &|_| {}).await.unwrap().unwrap();
    assert_eq!(a.dir, b.dir);
    assert_eq!(f.builds(), 1);
}

#[tokio::test]
async fn a_bad_requirement_fails_with_the_resolvers_message_and_stays_failed() {
    let f = fixture();
    let skill = f.skill("bad", "no-such-package==1.0\n");
    let envs = f.environments();
    assert!(matches!(
        envs.state(&skill),
        EnvironmentState::NotBuilt { .. }
    ));
    let err = envs.prepare(&skill, &|_| {}).await.unwrap_err();
    assert!(
        matches!(
            err.root_cause(),
            EnvironmentError::BuildFailed {
                what: "uv pip install",
                ..
            }
        ),
        "{err:?}"
    );
    let text = err.to_string();
    assert!(text.contains("uv pip install failed"), "{text}");
    assert!(
        text.contains("no-such-package was not found in the package registry"),
        "{text}"
    );
    assert_eq!(envs.state(&skill), EnvironmentState::Failed(err.clone()));
    // Remembered: a second use does not run uv again.
    let runs = std::fs::read_to_string(&f.log).unwrap().lines().count();
    assert_eq!(envs.prepare(&skill, &|_| {}).await.unwrap_err(), err);
    assert_eq!(
        std::fs::read_to_string(&f.log).unwrap().lines().count(),
        runs
    );
    assert!(
        !leftovers(&f.root),
        "the failed build's directory is removed"
    );
}

#[tokio::test]
async fn a_missing_uv_names_the_setting() {
    let f = fixture();
    let skill = f.skill("pdf", "pypdf\n");
    let python = Ok(Interpreter {
        extension: "py".into(),
        configured: "python3".into(),
        program: PathBuf::from("/usr/bin/python3"),
        read_only: Vec::new(),
        python_version: None,
        skipped: Vec::new(),
    });
    let envs = Environments::new(
        EnvironmentOptions {
            uv: Some(f.root.join("nope/uv")),
            dir: Some(f.root.clone()),
            ..EnvironmentOptions::default()
        },
        Some(&python),
        None,
    );
    let err = envs.prepare(&skill, &|_| {}).await.unwrap_err();
    assert!(matches!(err, EnvironmentError::UvMissing { .. }), "{err:?}");
    assert!(err.to_string().contains("[skills] uv"), "{err}");
}

#[tokio::test]
async fn a_skill_without_requirements_needs_nothing() {
    let f = fixture();
    let skill = f.skill("plain", "# nothing\n");
    let envs = f.environments();
    assert_eq!(envs.state(&skill), EnvironmentState::NotNeeded);
    assert_eq!(envs.prepare(&skill, &|_| {}).await.unwrap(), None);
    assert_eq!(f.builds(), 0);
}

fn leftovers(root: &Path) -> bool {
    std::fs::read_dir(root)
        .map(|entries| {
            entries
                .flatten()
                .any(|e| e.file_name().to_string_lossy().starts_with(".building-"))
        })
        .unwrap_or(false)
}

#[tokio::test]
async fn a_cache_the_sandbox_uid_cannot_enter_is_refused_naming_the_setting() {
    let f = fixture();
    let skill = f.skill("pdf", "pypdf\n");
    let private = f.root.with_file_name("private");
    std::fs::create_dir(&private).unwrap();
    std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o700)).unwrap();
    let python = Ok(Interpreter {
        extension: "py".into(),
        configured: "python3".into(),
        program: PathBuf::from("/usr/bin/python3"),
        read_only: Vec::new(),
        python_version: None,
        skipped: Vec::new(),
    });
    let nobody = SandboxUser {
        uid: 65534,
        gid: 65534,
    };
    let envs = Environments::new(
        EnvironmentOptions {
            uv: Some(f.uv.clone()),
            dir: Some(private.join("envs")),
            ..EnvironmentOptions::default()
        },
        Some(&python),
        Some(nobody),
    );
    let owner = std::fs::metadata(&private).unwrap().uid();
    if owner == nobody.uid {
        return; // the sandbox's uid owns it: nothing to refuse
    }
    let EnvironmentState::Failed(why) = envs.state(&skill) else {
        panic!("refused: {:?}", envs.state(&skill));
    };
    assert!(
        matches!(why, EnvironmentError::RootUnreachable { .. }),
        "{why:?}"
    );
    assert!(
        why.to_string().contains("[skills] environments_dir"),
        "{why}"
    );
    assert!(envs.prepare(&skill, &|_| {}).await.is_err());
    assert_eq!(f.builds(), 0, "nothing is built where it could not be used");
}

#[tokio::test]
async fn a_failed_build_is_remembered_until_due_then_built_again_and_the_wait_doubles() {
    let f = fixture();
    let down = f.log.with_file_name("index-down");
    std::fs::write(&down, "").unwrap();
    let skill = f.skill("flaky", "pypdf==5.4.0\n");
    let envs = f.environments();
    let first = envs.prepare(&skill, &|_| {}).await.unwrap_err();
    let text = first.to_string();
    assert!(text.contains("connection refused"), "{text}");
    assert!(
        text.ends_with("(tried again 30 s after this failure)"),
        "{text}"
    );
    assert_eq!(envs.state(&skill), EnvironmentState::Failed(first.clone()));
    assert_eq!(f.builds(), 1);
    // Still down when it is due: tried once more, and remembered twice as long.
    envs.expire_failures();
    assert!(matches!(
        envs.state(&skill),
        EnvironmentState::NotBuilt { .. }
    ));
    let second = envs.prepare(&skill, &|_| {}).await.unwrap_err();
    assert!(
        second
            .to_string()
            .ends_with("(tried again 60 s after this failure)"),
        "{second}"
    );
    assert_eq!(f.builds(), 2);
    // Not due: nothing runs.
    assert_eq!(envs.prepare(&skill, &|_| {}).await.unwrap_err(), second);
    assert_eq!(f.builds(), 2);
    // The index is back: the next due use builds it.
    std::fs::remove_file(&down).unwrap();
    envs.expire_failures();
    let built = envs.prepare(&skill, &|_| {}).await.unwrap();
    assert!(built.is_some());
    assert!(matches!(envs.state(&skill), EnvironmentState::Ready(_)));
    assert_eq!(f.builds(), 3);
}

#[tokio::test]
async fn uv_gets_the_index_only_in_its_environment_and_a_folders_requirements_only_wheels() {
    let f = fixture();
    let folder = f.skill("pdf", "pypdf\n");
    let hosted = f.skill("hosted", "");
    let python = Ok(Interpreter {
        extension: "py".into(),
        configured: "python3".into(),
        program: PathBuf::from("/usr/bin/python3"),
        read_only: Vec::new(),
        python_version: None,
        skipped: Vec::new(),
    });
    let canary = "canary-index-pw-4711";
    let envs = Environments::new(
        EnvironmentOptions {
            uv: Some(f.uv.clone()),
            dir: Some(f.root.clone()),
            package_index: Some(PackageIndex::new(format!(
                "https://me:{canary}@pypi.example/simple"
            ))),
            skills: [("hosted".to_owned(), vec!["reportlab".to_owned()])].into(),
            ..EnvironmentOptions::default()
        },
        Some(&python),
        None,
    );
    let built = envs.prepare(&folder, &|_| {}).await.unwrap().unwrap();
    envs.prepare(&hosted, &|_| {}).await.unwrap().unwrap();
    let log = std::fs::read_to_string(&f.log).unwrap();
    let installs: Vec<&str> = log.lines().filter(|l| l.contains("pip install")).collect();
    assert_eq!(installs.len(), 2, "{log}");
    assert!(installs[0].contains("--only-binary :all:"), "{log}");
    assert!(
        !installs[1].contains("--only-binary"),
        "the host's own list: {log}"
    );
    assert!(
        !installs.iter().any(|l| l.contains(canary)),
        "not in argv: {log}"
    );
    let home = f.root.join(".home");
    assert!(
        log.contains(&format!(
            "env index=https://me:{canary}@pypi.example/simple home={} git=.",
            home.display()
        )),
        "{log}"
    );
    let marker = std::fs::read_to_string(built.dir.join(MARKER)).unwrap();
    assert!(!marker.contains(canary), "{marker}");
    assert!(
        marker.contains("\"https://pypi.example/simple\""),
        "{marker}"
    );
    assert!(marker.contains("\"wheels-only\""), "{marker}");
    assert_eq!(
        crate::secrets::REDACTOR.redact(&format!("x {canary} y")),
        "x [REDACTED] y"
    );
}

#[tokio::test]
async fn a_refused_source_build_is_blocked_with_a_reason_naming_the_builds_setting() {
    let f = fixture();
    let skill = f.skill("legacy", "sdist-only==1.0\n");
    let err = f.environments().prepare(&skill, &|_| {}).await.unwrap_err();
    assert!(
        matches!(
            err.root_cause(),
            EnvironmentError::SourceBuildRefused {
                host_list: false,
                ..
            }
        ),
        "{err:?}"
    );
    let why = err.to_string();
    assert!(why.contains("has no usable wheels"), "{why}");
    assert!(
        why.contains("`[skills] builds` is \"wheels-only\", the default for requirements a skill folder declares; set `[skills] builds = \"allow-sdist\"`"),
        "{why}"
    );
}

#[test]
fn the_wait_after_a_failure_doubles_and_is_capped() {
    let now = Instant::now();
    let mut failure = Failure::after(None, EnvironmentError::UvNotOnPath, now);
    assert_eq!(failure.wait, RETRY_FIRST);
    for _ in 0..20 {
        failure = Failure::after(Some(&failure), EnvironmentError::UvNotOnPath, now);
    }
    assert_eq!(failure.wait, RETRY_MAX);
    assert!(!failure.due(now) && failure.due(now + RETRY_MAX));
}

#[test]
fn a_build_tools_failure_carries_its_stderr_tail_with_secrets_redacted() {
    let canary = "build-stderr-canary-7f3a";
    crate::secrets::REDACTOR.add(secrecy::SecretString::from(canary.to_owned()));
    let mut command = std::process::Command::new("/bin/sh");
    command.args([
        "-c",
        &format!("echo 'fetching https://u:{canary}@index/' >&2; exit 3"),
    ]);
    let err = build::run(command, "npm install").unwrap_err();
    let EnvironmentError::BuildFailed {
        what,
        status,
        output,
    } = &err
    else {
        panic!("a build failure: {err:?}");
    };
    assert_eq!((*what, status.code()), ("npm install", Some(3)));
    assert_eq!(output, "fetching https://u:[REDACTED]@index/");
    assert!(
        err.to_string()
            .starts_with("npm install failed (exit status: 3): fetching"),
        "{err}"
    );
}
