//! The console's JSON routes under `/console/api/` (the table is in `super`'s docs). Every
//! answer is JSON with the console's security headers; every refusal is one JSON body
//! `{"error": CODE, "message": WHY}` with its 4xx status: `not_found` (an unknown skill — or one
//! the caller may not see, the two are not told apart —, an unknown run id or a run of such a
//! skill, an unknown route; a list holds only runs of the skills the caller may see),
//! `bad_request` (a bad filter, a run id that is not a number), `no_history` (the history is
//! off), 415 `unsupported_media_type` (a decision that is not `application/json`: a page of
//! another origin cannot send one without the browser asking first), and 500 `history_failed`
//! when the database fails. A decision for an approval that is unknown, decided, expired or
//! another identity's is one 404 `not_found`.
//!
//! Not here: the page (`super::assets`), the store (`super::history`).

use std::sync::Arc;

use axum::Router;
use axum::extract::{Path, RawQuery, Request, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};
use skillet_protocol::SkillDiscoverRequest;

use super::ConsoleOptions;
use super::approvals::{Approvals, denial};
use super::query::RunFilter;
use crate::auth::http::caller_of;
use crate::core::HostCore;

/// The largest decision body.
const MAX_DECISION_BYTES: usize = 16 * 1024;

#[derive(Clone)]
struct ApiState {
    core: HostCore,
    options: Arc<ConsoleOptions>,
    approvals: Approvals,
    /// The one eval the page may run at a time.
    eval_slot: super::eval_run::EvalSlot,
}

/// The JSON routes; decisions go to `approvals`.
pub(crate) fn router(core: HostCore, options: ConsoleOptions, approvals: Approvals) -> Router {
    let state = ApiState {
        core,
        options: Arc::new(options),
        approvals,
        eval_slot: super::eval_run::EvalSlot::default(),
    };
    Router::new()
        .route("/console/api/info", get(info))
        .route("/console/api/skills", get(skills))
        .route("/console/api/skills/{name}", get(skill))
        .route(
            "/console/api/skills/{name}/evals",
            get(evals).post(run_evals),
        )
        .route("/console/api/runs", get(runs))
        .route("/console/api/runs/{id}", get(run))
        .route("/console/api/approvals", get(pending_approvals))
        .route("/console/api/approvals/{id}", post(decide))
        .route("/console/api/{*rest}", get(unknown_route))
        .with_state(state)
}

/// A JSON answer with the console's headers.
fn json_answer(status: StatusCode, body: &Value) -> Response {
    let mut response = (status, axum::Json(body)).into_response();
    super::assets::secure(response.headers_mut());
    response
}

fn refusal(status: StatusCode, error: &str, message: impl Into<String>) -> Response {
    json_answer(status, &json!({"error": error, "message": message.into()}))
}

async fn unknown_route() -> Response {
    refusal(StatusCode::NOT_FOUND, "not_found", "no such console route")
}

async fn info(State(state): State<ApiState>) -> Response {
    let options = &state.options;
    json_answer(
        StatusCode::OK,
        &json!({
            "history": options.history.is_some(),
            "capture_content": options.capture_content,
            "model_override": options.model_override,
            "auth": state.core.access().is_some(),
            "max_concurrent_calls": state.core.max_concurrent_calls(),
            "input_files": options.input_files,
            "skill_roots": options
                .skill_roots
                .iter()
                .map(|root| root.display().to_string())
                .collect::<Vec<_>>(),
        }),
    )
}

async fn skills(State(state): State<ApiState>, request: Request) -> Response {
    let caller = caller_of(request.extensions());
    let skills = state
        .core
        .discover_as(&caller, &SkillDiscoverRequest::default())
        .skills;
    json_answer(StatusCode::OK, &json!({ "skills": skills }))
}

/// The skill `name` as the request's caller may see it; `None` for an unknown skill and for one
/// the caller may not see alike (both are [`unknown_skill`]).
fn visible_skill(
    state: &ApiState,
    request: &Request,
    name: &str,
) -> Option<skillet_protocol::SkillDefinition> {
    let caller = caller_of(request.extensions());
    state
        .core
        .discover_as(&caller, &SkillDiscoverRequest::default())
        .skills
        .into_iter()
        .find(|s| s.name == name)
}

fn unknown_skill(name: &str) -> Response {
    refusal(
        StatusCode::NOT_FOUND,
        "not_found",
        format!("no skill `{name}` here"),
    )
}

async fn skill(
    State(state): State<ApiState>,
    Path(name): Path<String>,
    request: Request,
) -> Response {
    let Some(definition) = visible_skill(&state, &request, &name) else {
        return unknown_skill(&name);
    };
    let service = Arc::clone(state.core.service());
    let lookup = name.clone();
    let declared: Vec<String> = definition
        .metadata
        .as_ref()
        .and_then(|m| m.get("a2e-requirements"))
        .and_then(Value::as_array)
        .map(|lines| {
            lines
                .iter()
                .filter_map(|l| l.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    let workbench = state.options.workbench.clone();
    // Reading the folder is blocking work: off the runtime.
    let detail = tokio::task::spawn_blocking(move || {
        service.skill_folder(&lookup).map(|folder| {
            super::skill_detail::read(&lookup, folder.as_ref(), declared, workbench.as_deref())
        })
    })
    .await
    .unwrap_or(None);
    let (skill_md, examples, environment, has_evals) = match detail {
        Some(d) => (d.skill_md, d.examples, Some(d.environment), d.has_evals),
        None => (None, Vec::new(), None, false),
    };
    json_answer(
        StatusCode::OK,
        &json!({
            "skill": definition,
            "skill_md": skill_md,
            "examples": examples,
            "environment": environment,
            "has_evals": has_evals,
        }),
    )
}

/// The newest saved eval reports shown per skill.
const EVALS_SHOWN: usize = 5;

/// The skill's newest saved eval reports (`skillet eval --save`), for a caller that may see it.
async fn evals(
    State(state): State<ApiState>,
    Path(name): Path<String>,
    request: Request,
) -> Response {
    if visible_skill(&state, &request, &name).is_none() {
        return unknown_skill(&name);
    }
    let Some(history) = state.options.history.as_ref() else {
        return no_history();
    };
    match history.evals(&name, EVALS_SHOWN).await {
        Ok(evals) => json_answer(StatusCode::OK, &json!({ "evals": evals })),
        Err(e) => failed(&e),
    }
}

/// Runs the skill's evals on the host's model and saves the report (`super::eval_run`), for a
/// caller that may see (so run) the skill; 409 while another eval runs on this server.
async fn run_evals(
    State(state): State<ApiState>,
    Path(name): Path<String>,
    request: Request,
) -> Response {
    use super::eval_run::{EvalRunError, run_and_save};
    use skillet_core::workbench::EvalsError;
    if visible_skill(&state, &request, &name).is_none() {
        return unknown_skill(&name);
    }
    let Some(history) = state.options.history.as_ref() else {
        return no_history();
    };
    let Some(_turn) = state.eval_slot.try_take() else {
        return refusal(
            StatusCode::CONFLICT,
            "eval_running",
            "an eval is already running on this server; try again when it ends",
        );
    };
    let service = Arc::clone(state.core.service());
    let lookup = name.clone();
    let folder = {
        let service = Arc::clone(&service);
        tokio::task::spawn_blocking(move || service.skill_folder(&lookup))
            .await
            .unwrap_or(None)
    };
    let label = state.options.model_label.as_deref().unwrap_or("host");
    let outcome = match (folder, state.options.workbench.as_deref()) {
        (_, None) => Err(EvalRunError::NoWorkbench),
        (Some(folder), Some(workbench)) => {
            let (dir, history) = (folder.dir(), history.path());
            run_and_save(workbench, &name, dir, service, label, history).await
        }
        (None, Some(_)) => Err(EvalRunError::NoFolder(name.clone())),
    };
    match outcome {
        Ok(id) => json_answer(StatusCode::OK, &json!({ "saved": id })),
        Err(e @ (EvalRunError::NoFolder(_) | EvalRunError::Evals(EvalsError::NoEvals(_)))) => {
            refusal(StatusCode::NOT_FOUND, "no_evals", e.to_string())
        }
        Err(e @ EvalRunError::NoWorkbench) => {
            refusal(StatusCode::NOT_IMPLEMENTED, "no_evals", e.to_string())
        }
        Err(e @ EvalRunError::Evals(EvalsError::Invalid { .. })) => refusal(
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_evals",
            e.to_string(),
        ),
        Err(EvalRunError::Save(e)) => failed(&e),
    }
}

fn no_history() -> Response {
    refusal(
        StatusCode::NOT_FOUND,
        "no_history",
        "the run history is off on this server ([console] history = false)",
    )
}

fn failed(error: &impl std::fmt::Display) -> Response {
    tracing::warn!(error = %error, "console: the run history failed");
    refusal(
        StatusCode::INTERNAL_SERVER_ERROR,
        "history_failed",
        "the run history could not be read (see the server log)",
    )
}

/// The skills whose runs the request's caller may read: under `[auth]` the ones it may see
/// (the run of another is "not found", as an unknown one); `None`, every skill, without.
fn readable_skills(state: &ApiState, request: &Request) -> Option<Vec<String>> {
    state.core.access()?;
    let caller = caller_of(request.extensions());
    let visible = state
        .core
        .discover_as(&caller, &SkillDiscoverRequest::default());
    Some(visible.skills.into_iter().map(|s| s.name).collect())
}

async fn runs(
    State(state): State<ApiState>,
    RawQuery(query): RawQuery,
    request: Request,
) -> Response {
    let Some(history) = state.options.history.as_ref() else {
        return no_history();
    };
    let pairs: Vec<(String, String)> = form_urlencoded_pairs(query.as_deref().unwrap_or_default());
    let mut filter = match RunFilter::from_pairs(pairs) {
        Ok(filter) => filter,
        Err(e) => return refusal(StatusCode::BAD_REQUEST, "bad_request", e.0),
    };
    filter.visible_skills = readable_skills(&state, &request);
    match history.list(filter).await {
        Ok(runs) => json_answer(StatusCode::OK, &json!({ "runs": runs })),
        Err(e) => failed(&e),
    }
}

async fn run(State(state): State<ApiState>, Path(id): Path<String>, request: Request) -> Response {
    let Some(history) = state.options.history.as_ref() else {
        return no_history();
    };
    let Some(id) = id.parse::<i64>().ok().filter(|id| *id > 0) else {
        return refusal(
            StatusCode::BAD_REQUEST,
            "bad_request",
            format!("a run id is a positive number, not {id:?}"),
        );
    };
    let readable = readable_skills(&state, &request);
    let record = history.get(id).await.map(|record| {
        record.filter(|r| {
            readable
                .as_ref()
                .is_none_or(|s| s.contains(&r.summary.skill))
        })
    });
    match record {
        Ok(Some(record)) => json_answer(StatusCode::OK, &json!({ "run": record })),
        Ok(None) => refusal(
            StatusCode::NOT_FOUND,
            "not_found",
            format!("no run {id} in the history (never recorded, or pruned)"),
        ),
        Err(e) => failed(&e),
    }
}

async fn pending_approvals(State(state): State<ApiState>, request: Request) -> Response {
    let caller = caller_of(request.extensions());
    json_answer(
        StatusCode::OK,
        &json!({ "approvals": state.approvals.pending_for(&caller) }),
    )
}

/// A decision's body.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct DecisionBody {
    decision: Verdict,
    #[serde(default)]
    reason: Option<String>,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "lowercase")]
enum Verdict {
    Approve,
    Deny,
}

async fn decide(
    State(state): State<ApiState>,
    Path(id): Path<String>,
    request: Request,
) -> Response {
    let caller = caller_of(request.extensions());
    let is_json = request
        .headers()
        .get(axum::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.trim_start()
                .to_ascii_lowercase()
                .starts_with("application/json")
        });
    if !is_json {
        return refusal(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported_media_type",
            "a decision is a JSON body (Content-Type: application/json)",
        );
    }
    let body = match axum::body::to_bytes(request.into_body(), MAX_DECISION_BYTES).await {
        Ok(body) => body,
        Err(_) => {
            return refusal(
                StatusCode::BAD_REQUEST,
                "bad_request",
                format!("a decision is a JSON body of at most {MAX_DECISION_BYTES} bytes"),
            );
        }
    };
    let parsed: DecisionBody = match serde_json::from_slice(&body) {
        Ok(parsed) => parsed,
        Err(e) => {
            return refusal(
                StatusCode::BAD_REQUEST,
                "bad_request",
                format!(
                    "expected {{\"decision\": \"approve\" | \"deny\", \"reason\"?: string}}: {e}"
                ),
            );
        }
    };
    let decision = match parsed.decision {
        Verdict::Approve => skillet_core::approval::ApprovalDecision::Approved,
        Verdict::Deny => denial(parsed.reason.as_deref()),
    };
    let approved = matches!(decision, skillet_core::approval::ApprovalDecision::Approved);
    match state.approvals.decide(&caller, &id, decision) {
        Ok(()) => json_answer(
            StatusCode::OK,
            &json!({"id": id, "decision": if approved { "approve" } else { "deny" }}),
        ),
        Err(_) => refusal(
            StatusCode::NOT_FOUND,
            "not_found",
            "no approval with that id waits for you (unknown, already decided, or its run stopped waiting)",
        ),
    }
}

/// `application/x-www-form-urlencoded` pairs (`+` is a space, `%XX` decoded; bytes that do not
/// decode to UTF-8 are replaced).
fn form_urlencoded_pairs(query: &str) -> Vec<(String, String)> {
    let decode = |text: &str| {
        let spaced = text.replace('+', " ");
        percent_encoding::percent_decode_str(&spaced)
            .decode_utf8_lossy()
            .into_owned()
    };
    query
        .split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            (decode(key), decode(value))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::form_urlencoded_pairs;

    #[test]
    fn query_pairs_are_decoded() {
        assert_eq!(
            form_urlencoded_pairs("skill=a+b&model=x%2Fy&&flag"),
            vec![
                ("skill".to_owned(), "a b".to_owned()),
                ("model".to_owned(), "x/y".to_owned()),
                ("flag".to_owned(), String::new()),
            ]
        );
    }
}
