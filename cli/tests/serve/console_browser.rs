//! The web console in a real browser: `cli/tests/python/console_browser.py` drives headless
//! Chromium (Selenium, Debian `chromium` + `chromium-driver`) through the real `skillet serve
//! --http` on the embedded mock-llm — skills page, filters, a generated form with a nested object
//! and an enum, a field error that sends nothing, a run with its turns, tool call and validated
//! result, a cancelled slow run, the history after a reload; a gated tool call approved and
//! another denied with a reason from the page; an input file picked and read by the run, one
//! over the host's limit refused in the browser (nothing sent) and one sent around the picker
//! refused by the server; the MCP and A2A copies (the MCP one sent by the official `mcp`
//! client to `/mcp`, the A2A one posted to `/a2a`, both answered); the bundled `code-review`
//! (its mock scenario repairs once) with its transcript — the rejected turn's violations, then
//! turn 2 — live and from the history; a plain Agent Skill with a 1,000-character description
//! (one "Request" textarea, no horizontal overflow, a run); unknown skill and run routes showing
//! only their notice; the repair side by side (rejected answer, violations, repaired answer), the
//! run's waterfall (live while the slow run goes, then under the result), a failed run's box linking to the turn it failed at, "Load example" from
//! `examples/*.json` and `a2a-examples`, SKILL.md rendered as Markdown (its HTML shown as text)
//! with the raw file on a toggle, the environment line, a history that shows a run made
//! elsewhere without a reload, with turns and repairs columns and its filters in the URL —
//! then restarts the server, finds the run in the history again and the report `skillet eval
//! --save` made of ticket-triage on two models shown side by side in its skill view, with the
//! Wilson interval and a failing cell opened to its failed check. Two more servers: one without
//! content capture (the page says what is not kept and how to keep it) and one with no skills
//! (the empty list says where the server looked and what to do). The script fails on any error
//! in the browser's log.
//!
//! The interpreter is `$SKILLET_PYTHON` or `<workspace>/.venv/bin/python` with `selenium` and `mcp`
//! (`mock-llm/tests/python/requirements.txt`); the browser `$CHROMIUM` or `/usr/bin/chromium`,
//! its driver `$CHROMEDRIVER` or `/usr/bin/chromedriver`. Without them the test fails when `CI`
//! is set and is skipped loudly otherwise. The script writes PNGs of each view into
//! `SKILLET_CONSOLE_SCREENSHOTS` (`docs/console/screenshots.sh` sets it, for the README), by
//! default `target/console-screenshots/`.

use crate::cli_support;
use crate::serve_support;

use std::path::{Path, PathBuf};
use std::process::Stdio;

use cli_support::{SKILLET, copy_dir, write_skill};
use serve_support::{HttpServer, ServeHttp};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The Python with selenium, when it and the browser are installed.
fn browser_python() -> Option<PathBuf> {
    let python = std::env::var_os("SKILLET_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join(".venv/bin/python"));
    let has_selenium = std::process::Command::new(&python)
        .args(["-c", "import selenium, mcp"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    let chromium = std::env::var_os("CHROMIUM")
        .map_or_else(|| PathBuf::from("/usr/bin/chromium"), PathBuf::from);
    let driver = std::env::var_os("CHROMEDRIVER")
        .map_or_else(|| PathBuf::from("/usr/bin/chromedriver"), PathBuf::from);
    if has_selenium && chromium.exists() && driver.exists() {
        return Some(python);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "CI is set but the browser test cannot run: selenium in {} {has_selenium}, {} {}, {} {}",
        python.display(),
        chromium.display(),
        chromium.exists(),
        driver.display(),
        driver.exists()
    );
    eprintln!(
        "\n==== SKIPPED web console browser test: needs selenium in $SKILLET_PYTHON / .venv and \
         Debian chromium + chromium-driver ====\n"
    );
    None
}

/// `ticket-triage` (a nested object with an enum, a default, a `not` only the server checks, a
/// calculator call, then a valid answer), `slow-echo` (a turn that takes 30 s), `needs-a-tool`
/// (Blocked), `gated-calc` (its calculator call needs approval; the answer says how it was
/// decided), `file-reader` (reads its input file `notes.txt`), `never-valid` (its answer never
/// matches its output schema: it fails at turn 2), `note-writer` (a plain skill whose run writes
/// `summary.md`, a produced file), `code-review` and `plain-notes`
/// (`write_ecosystem_skills`).
fn write_skills(root: &Path) {
    write_gated_and_file_skills(root);
    write_ecosystem_skills(root);
    // The bundled summarize, whose evals `skillet eval --baseline --repeat 2 --save` runs.
    copy_dir(
        &repo_root().join("skills/summarize"),
        &root.join("summarize"),
    );
    let dir = root.join("ticket-triage");
    std::fs::create_dir_all(dir.join("assets")).unwrap();
    std::fs::write(
        dir.join("SKILL.md"),
        "---\nname: ticket-triage\ndescription: Route a support ticket to a queue.\nmetadata:\n  \
         a2a-tags: '[\"support\"]'\n  a2e-category: operations\n  a2e-version: 1.2.0\n  \
         a2a-input-schema: assets/input.schema.json\n  a2a-output-schema: assets/output.schema.json\n  \
         a2e-tools: '[\"calculator\"]'\n  a2e-max-turns: '4'\n---\n\
         You triage support tickets. Ticket: {{ ticket }}; copies: {{ copies }}.\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("assets/input.schema.json"),
        r#"{"type":"object","properties":{
            "ticket":{"type":"object","description":"The ticket as filed.","properties":{
                "title":{"type":"string","minLength":1,"maxLength":80},
                "priority":{"enum":["low","normal","high"]}},
              "required":["title","priority"],"additionalProperties":false},
            "copies":{"type":"integer","minimum":1,"default":1,"not":{"const":13},"description":"How many copies to route (never 13)."}},
          "required":["ticket","copies"],"additionalProperties":false}"#,
    )
    .unwrap();
    std::fs::write(
        dir.join("assets/output.schema.json"),
        r#"{"type":"object","properties":{"queue":{"type":"string"},"copies":{"type":"integer"}},"required":["queue","copies"],"additionalProperties":false}"#,
    )
    .unwrap();
    std::fs::write(
        dir.join("mock-scenario.yaml"),
        "rules:\n  - name: triage/count\n    when: {system_contains: \"You triage support tickets\", tool_results: false}\n    \
         reply:\n      tool_calls:\n        - name: calculator\n          arguments: {expression: \"2 * 3\"}\n  \
         - name: triage/answer\n    when: {system_contains: \"You triage support tickets\", tool_result_contains: \"6\"}\n    \
         reply: {json: {queue: urgent, copies: 6}}\n",
    )
    .unwrap();
    // Two cases `skillet eval --save` runs between the phases, on two model labels.
    std::fs::create_dir_all(dir.join("evals")).unwrap();
    std::fs::write(
        dir.join("evals/evals.json"),
        r#"{"skill_name": "ticket-triage", "evals": [
            {"id": 1, "name": "routes-a-high-ticket",
             "arguments": {"ticket": {"title": "Printer on fire", "priority": "high"}, "copies": 1},
             "expect": {"schema": true, "output": [{"pointer": "/queue", "regex": "^urgent$"}]}},
            {"id": 2, "name": "refuses-13-copies",
             "arguments": {"ticket": {"title": "Thirteen", "priority": "low"}, "copies": 13},
             "expect": {"error_code": "schema_violation"}},
            {"id": 3, "name": "routes-to-the-low-queue",
             "arguments": {"ticket": {"title": "Slow printer", "priority": "low"}, "copies": 1},
             "expect": {"output": [{"pointer": "/queue", "regex": "^low$"}]}}]}"#,
    )
    .unwrap();
    write_skill(root, "slow-echo", 30_000, "{json: {echo: \"late\"}}");
    let writer = root.join("note-writer");
    std::fs::create_dir_all(&writer).unwrap();
    std::fs::write(
        writer.join("SKILL.md"),
        "---\nname: note-writer\ndescription: Writes the summary file.\nallowed-tools: Write\n---\n\
         Write summary.md.\n",
    )
    .unwrap();
    std::fs::write(
        writer.join("mock-scenario.yaml"),
        "rules:\n  - name: done\n    when: {system_contains: \"Write summary.md.\", tool_results: true}\n    \
         reply: {text: \"Wrote summary.md.\"}\n  \
         - name: write\n    when: {system_contains: \"Write summary.md.\", tool_results: false}\n    \
         reply: {tool_calls: [{name: write_file, arguments: {path: summary.md, content: \"# Summary\\nship Friday\\n\"}}]}\n",
    )
    .unwrap();
    let never = root.join("never-valid");
    std::fs::create_dir_all(never.join("assets")).unwrap();
    std::fs::write(
        never.join("SKILL.md"),
        "---\nname: never-valid\ndescription: Never answers in its schema.\nmetadata:\n  \
         a2a-output-schema: assets/output.schema.json\n  a2e-max-turns: '2'\n---\nNever valid.\n",
    )
    .unwrap();
    std::fs::write(
        never.join("assets/output.schema.json"),
        r#"{"type":"object","properties":{"echo":{"type":"string"}},"required":["echo"],"additionalProperties":false}"#,
    )
    .unwrap();
    std::fs::write(
        never.join("mock-scenario.yaml"),
        "rules:\n  - name: wrong\n    when: {system_contains: \"Never valid.\"}\n    reply: {json: {wrong: 1}}\n",
    )
    .unwrap();
    let blocked = root.join("needs-a-tool");
    std::fs::create_dir_all(&blocked).unwrap();
    std::fs::write(
        blocked.join("SKILL.md"),
        "---\nname: needs-a-tool\ndescription: Needs a tool nobody provides.\nmetadata:\n  \
         a2e-tools: '[\"nonexistent_tool\"]'\n---\nUse the tool.\n",
    )
    .unwrap();
}

/// The bundled `code-review` (copied from `skills/`) and `plain-notes`, a plain Agent Skill (no
/// input schema) whose description is 1,000 characters, as corpus skills' are.
fn write_ecosystem_skills(root: &Path) {
    copy_dir(
        &repo_root().join("skills/code-review"),
        &root.join("code-review"),
    );
    let dir = root.join("plain-notes");
    std::fs::create_dir_all(&dir).unwrap();
    let mut description = String::from(
        "Summarizes the notes it is given. Use when the user pastes meeting notes and wants them \
         short; see https://example.com/a/very/long/unbroken/address/",
    );
    while description.len() < 1000 {
        description.push_str("and-then-some-more-");
    }
    description.truncate(1000);
    std::fs::write(
        dir.join("SKILL.md"),
        format!(
            "---\nname: plain-notes\ndescription: {description}\nmetadata:\n  \
             a2a-examples: '[\"Summarize: we ship on Friday\"]'\n---\n\
             # Plain notes\n\nYou summarize the notes in the request in **one** sentence.\n\n\
             - keep names\n- drop greetings\n\n<img src=x id=injected> stays text.\n"
        ),
    )
    .unwrap();
    std::fs::write(
        dir.join("mock-scenario.yaml"),
        "rules:\n  - name: plain-notes/answer\n    when: {system_contains: \"You summarize the notes\"}\n    \
         reply: {text: \"The team agreed to ship on Friday.\"}\n",
    )
    .unwrap();
}

fn write_gated_and_file_skills(root: &Path) {
    let schema = r#"{"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false}"#;
    let output = r#"{"type":"object","properties":{"echo":{"type":"string"}},"required":["echo"],"additionalProperties":false}"#;
    let skills = [
        (
            "gated-calc",
            "Computes with a calculator a person approves.",
            "a2e-tools: '[\"calculator\"]'\n  a2e-approval: '[\"calculator\"]'",
            "Gated calc:",
            "  - name: approved\n    when: {system_contains: \"Gated calc:\", tool_result_contains: \"result\"}\n    reply: {json: {echo: approved}}\n\
             \x20 - name: reason\n    when: {system_contains: \"Gated calc:\", tool_result_contains: \"not on prod\"}\n    reply: {json: {echo: \"denied: not on prod\"}}\n\
             \x20 - name: call\n    when: {system_contains: \"Gated calc:\", tool_results: false}\n    reply: {tool_calls: [{name: calculator, arguments: {expression: \"6*7\"}}]}\n",
        ),
        (
            "file-reader",
            "Reads the notes file it is given.",
            "a2e-category: testing",
            "File reader:",
            "  - name: answer\n    when: {system_contains: \"File reader:\", tool_result_contains: \"hello from a file\"}\n    reply: {json: {echo: read it}}\n\
             \x20 - name: read\n    when: {system_contains: \"File reader:\", tool_results: false}\n    reply: {tool_calls: [{name: read_file, arguments: {path: notes.txt}}]}\n",
        ),
    ];
    for (name, description, tools, marker, rules) in skills {
        let dir = root.join(name);
        std::fs::create_dir_all(dir.join("assets")).unwrap();
        std::fs::write(
            dir.join("SKILL.md"),
            format!(
                "---\nname: {name}\ndescription: {description}\nmetadata:\n  \
                 a2a-input-schema: assets/input.schema.json\n  a2a-output-schema: assets/output.schema.json\n  \
                 {tools}\n  a2e-max-turns: '3'\n---\n{marker} {{{{ text }}}}\n"
            ),
        )
        .unwrap();
        std::fs::write(dir.join("assets/input.schema.json"), schema).unwrap();
        std::fs::write(dir.join("assets/output.schema.json"), output).unwrap();
        std::fs::write(dir.join("mock-scenario.yaml"), format!("rules:\n{rules}")).unwrap();
    }
}

async fn serve(cwd: &Path, skills: &Path) -> HttpServer {
    ServeHttp::new(SKILLET)
        .cwd(cwd)
        .skills_dir(skills)
        .spawn()
        .await
}

/// Runs the script's `phase` against `base`; `skills` is the folder the server loads from.
async fn drive(python: &Path, base: &str, phase: &str, skills: &Path) {
    let script = repo_root().join("cli/tests/python/console_browser.py");
    let mut command = tokio::process::Command::new(python);
    command.arg(&script).arg(base).arg(phase);
    let shots = std::env::var_os("SKILLET_CONSOLE_SCREENSHOTS").map_or_else(
        || repo_root().join("target/console-screenshots"),
        PathBuf::from,
    );
    command.arg(shots).arg(skills);
    let output = tokio::time::timeout(std::time::Duration::from_secs(240), command.output())
        .await
        .expect("the browser script finishes within 240 s")
        .expect("run the browser script");
    assert!(
        output.status.success(),
        "browser phase {phase} failed:\n{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

#[tokio::test]
async fn the_console_runs_a_skill_from_its_form_cancels_one_and_keeps_the_history_across_a_restart()
{
    let Some(python) = browser_python() else {
        return;
    };
    let skills = tempfile::tempdir().unwrap();
    write_skills(skills.path());
    let cwd = tempfile::tempdir().unwrap();
    std::fs::write(
        cwd.path().join("skillet.toml"),
        "[console]\nhistory_db = \"state.db\"\ncapture_content = true\n\n\
         [skills.workspace]\nmax_input_file_bytes = 4096\n",
    )
    .unwrap();
    let server = serve(cwd.path(), skills.path()).await;
    drive(&python, &server.base, "run", skills.path()).await;
    drop(server);
    // The evals of ticket-triage on two models, saved where the console reads them.
    // A server that keeps no content, and one with no skills.
    let plain = tempfile::tempdir().unwrap();
    write_ecosystem_skills(plain.path());
    let bare = tempfile::tempdir().unwrap();
    std::fs::write(
        bare.path().join("skillet.toml"),
        "[console]\nhistory_db = \"state.db\"\n",
    )
    .unwrap();
    let server = serve(bare.path(), plain.path()).await;
    drive(&python, &server.base, "nocapture", plain.path()).await;
    drop(server);
    let nothing = tempfile::tempdir().unwrap();
    let server = serve(bare.path(), nothing.path()).await;
    drive(&python, &server.base, "empty", nothing.path()).await;
    drop(server);
    let eval = tokio::process::Command::new(SKILLET)
        .current_dir(cwd.path())
        .arg("--skills-dir")
        .arg(skills.path())
        .args(["--provider", "mock", "--model", "small", "--model", "large"])
        .args(["eval", "ticket-triage", "--save"])
        .env_remove("SKILLET_CONFIG")
        .env_remove("SKILLET_PROVIDER")
        .output()
        .await
        .unwrap();
    // One case fails on purpose (the cell the page opens): the exit status says so, the report
    // is saved all the same.
    assert!(
        eval.status.code() == Some(1)
            && String::from_utf8_lossy(&eval.stdout).contains("routes-to-the-low-queue"),
        "skillet eval --save: {}{}",
        String::from_utf8_lossy(&eval.stdout),
        String::from_utf8_lossy(&eval.stderr)
    );
    // summarize with and without its instructions, twice each: the pair the page shows.
    let baseline = tokio::process::Command::new(SKILLET)
        .current_dir(cwd.path())
        .arg("--skills-dir")
        .arg(skills.path())
        .args(["--provider", "mock"])
        .args(["eval", "summarize", "--baseline", "--repeat", "2", "--save"])
        .env_remove("SKILLET_CONFIG")
        .env_remove("SKILLET_PROVIDER")
        .output()
        .await
        .unwrap();
    assert!(
        baseline.status.success()
            && String::from_utf8_lossy(&baseline.stdout).contains("delta +0.21"),
        "skillet eval --baseline --save: {}{}",
        String::from_utf8_lossy(&baseline.stdout),
        String::from_utf8_lossy(&baseline.stderr)
    );
    let server = serve(cwd.path(), skills.path()).await;
    drive(&python, &server.base, "restarted", skills.path()).await;
}
