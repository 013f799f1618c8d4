//! Files a skill run produces reach the caller whole, through each protocol's own file shape:
//! the official MCP Python SDK (`tests/python/mcp_produced_files.py`) reads them from the
//! `tools/call` result as embedded resources (a PNG as a base64 blob with `image/png`, a
//! Markdown file as text), over `serve --mcp`. The skill's script writes them in its workspace;
//! the model is the embedded mock-llm, whose scenario runs the script. (A2A file parts and the
//! base64 chunking are unit-tested in `skillet-host` and `skillet-engine`.)

use crate::cli_support;

use std::os::unix::fs::PermissionsExt;

use cli_support::{SKILLET, python_with};

/// A 1×1 PNG.
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

#[test]
fn an_mcp_client_gets_a_produced_png_as_a_blob_and_a_markdown_file_as_text() {
    let Some(python) = python_with("mcp, pydantic") else {
        return;
    };
    let root = tempfile::tempdir().unwrap();
    // The sandbox's uid (65534 when the tests run as root) reads the skill folder.
    std::fs::set_permissions(root.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let skill = root.path().join("skills/png-maker");
    std::fs::create_dir_all(skill.join("scripts")).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: png-maker\ndescription: Makes a PNG and a note.\n---\nRun the script.\n",
    )
    .unwrap();
    std::fs::write(
        skill.join("scripts/make.py"),
        format!(
            "import base64\nopen('dot.png', 'wb').write(base64.b64decode('{PNG}'))\n\
             open('note.md', 'w').write('# made\\n')\nprint('made')\n"
        ),
    )
    .unwrap();
    std::fs::write(
        skill.join("mock-scenario.yaml"),
        "rules:\n  - when: { turn: 1 }\n    reply:\n      tool_calls:\n        - name: \
         run_skill_script\n          arguments: { path: scripts/make.py }\n  - when: { \
         tool_result_contains: made }\n    reply:\n      text: done\n",
    )
    .unwrap();
    let config = root.path().join("skillet.toml");
    std::fs::write(&config, "[skills.scripts]\nenabled = true\n").unwrap();
    for dir in [
        root.path().join("skills"),
        skill.clone(),
        skill.join("scripts"),
    ] {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/mcp_produced_files.py");
    let out = std::process::Command::new(python)
        .arg(script)
        .arg(SKILLET)
        .arg(&config)
        .arg(root.path().join("skills"))
        .arg(PNG)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env_remove("OPENAI_BASE_URL")
        .env_remove("OPENAI_API_KEY")
        .env_remove("SKILLET_CONFIG")
        .output()
        .expect("run the MCP client");
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}");
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "OK", "{text}");
}
