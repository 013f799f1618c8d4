//! The web console of `skillet serve --http`: a page at `/` to browse the skills, run one from a
//! form generated from its input schema, watch each turn live and search the history of runs.
//!
//! | route | answer |
//! |---|---|
//! | `GET /` | the page (`assets`: plain HTML, CSS and JS embedded in the binary; no CDN, works offline) |
//! | `GET /console/assets/NAME` | its stylesheet and scripts |
//! | `GET /console/api/info` | what this console offers: history on/off, content capture, the model override hints, the skill folders it loads from |
//! | `GET /console/api/skills` | the skills the caller may see (discover, with status, blocked reasons, schemas) |
//! | `GET /console/api/skills/NAME` | one skill's definition, its `SKILL.md`, examples and declared environment (`skill_detail`) |
//! | `GET /console/api/skills/NAME/evals` | its newest saved eval reports (`skillet eval --save`, `evals`), newest first |
//! | `POST /console/api/skills/NAME/evals` | runs its `evals/evals.json` on the host's model and saves the report (`eval_run`; 409 while another eval runs) |
//! | `GET /console/api/runs?skill=&outcome=&error_code=&model=&since=&until=&before=&limit=` | recorded runs, newest first |
//! | `GET /console/api/runs/ID` | one recorded run, with its input and answer when content was kept |
//! | `GET /console/api/approvals` | the caller's tool calls waiting for its approval (`approvals`) |
//! | `POST /console/api/approvals/ID` | `{"decision": "approve" \| "deny", "reason"?}`: decides one of them |
//!
//! Every request under `/console/` other than `GET`/`HEAD` needs the page's same-origin token
//! in `X-Skillet-Console-Token` (`token`), besides the server's `Host`/`Origin` rule
//! (`crate::origin_guard`).
//!
//! Runs do not go through here: the page posts them to `POST /a2e` with
//! `Accept: text/event-stream` (the A2E HTTP door, `crate::http`) and cancels one by closing
//! that stream, so the console adds no second run path. Every call the core answers, from every
//! door, reaches the history through `crate::record::CallRecorder` (`HistoryRecorder`).
//! The page's runs carry the `X-Skillet-Console` header, so their tool calls that need approval
//! wait for the page (`approvals::Approvals`, the core's `approval_desk`) instead of following
//! the host's `[approvals] default`.
//!
//! Under `[auth]` the page and its assets are public (they hold no data, and a browser cannot
//! put a bearer token on a navigation); every `/console/api/` route needs an identity holding the
//! console scope (`crate::auth::http`), which the page asks for and keeps in `sessionStorage`.
//! The runs themselves are `POST /a2e` calls, decided at admission like any other.
//!
//! Not here: reading `[console]` from `skillet.toml` (the `skillet` crate builds
//! [`ConsoleOptions`]), running or cancelling calls (the core, through the A2E door).

pub(crate) mod api;
pub(crate) mod approvals;
pub(crate) mod assets;
pub(crate) mod eval_run;
pub(crate) mod evals;
pub(crate) mod history;
mod history_row;
mod history_schema;
pub(crate) mod query;
pub(crate) mod skill_detail;
pub(crate) mod token;

use skillet_core::workbench::Workbench;
use std::sync::Arc;

use axum::Router;

use crate::core::HostCore;

pub(crate) use approvals::Approvals;
pub use evals::save_eval;
pub use history::{DEFAULT_MAX_AGE, DEFAULT_MAX_RUNS, History, HistoryError, HistoryLimits};
pub(crate) use history_row::HistoryRecorder;

/// Where the console's JSON routes live (the auth layer's scoped path).
pub use crate::auth::http::CONSOLE_API_PREFIX as API_PREFIX;

/// Where its static assets live (public under `[auth]`).
pub use crate::auth::http::CONSOLE_ASSETS_PREFIX as ASSETS_PREFIX;

/// What a request's `llm_override` may name on this host, shown as the run form's model
/// override (absent: the host allows no override and the form has none).
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct ModelOverrideHints {
    /// Provider kinds an override may name (`openai`, `ollama`, ...).
    pub providers: Vec<String>,
    /// Base URLs an override may use.
    pub base_urls: Vec<String>,
    /// Model globs an override may use.
    pub models: Vec<String>,
}

/// Everything the console is built from.
#[derive(Debug, Clone, Default)]
pub struct ConsoleOptions {
    /// The run history; `None`: runs are not recorded and the history view says so.
    pub history: Option<Arc<History>>,
    /// Whether recorded runs keep their input and answer (`[console] capture_content`).
    pub capture_content: bool,
    /// The model override the host allows, if any.
    pub model_override: Option<ModelOverrideHints>,
    /// What the run form's file picker may send.
    pub input_files: InputFileLimits,
    /// The folders the server loads its skills from, named by the empty skills list.
    pub skill_roots: Vec<std::path::PathBuf>,
    /// The host's model as eval reports name it (`provider/model`), for "Run evals".
    pub model_label: Option<String>,
    /// The engine's authoring services: the skill view's declared environment and "Run
    /// evals" (`None`: neither is offered).
    pub workbench: Option<Arc<dyn Workbench>>,
}

/// The input files (`_files`) one call may carry on this host, so the page refuses a file the
/// server would refuse before reading it; the server checks again as for any caller.
#[derive(Debug, Clone, Copy, serde::Serialize)]
pub struct InputFileLimits {
    /// Most files (`[skills.workspace] max_input_files`).
    pub max_files: usize,
    /// Largest file, decoded (`max_input_file_bytes`).
    pub max_file_bytes: usize,
    /// Most bytes of every file together, decoded (`max_input_bytes`).
    pub max_total_bytes: usize,
    /// Largest request body (`[server] max_message_bytes`): base64 makes a file a third bigger.
    pub max_request_bytes: usize,
}

impl Default for InputFileLimits {
    fn default() -> Self {
        let files = skillet_core::folder::DEFAULT_INPUT_FILES;
        InputFileLimits {
            max_files: files.max_files,
            max_file_bytes: files.max_file_bytes,
            max_total_bytes: files.max_total_bytes,
            max_request_bytes: crate::DEFAULT_MAX_MESSAGE_BYTES,
        }
    }
}

/// The console's routes, to merge into `serve --http`'s router. With a history, `core` records
/// every call it answers into it; the page's runs ask their approvals here.
pub fn router(core: &HostCore, options: ConsoleOptions) -> Router {
    if let Some(history) = &options.history {
        core.set_recorder(Arc::new(HistoryRecorder::new(
            Arc::clone(history),
            options.capture_content,
        )));
    }
    let approvals = Approvals::new(core.access().cloned());
    core.set_approval_desk(Arc::new(approvals.clone()));
    let token = token::ConsoleToken::generate();
    let routes = assets::router(&token).merge(api::router(core.clone(), options, approvals));
    token::require(routes, token)
}

/// Whether `path` is one of the console's data routes (the ones behind the console scope).
pub fn is_api_path(path: &str) -> bool {
    path.starts_with(API_PREFIX)
}
