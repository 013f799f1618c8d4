//! The A2A 1.0 HTTP+JSON (REST) binding, under `/a2a/rest` on `skillet serve --http`: each
//! route becomes the JSON-RPC method it stands for and is answered by the same
//! [`A2aAdapter::handle_as`] — this module only maps HTTP onto those methods and back.
//!
//! | route | method |
//! |---|---|
//! | `POST /message:send` | `SendMessage` (body: `SendMessageRequest`) |
//! | `POST /message:stream` | `SendStreamingMessage` (SSE) |
//! | `GET /tasks/{id}` | `GetTask` (`?historyLength=`) |
//! | `GET /tasks` | `ListTasks` (query: `contextId`, `status`, `pageSize`, `pageToken`, …) |
//! | `POST /tasks/{id}:cancel` | `CancelTask` |
//! | `GET` or `POST /tasks/{id}:subscribe` | `SubscribeToTask` (SSE) |
//! | `POST /tasks/{id}/pushNotificationConfigs` | `CreateTaskPushNotificationConfig` |
//! | `GET /tasks/{id}/pushNotificationConfigs` | `ListTaskPushNotificationConfigs` |
//! | `GET /tasks/{id}/pushNotificationConfigs/{configId}` | `GetTaskPushNotificationConfig` |
//! | `DELETE /tasks/{id}/pushNotificationConfigs/{configId}` | `DeleteTaskPushNotificationConfig` |
//! | `GET /extendedAgentCard` | `GetExtendedAgentCard` |
//!
//! Each route may also be prefixed by a tenant segment (`/{tenant}/tasks`, accepted and
//! ignored: one tenant per server). Path parameters win over the same field in the body;
//! query values are strings, except the numeric and boolean fields of the A2A requests.
//!
//! Answers: the method's result as `application/a2a+json` (HTTP 200), or an SSE stream whose
//! `data:` is one bare `StreamResponse` per event. Every error — a streaming method's too,
//! as it comes before the stream — is an HTTP status with a `google.rpc.Status` body
//! (`{"error": {code, status, message, details}}`, `details` holding the A2A `ErrorInfo`
//! reason), per A2A §5.4 and §11.6. An unknown route is 404 `METHOD_NOT_FOUND`, a known
//! route with another HTTP method 405.
//!
//! Not here: the method semantics (`methods`), the JSON-RPC framing (`jsonrpc`, `http`).

use axum::Router;
use axum::body::Body;
use axum::extract::{Request as HttpRequest, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::any;
use futures::StreamExt;
use percent_encoding::percent_decode_str;
use serde_json::{Map, Value, json};

use super::http::stream_items;
use super::jsonrpc::{RpcCode, RpcError, RpcRequest};
use super::methods::{A2aAdapter, Answer};
use super::version;

/// The path under which the REST routes live; the card's `HTTP+JSON` interface URL ends in it.
pub(crate) const REST_PATH: &str = "/a2a/rest";

/// The media type of A2A's HTTP+JSON answers (A2A §14.1).
const A2A_JSON: &str = "application/a2a+json";

/// Query fields sent as numbers.
const INTEGER_FIELDS: &[&str] = &["historyLength", "pageSize"];
/// Query fields sent as booleans.
const BOOLEAN_FIELDS: &[&str] = &["includeArtifacts", "returnImmediately"];

#[derive(Clone)]
struct RestState {
    adapter: A2aAdapter,
    max_body_bytes: usize,
}

/// The REST routes, to merge into the host's HTTP router next to the JSON-RPC route.
pub(crate) fn router(adapter: A2aAdapter, max_body_bytes: usize) -> Router {
    Router::new()
        .route(&format!("{REST_PATH}/{{*route}}"), any(serve))
        .with_state(RestState {
            adapter,
            max_body_bytes,
        })
}

/// Why a request matches no method.
#[derive(Debug, PartialEq)]
enum NoRoute {
    /// No route has this path.
    Unknown,
    /// The path is a route, for other HTTP methods.
    WrongMethod(&'static str),
}

/// A matched route: the JSON-RPC method and the parameters its path carries.
#[derive(Debug, PartialEq)]
struct Route {
    method: &'static str,
    path_params: Map<String, Value>,
    /// Whether the request body holds the params (POST routes).
    has_body: bool,
}

impl Route {
    fn new(method: &'static str, has_body: bool, params: &[(&str, &str)]) -> Route {
        let path_params = params
            .iter()
            .map(|(k, v)| ((*k).to_owned(), Value::String((*v).to_owned())))
            .collect();
        Route {
            method,
            path_params,
            has_body,
        }
    }
}

/// The route of `http_method` on `path` (below [`REST_PATH`], without a leading `/`; still
/// percent-encoded).
fn route(http_method: &Method, path: &str) -> Result<Route, NoRoute> {
    let segments: Vec<String> = path
        .split('/')
        .map(|s| percent_decode_str(s).decode_utf8_lossy().into_owned())
        .collect();
    let segments: Vec<&str> = segments.iter().map(String::as_str).collect();
    match route_of(http_method, &segments) {
        Err(NoRoute::Unknown) if segments.len() > 1 && !segments[0].is_empty() => {
            // `/{tenant}/…`: the tenant is accepted and ignored.
            let mut route = route_of(http_method, &segments[1..])?;
            route
                .path_params
                .insert("tenant".into(), Value::String(segments[0].to_owned()));
            Ok(route)
        }
        other => other,
    }
}

fn route_of(m: &Method, segments: &[&str]) -> Result<Route, NoRoute> {
    let (get, post, delete) = (m == Method::GET, m == Method::POST, m == Method::DELETE);
    let only = |ok: bool, allowed: &'static str, route: Route| {
        if ok {
            Ok(route)
        } else {
            Err(NoRoute::WrongMethod(allowed))
        }
    };
    match segments {
        ["message:send"] => only(post, "POST", Route::new("SendMessage", true, &[])),
        ["message:stream"] => only(post, "POST", Route::new("SendStreamingMessage", true, &[])),
        ["extendedAgentCard"] => only(get, "GET", Route::new("GetExtendedAgentCard", false, &[])),
        ["tasks"] => only(get, "GET", Route::new("ListTasks", false, &[])),
        ["tasks", task] if !task.is_empty() => match task.rsplit_once(':') {
            Some((id, "cancel")) if !id.is_empty() => {
                only(post, "POST", Route::new("CancelTask", true, &[("id", id)]))
            }
            Some((id, "subscribe")) if !id.is_empty() => only(
                get || post,
                "GET, POST",
                Route::new("SubscribeToTask", post, &[("id", id)]),
            ),
            _ => only(get, "GET", Route::new("GetTask", false, &[("id", task)])),
        },
        ["tasks", task, "pushNotificationConfigs"] if !task.is_empty() => {
            let params = [("taskId", *task)];
            if post {
                Ok(Route::new(
                    "CreateTaskPushNotificationConfig",
                    true,
                    &params,
                ))
            } else if get {
                Ok(Route::new(
                    "ListTaskPushNotificationConfigs",
                    false,
                    &params,
                ))
            } else {
                Err(NoRoute::WrongMethod("GET, POST"))
            }
        }
        ["tasks", task, "pushNotificationConfigs", id] if !task.is_empty() && !id.is_empty() => {
            let params = [("taskId", *task), ("id", *id)];
            if get {
                Ok(Route::new("GetTaskPushNotificationConfig", false, &params))
            } else if delete {
                Ok(Route::new(
                    "DeleteTaskPushNotificationConfig",
                    false,
                    &params,
                ))
            } else {
                Err(NoRoute::WrongMethod("GET, DELETE"))
            }
        }
        _ => Err(NoRoute::Unknown),
    }
}

/// The params of a request: the body's object (POST) or the query's fields, then the path's.
fn params_of(route: Route, query: Option<&str>, body: &[u8]) -> Result<Value, RpcError> {
    let mut params = if route.has_body && !body.iter().all(u8::is_ascii_whitespace) {
        match serde_json::from_slice::<Value>(body) {
            Ok(Value::Object(object)) => object,
            Ok(_) => {
                return Err(RpcError::new(
                    RpcCode::InvalidRequest,
                    "the request body must be a JSON object",
                ));
            }
            Err(e) => {
                return Err(RpcError::new(
                    RpcCode::ParseError,
                    format!("the request body is not JSON: {e}"),
                ));
            }
        }
    } else {
        Map::new()
    };
    if !route.has_body {
        for (key, value) in query_pairs(query.unwrap_or_default()) {
            if key.eq_ignore_ascii_case(version::VERSION_HEADER) {
                continue;
            }
            let value = typed(&key, value);
            params.insert(key, value);
        }
    }
    params.extend(route.path_params);
    Ok(Value::Object(params))
}

/// The decoded `key=value` pairs of a query string (`+` is a space); a repeated key keeps its
/// last value.
fn query_pairs(query: &str) -> Vec<(String, String)> {
    let decode = |s: &str| {
        percent_decode_str(&s.replace('+', " "))
            .decode_utf8_lossy()
            .into_owned()
    };
    query
        .split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            (decode(key), decode(value))
        })
        .collect()
}

/// A query value as the JSON type its field has: a number or boolean when it parses as one,
/// else the string (which the method's params then refuse, naming the field).
fn typed(key: &str, value: String) -> Value {
    if INTEGER_FIELDS.contains(&key)
        && let Ok(n) = value.parse::<i64>()
    {
        return json!(n);
    }
    if BOOLEAN_FIELDS.contains(&key) {
        match value.as_str() {
            "true" => return Value::Bool(true),
            "false" => return Value::Bool(false),
            _ => {}
        }
    }
    Value::String(value)
}

async fn serve(State(state): State<RestState>, request: HttpRequest) -> Response {
    let caller = crate::auth::http::caller_of(request.extensions());
    let (headers, query) = (
        request.headers().clone(),
        request.uri().query().map(str::to_owned),
    );
    let path = request
        .uri()
        .path()
        .strip_prefix(REST_PATH)
        .and_then(|p| p.strip_prefix('/'))
        .unwrap_or_default()
        .to_owned();
    let route = match route(request.method(), &path) {
        Ok(route) => route,
        Err(NoRoute::Unknown) => {
            let error = RpcError::new(
                RpcCode::MethodNotFound,
                format!(
                    "no A2A HTTP+JSON route at {REST_PATH}/{path}; the routes are \
                     /message:send, /message:stream, /tasks, /tasks/{{id}}, \
                     /tasks/{{id}}:cancel, /tasks/{{id}}:subscribe and \
                     /tasks/{{id}}/pushNotificationConfigs"
                ),
            );
            return error_response(&error);
        }
        Err(NoRoute::WrongMethod(allowed)) => {
            let error = RpcError::new(
                RpcCode::MethodNotFound,
                format!(
                    "{} is not served on {REST_PATH}/{path}; use {allowed}",
                    request.method()
                ),
            );
            let mut response = error_response_as(
                &error,
                Some((StatusCode::METHOD_NOT_ALLOWED, "UNIMPLEMENTED")),
            );
            if let Ok(allow) = HeaderValue::from_str(allowed) {
                response.headers_mut().insert(header::ALLOW, allow);
            }
            return response;
        }
    };
    let method = route.method;
    if let Err(error) = version::check(&headers, query.as_deref(), method) {
        return error_response(&error);
    }
    let limit = state.max_body_bytes;
    let Ok(body) = axum::body::to_bytes(request.into_body(), limit).await else {
        let error = RpcError::new(
            RpcCode::InvalidRequest,
            format!("request exceeds the {limit}-byte limit"),
        );
        return error_response_as(
            &error,
            Some((StatusCode::PAYLOAD_TOO_LARGE, "OUT_OF_RANGE")),
        );
    };
    let params = match params_of(route, query.as_deref(), &body) {
        Ok(params) => params,
        Err(error) => return error_response(&error),
    };
    let request = RpcRequest {
        id: Value::Null,
        method: method.to_owned(),
        params,
    };
    match state.adapter.handle_as(request, &caller).await {
        Ok(Answer::Result(result)) => json_response(StatusCode::OK, &result),
        Ok(Answer::Stream { first, rest }) => {
            let events = stream_items(first, rest).map(|item| {
                let data = serde_json::to_string(&item).unwrap_or_else(|_| "null".into());
                Ok::<_, std::convert::Infallible>(SseEvent::default().data(data))
            });
            Sse::new(events)
                .keep_alive(KeepAlive::new().interval(crate::listener::SSE_KEEP_ALIVE))
                .into_response()
        }
        Err(error) => error_response(&error),
    }
}

/// The HTTP status and `google.rpc.Code` name of an A2A error (A2A §5.4). A refused admission
/// keeps its meaning: a skill the caller may not run is 403, a busy or rate-limited server 503.
fn status_of(error: &RpcError, metadata: &Value) -> (StatusCode, &'static str) {
    if metadata["a2eCode"] == "unauthorized" {
        return (StatusCode::FORBIDDEN, "PERMISSION_DENIED");
    }
    match error.code {
        RpcCode::ParseError
        | RpcCode::InvalidRequest
        | RpcCode::InvalidParams
        | RpcCode::ContentTypeNotSupported => (StatusCode::BAD_REQUEST, "INVALID_ARGUMENT"),
        RpcCode::MethodNotFound | RpcCode::TaskNotFound => (StatusCode::NOT_FOUND, "NOT_FOUND"),
        RpcCode::TaskNotCancelable
        | RpcCode::PushNotificationNotSupported
        | RpcCode::UnsupportedOperation
        | RpcCode::ExtendedAgentCardNotConfigured
        | RpcCode::VersionNotSupported => (StatusCode::BAD_REQUEST, "FAILED_PRECONDITION"),
        RpcCode::Internal if metadata["retryable"] == "true" => {
            (StatusCode::SERVICE_UNAVAILABLE, "UNAVAILABLE")
        }
        RpcCode::Internal => (StatusCode::INTERNAL_SERVER_ERROR, "INTERNAL"),
    }
}

/// `error` as an HTTP status with a `google.rpc.Status` body.
fn error_response(error: &RpcError) -> Response {
    error_response_as(error, None)
}

/// [`error_response`] with the status (and its `google.rpc.Code` name) given, not derived.
fn error_response_as(error: &RpcError, status: Option<(StatusCode, &'static str)>) -> Response {
    let mut rpc = error.to_json();
    let details = rpc["data"].take();
    let (status, name) = status.unwrap_or_else(|| status_of(error, &details[0]["metadata"]));
    let body = json!({"error": {
        "code": status.as_u16(),
        "status": name,
        "message": error.message,
        "details": details,
    }});
    let mut response = json_response(status, &body);
    if status == StatusCode::SERVICE_UNAVAILABLE {
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    }
    response
}

fn json_response(status: StatusCode, body: &Value) -> Response {
    let mut response = Response::new(Body::from(body.to_string()));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(A2A_JSON));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn method_of(m: Method, path: &str) -> Result<&'static str, NoRoute> {
        route(&m, path).map(|r| r.method)
    }

    #[test]
    fn every_route_of_the_binding_names_its_json_rpc_method() {
        let cases = [
            (Method::POST, "message:send", "SendMessage"),
            (Method::POST, "message:stream", "SendStreamingMessage"),
            (Method::GET, "tasks/t1", "GetTask"),
            (Method::GET, "tasks", "ListTasks"),
            (Method::POST, "tasks/t1:cancel", "CancelTask"),
            (Method::GET, "tasks/t1:subscribe", "SubscribeToTask"),
            (Method::POST, "tasks/t1:subscribe", "SubscribeToTask"),
            (
                Method::POST,
                "tasks/t1/pushNotificationConfigs",
                "CreateTaskPushNotificationConfig",
            ),
            (
                Method::GET,
                "tasks/t1/pushNotificationConfigs",
                "ListTaskPushNotificationConfigs",
            ),
            (
                Method::GET,
                "tasks/t1/pushNotificationConfigs/c1",
                "GetTaskPushNotificationConfig",
            ),
            (
                Method::DELETE,
                "tasks/t1/pushNotificationConfigs/c1",
                "DeleteTaskPushNotificationConfig",
            ),
            (Method::GET, "extendedAgentCard", "GetExtendedAgentCard"),
            (Method::GET, "acme/tasks/t1", "GetTask"),
        ];
        for (m, path, expected) in cases {
            assert_eq!(method_of(m.clone(), path), Ok(expected), "{m} {path}");
        }
        assert_eq!(method_of(Method::GET, "nope"), Err(NoRoute::Unknown));
        assert_eq!(
            method_of(Method::DELETE, "tasks/t1"),
            Err(NoRoute::WrongMethod("GET"))
        );
    }

    #[test]
    fn path_parameters_win_and_query_values_get_their_json_types() {
        let route = route(&Method::GET, "acme/tasks/a%20b").unwrap();
        let params = params_of(route, Some("historyLength=2&id=other&x=1"), b"").unwrap();
        assert_eq!(
            params,
            json!({"id": "a b", "tenant": "acme", "historyLength": 2, "x": "1"})
        );
        let route = route_of(&Method::GET, &["tasks"]).unwrap();
        let params = params_of(
            route,
            Some("includeArtifacts=true&pageSize=x&status=TASK_STATE_WORKING"),
            b"",
        )
        .unwrap();
        assert_eq!(params["includeArtifacts"], true);
        assert_eq!(params["pageSize"], "x");
        assert_eq!(params["status"], "TASK_STATE_WORKING");
    }

    #[test]
    fn a_body_that_is_not_a_json_object_is_refused_before_any_method_runs() {
        let route = || route_of(&Method::POST, &["message:send"]).unwrap();
        assert_eq!(
            params_of(route(), None, b"{nope").unwrap_err().code,
            RpcCode::ParseError
        );
        assert_eq!(
            params_of(route(), None, b"[1]").unwrap_err().code,
            RpcCode::InvalidRequest
        );
        let cancel = route_of(&Method::POST, &["tasks", "t:cancel"]).unwrap();
        assert_eq!(params_of(cancel, None, b"").unwrap(), json!({"id": "t"}));
    }

    #[test]
    fn a2a_errors_map_to_the_http_status_of_the_spec() {
        let none = Value::Null;
        let status = |code| status_of(&RpcError::new(code, "m"), &none).0;
        assert_eq!(status(RpcCode::TaskNotFound), StatusCode::NOT_FOUND);
        assert_eq!(status(RpcCode::TaskNotCancelable), StatusCode::BAD_REQUEST);
        assert_eq!(status(RpcCode::InvalidParams), StatusCode::BAD_REQUEST);
        assert_eq!(status(RpcCode::Internal), StatusCode::INTERNAL_SERVER_ERROR);
        let busy = json!({"retryable": "true"});
        let error = RpcError::new(RpcCode::Internal, "busy");
        assert_eq!(status_of(&error, &busy).0, StatusCode::SERVICE_UNAVAILABLE);
    }
}
