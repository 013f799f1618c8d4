//! A2A push notifications (A2A 1.0 §3.1.7–3.1.10, §4.3, §13.2): a client registers a webhook
//! for a task and the server POSTs the task's updates to it.
//!
//! Off unless the operator turns them on (`[a2a] push = true`, [`PushOptions`]); while off,
//! every config method and a `SendMessage` carrying `taskPushNotificationConfig` is `-32003`.
//!
//! | method | answer |
//! |---|---|
//! | `CreateTaskPushNotificationConfig` | the stored config (`id` made when empty); the webhook then gets the task as it is, then every later update. A URL the allowlist refuses is `-32602` saying why |
//! | `GetTaskPushNotificationConfig` | the config; unknown → `-32001` |
//! | `ListTaskPushNotificationConfigs` | `{configs, nextPageToken: ""}` (one page: a task has at most [`MAX_PER_TASK`]) |
//! | `DeleteTaskPushNotificationConfig` | `{}`, idempotent; sending stops |
//!
//! A config answered back never carries `authentication.credentials` (kept as a secret, sent
//! only to the webhook). Configs live as long as their task is stored; an unknown task, or under
//! `[auth]` another identity's, is `-32001`.
//!
//! In memory, or durable with `[server] state_db` ([`PushNotifications::durable`]): a restart
//! reads every config back whose task the store still holds, checks its webhook against
//! today's `[a2a] push_allow` again (one no longer allowed is dropped, with a warning naming
//! its task and config), and sends the later updates of a task that is still running (a
//! resumed one) to it; a finished task's configs answer `Get`/`List` without being sent again.
//!
//! - `allow` — which webhook URLs and addresses are allowed;
//! - `deliver` — the queue, retries and the POSTs;
//! - `durable` — the configs' rows in the state database.

mod allow;
mod deliver;
mod durable;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use secrecy::SecretString;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

pub use allow::{PushAllow, PushAllowError};

use super::jsonrpc::{RpcCode, RpcError, params};
use super::persist::{StateDb, StateDbError};
use super::refusals::not_found;
use super::store::TaskStore;
use super::wire::{AuthenticationInfo, TaskPushNotificationConfig};
use crate::auth::Caller;
use allow::AllowList;
use deliver::{Delivery, Target};
use durable::{ConfigRows, StoredConfig};

/// Most push configs one task may have.
pub(crate) const MAX_PER_TASK: usize = 10;

/// The methods of this module.
pub(crate) const METHODS: [&str; 4] = [
    "CreateTaskPushNotificationConfig",
    "GetTaskPushNotificationConfig",
    "ListTaskPushNotificationConfigs",
    "DeleteTaskPushNotificationConfig",
];

/// How push notifications are allowed to go out (`[a2a] push_allow`).
#[derive(Debug, Clone, Default)]
pub struct PushOptions {
    /// Webhook URLs must lie under one of these.
    pub allow: Vec<PushAllow>,
}

/// Push notifications cannot be turned on.
#[derive(Debug, thiserror::Error)]
pub enum PushSetupError {
    /// The delivery client could not be built.
    #[error("push notifications: cannot build the HTTP client: {0}")]
    Client(#[from] reqwest::Error),
    /// The state database's push configs cannot be read or written.
    #[error("push notifications: [server] state_db: {0}")]
    StateDb(#[from] StateDbError),
}

/// The configs of every task and the delivery that sends their updates.
#[derive(Debug)]
pub(crate) struct PushNotifications {
    allow: Arc<AllowList>,
    delivery: Delivery,
    /// Per task id: its configs and what stops each one's sending.
    configs: Mutex<HashMap<String, Vec<(TaskPushNotificationConfig, CancellationToken)>>>,
    /// With `[server] state_db`: where the configs are written through.
    rows: Option<ConfigRows>,
}

/// A config whose webhook was checked, ready to be registered on a task.
#[derive(Debug)]
pub(crate) struct CheckedConfig {
    config: TaskPushNotificationConfig,
}

impl PushNotifications {
    pub(crate) fn new(options: PushOptions) -> Result<PushNotifications, PushSetupError> {
        let allow = Arc::new(AllowList::new(options.allow));
        Ok(PushNotifications {
            delivery: Delivery::new(Arc::clone(&allow))?,
            allow,
            configs: Mutex::default(),
            rows: None,
        })
    }

    /// Push notifications whose configs are kept in `db`: those stored there put back on the
    /// tasks of `store` (see the module doc), later ones written through.
    pub(crate) async fn durable(
        options: PushOptions,
        db: &StateDb,
        store: &Arc<TaskStore>,
    ) -> Result<PushNotifications, PushSetupError> {
        let mut push = PushNotifications::new(options)?;
        let opening = db.clone();
        let (rows, stored) = tokio::task::spawn_blocking(move || ConfigRows::open(&opening))
            .await
            .map_err(|e| db.error(format!("reading its push configs failed: {e}")))??;
        push.rows = Some(rows);
        push.restore(store, stored).await;
        Ok(push)
    }

    /// Puts `stored` back on their tasks; drops (and deletes) each one whose task is gone,
    /// that does not decode, or whose webhook is no longer allowed.
    async fn restore(&self, store: &Arc<TaskStore>, stored: Vec<StoredConfig>) {
        for (task_id, id, config) in stored {
            let kept = match config {
                Err(why) => Err(format!("does not decode ({why})")),
                Ok(_) if !store.visible_to(&task_id, None) => {
                    Err("belongs to a task no longer stored".to_owned())
                }
                Ok(config) => match self.check(config).await {
                    Err(refused) => Err(format!(
                        "has a webhook [a2a] push_allow no longer allows: {}",
                        refused.message
                    )),
                    Ok(checked) => {
                        let running = store
                            .get(&task_id, Some(0))
                            .is_some_and(|task| !task.status.state.is_terminal());
                        self.add(store, &task_id, checked, Added::Restored { running })
                            .map(|_| ())
                            .map_err(|refused| refused.message)
                    }
                },
            };
            if let Err(why) = kept {
                tracing::warn!(task_id = %task_id, config = %id,
                    "state database: a stored push notification config {why}; dropped");
                if let Some(rows) = &self.rows {
                    rows.delete(&task_id, &id);
                }
            }
        }
    }

    /// Waits until every config change so far is in the state database (at once without one).
    async fn persisted(&self) {
        if let Some(rows) = &self.rows {
            rows.flushed().await;
        }
    }

    /// `config`'s webhook checked against the allowlist (`-32602` saying why not).
    pub(crate) async fn check(
        &self,
        mut config: TaskPushNotificationConfig,
    ) -> Result<CheckedConfig, RpcError> {
        let url = self.allow.check(config.url.trim()).await.map_err(|why| {
            RpcError::new(RpcCode::InvalidParams, why.to_string())
                .with_violations(vec![("url".into(), why.to_string())])
        })?;
        config.url = url.to_string();
        if config.id.is_empty() {
            config.id = skillet_protocol::new_id();
        }
        Ok(CheckedConfig { config })
    }

    /// Registers `checked` on task `task_id` and starts sending its updates; replaces a config
    /// with the same id.
    pub(crate) fn register(
        &self,
        store: &Arc<TaskStore>,
        task_id: &str,
        checked: CheckedConfig,
    ) -> Result<TaskPushNotificationConfig, RpcError> {
        self.add(store, task_id, checked, Added::New)
    }

    fn add(
        &self,
        store: &Arc<TaskStore>,
        task_id: &str,
        checked: CheckedConfig,
        added: Added,
    ) -> Result<TaskPushNotificationConfig, RpcError> {
        let mut config = checked.config;
        config.task_id = task_id.to_owned();
        let url = config
            .url
            .parse()
            .map_err(|_| RpcError::new(RpcCode::InvalidParams, "webhook url is not a URL"))?;
        let target = Target {
            config_id: config.id.clone(),
            url,
            token: config.token.clone(),
            authorization: config
                .authentication
                .as_ref()
                .filter(|a| !a.scheme.is_empty() && !a.credentials.is_empty())
                .map(|a| SecretString::from(format!("{} {}", a.scheme, a.credentials))),
        };
        let stored = config.clone();
        // From here on the credentials live only in `target`, as a secret (and in the
        // config's row, `durable`).
        let config = answered(&config);
        let stop = CancellationToken::new();
        {
            let mut configs = self.lock();
            // Configs of tasks the store no longer holds are dropped here.
            configs.retain(|task, list| {
                let kept = store.visible_to(task, None);
                if !kept {
                    list.iter().for_each(|(_, stop)| stop.cancel());
                    if let Some(rows) = &self.rows {
                        rows.delete_task(task);
                    }
                }
                kept
            });
            let list = configs.entry(task_id.to_owned()).or_default();
            if let Some(index) = list.iter().position(|(c, _)| c.id == config.id) {
                list.remove(index).1.cancel();
            }
            if list.len() >= MAX_PER_TASK {
                return Err(RpcError::new(
                    RpcCode::InvalidParams,
                    format!(
                        "task {task_id:?} already has {MAX_PER_TASK} push notification configs; delete one first"
                    ),
                ));
            }
            list.push((config.clone(), stop.clone()));
            if let (Some(rows), Added::New) = (&self.rows, added) {
                rows.upsert(&stored);
            }
        }
        // A restored config of a finished task was sent its updates before the restart.
        if !matches!(added, Added::Restored { running: false }) {
            self.delivery.start(store, task_id, target, stop);
        }
        Ok(config)
    }

    /// Answers one of [`METHODS`] for `caller`.
    pub(crate) async fn answer(
        &self,
        store: &Arc<TaskStore>,
        method: &str,
        request: Value,
        caller: &Caller,
    ) -> Result<Value, RpcError> {
        match method {
            "CreateTaskPushNotificationConfig" => {
                let config: TaskPushNotificationConfig = params(request)?;
                let task_id = config.task_id.clone();
                visible(store, &task_id, caller)?;
                let checked = self.check(config).await?;
                let config = self.register(store, &task_id, checked)?;
                self.persisted().await;
                Ok(to_json(&config))
            }
            "GetTaskPushNotificationConfig" => {
                let ConfigRef { task_id, id } = params(request)?;
                visible(store, &task_id, caller)?;
                self.lock()
                    .get(&task_id)
                    .and_then(|list| list.iter().find(|(c, _)| c.id == id))
                    .map(|(c, _)| to_json(c))
                    .ok_or_else(|| config_not_found(&task_id, &id))
            }
            "ListTaskPushNotificationConfigs" => {
                let ListParams {
                    task_id,
                    page_token,
                } = params(request)?;
                visible(store, &task_id, caller)?;
                if !page_token.is_empty() {
                    return Err(RpcError::new(
                        RpcCode::InvalidParams,
                        format!(
                            "unknown pageToken {page_token:?}: every config is on the first page"
                        ),
                    ));
                }
                let configs: Vec<TaskPushNotificationConfig> = self
                    .lock()
                    .get(&task_id)
                    .map(|list| list.iter().map(|(c, _)| c.clone()).collect())
                    .unwrap_or_default();
                Ok(json!({"configs": configs, "nextPageToken": ""}))
            }
            "DeleteTaskPushNotificationConfig" => {
                let ConfigRef { task_id, id } = params(request)?;
                visible(store, &task_id, caller)?;
                if let Some(list) = self.lock().get_mut(&task_id)
                    && let Some(index) = list.iter().position(|(c, _)| c.id == id)
                {
                    list.remove(index).1.cancel();
                    if let Some(rows) = &self.rows {
                        rows.delete(&task_id, &id);
                    }
                }
                self.persisted().await;
                Ok(json!({}))
            }
            other => Err(RpcError::new(
                RpcCode::MethodNotFound,
                format!("method {other:?} not found"),
            )),
        }
    }

    fn lock(
        &self,
    ) -> std::sync::MutexGuard<
        '_,
        HashMap<String, Vec<(TaskPushNotificationConfig, CancellationToken)>>,
    > {
        self.configs.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// How a config comes to be registered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Added {
    /// A client's: written through, its task's updates sent.
    New,
    /// Read back at start-up: already stored; sent only while its task still runs.
    Restored { running: bool },
}

/// The refusal of every push method and push config while push notifications are off.
pub(crate) fn not_supported() -> RpcError {
    RpcError::new(
        RpcCode::PushNotificationNotSupported,
        "push notifications are not enabled on this server (its operator turns them on with [a2a] push); use SendStreamingMessage or SubscribeToTask",
    )
}

/// `{taskId, id}`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ConfigRef {
    task_id: String,
    id: String,
}

/// `ListTaskPushNotificationConfigs` params (`pageSize` and `tenant` accepted and ignored).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ListParams {
    task_id: String,
    #[serde(default)]
    page_token: String,
}

fn visible(store: &TaskStore, task_id: &str, caller: &Caller) -> Result<(), RpcError> {
    if store.visible_to(task_id, caller.owner()) {
        Ok(())
    } else {
        Err(not_found(task_id))
    }
}

fn config_not_found(task_id: &str, id: &str) -> RpcError {
    RpcError::new(
        RpcCode::TaskNotFound,
        format!("task {task_id:?} has no push notification config {id:?}"),
    )
}

/// `config` as a client reads it back: without the credentials.
fn answered(config: &TaskPushNotificationConfig) -> TaskPushNotificationConfig {
    let mut config = config.clone();
    if let Some(authentication) = &mut config.authentication {
        *authentication = AuthenticationInfo {
            scheme: authentication.scheme.clone(),
            credentials: String::new(),
        };
    }
    config
}

fn to_json<T: serde::Serialize>(value: &T) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}
