//! `skillet serve --stdio | --mcp | --http [ADDR]`: serves A2E (stdio), MCP (stdio) or, over
//! HTTP (HTTPS with `[server.tls]`, its certificate reloaded on SIGHUP), A2E (`/a2e`), MCP (`/mcp`) and the A2A JSON-RPC binding (`/a2a`, unless `[a2a] jsonrpc =
//! false`) to agent hosts until end of input (stdio) or SIGTERM/SIGINT, answering every call in
//! flight before exiting 0. All transports of one process share one [`HostCore`] (one
//! concurrency limit).
//!
//! With `--watch` (or `[skills] watch = true`) the skills directories are watched and a changed
//! skill reloaded without a restart (`watch`).
//!
//! With no provider configured it runs on the embedded mock-llm (every skill's
//! `mock-scenario.yaml` merged), with a warning on stderr, so a fresh clone can be driven over
//! the wire; a configured provider always wins.

use std::net::SocketAddr;
use std::sync::Arc;

use super::args::{GlobalArgs, ServeArgs};
use super::exit::{Failure, Outcome};
use super::setup::{self, Console};
use super::{shutdown_signal, std_pipes, watch};
use skillet_engine::service::SkillService;
use skillet_host::a2a;
use skillet_host::auth::Access;
use skillet_host::console as web;
use skillet_host::http::{self, HttpOptions};
use skillet_host::mcp::{self, McpHttpOptions, McpLimits};
use skillet_host::origin_guard::AllowedSites;
use skillet_host::stdio::{self, StdioOptions};
use skillet_host::{ConnectionLimits, Endpoint, HostCore, TlsServer, TrustedProxies};

/// Runs the command.
pub async fn serve(
    global: &GlobalArgs,
    args: &ServeArgs,
    console: Console,
) -> Result<Outcome, Failure> {
    let http_addr = args.http_addr().map_err(Failure::usage)?;
    let parts = setup::load_parts(global, console, None).await?;
    setup::prepare_environments(&parts, console).await;
    setup::retry_failed_environments(&parts, console);
    if parts.skills.is_empty() {
        console.warn("no skills loaded; discover will be empty and every call unknown_skill");
    }
    let (default, mock) = setup::start_serving_model(&parts, console).await?;
    let server = parts.config.server.clone();
    let watch = args.watch || parts.config.skills.watch;
    let roots = setup::skill_roots(global, &parts.config).0;
    // Held until serving ends: dropping it stops the watch.
    let mut _watch = None;
    match http_addr {
        None if args.mcp => {
            let executor =
                setup::build_executor(&parts, Some(default), parts.config.card.identity(None))?;
            let core = HostCore::new(std::sync::Arc::new(executor), server.max_concurrent_calls);
            _watch = watch::start(watch, roots, &parts, core.skill_changes().clone(), console);
            tracing::info!(skills = parts.skills.len(), "serving MCP on stdio");
            let (input, output, _blocking_again) = std_pipes::open();
            // On a worker, as A2E's stdio below: the session's messages and its calls then
            // share the worker's queue instead of waking it from `main`'s thread for each one.
            tokio::spawn(mcp::serve_stream(
                core,
                input,
                output,
                server.grace(),
                server.max_message_bytes,
                shutdown_signal(),
            ))
            .await
            .map_err(|e| Failure::setup(format!("MCP on stdio: {e}")))?
            .map_err(|e| Failure::setup(format!("MCP on stdio: {e}")))?;
        }
        None => {
            let executor =
                setup::build_executor(&parts, Some(default), parts.config.card.identity(None))?;
            let endpoint =
                Endpoint::new(std::sync::Arc::new(executor), server.max_concurrent_calls);
            // A2E discover reads the registry per request: no door to tell.
            _watch = watch::start(watch, roots, &parts, Default::default(), console);
            let options = StdioOptions {
                max_line_bytes: server.max_message_bytes,
                grace: server.grace(),
            };
            tracing::info!(skills = parts.skills.len(), "serving A2E on stdio");
            let (input, output, _blocking_again) = std_pipes::open();
            // On a worker, not on the thread blocked in `main`: a call spawned from a worker
            // starts on that worker's queue, without waking another thread for each line.
            tokio::spawn(stdio::serve(
                endpoint,
                input,
                output,
                options,
                shutdown_signal(),
            ))
            .await
            .map_err(|e| Failure::setup(format!("stdio transport: {e}")))?
            .map_err(|e| Failure::setup(format!("stdout: {e}")))?;
        }
        Some(addr) => {
            let addr = addr.unwrap_or(server.http_listen);
            let access = access_rules(&parts.config, addr, args.allow_unauthenticated, console)?;
            let edge = edge(&server)?;
            let scheme = edge.scheme();
            let listener = tokio::net::TcpListener::bind(addr)
                .await
                .map_err(|e| Failure::setup(format!("cannot listen on {addr}: {e}")))?;
            let local = listener
                .local_addr()
                .map_err(|e| Failure::setup(format!("cannot listen on {addr}: {e}")))?;
            let url = format!("{scheme}://{local}/a2e");
            let identity = parts.config.card.identity(Some(&url));
            let state = open_state_db(&server).await?;
            // The console's "Run evals" names the host's model as `skillet eval` does.
            let model_label = crate::eval_targets::model_label(&default);
            let mut builder = setup::executor_builder(&parts, Some(default), identity);
            if let Some((_, checkpoints)) = &state {
                builder = builder.checkpoints(Arc::clone(checkpoints) as _);
            }
            let executor = builder.build().map_err(Failure::setup)?;
            let a2a_config = &parts.config.a2a;
            let a2a_url = a2a_config
                .url
                .clone()
                .unwrap_or_else(|| format!("{scheme}://{local}{}", a2a::JSONRPC_PATH));
            let mut service: Arc<dyn SkillService> = Arc::new(executor);
            let push = a2a_config
                .push_options()
                .map_err(|e| Failure::setup(e.to_string()))?;
            if a2a_config.jsonrpc {
                service = Arc::new(
                    a2a::A2aCardService::new(service, &a2a_url, a2a_config.provider.clone())
                        .with_push_notifications(push.is_some()),
                );
            }
            let core = HostCore::with_access(service, server.max_concurrent_calls, access);
            // The console's empty skills list names them.
            let skill_roots = roots.clone();
            _watch = watch::start(watch, roots, &parts, core.skill_changes().clone(), console);
            let endpoint = Endpoint::from_core(core.clone());
            let mut task_store = None;
            let a2a_routes = if a2a_config.jsonrpc {
                let limits = a2a::StoreLimits {
                    max_tasks: a2a_config.max_tasks,
                    max_bytes: a2a_config.max_task_bytes,
                    ttl: a2a_config.task_ttl(),
                };
                console.notice(format!("serving A2A (JSON-RPC) on {a2a_url}"));
                let adapter = a2a_adapter(&core, limits, state.as_ref(), push, console).await?;
                task_store = Some(Arc::clone(adapter.store()));
                a2a::jsonrpc_router(adapter, server.max_message_bytes)
            } else {
                axum::Router::new()
            };
            let options = HttpOptions {
                max_body_bytes: server.max_message_bytes,
                grace: server.grace(),
                connections: ConnectionLimits {
                    max_connections: server.max_connections,
                    header_read_timeout: server.header_read_timeout(),
                    idle_timeout: server.idle_timeout(),
                    body_read_timeout: server.body_read_timeout(),
                },
            };
            let mcp_stop = tokio_util::sync::CancellationToken::new();
            let mcp_tasks = mcp_tasks(state.as_ref(), console).await?;
            let mcp_routes = mcp::http_router_with_tasks(
                &core,
                &McpHttpOptions {
                    max_body_bytes: server.max_message_bytes,
                    limits: McpLimits {
                        max_sessions: server.mcp_max_sessions,
                        max_streams: server.mcp_max_streams,
                        max_streams_per_session: server.mcp_max_streams_per_session,
                    }
                    .for_connections(options.connections.effective_max_connections()),
                },
                mcp_stop.clone(),
                mcp_tasks.clone(),
            );
            // Opened before the listening notice: whoever waits for that notice finds every
            // route (and the history file) ready.
            let console_routes = web_console(
                state.as_ref().map(|(db, _)| db.path()),
                &parts.config,
                &core,
                &format!("{scheme}://{local}"),
                local,
                ConsoleNames {
                    skill_roots,
                    model_label,
                },
                console,
            )
            .await?;
            console.notice(format!(
                "serving A2E on {url} and MCP on {scheme}://{local}/mcp (agent card: {scheme}://{local}/.well-known/agent-card.json)"
            ));
            if let Some(tls) = &edge.tls {
                tls.reload_on_sighup();
                console.notice(format!(
                    "TLS with {} (HTTP/2 and HTTP/1.1; SIGHUP reloads the certificate and key)",
                    tls.files().cert.display()
                ));
            }
            let served = http::serve_on(
                listener,
                endpoint,
                options,
                mcp_routes.merge(a2a_routes).merge(console_routes),
                edge,
                shutdown_signal(),
            )
            .await;
            mcp_stop.cancel();
            mcp_tasks.persisted().await;
            if let Some(store) = task_store {
                // Every task change is on disk before the process exits.
                store.persisted().await;
            }
            served.map_err(|e| Failure::setup(format!("HTTP server: {e}")))?;
        }
    }
    parts.tools.shutdown_toolkits().await;
    drop(mock);
    Ok(Outcome::Success)
}

/// `[server] state_db` opened (a corrupt or foreign file is an error here) with its
/// checkpoint store; `None` without it.
async fn open_state_db(
    server: &crate::config::ServerConfig,
) -> Result<Option<(a2a::StateDb, Arc<a2a::SqliteCheckpoints>)>, Failure> {
    let Some(path) = server.state_db.clone() else {
        return Ok(None);
    };
    let opened = tokio::task::spawn_blocking(move || {
        let db = a2a::StateDb::open(&path)?;
        let checkpoints = a2a::SqliteCheckpoints::open(&db)?;
        Ok::<_, a2a::StateDbError>((db, Arc::new(checkpoints)))
    })
    .await
    .map_err(|e| Failure::setup(format!("[server] state_db: {e}")))?;
    opened
        .map(Some)
        .map_err(|e| Failure::setup(format!("[server] state_db: {e}")))
}

/// The MCP Tasks extension's store: in memory, or with `state` read back from the state
/// database (tasks that were running reported failed).
async fn mcp_tasks(
    state: Option<&(a2a::StateDb, Arc<a2a::SqliteCheckpoints>)>,
    console: Console,
) -> Result<mcp::McpTasks, Failure> {
    let Some((db, _)) = state else {
        return Ok(mcp::McpTasks::default());
    };
    let db_for_load = db.clone();
    let (tasks, read_back) =
        tokio::task::spawn_blocking(move || mcp::McpTasks::durable(&db_for_load))
            .await
            .map_err(|e| Failure::setup(format!("[server] state_db: {e}")))?
            .map_err(|e| Failure::setup(format!("[server] state_db: {e}")))?;
    console.notice(format!(
        "MCP tasks are durable in {} ({} read back; {} failed: their calls were running when the server stopped)",
        db.path().display(),
        read_back.kept,
        read_back.failed
    ));
    Ok(tasks)
}

/// The A2A adapter over `core`: its tasks (and push configs, when `push` turns them on) in
/// memory, or with `state` read back from the state database, the tasks that were running
/// resumed (or failed, saying why) after their push configs are back.
async fn a2a_adapter(
    core: &HostCore,
    limits: a2a::StoreLimits,
    state: Option<&(a2a::StateDb, Arc<a2a::SqliteCheckpoints>)>,
    push: Option<a2a::PushOptions>,
    console: Console,
) -> Result<a2a::A2aAdapter, Failure> {
    let Some((db, checkpoints)) = state else {
        let adapter = a2a::A2aAdapter::new(core.clone(), Arc::new(a2a::TaskStore::new(limits)));
        if let Some(push) = push {
            adapter
                .enable_push(push, None)
                .await
                .map_err(|e| Failure::setup(e.to_string()))?;
        }
        return Ok(adapter);
    };
    let db_for_load = db.clone();
    let (store, interrupted) =
        tokio::task::spawn_blocking(move || a2a::durable_store(limits, &db_for_load))
            .await
            .map_err(|e| Failure::setup(format!("[server] state_db: {e}")))?
            .map_err(|e| Failure::setup(format!("[server] state_db: {e}")))?;
    let adapter =
        a2a::A2aAdapter::with_checkpoints(core.clone(), store, Some(Arc::clone(checkpoints)));
    if let Some(push) = push {
        adapter
            .enable_push(push, Some(db))
            .await
            .map_err(|e| Failure::setup(e.to_string()))?;
    }
    let kept = adapter.store().len();
    let report = adapter.resume_interrupted(interrupted);
    console.notice(format!(
        "A2A tasks are durable in {} ({kept} task{} read back; {} resumed, {} failed as not resumable)",
        db.path().display(),
        if kept == 1 { "" } else { "s" },
        report.resumed,
        report.failed
    ));
    Ok(adapter)
}

/// What sits in front of the routes: TLS from `[server.tls]`, the proxies `[server]
/// trusted_proxies` names.
fn edge(server: &crate::config::ServerConfig) -> Result<http::Edge, Failure> {
    let tls = match &server.tls {
        None => None,
        Some(tls) => Some(Arc::new(
            TlsServer::new(tls.files())
                .map_err(|e| Failure::setup(format!("[server.tls]: {e}")))?,
        )),
    };
    let trusted_proxies = TrustedProxies::parse(&server.trusted_proxies).map_err(Failure::usage)?;
    let (hosts, origins) = server.allowed_sites();
    let allowed_sites = AllowedSites::parse(&hosts, &origins)
        .map_err(|e| Failure::usage(format!("{e} (docs/CONFIG.md, [server])")))?;
    Ok(http::Edge {
        tls,
        trusted_proxies,
        allowed_sites,
    })
}

/// What the web console names: the folders the skills load from (its empty list says them) and
/// the host's model (its "Run evals" reports it).
struct ConsoleNames {
    skill_roots: Vec<std::path::PathBuf>,
    model_label: String,
}

/// The web console's routes (`[console]`; on by default on a loopback address), with its run
/// history recording every call of `core`; an empty router when it is off.
async fn web_console(
    state_db: Option<&std::path::Path>,
    config: &crate::config::Config,
    core: &HostCore,
    origin: &str,
    local: SocketAddr,
    names: ConsoleNames,
    console: Console,
) -> Result<axum::Router, Failure> {
    let settings = &config.console;
    if !settings.enabled_on(local.ip().is_loopback()) {
        return Ok(axum::Router::new());
    }
    let history = match (settings.history, settings.history_path_beside(state_db)) {
        (false, _) => None,
        (true, None) => {
            console.warn(
                "[console] history is off: neither XDG_STATE_HOME nor HOME is set; set [console] history_db",
            );
            None
        }
        (true, Some(path)) => {
            let limits = settings.limits();
            let opened = tokio::task::spawn_blocking(move || web::History::open(&path, limits))
                .await
                .map_err(|e| Failure::setup(format!("[console] history_db: {e}")))?;
            Some(Arc::new(opened.map_err(|e| {
                Failure::setup(format!("[console] history_db: {e}"))
            })?))
        }
    };
    let model_override = config.llm_override.as_ref().map(|policy| {
        let allowed = policy.config();
        web::ModelOverrideHints {
            providers: allowed
                .allowed_providers
                .iter()
                .map(|kind| kind.as_str().to_owned())
                .collect(),
            base_urls: allowed.allowed_base_urls.clone(),
            models: allowed.allowed_models.clone(),
        }
    });
    let capture_content = settings
        .capture_content
        .unwrap_or(config.telemetry.capture_content);
    console.notice(format!(
        "web console on {origin}/{}",
        history
            .as_ref()
            .map(|h| format!(" (history: {})", h.path().display()))
            .unwrap_or_default()
    ));
    Ok(web::router(
        core,
        web::ConsoleOptions {
            history,
            capture_content,
            model_override,
            skill_roots: names.skill_roots,
            model_label: Some(names.model_label),
            workbench: Some(Arc::new(skillet_engine::Authoring)),
            input_files: web::InputFileLimits {
                max_files: config.skills.workspace.max_input_files,
                max_file_bytes: config.skills.workspace.max_input_file_bytes,
                max_total_bytes: config.skills.workspace.max_input_bytes,
                max_request_bytes: config.server.max_message_bytes,
            },
        },
    ))
}

/// The access rules of `serve --http` on `addr`: `[auth]`'s, or none — which is refused on a
/// non-loopback address unless `--allow-unauthenticated` (then with a warning).
fn access_rules(
    config: &crate::config::Config,
    addr: SocketAddr,
    allow_unauthenticated: bool,
    console: Console,
) -> Result<Option<Arc<Access>>, Failure> {
    let Some(auth) = &config.auth else {
        if addr.ip().is_loopback() {
            return Ok(None);
        }
        if !allow_unauthenticated {
            return Err(Failure::usage(format!(
                "refusing to serve HTTP on {addr} without authentication: anyone who can reach \
                 it would run skills on this host's credentials. Add an [auth] section to {} \
                 (docs/DOORS.md, \"Authentication\"), bind a loopback address, or pass \
                 --allow-unauthenticated",
                config.origin()
            )));
        }
        console.warn(format!(
            "serving HTTP on {addr} WITHOUT authentication (--allow-unauthenticated): anyone who \
             can reach it runs skills on this host's credentials"
        ));
        return Ok(None);
    };
    configured_access(auth, console).map(Some)
}

/// The access rules `[auth]` names (for `serve --http` and `serve --nats` alike).
pub(crate) fn configured_access(
    auth: &crate::config::auth::AuthConfig,
    console: Console,
) -> Result<Arc<Access>, Failure> {
    let options = auth.access_options().map_err(Failure::setup)?;
    let access = Access::new(options).map_err(|e| {
        Failure::setup(format!(
            "[auth] audit_file: cannot open it for appending: {e}"
        ))
    })?;
    if !access.has_identities() {
        console.warn("[auth] names no API key and no JWT issuer: every call will be refused");
    }
    Ok(Arc::new(access))
}
