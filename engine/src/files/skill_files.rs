//! `list_skill_files` and `read_skill_file`: the model reads the files beside a skill's
//! `SKILL.md` (references, forms, templates) when its instructions say so — read-only, confined
//! to the skill folder, text only, capped per read and per call.
//!
//! The listing is the one made when the skill loaded (`skill::SkillResources`); a read resolves
//! the path again at call time under the trust model of `confine`. Every refusal is a tool error
//! the model sees. Not here: the workspace tools (`workspace_tools`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{Value, json};

use super::blocking::FileOps;
use super::confine;
use super::error::FileError;
use super::read_budget::ReadBudget;
use crate::skill::SkillFile;
use crate::tools::{Tool, ToolContext, ToolError, ToolOutput};

/// `list_skill_files`: the files of one skill folder.
pub(crate) struct ListSkillFiles {
    files: Vec<SkillFile>,
    listing_cut: bool,
    schema: Value,
}

impl ListSkillFiles {
    pub(crate) fn new(files: Vec<SkillFile>, listing_cut: bool) -> Arc<Self> {
        Arc::new(ListSkillFiles {
            files,
            listing_cut,
            schema: json!({"type": "object", "properties": {}, "additionalProperties": false}),
        })
    }
}

#[async_trait]
impl Tool for ListSkillFiles {
    fn name(&self) -> &str {
        "list_skill_files"
    }
    fn description(&self) -> &str {
        "Lists the files that ship with this skill (path and size in bytes). Read one with \
         read_skill_file."
    }
    fn input_schema(&self) -> &Value {
        &self.schema
    }
    async fn call(&self, _arguments: Value, _ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let files: Vec<Value> = self
            .files
            .iter()
            .map(|f| json!({"path": f.path, "size": f.size}))
            .collect();
        Ok(ToolOutput::json(
            json!({"files": files, "truncated": self.listing_cut}),
        ))
    }
}

/// `read_skill_file(path, offset?, limit?)`: a text slice of one file of the skill folder.
pub(crate) struct ReadSkillFile {
    dir: PathBuf,
    max_read: usize,
    budget: ReadBudget,
    ops: FileOps,
    schema: Value,
}

impl ReadSkillFile {
    pub(crate) fn new(
        dir: PathBuf,
        max_read: usize,
        budget: ReadBudget,
        ops: FileOps,
    ) -> Arc<Self> {
        Arc::new(ReadSkillFile {
            dir,
            max_read,
            budget,
            ops,
            schema: read_schema(max_read),
        })
    }
}

#[async_trait]
impl Tool for ReadSkillFile {
    fn name(&self) -> &str {
        "read_skill_file"
    }
    fn description(&self) -> &str {
        "Reads a text file that ships with this skill (a path from list_skill_files, e.g. \
         reference.md). Long files are read in slices: pass the returned next_offset as offset."
    }
    fn input_schema(&self) -> &Value {
        &self.schema
    }
    async fn call(&self, arguments: Value, _ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let path = arguments["path"].as_str().unwrap_or_default();
        refuse_engine_dir(path)?;
        read_slice(
            &self.dir,
            &arguments,
            self.max_read,
            &self.budget,
            &self.ops,
        )
        .await
    }
}

/// Refuses a path in a folder the engine keeps from every reader of the skill (`evals/`).
fn refuse_engine_dir(path: &str) -> Result<(), FileError> {
    if confine::relative_path(path).is_ok_and(|relative| crate::skill::in_engine_dir(&relative)) {
        return Err(FileError::InEngineDir(path.to_owned()));
    }
    Ok(())
}

/// Opens a file of the skill folder `dir` for reading under exactly the rules of
/// `read_skill_file`: not in `evals/`, relative, no `..`, resolving (after symlinks) inside the
/// folder onto a plain file with one link. Blocking; for hosts serving a skill's files.
pub(crate) fn open_skill_file(dir: &Path, path: &str) -> Result<std::fs::File, FileError> {
    refuse_engine_dir(path)?;
    confine::open_for_read(dir, path)
}

/// The input schema of a slice read, with `limit` capped at `max_read`.
pub(crate) fn read_schema(max_read: usize) -> Value {
    json!({
        "type": "object",
        "properties": {
            "path": {"type": "string", "minLength": 1, "maxLength": confine::MAX_PATH_CHARS,
                     "description": "Path relative to the folder, e.g. docs/reference.md"},
            "offset": {"type": "integer", "minimum": 0,
                       "description": "Byte offset to start at (default 0)"},
            "limit": {"type": "integer", "minimum": 1, "maximum": max_read,
                      "description": format!("Most bytes to return (default and maximum {max_read})")}
        },
        "required": ["path"],
        "additionalProperties": false
    })
}

/// Reads the slice `arguments` asks for from a file confined to `root`, within the call's
/// budget. Shared by `read_skill_file` and `read_file`.
pub(crate) async fn read_slice(
    root: &Path,
    arguments: &Value,
    max_read: usize,
    budget: &ReadBudget,
    ops: &FileOps,
) -> Result<ToolOutput, ToolError> {
    let path = arguments["path"].as_str().unwrap_or_default().to_owned();
    let offset = arguments["offset"].as_u64().unwrap_or(0);
    let wanted = arguments["limit"]
        .as_u64()
        .map_or(max_read, |l| usize::try_from(l).unwrap_or(max_read))
        .min(max_read);
    let limit = budget.available(wanted);
    if limit == 0 {
        return Err(ToolError::Failed(budget.spent_message()));
    }
    let root = root.to_owned();
    let (path, mut slice) = ops
        .run("read", move || {
            let file = confine::open_for_read(&root, &path)?;
            confine::read_text(file, &path, offset, limit).map(|slice| (path, slice))
        })
        .await?;
    // Concurrent reads of the same turn may have taken part of the budget meanwhile.
    let granted = budget.take(slice.text.len());
    if granted < slice.text.len() {
        let mut end = granted;
        while !slice.text.is_char_boundary(end) {
            end -= 1;
        }
        budget.refund(granted - end);
        if end == 0 {
            return Err(ToolError::Failed(budget.spent_message()));
        }
        slice.text.truncate(end);
        slice.next_offset = slice.offset + end as u64;
    }
    Ok(ToolOutput::json(json!({
        "path": path,
        "size": slice.size,
        "offset": slice.offset,
        "next_offset": slice.next_offset,
        "complete": slice.next_offset >= slice.size,
        "text": slice.text,
    })))
}
