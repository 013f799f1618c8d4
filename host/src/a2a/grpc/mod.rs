//! The A2A 1.0 gRPC binding (A2A §10): the `lf.a2a.v1.A2AService` of `a2a.proto`, served on the
//! same listener as the other routes of `skillet serve --http` (gRPC is HTTP/2 `POST
//! /lf.a2a.v1.A2AService/{Method}`; the listener speaks HTTP/2 in clear and over TLS). Each
//! call is decoded into the ProtoJSON params of the JSON-RPC method of the same name and
//! answered by the same [`A2aAdapter::handle_as`]; this module only maps gRPC onto those methods
//! and back.
//!
//! | gRPC | answer |
//! |---|---|
//! | a unary method (`SendMessage`, `GetTask`, `ListTasks`, `CancelTask`, the push config methods, `GetExtendedAgentCard`) | one message of the method's output type |
//! | `SendStreamingMessage`, `SubscribeToTask` | a server stream of `StreamResponse`, ending as the JSON-RPC binding's stream ends |
//! | an A2A error | a gRPC status with its `ErrorInfo` (`status`) |
//! | a method `A2AService` does not have | `UNIMPLEMENTED` |
//! | a message that does not decode as the method's input | `INVALID_ARGUMENT` |
//! | a message over `[server] max_message_bytes` | `RESOURCE_EXHAUSTED` (tonic's limit) |
//! | a compressed message (`grpc-encoding`) | `UNIMPLEMENTED` (tonic's answer: no codec is enabled) |
//! | a `content-type` that is not `application/grpc[+proto]` | HTTP 415 |
//! | no answer (a unary method) or no end (a stream) before the call's `grpc-timeout` | `DEADLINE_EXCEEDED`; the task the call started goes on (`GetTask` reads it), as when an HTTP client hangs up |
//!
//! Service parameters are metadata: `a2a-version` is checked as the other bindings check the
//! header (`version`), and `authorization` is the `[auth]` credential, read by the same layer
//! as every route's (a missing one is HTTP 401, which gRPC clients see as `UNAUTHENTICATED`).
//! Clients send no `Origin`; the `:authority` must still name this server (`origin_guard`).
//!
//! Not here: the method semantics (`methods`), the protobuf schema and its ProtoJSON mapping
//! (`schema`), the error mapping (`status`).

mod codec;
mod deadline;
mod schema;
mod status;

use axum::Router;
use axum::body::Body;
use axum::extract::{Request as HttpRequest, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use bytes::Bytes;
use futures::StreamExt;
use futures::stream::BoxStream;
use serde_json::Value;
use tonic::Status;

use super::http::stream_items;
use super::jsonrpc::RpcRequest;
use super::methods::{A2aAdapter, Answer};
use super::version;
use crate::auth::Caller;
use codec::BytesCodec;
use schema::{Method, SchemaError};

pub(crate) use schema::SERVICE;

/// The routes of the binding, to merge into the host's HTTP router beside the JSON-RPC route.
/// Request messages over `max_body_bytes` are refused.
pub(crate) fn router(adapter: A2aAdapter, max_body_bytes: usize) -> Router {
    Router::new()
        .route(&format!("/{SERVICE}/{{method}}"), post(serve))
        .with_state(GrpcState {
            adapter,
            max_body_bytes,
        })
}

#[derive(Clone)]
struct GrpcState {
    adapter: A2aAdapter,
    max_body_bytes: usize,
}

/// One call of one method, by one caller: what the tonic services below run.
#[derive(Clone)]
struct Call {
    adapter: A2aAdapter,
    caller: Caller,
    method: Method,
}

impl Call {
    /// The method's answer to a request message.
    async fn answer(self, request: Bytes) -> Result<Answer, Status> {
        let params = self.method.params(&request).map_err(status_of_schema)?;
        let request = RpcRequest {
            id: Value::Null,
            method: self.method.name.clone(),
            params,
        };
        self.adapter
            .handle_as(request, &self.caller)
            .await
            .map_err(|e| status::status_of(&e))
    }

    /// A unary method: one message.
    async fn unary(
        self,
        request: tonic::Request<Bytes>,
    ) -> Result<tonic::Response<Vec<u8>>, Status> {
        let method = self.method.clone();
        let result = match self.answer(request.into_inner()).await? {
            Answer::Result(result) => result,
            // No unary method streams; were one to, its first item is its answer.
            Answer::Stream { first, .. } => to_json(&*first),
        };
        let bytes = method.answer(result).map_err(status_of_schema)?;
        Ok(tonic::Response::new(bytes))
    }

    /// A streaming method: the task, then its updates.
    async fn streaming(
        self,
        request: tonic::Request<Bytes>,
    ) -> Result<tonic::Response<BoxStream<'static, Result<Vec<u8>, Status>>>, Status> {
        let method = self.method.clone();
        let items: BoxStream<'static, Value> = match self.answer(request.into_inner()).await? {
            Answer::Stream { first, rest } => {
                stream_items(first, rest).map(|item| to_json(&item)).boxed()
            }
            Answer::Result(result) => futures::stream::once(async move { result }).boxed(),
        };
        let messages = items.map(move |item| method.answer(item).map_err(status_of_schema));
        Ok(tonic::Response::new(messages.boxed()))
    }
}

async fn serve(State(state): State<GrpcState>, request: HttpRequest) -> Response {
    if !is_grpc(&request) {
        return (
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "the A2A gRPC service takes content-type application/grpc",
        )
            .into_response();
    }
    let caller = crate::auth::http::caller_of(request.extensions());
    let name = request
        .uri()
        .path()
        .rsplit('/')
        .next()
        .unwrap_or_default()
        .to_owned();
    let method = match Method::named(&name) {
        Ok(method) => method,
        Err(e) => return status_response(status_of_schema(e)),
    };
    if let Err(error) = version::check(request.headers(), None, &method.name) {
        return status_response(status::status_of(&error));
    }
    let deadline = deadline::of(request.headers());
    let mut grpc = tonic::server::Grpc::new(BytesCodec)
        .apply_max_message_size_config(Some(state.max_body_bytes), None);
    let call = Call {
        adapter: state.adapter,
        caller,
        method,
    };
    let response = if call.method.streaming {
        let service = tower::service_fn(move |request| {
            let call = call.clone();
            async move {
                let response = deadline::within(deadline, call.streaming(request)).await?;
                Ok::<_, Status>(response.map(|messages| deadline::end_by(deadline, messages)))
            }
        });
        grpc.server_streaming(service, request).await
    } else {
        let service = tower::service_fn(move |request| {
            deadline::within(deadline, call.clone().unary(request))
        });
        grpc.unary(service, request).await
    };
    response.map(Body::new)
}

/// Whether the request says it is gRPC (`application/grpc`, `application/grpc+proto`, …).
fn is_grpc(request: &HttpRequest) -> bool {
    request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v == "application/grpc" || v.starts_with("application/grpc+"))
}

/// A gRPC answer that is only a status (HTTP 200, the status in headers).
fn status_response(status: Status) -> Response {
    status.into_http::<Body>()
}

fn status_of_schema(error: SchemaError) -> Status {
    let message = error.to_string();
    match error {
        SchemaError::Unusable | SchemaError::Encode { .. } => Status::internal(message),
        SchemaError::UnknownMethod(_) => Status::unimplemented(message),
        SchemaError::Decode { .. } => Status::invalid_argument(message),
    }
}

fn to_json(item: &impl serde::Serialize) -> Value {
    serde_json::to_value(item).unwrap_or(Value::Null)
}
