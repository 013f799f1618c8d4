//! [`A2aAdapter`]: the A2A methods mapped onto the host core — one decoded JSON-RPC request in,
//! its [`Answer`] out.
//!
//! | method | answer |
//! |---|---|
//! | `SendMessage` | runs the selected skill as a new task and answers `{"task": Task}` when the task has ended (with `configuration.returnImmediately`: at once, in `TASK_STATE_WORKING`). A direct `Message` is never returned: every skill run is a task, so its output is always an artifact and can be read again with `GetTask`. The same `messageId` again from the same sender answers its first task as it is now and runs nothing (`repeats`). |
//! | `SendStreamingMessage` | the same run as an SSE stream: the `Task`, then its updates (see `projection`), ending after the terminal status |
//! | `GetTask` | the task, with at most `historyLength` history messages |
//! | `CancelTask` | cancels the run and answers the task once it ended (`TASK_STATE_CANCELED`); a finished task → `-32002` |
//! | `SubscribeToTask` | a running task's stream: its current `Task`, then its later updates; a finished task → `-32004` |
//! | `ListTasks` | the stored tasks, filtered and paged (see `list_tasks`) |
//! | `*TaskPushNotificationConfig*` | push notification configs (`push`); `-32003` unless `[a2a] push` is on |
//! | `GetExtendedAgentCard` | `-32007` (there is no extended card) |
//!
//! Live updates: a task started by `SendStreamingMessage` or by `SendMessage` with
//! `returnImmediately` runs in streaming mode (its working updates and text chunks reach the
//! store and every subscriber); a task of a blocking `SendMessage` runs without live events —
//! a `SubscribeToTask` on it sees the task and then only its end (output artifact, terminal
//! status).
//!
//! A message with a `taskId` continues a task that waits in `TASK_STATE_INPUT_REQUIRED` for a
//! person's approval of a tool call (`continuation`); for a task that does not wait it is
//! `-32004`, for an unknown one `-32001`. A blocking `SendMessage` answers when its task ends
//! or starts waiting. Admission (the concurrent-call limit), cancellation
//! and the one answer per call are the [`HostCore`]'s; the task store keeps what the client can
//! read back. A client that disconnects does not cancel its task (use `CancelTask`): the task
//! stays readable with `GetTask` and `SubscribeToTask`.

use std::sync::{Arc, PoisonError, RwLock};

use serde_json::{Map, Value, json};

use super::checkpoints::SqliteCheckpoints;
use super::continuation::{self, Continuations, TaskApprover};
use super::input::{SKILL_ID_KEY, SkillIndex};
use super::jsonrpc::{RpcCode, RpcError, RpcRequest, history_length, params};
use super::list_tasks::list_tasks;
use super::parts::check_message;
use super::persist::StoredCall;
use super::projection::{Projection, TaskEventSink};
use super::push::{self, PushNotifications, PushOptions, PushSetupError};
use super::refusals::{gone, not_found, refusal_error, select_skill};
use super::repeats::RecentMessages;
use super::store::{CancelRefusal, StoreFull, Subscription, TaskStore};
use super::wire::{
    GetTaskParams, Message, Role, SendMessageParams, StreamResponse, Task, TaskIdParams, TaskState,
    TaskStatus,
};
use crate::auth::Caller;
use crate::core::{Admitted, CANCEL_GRACE, HostCore};
use skillet_core::approval::Approver;
use skillet_core::events::EventSink;
use skillet_protocol::{SkillCallRequest, new_id};

/// What a request is answered with.
#[derive(Debug)]
pub enum Answer {
    /// One JSON-RPC result value.
    Result(Value),
    /// An SSE stream: `first`, then every update of `rest` until it ends.
    Stream {
        /// The first item (the task; boxed, it is large).
        first: Box<StreamResponse>,
        /// The later updates.
        rest: Subscription,
    },
}

/// The A2A adapter. Cheap to clone.
#[derive(Clone, Debug)]
pub struct A2aAdapter {
    inner: Arc<AdapterInner>,
}

#[derive(Debug)]
struct AdapterInner {
    core: HostCore,
    store: Arc<TaskStore>,
    /// The card's skills; rebuilt when a hot reload announces changed skills.
    index: RwLock<Arc<SkillIndex>>,
    continuations: Arc<Continuations>,
    checkpoints: Option<Arc<SqliteCheckpoints>>,
    /// The tasks recent messages started, so a message sent again runs nothing.
    recent: RecentMessages,
    /// Push notifications, once the operator turned them on.
    push: std::sync::OnceLock<PushNotifications>,
}

/// A run to start for a task that is in the store.
pub(super) struct TaskRun {
    pub admitted: Admitted,
    pub request: SkillCallRequest,
    pub projection: Projection,
    /// `Caller::id` of who started the task (who may answer its questions).
    pub caller_id: String,
    /// A task a restart found running: it only continues from its checkpoint.
    pub resume_only: bool,
}

impl A2aAdapter {
    /// An adapter running calls through `core`, keeping tasks in `store`.
    pub fn new(core: HostCore, store: Arc<TaskStore>) -> A2aAdapter {
        A2aAdapter::with_checkpoints(core, store, None)
    }

    /// An adapter whose task runs are checkpointed in `checkpoints` (`[server] state_db`; the
    /// same store must be the executor's [`skillet_core::checkpoint::CheckpointStore`]).
    pub fn with_checkpoints(
        core: HostCore,
        store: Arc<TaskStore>,
        checkpoints: Option<Arc<SqliteCheckpoints>>,
    ) -> A2aAdapter {
        let index = SkillIndex::build(core.service().as_ref());
        let adapter = A2aAdapter {
            inner: Arc::new(AdapterInner {
                core,
                store,
                index: RwLock::new(Arc::new(index)),
                continuations: Arc::default(),
                checkpoints,
                recent: RecentMessages::default(),
                push: std::sync::OnceLock::new(),
            }),
        };
        if adapter.inner.store.is_durable() {
            adapter.inner.recent.remember_stored(&adapter.inner.store);
        }
        adapter.reindex_on_reload();
        adapter.keep_tasks_past_the_grace();
        adapter
    }

    /// On a durable store, a graceful stop whose grace runs out keeps the running tasks for
    /// the next start instead of letting them end cancelled ([`TaskStore::keep_running_for_restart`]).
    fn keep_tasks_past_the_grace(&self) {
        if !self.inner.store.is_durable() {
            return;
        }
        let store = Arc::downgrade(&self.inner.store);
        self.inner.core.on_grace_over(move || {
            let kept = store.upgrade().map_or(0, |s| s.keep_running_for_restart());
            if kept > 0 {
                tracing::warn!(
                    tasks = kept,
                    "grace period over: running A2A tasks are kept in the state database; the next start resumes them"
                );
            }
        });
    }

    /// Rebuilds the skill index whenever the host announces changed skills (hot reload), for
    /// as long as the adapter lives; the card itself is built per request.
    fn reindex_on_reload(&self) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let mut changes = self.inner.core.skill_changes().subscribe();
        let adapter = Arc::downgrade(&self.inner);
        runtime.spawn(async move {
            // A lagged feed is a change too: rebuild either way; stop when the feed closes.
            while !matches!(
                changes.recv().await,
                Err(tokio::sync::broadcast::error::RecvError::Closed)
            ) {
                let Some(inner) = adapter.upgrade() else {
                    return;
                };
                let index = Arc::new(SkillIndex::build(inner.core.service().as_ref()));
                *inner.index.write().unwrap_or_else(PoisonError::into_inner) = index;
            }
        });
    }

    /// The skill index in force.
    fn index(&self) -> Arc<SkillIndex> {
        Arc::clone(
            &self
                .inner
                .index
                .read()
                .unwrap_or_else(PoisonError::into_inner),
        )
    }

    pub(super) fn core(&self) -> &HostCore {
        &self.inner.core
    }

    /// Starts the run of a task that is in the store; its outcome ends the task.
    pub(super) fn start_run(&self, run: TaskRun) {
        let TaskRun {
            admitted,
            request,
            projection,
            caller_id,
            resume_only,
        } = run;
        let task_id = projection.task_id.clone();
        let checkpoints = self.inner.checkpoints.clone();
        if let Some(checkpoints) = &checkpoints {
            checkpoints.cover(&task_id, resume_only);
        }
        let sink = Arc::new(TaskEventSink::new(
            Arc::clone(&self.inner.store),
            projection.clone(),
        )) as Arc<dyn EventSink>;
        let store = Arc::clone(&self.inner.store);
        let approver = Arc::new(TaskApprover {
            continuations: Arc::clone(&self.inner.continuations),
            store: Arc::clone(&self.inner.store),
            task_id: task_id.clone(),
            context_id: projection.context_id.clone(),
            owner: caller_id,
        }) as Arc<dyn Approver>;
        self.inner.core.spawn_call_asking(
            admitted,
            request,
            Some(sink),
            Some(approver),
            move |response| {
                let cancel_requested = store.cancel_requested(&projection.task_id);
                for update in projection.outcome(&response, cancel_requested) {
                    store.apply(&projection.task_id, update);
                }
                if let Some(checkpoints) = checkpoints {
                    checkpoints.release(&projection.task_id);
                }
            },
        );
    }

    /// Turns push notifications on (`[a2a] push`), sending only to webhooks `options` allows;
    /// with `state_db`, the configs kept there are put back first (`push::durable`).
    pub async fn enable_push(
        &self,
        options: PushOptions,
        state_db: Option<&super::StateDb>,
    ) -> Result<(), PushSetupError> {
        let push = match state_db {
            None => PushNotifications::new(options)?,
            Some(db) => PushNotifications::durable(options, db, &self.inner.store).await?,
        };
        let _ = self.inner.push.set(push);
        Ok(())
    }

    /// The task store.
    pub fn store(&self) -> &Arc<TaskStore> {
        &self.inner.store
    }

    /// Answers one request from a trusted caller.
    pub async fn handle(&self, request: RpcRequest) -> Result<Answer, RpcError> {
        self.handle_as(request, &Caller::Local).await
    }

    /// Answers one request from `caller` (a message to a skill it may not run is refused by
    /// the core's admission).
    pub async fn handle_as(
        &self,
        request: RpcRequest,
        caller: &Caller,
    ) -> Result<Answer, RpcError> {
        match request.method.as_str() {
            "SendMessage" => self.send(params(request.params)?, false, caller).await,
            "SendStreamingMessage" => self.send(params(request.params)?, true, caller).await,
            "GetTask" => self.get_task(params(request.params)?, caller),
            "CancelTask" => {
                let params: TaskIdParams = params(request.params)?;
                self.visible(&params.id, caller)?;
                self.cancel_task(params).await
            }
            "SubscribeToTask" => {
                let params: TaskIdParams = params(request.params)?;
                self.visible(&params.id, caller)?;
                self.subscribe(params)
            }
            // Under `[auth]` a task belongs to the identity that started it: another identity's
            // task is not found, and a listing holds only the caller's own.
            "ListTasks" => list_tasks(&self.inner.store, caller.owner(), params(request.params)?)
                .map(Answer::Result),
            method if push::METHODS.contains(&method) => match self.inner.push.get() {
                Some(push) => push
                    .answer(&self.inner.store, method, request.params, caller)
                    .await
                    .map(Answer::Result),
                None => Err(push::not_supported()),
            },
            "GetExtendedAgentCard" => Err(RpcError::new(
                RpcCode::ExtendedAgentCardNotConfigured,
                "this agent has no extended card",
            )),
            other => Err(RpcError::new(
                RpcCode::MethodNotFound,
                format!("method {other:?} not found"),
            )),
        }
    }

    /// `Ok` when the task `id` is there for `caller` — it exists and, under `[auth]`, `caller`
    /// started it; else the same "task not found" an unknown id gets.
    fn visible(&self, id: &str, caller: &Caller) -> Result<(), RpcError> {
        if self.inner.store.visible_to(id, caller.owner()) {
            Ok(())
        } else {
            Err(not_found(id))
        }
    }

    async fn send(
        &self,
        params: SendMessageParams,
        streaming: bool,
        caller: &Caller,
    ) -> Result<Answer, RpcError> {
        let SendMessageParams {
            message,
            configuration,
            metadata,
        } = params;
        check_message(&message)?;
        let mut configuration = configuration.unwrap_or_default();
        let push = match configuration.task_push_notification_config.take() {
            None => None,
            Some(config) => {
                let push = self.inner.push.get().ok_or_else(push::not_supported)?;
                Some((push, push.check(config).await?))
            }
        };
        let history_length = history_length(configuration.history_length)?;
        let accepted = &configuration.accepted_output_modes;
        if !accepted.is_empty()
            && !accepted
                .iter()
                .any(|m| matches!(m.as_str(), "application/json" | "*/*" | "application/*"))
        {
            return Err(RpcError::new(
                RpcCode::ContentTypeNotSupported,
                format!(
                    "skill outputs are application/json data parts; acceptedOutputModes                      {accepted:?} excludes it"
                ),
            ));
        }
        let wait = !configuration.return_immediately;
        if !message.task_id.is_empty() {
            if let Some((push, checked)) = push
                && self
                    .inner
                    .store
                    .visible_to(&message.task_id, caller.owner())
            {
                push.register(&self.inner.store, &message.task_id, checked)?;
            }
            return self
                .continue_task(message, history_length, streaming, wait, caller)
                .await;
        }
        if let Some(answer) = self
            .repeated(&message, caller, streaming, wait, history_length)
            .await
        {
            return answer;
        }
        let index = self.index();
        let invocation = select_skill(&index, self.core(), caller, &message, metadata.as_ref())?;
        let admitted = self
            .inner
            .core
            .admit_anonymous_as(caller, &invocation.name, false)
            .map_err(refusal_error)?
            .through(crate::record::Door::A2a);
        let task_id = new_id();
        let context_id = if message.context_id.is_empty() {
            new_id()
        } else {
            message.context_id.clone()
        };
        let message_id = message.message_id.clone();
        let mut user_message = message;
        user_message.task_id.clone_from(&task_id);
        user_message.context_id.clone_from(&context_id);
        user_message.role = Role::User;
        let mut task_metadata = Map::new();
        task_metadata.insert(SKILL_ID_KEY.to_owned(), json!(invocation.skill_id));
        let task = Task {
            id: task_id.clone(),
            context_id: context_id.clone(),
            status: TaskStatus::now(TaskState::Working, None),
            artifacts: Vec::new(),
            history: vec![user_message],
            metadata: Some(task_metadata),
        };
        let subscription = self
            .inner
            .store
            .insert(task.clone(), admitted.cancel_token(), streaming || wait)
            .map_err(|StoreFull { max_tasks }| {
                RpcError::new(
                    RpcCode::Internal,
                    format!(
                        "task store full: all {max_tasks} stored tasks are running; retry later"
                    ),
                )
                .with_metadata("retryable", "true")
            })?;
        if let Some(owner) = caller.owner() {
            self.inner.store.set_owner(&task.id, owner);
        }
        if let Some((push, checked)) = push {
            push.register(&self.inner.store, &task_id, checked)?;
        }
        let sender = caller.owner().unwrap_or_default();
        self.inner.recent.remember(sender, &message_id, &task_id);
        if self.inner.store.is_durable() {
            let call = StoredCall {
                skill: invocation.name.clone(),
                arguments: invocation.arguments.clone(),
                caller: caller.id().to_owned(),
            };
            self.inner.store.record_call(&task_id, &call);
        }
        let projection = Projection {
            task_id: task_id.clone(),
            context_id: context_id.clone(),
        };
        let mut request = SkillCallRequest::new(invocation.name, invocation.arguments);
        request.id.clone_from(&task_id);
        request.correlation_id = context_id;
        // Live events (and a streamed model answer) only when someone can watch them: a
        // blocking SendMessage answers with the finished task, and the model's non-streaming
        // path is much faster.
        request.streaming = streaming || !wait;
        tracing::debug!(task_id = %task_id, skill = %invocation.skill_id, "A2A task started");
        self.start_run(TaskRun {
            admitted,
            request,
            projection,
            caller_id: caller.id().to_owned(),
            resume_only: false,
        });
        // With `state_db`, the task is on disk before its client learns its id.
        self.inner.store.persisted().await;
        let subscription = Some((task, subscription));
        self.answer_task(&task_id, subscription, streaming, wait, history_length)
            .await
    }

    /// The answer to a message `caller` sent before (the same `messageId`) whose task is
    /// still stored: that task, answered as a first message is, and nothing runs again.
    /// `None` for a message not seen (or whose task is gone).
    async fn repeated(
        &self,
        message: &Message,
        caller: &Caller,
        streaming: bool,
        wait: bool,
        history_length: Option<usize>,
    ) -> Option<Result<Answer, RpcError>> {
        let sender = caller.owner().unwrap_or_default();
        let task_id = self.inner.recent.task_of(sender, &message.message_id)?;
        if !self.inner.store.visible_to(&task_id, caller.owner()) {
            return None;
        }
        let subscription = self.inner.store.subscribe(&task_id)?;
        // A task waiting for input already answered its first message with that state.
        let wait = wait && subscription.0.status.state != TaskState::InputRequired;
        tracing::debug!(task_id = %task_id, "A2A message sent again: answered with its task");
        Some(
            self.answer_task(
                &task_id,
                Some(subscription),
                streaming,
                wait,
                history_length,
            )
            .await,
        )
    }

    /// The answer to a message about the task `task_id`, whose store `subscription` was taken
    /// before anything could change it: its stream (streaming), the task once it ends or
    /// waits for input (`wait`), or the task as it is.
    async fn answer_task(
        &self,
        task_id: &str,
        subscription: Option<(Task, Option<Subscription>)>,
        streaming: bool,
        wait: bool,
        history_length: Option<usize>,
    ) -> Result<Answer, RpcError> {
        let store = &self.inner.store;
        match subscription {
            Some((task, rest)) if streaming => {
                // An ended task's stream is the task alone.
                let rest = rest.unwrap_or_else(|| tokio::sync::mpsc::unbounded_channel().1);
                return Ok(Answer::Stream {
                    first: Box::new(StreamResponse::Task(task)),
                    rest,
                });
            }
            Some((_, Some(mut rest))) if wait => {
                settle(&mut rest).await;
                store.persisted().await;
            }
            _ => {}
        }
        let task = store
            .final_snapshot(task_id, history_length)
            .ok_or_else(|| gone(task_id))?;
        Ok(Answer::Result(json!({"task": task})))
    }

    /// A message with a `taskId`: the reply to a task waiting for input (`continuation`).
    async fn continue_task(
        &self,
        mut message: Message,
        history_length: Option<usize>,
        streaming: bool,
        wait: bool,
        caller: &Caller,
    ) -> Result<Answer, RpcError> {
        let task_id = message.task_id.clone();
        let store = &self.inner.store;
        let continuations = &self.inner.continuations;
        // Another identity's task is not there for this caller: "not found", as an unknown id.
        let exists = store.visible_to(&task_id, caller.owner());
        // Subscribed before the reply is given, so no update after it is missed; only for a
        // task that waits (its question is already in the store then).
        let subscription = if continuations.waits_for(&task_id, caller.id()) {
            store.subscribe(&task_id)
        } else {
            None
        };
        continuations
            .answer(&task_id, caller.id(), &message)
            .map_err(|why| continuation::refusal(&task_id, exists, why))?;
        message.role = Role::User;
        if let Some(context_id) = store.get(&task_id, Some(0)).map(|t| t.context_id) {
            message.context_id = context_id;
        }
        store.push_history(&task_id, message);
        self.answer_task(&task_id, subscription, streaming, wait, history_length)
            .await
    }

    fn get_task(&self, params: GetTaskParams, caller: &Caller) -> Result<Answer, RpcError> {
        let history_length = history_length(params.history_length)?;
        self.visible(&params.id, caller)?;
        let task = self
            .inner
            .store
            .get(&params.id, history_length)
            .ok_or_else(|| not_found(&params.id))?;
        Ok(Answer::Result(to_json(&task)))
    }

    async fn cancel_task(&self, params: TaskIdParams) -> Result<Answer, RpcError> {
        match self.inner.store.request_cancel(&params.id) {
            Ok(()) => {}
            Err(CancelRefusal::NotFound) => return Err(not_found(&params.id)),
            Err(CancelRefusal::Finished(state)) => {
                return Err(RpcError::new(
                    RpcCode::TaskNotCancelable,
                    format!("task {:?} already ended ({})", params.id, state_name(state)),
                ));
            }
        }
        // The run answers promptly once cancelled; the core abandons (and answers for) a run
        // that does not within its grace, so this wait is bounded either way.
        if let Some((_, Some(mut rest))) = self.inner.store.subscribe(&params.id) {
            let ended = async { while rest.recv().await.is_some() {} };
            let _ = tokio::time::timeout(CANCEL_GRACE * 2, ended).await;
        }
        let task = self
            .inner
            .store
            .final_snapshot(&params.id, None)
            .ok_or_else(|| not_found(&params.id))?;
        Ok(Answer::Result(to_json(&task)))
    }

    fn subscribe(&self, params: TaskIdParams) -> Result<Answer, RpcError> {
        match self.inner.store.subscribe(&params.id) {
            None => Err(not_found(&params.id)),
            Some((task, None)) => Err(RpcError::new(
                RpcCode::UnsupportedOperation,
                format!(
                    "task {:?} already ended ({}); read it with GetTask",
                    params.id,
                    state_name(task.status.state)
                ),
            )),
            Some((task, Some(rest))) => Ok(Answer::Stream {
                first: Box::new(StreamResponse::Task(task)),
                rest,
            }),
        }
    }
}

/// Waits until the task ends or waits for input (a blocking `SendMessage` answers then).
async fn settle(rest: &mut Subscription) {
    while let Some(update) = rest.recv().await {
        if let StreamResponse::StatusUpdate(event) = &update
            && (event.status.state.is_terminal() || event.status.state == TaskState::InputRequired)
        {
            return;
        }
    }
}

fn to_json<T: serde::Serialize>(value: &T) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

fn state_name(state: TaskState) -> String {
    to_json(&state).as_str().unwrap_or("unknown").to_owned()
}
