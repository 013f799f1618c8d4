//! What `skillet run` sends as the call's arguments: `--args` (a JSON object), the request as
//! text (`PROMPT`, `--prompt`, `-` for stdin) for a skill that takes a prompt, and `--file`
//! input files under the reserved `_files` key, as the engine's workspace reads them.
//!
//! A skill takes a prompt when it declares no input schema (a plain Agent Skill: the engine
//! sends `prompt` to the model as the user message) or when its input schema has a string
//! `prompt` property. Running a plain skill with nothing to do is refused before a model
//! starts: it would otherwise send `{}` and "succeed".
//!
//! Not here: parsing `--args` (`run::parse_arguments`, shared with `call`), writing produced
//! files (`run_files`).

use std::io::Read;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::args::RunArgs;
use super::exit::Failure;
use skillet_engine::files::{INPUT_FILES_KEY, input_file_value};
use skillet_engine::run::PROMPT_ARGUMENT;
use skillet_engine::skill::CompiledSkill;

/// The largest file `--file` reads; the host's `[skills.workspace]` limits apply after it.
const MAX_INPUT_FILE_BYTES: u64 = 64 * 1024 * 1024;

/// The request text of `args`: `PROMPT` or `--prompt`, read from stdin when it is `-`.
pub(super) fn read_prompt(args: &RunArgs) -> Result<Option<String>, Failure> {
    let Some(text) = args.prompt_text.as_ref().or(args.prompt.as_ref()) else {
        return Ok(None);
    };
    if text != "-" {
        return Ok(Some(text.clone()));
    }
    let mut body = String::new();
    std::io::stdin()
        .read_to_string(&mut body)
        .map_err(|e| Failure::usage(format!("PROMPT -: cannot read stdin: {e}")))?;
    Ok(Some(body))
}

/// How a skill takes a request written as text.
fn prompt_property(skill: &CompiledSkill) -> Option<&'static str> {
    let Some(schema) = &skill.input_schema else {
        return Some(PROMPT_ARGUMENT);
    };
    let takes_text = schema
        .source()
        .pointer(&format!("/properties/{PROMPT_ARGUMENT}/type"))
        .is_some_and(|kind| kind == "string");
    takes_text.then_some(PROMPT_ARGUMENT)
}

/// The arguments of the call: `given` (`--args`) with the prompt added. Refused, with the reason
/// a person reads (the caller answers it as a `schema_violation`, exit 3): a prompt for a skill
/// that takes JSON, or no request at all for a skill whose whole input is its prompt.
pub(super) fn compose_arguments(
    skill: &CompiledSkill,
    given: Option<Map<String, Value>>,
    prompt: Option<String>,
) -> Result<Map<String, Value>, String> {
    let name = skill.name();
    let property = prompt_property(skill);
    match (prompt, property) {
        (Some(text), Some(property)) => {
            let mut arguments = given.unwrap_or_default();
            arguments.insert(property.to_owned(), Value::String(text));
            Ok(arguments)
        }
        (Some(_), None) => Err(format!(
            "skill `{name}` takes JSON arguments (its input schema has no `prompt`), not a \
             prompt: pass them with --args '{{...}}' (`skillet discover --json` shows its schema)"
        )),
        (None, _) if given.is_some() => Ok(given.unwrap_or_default()),
        (None, Some(_)) if skill.input_schema.is_none() => Err(format!(
            "skill `{name}` needs a request: skillet run {name} \"what you want\" (or --prompt \
             TEXT, or - to read it from stdin)"
        )),
        (None, _) => Ok(Map::new()),
    }
}

/// Reads each `--file`: an entry of `_files` with its file name, and its content as text when
/// it is UTF-8, else base64 (`skillet_engine::files::input_file_value`, as eval cases' files).
pub(super) fn read_input_files(paths: &[PathBuf]) -> Result<Vec<Value>, Failure> {
    paths.iter().map(|path| read_input_file(path)).collect()
}

fn read_input_file(path: &Path) -> Result<Value, Failure> {
    let shown = path.display();
    let meta =
        std::fs::metadata(path).map_err(|e| Failure::usage(format!("--file {shown}: {e}")))?;
    if !meta.is_file() {
        return Err(Failure::usage(format!(
            "--file {shown}: not a regular file"
        )));
    }
    if meta.len() > MAX_INPUT_FILE_BYTES {
        return Err(Failure::usage(format!(
            "--file {shown}: {} bytes is over the {} MiB a file may have here",
            meta.len(),
            MAX_INPUT_FILE_BYTES / (1024 * 1024)
        )));
    }
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .ok_or_else(|| Failure::usage(format!("--file {shown}: names no file")))?;
    let bytes = std::fs::read(path).map_err(|e| Failure::usage(format!("--file {shown}: {e}")))?;
    Ok(input_file_value(&name, bytes))
}

/// Adds `files` to the `_files` of `arguments` (after any the `--args` JSON already had).
pub(super) fn add_input_files(arguments: &mut Map<String, Value>, files: Vec<Value>) {
    let entry = arguments
        .entry(INPUT_FILES_KEY)
        .or_insert_with(|| Value::Array(Vec::new()));
    let Value::Array(list) = entry else {
        // `--args` set `_files` to something else: the engine refuses it with its reason.
        return;
    };
    list.extend(files);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exit::Outcome;
    use serde_json::json;

    #[test]
    fn text_files_are_sent_as_text_and_others_as_base64_after_those_of_args() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("notes.md"), "# Notes\n").unwrap();
        std::fs::write(dir.path().join("logo.png"), [0x89, b'P', b'N', b'G', 0xff]).unwrap();
        let files =
            read_input_files(&[dir.path().join("notes.md"), dir.path().join("logo.png")]).unwrap();
        let mut arguments = json!({"_files": [{"name": "a.txt", "text": "a"}]})
            .as_object()
            .unwrap()
            .clone();
        add_input_files(&mut arguments, files);
        assert_eq!(
            Value::Object(arguments),
            json!({"_files": [
                {"name": "a.txt", "text": "a"},
                {"name": "notes.md", "text": "# Notes\n"},
                {"name": "logo.png", "base64": "iVBOR/8="}
            ]})
        );
        let missing = read_input_files(&[dir.path().join("none.csv")]).unwrap_err();
        assert_eq!(missing.outcome, Outcome::Usage);
        assert!(missing.message.contains("none.csv"), "{}", missing.message);
    }
}
