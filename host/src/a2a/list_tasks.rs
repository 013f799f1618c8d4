//! `ListTasks` (A2A 1.0): the stored tasks, newest status first, filtered and paged.
//!
//! | param | meaning |
//! |---|---|
//! | `contextId` | only the tasks of that context |
//! | `status` | only tasks in that state (`TASK_STATE_UNSPECIFIED` or absent: any) |
//! | `statusTimestampAfter` | only tasks whose status changed at or after this RFC 3339 time |
//! | `pageSize` | 1–100, default 50 when absent (0 or out of range: `-32602`) |
//! | `pageToken` | the `nextPageToken` of the previous page (anything else: `-32602`) |
//! | `historyLength` | at most this many newest history messages per task (negative: `-32602`) |
//! | `includeArtifacts` | artifacts are left out unless true |
//!
//! Order: status timestamp, newest first, then task id (descending), as the a2a-sdk's stores
//! order. A page token names the last task of its page by that key, so a page stays stable
//! when tasks before it finish or expire (a task updated mid-listing can move up and be
//! skipped, as in the SDK). The answer is `{tasks, nextPageToken, pageSize, totalSize}`, with
//! `nextPageToken` empty on the last page. Only what the store still holds is listed: finished
//! tasks expire after `[a2a] task_ttl_seconds`.

use base64::Engine as _;
use serde::Deserialize;
use serde_json::{Value, json};

use super::jsonrpc::{RpcCode, RpcError, history_length};
use super::store::TaskStore;
use super::wire::{Task, TaskState};

/// The page size when none is asked for.
pub(crate) const DEFAULT_PAGE_SIZE: usize = 50;
/// The largest page.
pub(crate) const MAX_PAGE_SIZE: usize = 100;

/// `ListTasks` params (`tenant` is accepted and ignored: one tenant per server).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct ListTasksParams {
    pub context_id: String,
    pub status: Option<TaskState>,
    pub page_size: Option<i64>,
    pub page_token: String,
    pub history_length: Option<i64>,
    pub status_timestamp_after: Option<String>,
    pub include_artifacts: bool,
    #[allow(dead_code)]
    pub tenant: String,
}

/// The sort key of a task: status time (Unix nanoseconds, 0 when unknown) and id.
type SortKey = (i128, String);

fn sort_key(task: &Task) -> SortKey {
    let nanos = task
        .status
        .timestamp
        .as_deref()
        .and_then(parse_time)
        .unwrap_or(0);
    (nanos, task.id.clone())
}

fn parse_time(text: &str) -> Option<i128> {
    time::OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339)
        .ok()
        .map(time::OffsetDateTime::unix_timestamp_nanos)
}

fn invalid(message: impl Into<String>) -> RpcError {
    RpcError::new(RpcCode::InvalidParams, message)
}

fn encode_token(key: &SortKey) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(format!("{}:{}", key.0, key.1))
}

fn decode_token(token: &str) -> Option<SortKey> {
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(token)
        .ok()?;
    let text = String::from_utf8(bytes).ok()?;
    let (nanos, id) = text.split_once(':')?;
    Some((nanos.parse().ok()?, id.to_owned()))
}

/// Answers `ListTasks` from `store`.
pub(crate) fn list_tasks(
    store: &TaskStore,
    owner: Option<&str>,
    params: ListTasksParams,
) -> Result<Value, RpcError> {
    let page_size = match params.page_size {
        None => DEFAULT_PAGE_SIZE,
        Some(n) => usize::try_from(n)
            .ok()
            .filter(|n| (1..=MAX_PAGE_SIZE).contains(n))
            .ok_or_else(|| invalid(format!("pageSize must be 1 to {MAX_PAGE_SIZE} (got {n})")))?,
    };
    let history = history_length(params.history_length)?;
    let after = match params.status_timestamp_after.as_deref() {
        None | Some("") => None,
        Some(text) => Some(parse_time(text).ok_or_else(|| {
            invalid(format!(
                "statusTimestampAfter is not an RFC 3339 time: {text:?}"
            ))
        })?),
    };
    let cursor = match params.page_token.as_str() {
        "" => None,
        token => Some(decode_token(token).ok_or_else(|| {
            invalid(format!(
                "unknown pageToken {token:?}: pass a nextPageToken back"
            ))
        })?),
    };
    let state = params.status.filter(|s| *s != TaskState::Unspecified);
    let mut tasks = store.matching(owner, |task| {
        (params.context_id.is_empty() || task.context_id == params.context_id)
            && state.is_none_or(|s| task.status.state == s)
    });
    let mut keyed: Vec<(SortKey, Task)> = tasks
        .drain(..)
        .map(|task| (sort_key(&task), task))
        .filter(|(key, _)| after.is_none_or(|after| key.0 >= after))
        .collect();
    keyed.sort_by(|a, b| b.0.cmp(&a.0));
    let total = keyed.len();
    let start = cursor.map_or(0, |cursor| {
        keyed
            .iter()
            .position(|(key, _)| *key < cursor)
            .unwrap_or(total)
    });
    let end = (start + page_size).min(total);
    let next_page_token = if end < total {
        encode_token(&keyed[end - 1].0)
    } else {
        String::new()
    };
    let page: Vec<Task> = keyed
        .drain(start..end)
        .map(|(_, mut task)| {
            if !params.include_artifacts {
                task.artifacts.clear();
            }
            if let Some(keep) = history {
                let skip = task.history.len().saturating_sub(keep);
                task.history.drain(..skip);
            }
            task
        })
        .collect();
    Ok(json!({
        "tasks": page,
        "nextPageToken": next_page_token,
        "pageSize": page_size,
        "totalSize": total,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_tokens_round_trip_and_strangers_are_refused() {
        let key = (1_700_000_000_123_456_789, "task-1".to_owned());
        assert_eq!(decode_token(&encode_token(&key)), Some(key));
        assert_eq!(decode_token("not a token"), None);
    }

    #[test]
    fn status_times_order_by_instant_not_by_text() {
        let earlier = parse_time("2026-12-02T12:00:05.12Z").unwrap();
        let later = parse_time("2026-12-02T12:00:05.2Z").unwrap();
        assert!(earlier < later);
    }
}
