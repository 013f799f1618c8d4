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

use super::blocking::FileOps;
use super::confine;
use super::error::FileError;
use super::read_budget::ReadBudget;
use super::skill_files::{read_schema, read_slice};
use crate::tools::{Tool, ToolContext, ToolError, ToolOutput};

/// `read_file(path, offset?, limit?)`: a text slice of a workspace file.
pub(crate) struct ReadFile {
    dir: PathBuf,
    max_read: usize,
    budget: ReadBudget,
    ops: FileOps,
    schema: Value,
}

impl ReadFile {
    pub(crate) fn new(
        dir: PathBuf,
        max_read: usize,
        budget: ReadBudget,
        ops: FileOps,
    ) -> Arc<Self> {
        Arc::new(ReadFile {
            dir,
            max_read,
            budget,
            ops,
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

/// `write_file(path, content, encoding?)`: creates or replaces a workspace file.
pub(crate) struct WriteFile {
    dir: PathBuf,
    max_bytes: usize,
    max_files: usize,
    ops: FileOps,
    schema: Value,
}

impl WriteFile {
    pub(crate) fn new(dir: PathBuf, max_bytes: usize, max_files: usize, ops: FileOps) -> Arc<Self> {
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
            ops,
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
        let (path, size) = self
            .ops
            .run("write", move || {
                let exists = confine::existing_file(&dir, &path).is_ok();
                if !exists && count_files(&dir, max_files + 1) >= max_files {
                    return Err(FileError::WorkspaceFull(max_files));
                }
                confine::write_file(&dir, &path, &bytes).map(|_| (path, bytes.len()))
            })
            .await?;
        Ok(ToolOutput::json(json!({"path": path, "size": size})))
    }
}

/// `list_files`: the workspace's files with their sizes.
pub(crate) struct ListFiles {
    dir: PathBuf,
    max_files: usize,
    ops: FileOps,
    schema: Value,
}

impl ListFiles {
    pub(crate) fn new(dir: PathBuf, max_files: usize, ops: FileOps) -> Arc<Self> {
        Arc::new(ListFiles {
            dir,
            max_files,
            ops,
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
        let listed = self.ops.run("listing", move || Ok(list(&dir, max))).await?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::deadline::Deadline;
    use crate::events::EventEmitter;
    use std::time::Duration;

    fn ctx() -> ToolContext {
        ToolContext {
            cancel: tokio_util::sync::CancellationToken::new(),
            deadline: Deadline::after(Duration::from_secs(60)),
            events: EventEmitter::collecting("t"),
            call_id: "c".to_owned(),
        }
    }

    /// On a regression, threads stuck opening the pipe for writing would keep the test's
    /// runtime from shutting down: opening it for reading at the end lets them through.
    struct Unwedge(std::path::PathBuf);

    impl Drop for Unwedge {
        fn drop(&mut self) {
            use std::os::unix::fs::OpenOptionsExt;
            let _ = std::fs::OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_NONBLOCK)
                .open(&self.0);
        }
    }

    /// A script's `mkfifo out.txt` once made every later `write_file("out.txt")` block in
    /// `open(2)` forever, leaking one blocking thread per write until the pool was gone.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_named_pipe_in_the_workspace_is_a_prompt_tool_error_and_leaks_no_thread() {
        let ws = tempfile::tempdir().unwrap();
        super::confine::tests::mkfifo(&ws.path().join("out.txt"));
        let _unwedge = Unwedge(ws.path().join("out.txt"));
        let ops = FileOps::default();
        let write = WriteFile::new(ws.path().to_owned(), 1024, 16, ops.clone());
        let read = ReadFile::new(
            ws.path().to_owned(),
            1024,
            ReadBudget::new(1 << 20),
            ops.clone(),
        );
        let writes = (0..64).map(|_| {
            let write = Arc::clone(&write);
            async move {
                write
                    .call(json!({"path": "out.txt", "content": "x"}), ctx())
                    .await
            }
        });
        // A regression blocks forever; the bound turns that into a failure, not a hang.
        let answers =
            tokio::time::timeout(Duration::from_secs(60), futures::future::join_all(writes))
                .await
                .expect("write_file on a named pipe must answer, not block");
        for answer in answers {
            let Err(ToolError::Failed(why)) = answer else {
                panic!("a write to a named pipe succeeded: {answer:?}");
            };
            assert!(why.contains("named pipe"), "{why}");
        }
        let answer = tokio::time::timeout(
            Duration::from_secs(60),
            read.call(json!({"path": "out.txt"}), ctx()),
        )
        .await
        .expect("read_file on a named pipe must answer");
        assert!(matches!(answer, Err(ToolError::Failed(ref why)) if why.contains("regular file")));
        assert_eq!(
            ops.running(),
            0,
            "no file operation is left on the blocking pool"
        );
    }
}
