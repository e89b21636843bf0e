//! The web board's files (SPEC section 12.1), built into the binary: the page works offline
//! and fetches nothing from elsewhere. Its only script and style are these, which the
//! Content-Security-Policy on every answer allows and nothing else.

use axum::Router;
use axum::extract::Request;
use axum::http::{HeaderValue, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::get;

const INDEX: &str = include_str!("assets/index.html");
const SCRIPT: &str = include_str!("assets/app.js");
const STYLE: &str = include_str!("assets/app.css");

/// Only the page's own script, style and API; no frame, no form posting elsewhere, no base.
pub const POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
                          connect-src 'self'; img-src 'self'; base-uri 'none'; \
                          form-action 'none'; frame-ancestors 'none'";

pub fn routes() -> Router<super::State> {
    Router::new()
        .route("/", get(|| asset("text/html; charset=utf-8", INDEX)))
        .route(
            "/assets/app.js",
            get(|| asset("text/javascript; charset=utf-8", SCRIPT)),
        )
        .route(
            "/assets/app.css",
            get(|| asset("text/css; charset=utf-8", STYLE)),
        )
}

async fn asset(kind: &'static str, body: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, kind),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        body,
    )
        .into_response()
}

/// The headers every answer carries: the policy, and no guessing of content types.
pub async fn headers(request: Request, next: Next) -> Response {
    let mut response = next.run(request).await;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(POLICY),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    response
}
