//! A2A errors as gRPC statuses (A2A §5.4, §10.6): the status code of the spec's table, the
//! message, and in `grpc-status-details-bin` a `google.rpc.Status` whose details hold the
//! `google.rpc.ErrorInfo` (reason, domain `a2a-protocol.org`, metadata) the SDKs map back to
//! their error types, plus a `google.rpc.BadRequest` for input violations.
//!
//! | A2A error | gRPC code |
//! |---|---|
//! | parse error, invalid request, invalid params, content type not supported | `INVALID_ARGUMENT` |
//! | method not found | `UNIMPLEMENTED` |
//! | task not found | `NOT_FOUND` |
//! | task not cancelable, push notifications not supported, unsupported operation, extended card not configured, version not supported | `FAILED_PRECONDITION` |
//! | a skill the caller may not run (`a2eCode: unauthorized`) | `PERMISSION_DENIED` |
//! | internal, retryable (busy, rate-limited) | `UNAVAILABLE` |
//! | internal | `INTERNAL` |
//!
//! Not here: the errors themselves (`super::super::jsonrpc`), the REST binding's HTTP statuses
//! (`super::super::rest`).

use std::collections::HashMap;

use serde_json::Value;
use tonic::{Code, Status};
use tonic_types::{ErrorDetails, StatusExt};

use crate::a2a::jsonrpc::{RpcCode, RpcError};

/// `error` as a gRPC status with its `ErrorInfo` (and `BadRequest`) details.
pub(crate) fn status_of(error: &RpcError) -> Status {
    let json = error.to_json();
    let details = json["data"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    let info = details.first().cloned().unwrap_or(Value::Null);
    let code = code_of(error.code, &info["metadata"]);
    let metadata: HashMap<String, String> = info["metadata"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(key, value)| {
            let text = value
                .as_str()
                .map_or_else(|| value.to_string(), str::to_owned);
            (key.clone(), text)
        })
        .collect();
    let mut rich = ErrorDetails::with_error_info(
        error.code.reason(),
        info["domain"].as_str().unwrap_or_default(),
        metadata,
    );
    for violation in details
        .iter()
        .filter_map(|detail| detail["fieldViolations"].as_array())
        .flatten()
    {
        rich.add_bad_request_violation(
            violation["field"].as_str().unwrap_or_default(),
            violation["description"].as_str().unwrap_or_default(),
        );
    }
    Status::with_error_details(code, error.message.clone(), rich)
}

/// The gRPC code of an A2A error. A refused admission keeps its meaning: a skill the caller may
/// not run is `PERMISSION_DENIED`, a busy or rate-limited server `UNAVAILABLE`.
fn code_of(code: RpcCode, metadata: &Value) -> Code {
    if metadata["a2eCode"] == "unauthorized" {
        return Code::PermissionDenied;
    }
    match code {
        RpcCode::ParseError
        | RpcCode::InvalidRequest
        | RpcCode::InvalidParams
        | RpcCode::ContentTypeNotSupported => Code::InvalidArgument,
        RpcCode::MethodNotFound => Code::Unimplemented,
        RpcCode::TaskNotFound => Code::NotFound,
        RpcCode::TaskNotCancelable
        | RpcCode::PushNotificationNotSupported
        | RpcCode::UnsupportedOperation
        | RpcCode::ExtendedAgentCardNotConfigured
        | RpcCode::VersionNotSupported => Code::FailedPrecondition,
        RpcCode::Internal if metadata["retryable"] == "true" => Code::Unavailable,
        RpcCode::Internal => Code::Internal,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a2a_errors_map_to_the_grpc_codes_of_the_spec_with_their_error_info() {
        let status = status_of(&RpcError::new(RpcCode::TaskNotFound, "no task t1"));
        assert_eq!(status.code(), Code::NotFound);
        assert_eq!(status.message(), "no task t1");
        let info = status.get_details_error_info().unwrap();
        assert_eq!(info.reason, "TASK_NOT_FOUND");
        assert_eq!(info.domain, "a2a-protocol.org");

        let code = |c| status_of(&RpcError::new(c, "m")).code();
        assert_eq!(code(RpcCode::TaskNotCancelable), Code::FailedPrecondition);
        assert_eq!(
            code(RpcCode::PushNotificationNotSupported),
            Code::FailedPrecondition
        );
        assert_eq!(code(RpcCode::InvalidParams), Code::InvalidArgument);
        assert_eq!(code(RpcCode::Internal), Code::Internal);

        let busy = RpcError::new(RpcCode::Internal, "busy").with_metadata("retryable", "true");
        assert_eq!(status_of(&busy).code(), Code::Unavailable);
        let refused =
            RpcError::new(RpcCode::InvalidRequest, "no").with_metadata("a2eCode", "unauthorized");
        let status = status_of(&refused);
        assert_eq!(status.code(), Code::PermissionDenied);
        let info = status.get_details_error_info().unwrap();
        assert_eq!(info.metadata["a2eCode"], "unauthorized");
    }

    #[test]
    fn input_violations_travel_as_a_bad_request_detail() {
        let error = RpcError::new(RpcCode::InvalidParams, "bad")
            .with_violations(vec![("pageSize".into(), "must be 1..=100".into())]);
        let status = status_of(&error);
        let bad = status.get_details_bad_request().unwrap();
        assert_eq!(bad.field_violations[0].field, "pageSize");
        assert_eq!(bad.field_violations[0].description, "must be 1..=100");
    }
}
