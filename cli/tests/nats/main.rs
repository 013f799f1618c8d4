//! One test binary: NATS: workers, the wire, durable runs, large answers, auth and its security
//! rules, each file a module driving the `skillet` binary. The `*_support` modules are shared by
//! every binary (`cli/tests/*_support/`).

#[path = "../auth_support/mod.rs"]
mod auth_support;
#[path = "../cli_support/mod.rs"]
mod cli_support;
#[path = "../nats_support/mod.rs"]
mod nats_support;
#[path = "../serve_support/mod.rs"]
mod serve_support;

mod nats_auth;
mod nats_durable;
mod nats_large_answers;
mod nats_wire;
mod nats_workers;
mod security_nats;
