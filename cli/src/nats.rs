//! The NATS commands: `skillet serve --nats [URL]` (a worker on the JetStream call queue),
//! `skillet call SKILL --nats [URL]` (one call on the workers, live progress on stderr, the
//! result on stdout like `run`) and `skillet discover --nats URL` (the workers' skills).
//!
//! Not here: the worker and client themselves (`host::nats`).

use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

use super::args::{CallArgs, DiscoverArgs, GlobalArgs, ServeArgs};
use super::exit::{Failure, Outcome};
use super::progress::{DisplayMode, Progress};
use super::run::{parse_arguments, print_response};
use super::setup::{self, Console};
use super::shutdown_signal;
use crate::config::NatsOptions;
use skillet_host::HostCore;
use skillet_host::nats::{self, NatsCheckpoints, NatsClient, NatsWorker};
use skillet_protocol::{Message, SkillCallRequest, SkillDiscoverRequest};

/// How long `call` waits for an answer when neither `--timeout` nor the call sets a limit.
const DEFAULT_CALL_WAIT: Duration = Duration::from_secs(600);

/// How long `discover --nats` waits for a worker.
const DISCOVER_WAIT: Duration = Duration::from_secs(10);

/// `[nats]` with the command line's URL (empty: the configured one). The secrets the
/// configuration names (`token_env`, `bearer_env`, …) join the redaction set here: `call` and
/// `discover` load no skills, so `setup::load_parts`, which does it for `serve`, never runs.
fn nats_config(global: &GlobalArgs, url: Option<&str>) -> Result<NatsOptions, Failure> {
    let config = setup::load_config(global)?;
    config.register_secrets(&super::logging::REDACTOR);
    Ok(with_url(config.nats, url))
}

/// `config` with the command line's URL, when one was given.
fn with_url(mut config: NatsOptions, url: Option<&str>) -> NatsOptions {
    if let Some(url) = url.filter(|u| !u.is_empty()) {
        config.url = url.to_owned();
    }
    config
}

/// `skillet serve --nats [URL]`: runs until SIGTERM/SIGINT, then finishes, answers and acks
/// every call it took within `[server] shutdown_grace_seconds` — also when the NATS server is
/// gone (what it cannot ack is left to redelivery).
pub async fn serve(
    global: &GlobalArgs,
    args: &ServeArgs,
    console: Console,
) -> Result<Outcome, Failure> {
    let parts = setup::load_parts(global, console, None).await?;
    let config = with_url(parts.config.nats.clone(), args.nats.as_deref());
    if parts.skills.is_empty() {
        console.warn("no skills loaded; every call will be answered unknown_skill");
    }
    let (default, mock) = setup::start_serving_model(&parts, console).await?;
    // Under [auth], each call's `Authorization` header is verified as over HTTP.
    let access = match &parts.config.auth {
        Some(auth) => Some(crate::serve::configured_access(auth, console)?),
        None => None,
    };
    let name = format!("skillet-worker-{}", std::process::id());
    let client = nats::connect(&config, &name)
        .await
        .map_err(Failure::setup)?;
    // Runs are checkpointed next to the answers, so a redelivered call continues.
    let checkpoints = NatsCheckpoints::on(&client, &config)
        .await
        .map_err(Failure::setup)?;
    let executor = setup::executor_builder(&parts, Some(default), parts.config.card.identity(None))
        .checkpoints(Arc::new(checkpoints))
        .build()
        .map_err(Failure::setup)?;
    let core = HostCore::with_access(Arc::new(executor), config.concurrency, access);
    // Hot reload: workers look each call's skill up in the registry, so a reload needs no door.
    let roots = setup::skill_roots(global, &parts.config).0;
    let watch = args.watch || parts.config.skills.watch;
    let _watch = crate::watch::start(watch, roots, &parts, core.skill_changes().clone(), console);
    let worker = NatsWorker::bind(client, core, &config, &name, parts.config.server.grace())
        .await
        .map_err(Failure::setup)?;
    console.notice(format!(
        "worker {name} pulling calls from {} (stream {}, consumer {}, concurrency {})",
        nats::redacted_url(&config.url),
        config.stream,
        config.consumer,
        config.concurrency
    ));
    worker
        .run(shutdown_signal())
        .await
        .map_err(Failure::setup)?;
    parts.tools.shutdown_toolkits().await;
    drop(mock);
    Ok(Outcome::Success)
}

/// `skillet call SKILL --nats [URL]`.
pub async fn call(
    global: &GlobalArgs,
    args: &CallArgs,
    console: Console,
) -> Result<Outcome, Failure> {
    let arguments = parse_arguments(&args.args)?;
    let config = nats_config(global, args.nats.as_deref())?;
    let mut request = SkillCallRequest::new(&args.skill, arguments);
    if let Some(id) = &args.id {
        request.id = id.clone();
    }
    request.timeout = args.timeout.unwrap_or(0);
    request.streaming = true;
    let wait = args
        .timeout
        .map(|s| Duration::from_secs(s.saturating_add(30)))
        .unwrap_or(DEFAULT_CALL_WAIT);
    let client = NatsClient::connect(&config).await.map_err(Failure::setup)?;
    let progress = Progress::start(
        DisplayMode::detect(console.quiet > 0),
        &args.skill,
        console.verbose,
    );
    let outcome = tokio::select! {
        result = client.call(&request, Some(progress.sink()), wait) => Some(result),
        () = shutdown_signal() => None,
    };
    progress.finish();
    match outcome {
        None => {
            console.notice(format!(
                "interrupted; the call {} goes on on the workers (its answer is stored under that id)",
                request.id
            ));
            Ok(Outcome::Interrupted)
        }
        Some(Err(e)) => Err(Failure::setup(e)),
        Some(Ok(response)) => {
            print_response(&response, args.json, console);
            Ok(Outcome::of_response(&response))
        }
    }
}

/// `skillet discover --nats URL`.
pub async fn discover(
    global: &GlobalArgs,
    args: &DiscoverArgs,
    _console: Console,
) -> Result<Outcome, Failure> {
    let config = nats_config(global, args.nats.as_deref())?;
    let client = NatsClient::connect(&config).await.map_err(Failure::setup)?;
    let request = SkillDiscoverRequest {
        filter_tags: args.tags.clone(),
        filter_categories: args.categories.clone(),
        ..Default::default()
    };
    let response = client
        .discover(&request, DISCOVER_WAIT)
        .await
        .map_err(Failure::setup)?;
    let mut stdout = std::io::stdout().lock();
    if args.json {
        let line = skillet_protocol::encode(&Message::DiscoverResponse(response));
        let _ = writeln!(stdout, "{line}");
        return Ok(Outcome::Success);
    }
    for skill in &response.skills {
        let _ = writeln!(
            stdout,
            "{}  {}  {:?}\n    {}",
            skill.name, skill.version, skill.status, skill.description
        );
    }
    Ok(Outcome::Success)
}
