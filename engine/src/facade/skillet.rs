//! [`Skillet`]: loaded skills, tools and providers, ready to run; and [`Call`], one run's
//! options (arguments, timeout, override, cancellation) before it starts.
//!
//! A run goes through the wire-level [`Executor`] exactly as a transport's call does (same
//! validation, authorization, events, deadline, hooks), then `answer` turns the wire answer into
//! `Result<SkillOutput, SkillError>`.

use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::answer::execute;
use super::error::{ArgumentViolation, SkillError};
use super::output::SkillOutput;
use super::streaming::SkillStream;

use crate::protocol::{Credentials, LLMConfig, SkillCallRequest};
use crate::run::Executor;
use crate::skill::ManifestError;

/// Skills ready to run; build one with [`Skillet::builder`]. Cheap to clone (one `Arc`), and
/// shared by any number of concurrent runs.
///
/// See the [crate docs](crate) for a complete example.
#[derive(Clone)]
pub struct Skillet {
    executor: Executor,
    warnings: Arc<[ManifestError]>,
}

impl std::fmt::Debug for Skillet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Skillet")
            .field("skills", &self.skill_names())
            .field("executor", &self.executor)
            .finish_non_exhaustive()
    }
}

impl Skillet {
    pub(crate) fn new(executor: Executor, warnings: Vec<ManifestError>) -> Self {
        Skillet {
            executor,
            warnings: warnings.into(),
        }
    }

    /// Runs skill `name` on `args` (a JSON object) to its validated output.
    pub async fn run(&self, name: &str, args: Value) -> Result<SkillOutput, SkillError> {
        self.call(name).args(args).run().await
    }

    /// Runs skill `name` on `input` (serialized to the arguments object) and decodes its
    /// output as `Out` ([`SkillError::Decode`] when it does not fit).
    pub async fn run_typed<In: Serialize, Out: DeserializeOwned>(
        &self,
        name: &str,
        input: &In,
    ) -> Result<Out, SkillError> {
        self.call(name).input(input).run_typed().await
    }

    /// Runs skill `name` on `args`, streaming its events (model text included) as they happen;
    /// see [`SkillStream`].
    pub fn run_streaming(&self, name: &str, args: Value) -> SkillStream {
        self.call(name).args(args).stream()
    }

    /// One run of skill `name`, to configure before it starts.
    pub fn call(&self, name: &str) -> Call<'_> {
        Call {
            skillet: self,
            request: SkillCallRequest::new(name, Map::new()),
            cancel: None,
            problem: None,
        }
    }

    /// The names of the loaded skills, sorted.
    pub fn skill_names(&self) -> Vec<String> {
        self.executor
            .skills()
            .skills()
            .iter()
            .map(|s| s.compiled.name().to_owned())
            .collect()
    }

    /// The warnings of the skills that loaded (problems that did not stop them).
    pub fn warnings(&self) -> &[ManifestError] {
        &self.warnings
    }

    /// The wire-level executor underneath, to serve the same skills over a transport.
    pub fn executor(&self) -> &Executor {
        &self.executor
    }

    /// Shuts every registered toolkit down (e.g. stops MCP servers).
    pub async fn shutdown(&self) {
        self.executor.tools().shutdown_toolkits().await;
    }
}

/// One run, before it starts: [`Skillet::call`] → options → [`Call::run`],
/// [`Call::run_typed`] or [`Call::stream`].
#[must_use = "a call does nothing until it is run"]
pub struct Call<'a> {
    skillet: &'a Skillet,
    request: SkillCallRequest,
    cancel: Option<CancellationToken>,
    /// A problem found while configuring, reported when the call runs.
    problem: Option<SkillError>,
}

impl std::fmt::Debug for Call<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Call")
            .field("skill", &self.request.name)
            .field("timeout", &self.request.timeout)
            .finish_non_exhaustive()
    }
}

impl<'a> Call<'a> {
    /// The arguments: a JSON object (anything else is [`SkillError::InvalidArguments`]).
    pub fn args(mut self, args: Value) -> Self {
        match args {
            Value::Object(map) => self.request.arguments = map,
            other => self.problem = Some(not_an_object(&self.request.name, &other)),
        }
        self
    }

    /// The arguments, serialized from `input` (which must serialize to a JSON object).
    pub fn input<In: Serialize + ?Sized>(self, input: &In) -> Self {
        match serde_json::to_value(input) {
            Ok(value) => self.args(value),
            Err(e) => {
                let skill = self.request.name.clone();
                self.with_problem(SkillError::InvalidArguments {
                    skill,
                    violations: vec![ArgumentViolation {
                        path: String::new(),
                        message: format!("the input does not serialize: {e}"),
                    }],
                })
            }
        }
    }

    /// The call's time limit (rounded up to whole seconds; the skill's and the host's limits
    /// still apply, the smallest wins). Default: 60 s.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        let seconds = timeout.as_secs() + u64::from(timeout.subsec_nanos() > 0);
        self.request.timeout = seconds.max(1);
        self
    }

    /// Runs on this provider instead of the skill's (an A2E `llm_override`: the host's
    /// override policy decides, else [`SkillError::Unauthorized`]).
    pub fn llm_override(mut self, config: LLMConfig) -> Self {
        self.request.llm_override = Some(config);
        self
    }

    /// Runs on the provider registered as `name`, when the host allows requests to choose it
    /// (the builder's [`allow_provider_override`](super::SkilletBuilder::allow_provider_override)).
    pub fn provider(self, name: impl Into<String>) -> Self {
        self.llm_override(LLMConfig {
            provider_name: name.into(),
            provider_credentials: Credentials::new(),
            provider_config: None,
            is_default: false,
        })
    }

    /// Records what the run sends to its model and gets back, turn by turn: the output's (or
    /// the failed run's) `transcript`. Off by default: nothing is copied for a call that does
    /// not ask.
    pub fn transcript(mut self) -> Self {
        self.request.metadata.insert(
            crate::protocol::TRANSCRIPT_METADATA.to_owned(),
            Value::Bool(true),
        );
        self
    }

    /// Ties the call to an agent turn or trajectory (in events and traces).
    pub fn correlation_id(mut self, id: impl Into<String>) -> Self {
        self.request.correlation_id = id.into();
        self
    }

    /// Cancels the run when `token` fires ([`SkillError::Cancelled`]). Dropping the run's
    /// future cancels it too.
    pub fn cancel_on(mut self, token: CancellationToken) -> Self {
        self.cancel = Some(token);
        self
    }

    /// Runs the call to its validated output.
    pub async fn run(self) -> Result<SkillOutput, SkillError> {
        let Call {
            skillet,
            mut request,
            cancel,
            problem,
        } = self;
        if let Some(problem) = problem {
            return Err(problem);
        }
        request.streaming = false;
        execute(&skillet.executor, request, None, cancel.unwrap_or_default()).await
    }

    /// Runs the call and decodes its output as `Out`.
    pub async fn run_typed<Out: DeserializeOwned>(self) -> Result<Out, SkillError> {
        self.run().await?.into_decoded()
    }

    /// Starts the call on its own task and streams its events; see [`SkillStream`]. Needs a
    /// tokio runtime.
    pub fn stream(self) -> SkillStream {
        let Call {
            skillet,
            mut request,
            cancel,
            problem,
        } = self;
        request.streaming = true;
        SkillStream::start(
            skillet.executor.clone(),
            request,
            cancel.unwrap_or_default(),
            problem,
        )
    }

    fn with_problem(mut self, problem: SkillError) -> Self {
        self.problem = Some(problem);
        self
    }
}

fn not_an_object(skill: &str, value: &Value) -> SkillError {
    let kind = crate::template::json_kind(value);
    SkillError::InvalidArguments {
        skill: skill.to_owned(),
        violations: vec![ArgumentViolation {
            path: String::new(),
            message: format!("the arguments must be a JSON object, not {kind}"),
        }],
    }
}
