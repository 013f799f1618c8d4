//! What a restarted `serve --http` (with `[server] state_db`) does with each task it found
//! running ([`Interrupted`], read back by `persist`): it runs the task's call again under the
//! same id, *resume-only* — the engine continues from the task's last checkpoint (completed
//! turns not sent to the model again, checkpointed tool results not produced again, in-flight
//! calls re-run only for idempotent tools, events continuing the same `seq`) and the task ends
//! as any other, seen by every `SubscribeToTask` made after the restart.
//!
//! A task that cannot continue is marked `TASK_STATE_FAILED` at once with a message starting
//! "not resumed after the restart:" — never left running: its call was not stored (its
//! arguments held a configured secret), its skill is no longer served, or the core refuses it;
//! the engine fails it the same way, before any model request, when there is no checkpoint
//! (it had not completed a turn), the checkpoint is refused, or the skill's definition changed
//! since it was written.
//!
//! A resumed run is admitted as the host's own (`Caller::Local`: the access check was made
//! when the task was started; its owner still sees it alone, and only its starter may answer
//! its questions).
//!
//! Not here: reading the tasks back (`persist`), the checkpoint store (`checkpoints`).

use skillet_protocol::{ErrorCode, ProtocolError, SkillCallRequest, SkillCallResponse};

use super::methods::{A2aAdapter, TaskRun};
use super::persist::{Interrupted, StoredCall};
use super::projection::Projection;
use crate::auth::Caller;

/// What [`A2aAdapter::resume_interrupted`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ResumeReport {
    /// Tasks whose runs were started again (they may still fail without a checkpoint).
    pub resumed: usize,
    /// Tasks marked failed at once.
    pub failed: usize,
}

impl A2aAdapter {
    /// Continues (or fails, saying why) each task a restart found running.
    pub fn resume_interrupted(&self, tasks: Vec<Interrupted>) -> ResumeReport {
        let mut report = ResumeReport::default();
        for task in tasks {
            let projection = Projection {
                task_id: task.task_id.clone(),
                context_id: task.context_id.clone(),
            };
            match self.resume_one(&task, projection.clone()) {
                Ok(()) => report.resumed += 1,
                Err((skill, why)) => {
                    report.failed += 1;
                    tracing::warn!(task_id = %task.task_id, reason = %why, "A2A task not resumed after the restart; marked failed");
                    let error = ProtocolError::new(
                        ErrorCode::RuntimeError,
                        format!("not resumed after the restart: {why}"),
                    );
                    let response = SkillCallResponse::rejected(&task.task_id, &skill, error);
                    for update in projection.outcome(&response, false) {
                        self.store().apply(&task.task_id, update);
                    }
                }
            }
        }
        report
    }

    /// Starts the run of `task` again, or says why not (with the skill's name, if known).
    fn resume_one(
        &self,
        task: &Interrupted,
        projection: Projection,
    ) -> Result<(), (String, String)> {
        let StoredCall {
            skill,
            arguments,
            caller,
        } = task.call.clone().map_err(|why| (String::new(), why))?;
        let core = self.core();
        if !core.service().is_runnable(&skill) {
            return Err((
                skill.clone(),
                format!("skill `{skill}` is no longer served by this server"),
            ));
        }
        let admitted = core
            .admit_anonymous_as(&Caller::Local, &skill, false)
            .map_err(|refusal| (skill.clone(), refusal.to_protocol_error().message))?
            .through(crate::record::Door::A2a);
        self.store()
            .rebind_cancel(&task.task_id, admitted.cancel_token());
        let mut request = SkillCallRequest::new(skill, arguments);
        request.id.clone_from(&task.task_id);
        request.correlation_id.clone_from(&task.context_id);
        // Live updates, as for a task someone subscribes to (after a restart, anyone may).
        request.streaming = true;
        tracing::info!(task_id = %task.task_id, skill = %request.name, "A2A task resumed after the restart");
        self.start_run(TaskRun {
            admitted,
            request,
            projection,
            caller_id: caller,
            resume_only: true,
        });
        Ok(())
    }
}
