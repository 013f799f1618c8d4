//! One test binary: A2A: the JSON-RPC, HTTP+JSON and gRPC bindings, tasks, push, restarts, its
//! security rules, each file a module driving the `skillet` binary. The `*_support` modules are
//! shared by every binary (`cli/tests/*_support/`).

#[path = "../auth_support/mod.rs"]
mod auth_support;
#[path = "../cli_support/mod.rs"]
mod cli_support;
#[path = "../serve_support/mod.rs"]
mod serve_support;

mod a2a_core;
mod a2a_grpc;
mod a2a_push;
mod a2a_rest;
mod a2a_restart;
mod a2a_serve;
mod sdk_binding;
mod security_a2a;
