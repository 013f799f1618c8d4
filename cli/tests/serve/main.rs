//! One test binary: serve --http as a server: the host, auth, TLS, proxies, Origin/Host, hot
//! reload, the console, faults, each file a module driving the `skillet` binary. The `*_support`
//! modules are shared by every binary (`cli/tests/*_support/`).

#[path = "../auth_support/mod.rs"]
mod auth_support;
#[path = "../cli_support/mod.rs"]
mod cli_support;
#[path = "../serve_support/mod.rs"]
mod serve_support;
#[path = "../telemetry_support/mod.rs"]
mod telemetry_support;
#[path = "../tls_support/mod.rs"]
mod tls_support;

mod auth_http;
mod auth_protocols;
mod auth_telemetry;
mod console_approvals;
mod console_browser;
mod console_http;
mod fault_matrix;
mod host_serve;
mod hot_reload;
mod security_http_origin;
mod tls_serve;
mod trusted_proxies;
