//! Sending a task's updates to one webhook: the task as it is when the config is made, then
//! every later update, each POSTed as one `StreamResponse` (`application/a2a+json`) with the
//! config's token (`X-A2A-Notification-Token`) and authentication (`Authorization: SCHEME
//! CREDENTIALS`), in order.
//!
//! Each config has its own bounded queue ([`QUEUE`] updates) between the task's store
//! subscription and its sender: when the webhook falls behind, further working updates and
//! artifact chunks are dropped (and counted), while a status that ends the task or asks for
//! input waits for room. A POST that fails (no connection, a timeout, HTTP 408, 429 or 5xx) is
//! tried again after a backoff that doubles ([`ATTEMPTS`] tries in all); another 4xx is final.
//! An update that could not be delivered is counted in the task's metadata
//! (`pushDeliveryFailures`, `pushLastFailure`) and in `skillet_a2a_push_deliveries_total`;
//! after [`GIVE_UP_AFTER`] updates in a row failed the config stops sending. At most
//! [`IN_FLIGHT`] POSTs are in flight across the server.
//!
//! Not here: which URLs are allowed (`allow`), the config methods (`super`).

use std::sync::Arc;
use std::time::Duration;

use reqwest::Url;
use secrecy::{ExposeSecret, SecretString};
use serde_json::{Value, json};
use tokio::sync::{Semaphore, mpsc};
use tokio_util::sync::CancellationToken;

use super::allow::{AllowList, CheckedResolver};
use crate::a2a::store::TaskStore;
use crate::a2a::wire::{StreamResponse, TaskState};
use skillet_core::telemetry::metrics;

/// Updates queued per config before working updates are dropped.
pub(crate) const QUEUE: usize = 64;
/// Tries per update.
pub(crate) const ATTEMPTS: u32 = 4;
/// The wait before the second try; doubled before each later one.
const FIRST_BACKOFF: Duration = Duration::from_millis(500);
/// How long one POST may take.
const POST_TIMEOUT: Duration = Duration::from_secs(10);
/// Updates failing in a row after which a config stops sending.
pub(crate) const GIVE_UP_AFTER: u32 = 5;
/// POSTs in flight across the server.
pub(crate) const IN_FLIGHT: usize = 16;

/// The task metadata key counting undelivered updates.
pub(crate) const FAILURES_KEY: &str = "pushDeliveryFailures";
/// The task metadata key saying why the last update was not delivered.
pub(crate) const LAST_FAILURE_KEY: &str = "pushLastFailure";

/// Where one config sends, and with what.
#[derive(Debug)]
pub(crate) struct Target {
    pub config_id: String,
    pub url: Url,
    pub token: String,
    /// `SCHEME CREDENTIALS`, when the config has authentication.
    pub authorization: Option<SecretString>,
}

/// The delivery client shared by every config.
#[derive(Debug, Clone)]
pub(crate) struct Delivery {
    client: reqwest::Client,
    allow: Arc<AllowList>,
    in_flight: Arc<Semaphore>,
}

/// Why one update was not delivered.
#[derive(Debug, thiserror::Error)]
enum Undelivered {
    #[error("the webhook is no longer allowed: {0}")]
    Refused(#[from] super::allow::WebhookRefusal),
    #[error("HTTP {status} after {attempts} attempt(s)")]
    Status { status: u16, attempts: u32 },
    #[error("{why} after {attempts} attempt(s)")]
    Transport { why: String, attempts: u32 },
    #[error("the queue was full ({QUEUE} updates waiting); the update was dropped")]
    QueueFull,
}

impl Delivery {
    /// A client that connects only to addresses `allow` allows, follows no redirects and uses
    /// no proxy (a proxy would resolve names itself).
    pub(crate) fn new(allow: Arc<AllowList>) -> Result<Delivery, reqwest::Error> {
        let client = reqwest::Client::builder()
            .dns_resolver(Arc::new(CheckedResolver {
                allow: Arc::clone(&allow),
            }))
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .connect_timeout(Duration::from_secs(5))
            .timeout(POST_TIMEOUT)
            .build()?;
        Ok(Delivery {
            client,
            allow,
            in_flight: Arc::new(Semaphore::new(IN_FLIGHT)),
        })
    }

    /// Starts sending task `task_id`'s updates to `target` until the task's stream ends or
    /// `stop` is cancelled.
    pub(crate) fn start(
        &self,
        store: &Arc<TaskStore>,
        task_id: &str,
        target: Target,
        stop: CancellationToken,
    ) {
        let Some((task, rest)) = store.subscribe(task_id) else {
            return;
        };
        let (queue, mut queued) = mpsc::channel::<StreamResponse>(QUEUE);
        let target = Arc::new(target);
        let pump_store = Arc::clone(store);
        let pump_stop = stop.clone();
        let pump_task = task_id.to_owned();
        let pump_target = Arc::clone(&target);
        tokio::spawn(async move {
            if queue.send(StreamResponse::Task(task)).await.is_err() {
                return;
            }
            let Some(mut rest) = rest else { return };
            loop {
                let update = tokio::select! {
                    () = pump_stop.cancelled() => return,
                    update = rest.recv() => match update {
                        Some(update) => update,
                        None => return,
                    },
                };
                if must_arrive(&update) {
                    if queue.send(update).await.is_err() {
                        return;
                    }
                } else if queue.try_send(update).is_err() {
                    record(
                        &pump_store,
                        &pump_task,
                        &pump_target,
                        &Undelivered::QueueFull,
                    );
                    metrics::a2a_push("dropped");
                }
            }
        });
        let delivery = self.clone();
        let store = Arc::clone(store);
        let task_id = task_id.to_owned();
        tokio::spawn(async move {
            let mut failed_in_a_row = 0;
            loop {
                let update = tokio::select! {
                    () = stop.cancelled() => return,
                    update = queued.recv() => match update {
                        Some(update) => update,
                        None => return,
                    },
                };
                match delivery.post(&target, &update).await {
                    Ok(()) => {
                        failed_in_a_row = 0;
                        metrics::a2a_push("delivered");
                    }
                    Err(why) => {
                        failed_in_a_row += 1;
                        metrics::a2a_push("failed");
                        record(&store, &task_id, &target, &why);
                        if failed_in_a_row >= GIVE_UP_AFTER {
                            tracing::warn!(task_id = %task_id, config = %target.config_id,
                                "push notifications stopped after {GIVE_UP_AFTER} undelivered updates in a row");
                            return;
                        }
                    }
                }
            }
        });
    }

    /// POSTs `update` to `target`, trying again after a failure that may pass.
    async fn post(&self, target: &Target, update: &StreamResponse) -> Result<(), Undelivered> {
        self.allow.recheck(&target.url)?;
        let body = serde_json::to_vec(update).unwrap_or_default();
        let mut backoff = FIRST_BACKOFF;
        let mut attempt = 1;
        loop {
            let outcome = {
                let _permit = self.in_flight.acquire().await;
                let mut request = self
                    .client
                    .post(target.url.clone())
                    .header(reqwest::header::CONTENT_TYPE, "application/a2a+json")
                    .header(crate::a2a::http::VERSION_HEADER, "1.0")
                    .body(body.clone());
                if !target.token.is_empty() {
                    request = request.header("X-A2A-Notification-Token", &target.token);
                }
                if let Some(authorization) = &target.authorization {
                    request = request.header(
                        reqwest::header::AUTHORIZATION,
                        authorization.expose_secret(),
                    );
                }
                request.send().await
            };
            let retry = match outcome {
                Ok(response) if response.status().is_success() => return Ok(()),
                Ok(response) => {
                    let status = response.status().as_u16();
                    let failure = Undelivered::Status {
                        status,
                        attempts: attempt,
                    };
                    if !(status == 408 || status == 429 || status >= 500) {
                        return Err(failure);
                    }
                    failure
                }
                Err(e) => Undelivered::Transport {
                    why: transport_error(&e),
                    attempts: attempt,
                },
            };
            if attempt >= ATTEMPTS {
                return Err(retry);
            }
            tokio::time::sleep(backoff).await;
            backoff *= 2;
            attempt += 1;
        }
    }
}

/// Whether `update` ends the task or asks for input: never dropped for a full queue.
fn must_arrive(update: &StreamResponse) -> bool {
    matches!(update, StreamResponse::StatusUpdate(event)
        if event.status.state.is_terminal() || event.status.state == TaskState::InputRequired)
}

/// The error's own words and its causes, without the URL (which may carry a client's token).
fn transport_error(error: &reqwest::Error) -> String {
    let mut text = if error.is_timeout() {
        format!("no answer within {}s", POST_TIMEOUT.as_secs())
    } else if error.is_connect() {
        "cannot connect".to_owned()
    } else {
        "request failed".to_owned()
    };
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// Counts an undelivered update in the task's metadata and logs it (host only, no path).
fn record(store: &TaskStore, task_id: &str, target: &Target, why: &Undelivered) {
    let host = target.url.host_str().unwrap_or_default();
    let text = format!("push config {:?} ({host}): {why}", target.config_id);
    tracing::warn!(task_id = %task_id, "push notification not delivered: {text}");
    store.update_metadata(task_id, |metadata| {
        let failures = metadata
            .get(FAILURES_KEY)
            .and_then(Value::as_u64)
            .unwrap_or(0);
        metadata.insert(FAILURES_KEY.to_owned(), json!(failures + 1));
        metadata.insert(LAST_FAILURE_KEY.to_owned(), Value::String(text));
    });
}
