//! The console's page and its static files, embedded in the binary (`include_str!`): plain
//! HTML, CSS and JavaScript modules, no framework, no CDN, no build step. Every answer carries
//! a strict Content Security Policy (only this origin's scripts, styles and fetches; no inline
//! script, no framing) and `nosniff`. The page carries the process's same-origin token
//! (`super::token`) in a `<meta>` tag, for the scripts to send on state-changing requests.
//!
//! Not here: the data the page shows (`super::api`).

use axum::Router;
use axum::extract::Path;
use axum::http::{HeaderName, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

/// The policy every console answer carries: scripts, styles, images and fetches from this
/// origin only; no inline script, no plugin, no framing, no form posting elsewhere.
pub(crate) const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; \
    style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; \
    form-action 'none'; frame-ancestors 'none'";

const INDEX: &str = include_str!("assets/index.html");

/// The files under `/console/assets/`: name, media type, contents.
const FILES: &[(&str, &str, &str)] = &[
    (
        "console.css",
        "text/css; charset=utf-8",
        include_str!("assets/console.css"),
    ),
    ("app.js", JS, include_str!("assets/app.js")),
    ("api.js", JS, include_str!("assets/api.js")),
    ("skills.js", JS, include_str!("assets/skills.js")),
    ("form.js", JS, include_str!("assets/form.js")),
    ("run.js", JS, include_str!("assets/run.js")),
    ("timeline.js", JS, include_str!("assets/timeline.js")),
    ("transcript.js", JS, include_str!("assets/transcript.js")),
    ("approval.js", JS, include_str!("assets/approval.js")),
    ("files.js", JS, include_str!("assets/files.js")),
    ("history.js", JS, include_str!("assets/history.js")),
    ("evals.js", JS, include_str!("assets/evals.js")),
    ("dom.js", JS, include_str!("assets/dom.js")),
    ("format.js", JS, include_str!("assets/format.js")),
    ("markdown.js", JS, include_str!("assets/markdown.js")),
    ("waterfall.js", JS, include_str!("assets/waterfall.js")),
    (
        "favicon.svg",
        "image/svg+xml",
        include_str!("assets/favicon.svg"),
    ),
];

const JS: &str = "text/javascript; charset=utf-8";

/// Where the page's `<head>` gets the token's `<meta>` tag.
const TOKEN_SLOT: &str = "<meta charset=\"utf-8\">";

/// `GET /` (the page, carrying `token`) and `GET /console/assets/NAME`.
pub(crate) fn router(token: &super::token::ConsoleToken) -> Router {
    let page = axum::body::Bytes::from(page_with(token.value()));
    Router::new()
        .route(
            "/",
            get(move || {
                let page = page.clone();
                async move { page_response(page) }
            }),
        )
        .route("/console/assets/{name}", get(asset))
}

/// The page with the token's `<meta>` tag after its charset (the token is hex: nothing to
/// escape).
fn page_with(token: &str) -> String {
    INDEX.replacen(
        TOKEN_SLOT,
        &format!("{TOKEN_SLOT}\n<meta name=\"skillet-console-token\" content=\"{token}\">"),
        1,
    )
}

fn page_response(page: axum::body::Bytes) -> Response {
    let mut response = (StatusCode::OK, page).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    secure(headers);
    response
}

async fn asset(Path(name): Path<String>) -> Response {
    match FILES.iter().find(|(n, _, _)| *n == name) {
        Some((_, mime, body)) => with_headers(StatusCode::OK, mime, body),
        None => with_headers(
            StatusCode::NOT_FOUND,
            "text/plain; charset=utf-8",
            "no such console asset\n",
        ),
    }
}

fn with_headers(status: StatusCode, mime: &'static str, body: &'static str) -> Response {
    let mut response = (status, body).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(mime));
    secure(headers);
    response
}

/// Adds the console's security headers to an answer.
pub(crate) fn secure(headers: &mut axum::http::HeaderMap) {
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CONTENT_SECURITY_POLICY),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(
        HeaderName::from_static("cross-origin-opener-policy"),
        HeaderValue::from_static("same-origin"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_script_the_page_loads_is_embedded() {
        for line in INDEX.lines().filter(|l| l.contains("/console/assets/")) {
            let start = line.find("/console/assets/").unwrap() + "/console/assets/".len();
            let name: String = line[start..].chars().take_while(|c| *c != '"').collect();
            assert!(
                FILES.iter().any(|(n, _, _)| *n == name),
                "index.html loads {name}, which is not embedded"
            );
        }
    }

    #[test]
    fn the_page_carries_the_token_in_its_head() {
        let page = page_with("00ff");
        let meta = "<meta name=\"skillet-console-token\" content=\"00ff\">";
        assert_eq!(page.matches(meta).count(), 1, "{page}");
        assert!(page.find(meta) < page.find("</head>"));
    }

    #[test]
    fn the_page_has_no_inline_script_or_style() {
        assert!(!INDEX.contains("<script>"));
        assert!(!INDEX.contains("style="));
        assert!(!INDEX.contains("onclick"));
    }
}
