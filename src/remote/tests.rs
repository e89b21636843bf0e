//! The hub client's unit tests: refusals, limits, `BATON_URL` and the token's settings.

use super::answers::url_host;
use super::settings::base_url;
use super::*;

#[test]
fn a_hub_url_is_http_or_https_without_its_trailing_slash() {
    assert_eq!(base_url("http://hub:7878/").unwrap(), "http://hub:7878");
    assert_eq!(
        base_url("https://hub.example/baton").unwrap(),
        "https://hub.example/baton"
    );
    for bad in [
        "hub:7878",
        "ftp://hub",
        "http://",
        "http://127.0.0.1:7878/#token=baton_x",
        "file:///etc/passwd",
        "http://a b",
    ] {
        assert!(base_url(bad).is_err(), "{bad}");
    }
}

#[test]
fn a_refusal_keeps_the_hubs_words_and_exit_code_and_never_passes_others_for_them() {
    let error = refusal(
        "http://hub",
        400,
        br#"{"error":"T-4 is working","hint":"ask codex","code":1}"#,
    );
    assert_eq!(error.to_string(), "T-4 is working");
    assert_eq!(error.hint().as_deref(), Some("ask codex"));
    assert_eq!(error.exit_code(), 1);
    let outside = refusal("http://hub", 403, br#"{"error":"bound","code":2}"#);
    assert_eq!(outside.exit_code(), 2);
    let proxy = refusal("http://hub", 502, b"<html>Bad gateway</html>");
    assert!(!proxy.to_string().contains("html"), "{proxy}");
    assert_eq!(proxy.exit_code(), 1);
    let odd = refusal("http://hub", 400, br#"{"error":"x","code":77}"#);
    assert_eq!(
        odd.exit_code(),
        1,
        "a code outside the contract is not passed on"
    );
}

#[test]
fn a_refused_host_is_told_how_the_hub_allows_the_name_of_the_url() {
    let body = br#"{"error":"this server does not answer the name `buildbox`"}"#;
    let error = refusal("http://buildbox:7878", 403, body);
    assert!(
        error
            .to_string()
            .starts_with("the hub at http://buildbox:7878 refused the name")
    );
    assert_eq!(
        error.hint().as_deref(),
        Some(
            "on the hub's machine, start it with `baton serve --allow-host buildbox` (or \
             use the address `baton serve` printed)"
        )
    );
    for (url, host) in [
        ("https://user@Box.lan/", Some("Box.lan")),
        ("http://[fe80::1]:80", Some("fe80::1")),
        ("http://10.0.0.5", Some("10.0.0.5")),
        ("http://", None),
    ] {
        assert_eq!(url_host(url), host, "{url}");
    }
    let v6 = refusal("http://[fe80::1]:7878", 403, body);
    assert!(v6.hint().unwrap().contains("--allow-host NAME"));
}

#[test]
fn a_listing_may_be_large_a_hook_answer_never() {
    use crate::json_api::endpoint::*;
    for (endpoint, limit, expected) in [
        ("projects", Projects::ANSWER_LIMIT, LIST_ANSWER_LIMIT),
        ("project", ProjectShow::ANSWER_LIMIT, LIST_ANSWER_LIMIT),
        ("board", Board::ANSWER_LIMIT, LIST_ANSWER_LIMIT),
        ("log", Log::ANSWER_LIMIT, LIST_ANSWER_LIMIT),
        ("inbox", Inbox::ANSWER_LIMIT, LIST_ANSWER_LIMIT),
        ("show", Show::ANSWER_LIMIT, LIST_ANSWER_LIMIT),
        ("hook", Hook::ANSWER_LIMIT, HOOK_ANSWER_LIMIT),
        ("whoami", Whoami::ANSWER_LIMIT, RECORD_ANSWER_LIMIT),
        ("agent", AgentShow::ANSWER_LIMIT, RECORD_ANSWER_LIMIT),
        ("woken", Woken::ANSWER_LIMIT, RECORD_ANSWER_LIMIT),
        ("wake", Wake::ANSWER_LIMIT, RECORD_ANSWER_LIMIT),
    ] {
        assert_eq!(limit, expected, "{endpoint}");
    }
}

#[test]
fn a_request_that_got_no_answer_is_said_in_batons_words() {
    let within = Duration::from_millis(1300);
    let said = |error: ureq::Error| why_unreachable(&error, within);
    assert_eq!(
        said(ureq::Error::Timeout(ureq::Timeout::Global)),
        "it gave no answer within 1.3s"
    );
    assert_eq!(
        said(ureq::Error::Timeout(ureq::Timeout::Connect)),
        "it took no connection within 1.3s"
    );
    assert_eq!(
        said(ureq::Error::Io(
            std::io::ErrorKind::ConnectionRefused.into()
        )),
        "nothing listens there (connection refused)"
    );
    assert_eq!(
        why_unreachable(
            &ureq::Error::Timeout(ureq::Timeout::RecvResponse),
            Duration::from_millis(2_960)
        ),
        "it gave no answer within 3s",
        "a deadline a moment short of what was asked is said as asked"
    );
}

#[test]
fn the_token_is_not_in_the_debug_form() {
    let hub = HubClient::new("http://hub:1", "baton_secret".into()).unwrap();
    assert!(!format!("{hub:?}").contains("secret"));
    let hubs = HubClient::new("http://a:1,http://b:2", "baton_secret".into()).unwrap();
    assert!(!format!("{hubs:?}").contains("secret"));
}

#[test]
fn several_hubs_are_read_once_in_order_and_a_wrong_list_is_said_in_one_line() {
    assert_eq!(
        hub_urls(" http://a:7878/ , https://b.example/baton ").unwrap(),
        ["http://a:7878", "https://b.example/baton"]
    );
    assert_eq!(hub_urls("http://a:7878").unwrap(), ["http://a:7878"]);
    for (bad, said) in [
        ("http://a:1,,http://b:2", "has an empty item (hub 2 of 3)"),
        ("http://a:1,", "has an empty item (hub 2 of 2)"),
        (",http://a:1", "has an empty item (hub 1 of 2)"),
        ("http://a:1, b:2", "BATON_URL b:2 is not a URL (hub 2 of 2)"),
        ("http://a:1,ftp://b", "is not http or https (hub 2 of 2)"),
        (
            "http://a:1,http://:2",
            "is not a hub's address (hub 2 of 2)",
        ),
        ("http://a:1,http://A:1/", "names http://A:1 twice"),
    ] {
        let error = hub_urls(bad).unwrap_err().to_string();
        assert!(error.contains(said), "{bad}: {error}");
        assert!(!error.contains('\n'), "{bad}: {error}");
    }
}

#[test]
fn the_hub_in_use_stays_until_it_fails_and_a_wake_is_given_it_first() {
    let hub = HubClient::new("http://a:1,http://b:2,http://c:3", "t".into()).unwrap();
    assert_eq!(hub.url(), "http://a:1");
    hub.hubs.answered(1);
    let copy = hub.clone().observing(Observer::Listen);
    assert_eq!(copy.url(), "http://b:2", "copies share the hub in use");
    assert_eq!(
        hub.urls_for_environment(),
        "http://b:2,http://c:3,http://a:1"
    );
    // A failure told late, of a hub no longer in use, moves nothing.
    hub.hubs.failed(0);
    assert_eq!(hub.url(), "http://b:2");
    hub.hubs.failed(1);
    assert_eq!(copy.url(), "http://c:3");
    hub.hubs.failed(2);
    assert_eq!(hub.url(), "http://a:1", "round the list");
    assert_eq!(
        hub.described(),
        "the hubs at http://a:1, http://b:2, http://c:3"
    );
    let each: Vec<String> = hub.each().iter().map(|one| one.described()).collect();
    assert_eq!(each[1], "the hub at http://b:2");
}

#[test]
fn no_hub_answering_names_each_with_why() {
    let one = Error::unreachable("http://a:1", "nothing listens there");
    assert_eq!(
        one.to_string(),
        "hub http://a:1 unreachable: nothing listens there"
    );
    let several = Error::Unreachable {
        tried: vec![
            Unanswered {
                url: "http://a:1".into(),
                cause: "nothing listens there (connection refused)".into(),
            },
            Unanswered {
                url: "http://b:2".into(),
                cause: "it gave no answer within 5s".into(),
            },
        ],
    };
    assert_eq!(
        several.to_string(),
        "no hub answers: hub http://a:1 unreachable: nothing listens there (connection \
         refused); hub http://b:2 unreachable: it gave no answer within 5s"
    );
    assert_eq!(several.exit_code(), 6);
}

#[test]
fn a_change_goes_to_another_hub_only_when_it_never_reached_the_first() {
    use std::io::ErrorKind;
    assert!(never_sent(&ureq::Error::Io(
        ErrorKind::ConnectionRefused.into()
    )));
    assert!(never_sent(&ureq::Error::Timeout(ureq::Timeout::Connect)));
    assert!(never_sent(&ureq::Error::HostNotFound));
    assert!(!never_sent(&ureq::Error::Io(
        ErrorKind::ConnectionReset.into()
    )));
    assert!(!never_sent(&ureq::Error::Io(
        ErrorKind::UnexpectedEof.into()
    )));
    assert!(!never_sent(&ureq::Error::Timeout(
        ureq::Timeout::RecvResponse
    )));
    assert!(!never_sent(&ureq::Error::Timeout(ureq::Timeout::Global)));
}

#[test]
fn each_hub_tried_leaves_time_for_the_next() {
    let first = Within::sharing(Duration::from_millis(1300), 2);
    assert_eq!(first.connect, Duration::from_millis(650));
    assert_eq!(first.head, Duration::from_millis(650));
    assert_eq!(first.all, Duration::from_millis(1300));
    let alone = Within::sharing(Duration::from_secs(60), 1);
    assert_eq!(alone.connect, CONNECT_WITHIN);
    assert_eq!(alone.head, Duration::from_secs(60));
}
