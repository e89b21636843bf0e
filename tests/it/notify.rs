//! Desktop notifications as the notification service gets them (SPEC sections 8 and 10): a
//! hand-over's subject never sits in the notifier's arguments, which every local user can
//! read (`ps`, /proc/PID/cmdline), and its markup reaches a freedesktop service as entities,
//! which such a service shows as the characters they stand for. A private session bus
//! (`dbus-daemon`) and a stand-in notification service on it take the desktop's place.
//!
//! They need `dbus-daemon` (Debian's `dbus-daemon`, which `.ci/run` installs). Without it
//! they say they were not run, except in CI, where they fail.

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::Duration;

use crate::common::TestEnv;

/// What the stand-in service was given by one `Notify` call, and the pid, command line and
/// session of the process that made the call, read while that process waited for the
/// answer.
#[derive(Debug)]
struct Shown {
    summary: String,
    body: String,
    pid: u32,
    argv: Vec<String>,
    session: Option<String>,
}

/// A `dbus-daemon` serving a session bus of its own on a socket in a temporary directory;
/// stopped when dropped.
struct Bus {
    daemon: Child,
    address: String,
    _dir: tempfile::TempDir,
}

impl Bus {
    /// Starts the bus; `None` (after saying why) when there is no `dbus-daemon` to start.
    fn start() -> Option<Bus> {
        let Some(program) = dbus_daemon() else {
            assert!(
                std::env::var_os("CI").is_none(),
                "CI is set but there is no dbus-daemon: .ci/run must install dbus-daemon"
            );
            eprintln!(
                "NOT RUN: the notifier's tests need dbus-daemon on the PATH (Debian's dbus-daemon)"
            );
            return None;
        };
        let dir = tempfile::tempdir().expect("a temporary directory");
        let config = dir.path().join("bus.conf");
        // No service directories: nothing on this machine is started for a name; and every
        // connection may own and call anything, the stand-in service included.
        std::fs::write(
            &config,
            format!(
                r#"<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path={}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*"/>
    <allow receive_sender="*"/>
    <allow own="*"/>
  </policy>
</busconfig>
"#,
                dir.path().join("bus").display()
            ),
        )
        .unwrap();
        let mut daemon = Command::new(program)
            .arg(format!("--config-file={}", config.display()))
            .args(["--nofork", "--print-address=1"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("dbus-daemon starts");
        let mut address = String::new();
        BufReader::new(daemon.stdout.take().unwrap())
            .read_line(&mut address)
            .unwrap();
        assert!(address.starts_with("unix:"), "no bus address: {address:?}");
        Some(Bus {
            daemon,
            address: address.trim().to_string(),
            _dir: dir,
        })
    }
}

impl Drop for Bus {
    fn drop(&mut self) {
        let _ = self.daemon.kill();
        let _ = self.daemon.wait();
    }
}

fn dbus_daemon() -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join("dbus-daemon"))
        .find(|path| path.is_file())
}

/// The freedesktop notification service's name and the signature of its `Notify` call:
/// app name, replaced id, icon, summary, body, actions, hints, timeout.
const NOTIFICATIONS: &str = "org.freedesktop.Notifications";
type NotifyCall = (
    String,
    u32,
    String,
    String,
    String,
    Vec<String>,
    HashMap<String, zbus::OwnedVariant>,
    i32,
);

/// A stand-in notification service on the bus at `address`, on a thread of its own: it
/// owns the service's name before this returns, and reports each `Notify` call.
fn stand_in_service(address: &str) -> Receiver<Shown> {
    let (shown, reports) = mpsc::channel();
    let (ready, owned) = mpsc::channel();
    let address = address.to_string();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async move {
            let served = serve(&address, &ready, &shown).await;
            // A failure before the name was owned is reported there; after, the test sees
            // no notification and says so.
            let _ = ready.send(served.as_ref().map(|_| ()).map_err(ToString::to_string));
        });
    });
    owned
        .recv_timeout(Duration::from_secs(30))
        .expect("the stand-in service starts")
        .expect("the stand-in service owns its name");
    reports
}

async fn serve(
    address: &str,
    ready: &mpsc::Sender<Result<(), String>>,
    shown: &mpsc::Sender<Shown>,
) -> zbus::Result<()> {
    use tokio_stream::StreamExt;
    let connection = zbus::connection::Builder::address(address).build().await?;
    // The stream is made before the name is owned, so that no call is missed.
    let mut messages = zbus::MessageStream::from(&connection);
    connection.request_name(NOTIFICATIONS).await?;
    let bus = zbus::fdo::DBusProxy::new(&connection).await?;
    let _ = ready.send(Ok(()));
    while let Some(message) = messages.next().await {
        let message = message?;
        let header = message.header();
        let is_notify = header.message_type() == zbus::message::Type::MethodCall
            && header
                .member()
                .is_some_and(|member| member.as_str() == "Notify");
        let Some(sender) = header.sender().filter(|_| is_notify) else {
            continue;
        };
        let (_, _, _, summary, body, ..): NotifyCall = message.body().deserialize()?;
        // The caller waits for the answer below, so it still runs and its pid is its own.
        let pid = bus
            .get_connection_unix_process_id(sender.clone().into())
            .await?;
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        let argv = cmdline
            .split(|byte| *byte == 0)
            .filter(|arg| !arg.is_empty())
            .map(|arg| String::from_utf8_lossy(arg).into_owned())
            .collect();
        let session = session_of(&format!("/proc/{pid}/stat"));
        connection.reply(&header, &(1u32,)).await?;
        let _ = shown.send(Shown {
            summary,
            body,
            pid,
            argv,
            session,
        });
    }
    Ok(())
}

/// The session of the process whose stat file is `stat` (its sixth field).
fn session_of(stat: &str) -> Option<String> {
    let stat = std::fs::read_to_string(stat).ok()?;
    let after_name = &stat[stat.rfind(") ")? + 2..];
    after_name.split(' ').nth(3).map(str::to_string)
}

#[test]
fn a_hand_over_notifies_with_the_subject_off_the_command_line_and_its_markup_escaped() {
    let Some(bus) = Bus::start() else {
        return;
    };
    let notes = stand_in_service(&bus.address);
    let env = TestEnv::new();
    env.register(&["lead", "worker"]);
    let subject = r#"<b>Ship</b> it & <a href="https://evil.example/">'docs'</a> <img src="x">"#;
    // Notifications on as they are by default: BATON_NOTIFY unset.
    let mut send = env.command(&env.work());
    send.env_remove("BATON_NOTIFY")
        .env("DBUS_SESSION_BUS_ADDRESS", &bus.address)
        .args([
            "--as",
            "lead",
            "send",
            "--to",
            "worker",
            "--subject",
            subject,
        ]);
    let sent = send.output().expect("baton runs");
    assert!(sent.status.success(), "{sent:?}");

    let note = notes
        .recv_timeout(Duration::from_secs(30))
        .expect("the notifier called the notification service");
    assert!(
        note.argv.iter().any(|arg| arg == "__notify"),
        "the call came from the notifier: {:?}",
        note.argv
    );
    assert!(
        !note.argv.iter().any(|arg| arg.contains("Ship")),
        "the subject is on the notifier's command line: {:?}",
        note.argv
    );
    // Started straight from the send, it took a session of its own (SPEC section 8).
    assert_eq!(
        note.session,
        Some(note.pid.to_string()),
        "the notifier leads a session of its own"
    );
    assert_ne!(note.session, session_of("/proc/self/stat"));
    assert_eq!(note.summary, "baton: work for worker in default");
    assert_eq!(
        note.body,
        "T-1 to do: &lt;b&gt;Ship&lt;/b&gt; it &amp; \
         &lt;a href=&quot;https://evil.example/&quot;&gt;&#39;docs&#39;&lt;/a&gt; \
         &lt;img src=&quot;x&quot;&gt;\n\
         delivery: at worker&#39;s next prompt"
    );
}
