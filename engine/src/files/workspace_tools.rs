//! `read_file`, `write_file` and `list_files`: the model's access to its call's workspace —
//! confined to that directory (see `confine`), text reads capped per read and per call, writes
//! capped in size and in the number of files. Every refusal is a tool error the model sees.
//!
//! Not here: creating or removing the workspace (`workspace`), reporting what it produced
//! (`artifacts`).

use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use base64::Engine as _;
use serde_json::{Value, json};

use super::confine;
use super::read_budget::ReadBudget;
use super::skill_files::{read_schema, read_slice};
use crate::tools::{Tool, ToolContext, ToolError, ToolOutput};

/// `read_file(path, offset?, limit?)`: a text slice of a workspace file.
pub(crate) struct ReadFile {
    dir: PathBuf,
    max_read: usize,
    budget: ReadBudget,
    schema: Value,
}

impl ReadFile {
    pub(crate) fn new(dir: PathBuf, max_read: usize, budget: ReadBudget) -> Arc<Self> {
        Arc::new(ReadFile {
            dir,
            max_read,
            budget,
            schema: read_schema(max_read),
        })
    }
}

#[async_trait]
impl Tool for ReadFile {
    fn name(&self) -> &str {
        "read_file"
    }
    fn description(&self) -> &str {
        "Reads a text file of your workspace (input files, files you or a script wrote). Long \
         files are read in slices: pass the returned next_offset as offset."
    }
    fn input_schema(&self) -> &Value {
        &self.schema
    }
    async fn call(&self, arguments: Value, _ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        read_slice(&self.dir, &arguments, self.max_read, &self.budget).await
    }
}

/// `write_file(path, content, encoding?)`: creates or replaces a workspace file.
pub(crate) struct WriteFile {
    dir: PathBuf,
    max_bytes: usize,
    max_files: usize,
    schema: Value,
}

impl WriteFile {
    pub(crate) fn new(dir: PathBuf, max_bytes: usize, max_files: usize) -> Arc<Self> {
        let schema = json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "minLength": 1, "maxLength": confine::MAX_PATH_CHARS,
                         "description": "Path relative to the workspace, e.g. out/report.md"},
                "content": {"type": "string", "description": "The file's content"},
                "encoding": {"type": "string", "enum": ["text", "base64"],
                             "description": "How content is encoded (default text)"}
            },
            "required": ["path", "content"],
            "additionalProperties": false
        });
        Arc::new(WriteFile {
            dir,
            max_bytes,
            max_files,
            schema,
        })
    }
}

#[async_trait]
impl Tool for WriteFile {
    fn name(&self) -> &str {
        "write_file"
    }
    fn description(&self) -> &str {
        "Writes a file in your workspace (created or replaced; missing folders are created). \
         Files you write are returned to the caller."
    }
    fn input_schema(&self) -> &Value {
        &self.schema
    }
    async fn call(&self, arguments: Value, _ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let path = arguments["path"].as_str().unwrap_or_default().to_owned();
        let content = arguments["content"].as_str().unwrap_or_default();
        let bytes = match arguments["encoding"].as_str() {
            Some("base64") => base64::engine::general_purpose::STANDARD
                .decode(content.trim())
                .map_err(|e| ToolError::Failed(format!("content is not valid base64 ({e})")))?,
            _ => content.as_bytes().to_vec(),
        };
        if bytes.len() > self.max_bytes {
            return Err(ToolError::Failed(format!(
                "{path:?} would have {} bytes; files are limited to {} bytes",
                bytes.len(),
                self.max_bytes
            )));
        }
        let (dir, max_files) = (self.dir.clone(), self.max_files);
        let written = tokio::task::spawn_blocking(move || {
            let exists = confine::existing_file(&dir, &path).is_ok();
            if !exists && count_files(&dir, max_files + 1) >= max_files {
                return Err(format!(
                    "the workspace already holds {max_files} files, its limit"
                ));
            }
            confine::write_file(&dir, &path, &bytes).map(|_| (path, bytes.len()))
        })
        .await
        .map_err(|_| ToolError::Failed("the write was interrupted".to_owned()))?;
        let (path, size) = written.map_err(ToolError::Failed)?;
        Ok(ToolOutput::json(json!({"path": path, "size": size})))
    }
}

/// `list_files`: the workspace's files with their sizes.
pub(crate) struct ListFiles {
    dir: PathBuf,
    max_files: usize,
    schema: Value,
}

impl ListFiles {
    pub(crate) fn new(dir: PathBuf, max_files: usize) -> Arc<Self> {
        Arc::new(ListFiles {
            dir,
            max_files,
            schema: json!({"type": "object", "properties": {}, "additionalProperties": false}),
        })
    }
}

#[async_trait]
impl Tool for ListFiles {
    fn name(&self) -> &str {
        "list_files"
    }
    fn description(&self) -> &str {
        "Lists the files in your workspace (path and size in bytes)."
    }
    fn input_schema(&self) -> &Value {
        &self.schema
    }
    async fn call(&self, _arguments: Value, _ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let (dir, max) = (self.dir.clone(), self.max_files);
        let listed = tokio::task::spawn_blocking(move || list(&dir, max))
            .await
            .map_err(|_| ToolError::Failed("the listing was interrupted".to_owned()))?;
        Ok(ToolOutput::json(listed))
    }
}

fn list(dir: &std::path::Path, max: usize) -> Value {
    let ws = super::workspace::scan_path(dir, max);
    let files: Vec<Value> =
        ws.0.iter()
            .map(|f| json!({"path": f.path, "size": f.size}))
            .collect();
    json!({"files": files, "truncated": ws.1})
}

fn count_files(dir: &std::path::Path, max: usize) -> usize {
    super::workspace::scan_path(dir, max).0.len()
}
