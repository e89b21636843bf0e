//! The one adapter that serves an [`Endpoint`] of the JSON API: its route and method, its
//! body limit, what it sends read as the endpoint says (the query, a JSON body, or none) and
//! refused as JSON when it does not fit, and the handler's answer sent as JSON. A handler
//! is given what it needs ([`Asked`]) and returns the endpoint's answer; it never reads a
//! request itself. Its work at the caller's desk runs from the request's [`Seat`].

use std::future::Future;

use axum::Router;
use axum::extract::{
    DefaultBodyLimit, Extension, FromRequest, FromRequestParts, Query, RawPathParams, Request,
    State,
};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::Serialize;

use super::api::{ApiError, stopped};
use crate::json_api::{Endpoint, Method, Reading};
use crate::session::blocking::{Caller, ReadAhead, Stopped, in_session};
use crate::session::{Desk, LocalDesk};
use crate::tokens::TokenId;

/// What a handler of an endpoint is given.
pub struct Asked<B> {
    pub state: super::State,
    /// Who asks, as the token's check said.
    pub caller: Caller,
    /// The login token presented, where there is one (the guarded routes all have it).
    pub token: Option<TokenId>,
    /// What the token's check read for the session the request opens.
    pub read: ReadAhead,
    /// The path's parameters, in order.
    pub path: Vec<String>,
    /// What the request sent: its query, or its body.
    pub body: B,
    pub headers: HeaderMap,
}

impl<B> Asked<B> {
    /// The path's `N` parameters, in order (the route has them all).
    pub fn parameters<const N: usize>(&self) -> [String; N] {
        std::array::from_fn(|index| self.path.get(index).cloned().unwrap_or_default())
    }

    /// The request parted: where its caller sits ([`Seat`]) and what it sent.
    pub fn split(self) -> (Seat, B) {
        let seat = Seat {
            state: self.state,
            caller: self.caller,
            read: self.read,
        };
        (seat, self.body)
    }
}

/// Where a request's caller sits: the hub, who asks, and what the token's check read for
/// the session the request opens.
pub struct Seat {
    pub state: super::State,
    pub caller: Caller,
    pub read: ReadAhead,
}

impl Seat {
    /// Runs `work` at the caller's desk in `project`, on a blocking thread (a session reads
    /// and locks the store).
    pub async fn at_desk<T, F>(self, project: String, work: F) -> Result<T, ApiError>
    where
        T: Send + 'static,
        F: FnOnce(&dyn Desk) -> crate::error::Result<T> + Send + 'static,
    {
        let opening = self.caller.opening_read(project, self.read);
        let done = in_session(self.state.hub, opening, move |session| {
            work(&LocalDesk::of(session))
        })
        .await
        .map_err(|Stopped| stopped())?;
        Ok(done?)
    }
}

/// What a handler answers: the endpoint's answer, or that answer encoded already (a board
/// kept between requests, [`super::answers`]).
pub enum Reply<T> {
    Answer(T),
    Encoded(Response),
}

impl<T> From<T> for Reply<T> {
    fn from(answer: T) -> Self {
        Reply::Answer(answer)
    }
}

impl<T: Serialize> IntoResponse for Reply<T> {
    fn into_response(self) -> Response {
        match self {
            Reply::Answer(answer) => axum::Json(answer).into_response(),
            Reply::Encoded(response) => response,
        }
    }
}

/// A handler of an endpoint whose body is `B`: an async function of what is asked.
pub trait Handler<B>: Clone + Send + Sync + 'static {
    type Answer;
    fn call(&self, asked: Asked<B>) -> impl Future<Output = Result<Self::Answer, ApiError>> + Send;
}

impl<B, F, Fut, R> Handler<B> for F
where
    F: Fn(Asked<B>) -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = Result<R, ApiError>> + Send,
{
    type Answer = R;

    fn call(&self, asked: Asked<B>) -> impl Future<Output = Result<R, ApiError>> + Send {
        self(asked)
    }
}

/// `router` with the endpoint `E` served by `handler`.
pub fn serve<E: Endpoint>(
    router: Router<super::State>,
    handler: impl Handler<E::Body, Answer: Into<Reply<E::Answer>>>,
) -> Router<super::State> {
    let serve = move |State(state): State<super::State>, request: Request| {
        let handler = handler.clone();
        async move {
            let answered = match asked::<E>(state, request).await {
                Ok(asked) => handler.call(asked).await,
                Err(refused) => Err(refused),
            };
            match answered {
                Ok(answer) => answer.into().into_response(),
                Err(refused) => refused.into_response(),
            }
        }
    };
    let method = match E::METHOD {
        Method::Get => get(serve),
        Method::Post => post(serve),
    };
    router.route(
        E::ROUTE.pattern(),
        method.layer(DefaultBodyLimit::max(E::LIMIT)),
    )
}

/// What `request` asks of `E`, or the refusal saying what is wrong with it, in the order
/// axum's extractors found it: the caller, the path, then what was sent.
async fn asked<E: Endpoint>(
    state: super::State,
    request: Request,
) -> Result<Asked<E::Body>, ApiError> {
    let (mut parts, body) = request.into_parts();
    let Extension(caller) = Extension::<Caller>::from_request_parts(&mut parts, &state)
        .await
        .map_err(|refused| ApiError::of_form(refused.status(), &refused.body_text()))?;
    let path = RawPathParams::from_request_parts(&mut parts, &state)
        .await
        .map_err(|refused| ApiError::of_form(refused.status(), &refused.body_text()))?
        .iter()
        .map(|(_, value)| value.to_string())
        .collect();
    let token = parts.extensions.get::<TokenId>().cloned();
    let read = parts.extensions.remove::<ReadAhead>().unwrap_or_default();
    let headers = parts.headers.clone();
    let body = match E::READING {
        Reading::Query => {
            let Query(query) = Query::<E::Body>::from_request_parts(&mut parts, &state)
                .await
                .map_err(|refused| ApiError::of_form(refused.status(), &refused.body_text()))?;
            query
        }
        Reading::Nothing => E::Body::default(),
        Reading::Json => {
            let request = Request::from_parts(parts, body);
            let axum::Json(body) = axum::Json::<E::Body>::from_request(request, &state)
                .await
                .map_err(|refused| ApiError::of_form(refused.status(), &refused.body_text()))?;
            body
        }
        Reading::JsonOrNone => {
            let request = Request::from_parts(parts, body);
            Option::<axum::Json<E::Body>>::from_request(request, &state)
                .await
                .map_err(|refused| ApiError::of_form(refused.status(), &refused.body_text()))?
                .map(|axum::Json(body)| body)
                .unwrap_or_default()
        }
    };
    Ok(Asked {
        state,
        caller,
        token,
        read,
        path,
        body,
        headers,
    })
}
