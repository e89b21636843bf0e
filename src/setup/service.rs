//! The service that keeps `baton listen` running on an agent's machine, so the agent of a
//! remote hub is woken when work arrives: a systemd user unit on Linux, a launchd agent on
//! macOS. Setup writes the file and says how to start it; it runs no service manager.
//!
//! The service runs `baton listen --wake -- …` with `BATON_URL` and `BATON_TOKEN_FILE` (a
//! 0600 file, never the token itself in the unit). The woken client needs the token too,
//! in the variable its MCP entry and hooks read, and `baton listen` hands a wake command
//! none of its own `BATON_*`: so the wake command is the client's, started by `/bin/sh`
//! with that variable read from the token file first.
//!
//! A plan stages the service's file, and the token file when setup has the token, as it
//! stages the clients' files; uninstalling a client stages the removal of the service that
//! wakes it.

use std::fs;
use std::path::{Path, PathBuf};

use crate::client::Client;
use crate::error::{Result, SetupError};
use crate::home::Home;

use super::Environment;
use super::edit::{Format, Staging};
use super::manifest::Manifest;
use super::remote::{RemoteHub, TokenValue};

/// The service managers setup writes a listen service for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServiceManager {
    /// A systemd user unit (Linux).
    Systemd,
    /// A launchd agent (macOS).
    Launchd,
    /// None that setup knows (Windows, the BSDs).
    Unknown,
}

impl Default for ServiceManager {
    fn default() -> Self {
        ServiceManager::CURRENT
    }
}

/// The systemd unit's name, which the user starts it by.
pub const SYSTEMD_UNIT: &str = "baton-listen.service";

/// The launchd agent's label, which is also its file's name.
pub const LAUNCHD_LABEL: &str = "local.baton.listen";

/// What every listen service file of setup's says, followed by the client it wakes.
const MARKER: &str = "baton's listen service for ";

/// The name the wake wrapper's shell runs as (its `$0`).
const WRAPPER_NAME: &str = "baton-wake";

impl ServiceManager {
    pub const CURRENT: ServiceManager = if cfg!(target_os = "linux") {
        ServiceManager::Systemd
    } else if cfg!(target_os = "macos") {
        ServiceManager::Launchd
    } else {
        ServiceManager::Unknown
    };

    /// Where the service's file goes, for a manager setup knows.
    pub fn file(self, env: &Environment) -> Option<PathBuf> {
        match self {
            // systemd looks in `$XDG_CONFIG_HOME/systemd/user` (default `~/.config`).
            ServiceManager::Systemd => Some(
                env.xdg_config_home
                    .clone()
                    .unwrap_or_else(|| env.home.join(".config"))
                    .join("systemd/user")
                    .join(SYSTEMD_UNIT),
            ),
            ServiceManager::Launchd => Some(
                env.home
                    .join("Library/LaunchAgents")
                    .join(format!("{LAUNCHD_LABEL}.plist")),
            ),
            ServiceManager::Unknown => None,
        }
    }

    /// The link `systemctl --user enable` makes to the unit, which must go with it.
    pub fn enable_link(self, env: &Environment) -> Option<PathBuf> {
        match self {
            ServiceManager::Systemd => self.file(env).and_then(|unit| {
                Some(
                    unit.parent()?
                        .join("default.target.wants")
                        .join(SYSTEMD_UNIT),
                )
            }),
            ServiceManager::Launchd | ServiceManager::Unknown => None,
        }
    }

    /// The service's text.
    pub fn text(self, service: &ListenService, env: &Environment) -> Option<String> {
        match self {
            ServiceManager::Systemd => Some(service.systemd_unit()),
            ServiceManager::Launchd => {
                Some(service.launchd_plist(&env.home.join("Library/Logs/baton-listen.log")))
            }
            ServiceManager::Unknown => None,
        }
    }

    /// The command that starts the service once its file is written.
    pub fn start_command(self, file: &Path) -> String {
        match self {
            ServiceManager::Systemd => {
                "systemctl --user daemon-reload && systemctl --user enable --now baton-listen"
                    .to_string()
            }
            ServiceManager::Launchd => format!(
                "launchctl bootstrap gui/$(id -u) {}",
                super::command::shell_quote(&file.display().to_string())
            ),
            ServiceManager::Unknown => String::new(),
        }
    }

    /// The command that stops a service whose file is gone.
    pub fn stop_command(self) -> String {
        match self {
            ServiceManager::Systemd => {
                "systemctl --user stop baton-listen && systemctl --user daemon-reload".to_string()
            }
            ServiceManager::Launchd => format!("launchctl bootout gui/$(id -u)/{LAUNCHD_LABEL}"),
            ServiceManager::Unknown => String::new(),
        }
    }
}

/// The client a listen service file of setup's wakes; `None` for any other file.
pub fn client_of_service(text: &str) -> Option<Client> {
    let line = text.lines().find(|line| line.contains(MARKER))?;
    let rest = &line[line.find(MARKER)? + MARKER.len()..];
    let name = rest.split(|c: char| !c.is_ascii_alphanumeric()).next()?;
    Client::from_name(name)
}

/// `baton listen` kept running for one client's agent on a remote hub.
#[derive(Debug, Clone)]
pub struct ListenService {
    /// The client whose headless command wakes the agent.
    pub client: Client,
    pub baton: PathBuf,
    pub hub: RemoteHub,
    /// The 0600 file that holds the token.
    pub token_file: PathBuf,
    /// The hub home on this machine when setup was told one (where listen keeps its wake
    /// locks and logs).
    pub hub_home: Option<PathBuf>,
    /// `PATH` as setup saw it: a service starts with the manager's short `PATH`, where the
    /// clients (and the `node` they run on) are often not found.
    pub path: Option<String>,
}

impl ListenService {
    /// The service's command line: `baton listen --wake -- /bin/sh -c SCRIPT baton-wake
    /// TOKEN_FILE CLIENT ARGS…`, the shell setting the token's variable from the file and
    /// running the client's wake command (to which the prompt is appended).
    pub fn command(&self) -> Vec<String> {
        let variable = self.hub.token_env();
        let script =
            format!("{variable}=\"$(cat \"$1\")\" && export {variable} && shift && exec \"$@\"");
        let mut words = vec![
            self.baton.display().to_string(),
            "listen".to_string(),
            "--wake".to_string(),
            "--".to_string(),
            "/bin/sh".to_string(),
            "-c".to_string(),
            script,
            WRAPPER_NAME.to_string(),
            self.token_file.display().to_string(),
        ];
        words.extend(self.client.wake_command(None));
        words
    }

    /// The service's variables, in the order they are written.
    pub fn environment(&self) -> Vec<(&'static str, String)> {
        let mut variables = vec![
            ("BATON_URL", self.hub.base_url().to_string()),
            ("BATON_TOKEN_FILE", self.token_file.display().to_string()),
        ];
        if let Some(home) = &self.hub_home {
            variables.push(("BATON_HOME", home.display().to_string()));
        }
        if let Some(path) = &self.path {
            variables.push(("PATH", path.clone()));
        }
        variables
    }

    /// The line by which setup knows its file (no `--`, which an XML comment cannot hold).
    fn marker(&self) -> String {
        format!(
            "{MARKER}{}, written by `baton setup` (its uninstall removes it)",
            self.client
        )
    }

    /// The systemd user unit. It restarts whatever happens, sooner after a first failure
    /// and up to two minutes apart after many (`RestartSteps` and `RestartMaxDelaySec` need
    /// systemd 254; an older one ignores them and restarts every 2 s), and never gives up.
    pub fn systemd_unit(&self) -> String {
        let mut unit = format!(
            "# {}\n\
             [Unit]\n\
             Description=baton listen: wake {} when work arrives on the hub at {}\n\
             Wants=network-online.target\n\
             After=network-online.target\n\
             StartLimitIntervalSec=0\n\
             \n\
             [Service]\n\
             Type=simple\n",
            self.marker(),
            self.client,
            systemd_specifiers(self.hub.base_url()),
        );
        for (name, value) in self.environment() {
            unit.push_str(&format!(
                "Environment={}\n",
                systemd_quoted(&format!("{name}={value}"))
            ));
        }
        let command: Vec<String> = self
            .command()
            .iter()
            .map(|word| systemd_word(word))
            .collect();
        unit.push_str(&format!(
            "ExecStart={}\n\
             Restart=always\n\
             RestartSec=2s\n\
             RestartSteps=6\n\
             RestartMaxDelaySec=2min\n\
             \n\
             [Install]\n\
             WantedBy=default.target\n",
            command.join(" ")
        ));
        unit
    }

    /// The launchd agent: started at login and kept alive (launchd waits at least
    /// `ThrottleInterval` seconds between two starts), its output in `log`.
    pub fn launchd_plist(&self, log: &Path) -> String {
        let mut plist = format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
             <!DOCTYPE plist PUBLIC \"-//Apple//DTD PLIST 1.0//EN\" \
             \"http://www.apple.com/DTDs/PropertyList-1.0.dtd\">\n\
             <!-- {} -->\n\
             <plist version=\"1.0\">\n\
             <dict>\n\
             \t<key>Label</key>\n\
             \t<string>{LAUNCHD_LABEL}</string>\n\
             \t<key>ProgramArguments</key>\n\
             \t<array>\n",
            xml_text(&self.marker())
        );
        for word in self.command() {
            plist.push_str(&format!("\t\t<string>{}</string>\n", xml_text(&word)));
        }
        plist.push_str("\t</array>\n\t<key>EnvironmentVariables</key>\n\t<dict>\n");
        for (name, value) in self.environment() {
            plist.push_str(&format!(
                "\t\t<key>{name}</key>\n\t\t<string>{}</string>\n",
                xml_text(&value)
            ));
        }
        let log = xml_text(&log.display().to_string());
        plist.push_str(&format!(
            "\t</dict>\n\
             \t<key>RunAtLoad</key>\n\
             \t<true/>\n\
             \t<key>KeepAlive</key>\n\
             \t<true/>\n\
             \t<key>ThrottleInterval</key>\n\
             \t<integer>10</integer>\n\
             \t<key>StandardOutPath</key>\n\
             \t<string>{log}</string>\n\
             \t<key>StandardErrorPath</key>\n\
             \t<string>{log}</string>\n\
             </dict>\n\
             </plist>\n"
        ));
        plist
    }
}

/// Refuses a listen service setup cannot write: one for more than one client (it wakes one
/// agent through one client's command), or on a system without a service manager it knows.
pub(super) fn check_listen_service(env: &Environment, clients: &[Client]) -> Result<()> {
    if env.services == ServiceManager::Unknown {
        return Err(SetupError::NoServiceManager.into());
    }
    if clients.len() > 1 {
        return Err(SetupError::ListenServiceClients {
            clients: clients.len(),
        }
        .into());
    }
    Ok(())
}

/// Where the listen service's token is kept: in the hub home of this machine, whose
/// directories are the user's alone.
pub(super) fn listen_token_file(hub: &Home) -> PathBuf {
    hub.root().join("listen-token")
}

/// Stages the listen service's file, and its token file when setup has the token.
pub(super) fn install_listen_service(
    env: &Environment,
    service: &ListenService,
    token: Option<&TokenValue>,
    staging: &mut Staging,
) -> Result<()> {
    let manager = env.services;
    let (Some(file), Some(text)) = (manager.file(env), manager.text(service, env)) else {
        // check_listen_service refused this before anything was planned.
        return Ok(());
    };
    let edit = staging.file(&file, Format::Service)?;
    let before_client = edit.before.as_deref().map(client_of_service);
    if let Some(None) = before_client {
        return Err(SetupError::NotBatons {
            path: edit.path.clone(),
            what: "listen service",
        }
        .into());
    }
    let changed = edit.after.as_deref() != Some(&text);
    if changed {
        let wake = service.client.wake_command(None).join(" ");
        edit.changes.push(match before_client.flatten() {
            None => format!("add the listen service: baton listen --wake -- {wake}"),
            Some(other) if other != service.client => format!(
                "update the listen service: it wakes {} instead of {other}",
                service.client
            ),
            Some(_) => format!("update the listen service: baton listen --wake -- {wake}"),
        });
        edit.after = Some(text);
    }
    let variable = service.hub.token_env();
    match token {
        Some(token) => {
            let edit = staging.file(&service.token_file, Format::Secret)?;
            if edit.after.as_deref() != Some(token.expose()) {
                edit.changes
                    .push(format!("write the token from ${variable} (mode 0600)"));
                edit.after = Some(token.expose().to_string());
            }
        }
        None if !service.token_file.is_file() => staging.notes.push(format!(
            "${variable} is not set here, so the service has no token yet: set it and run \
             this setup again, or write the token into {} yourself (mode 0600)",
            service.token_file.display()
        )),
        None => {}
    }
    if changed {
        staging.notes.push(format!(
            "start the listen service: {}",
            manager.start_command(&file)
        ));
    }
    Ok(())
}

/// Stages the removal of the listen service when it wakes `client`: its file, the link
/// `systemctl --user enable` made to it, and the token file setup wrote.
pub(super) fn uninstall_listen_service(
    hub: &Home,
    env: &Environment,
    client: Client,
    manifest: &Manifest,
    staging: &mut Staging,
) -> Result<()> {
    let manager = env.services;
    let Some(file) = manager.file(env) else {
        return Ok(());
    };
    let edit = staging.file(&file, Format::Service)?;
    if edit.before.as_deref().and_then(client_of_service) != Some(client) {
        return Ok(());
    }
    edit.changes.push("remove the listen service".to_string());
    edit.after = None;
    if let Some(link) = manager.enable_link(env)
        && let (Ok(target), Ok(unit)) = (fs::canonicalize(&link), fs::canonicalize(&file))
        && target == unit
    {
        let edit = staging.file(&link, Format::Service)?;
        edit.changes
            .push("remove the link `systemctl --user enable` made".to_string());
        edit.after = None;
        // `default.target.wants`, emptied: what `systemctl --user disable` leaves.
        edit.takes_empty_dir = true;
    }
    let token_file = listen_token_file(hub);
    if manifest.record(&token_file).is_some() {
        let edit = staging.file(&token_file, Format::Secret)?;
        if edit.before.is_some() {
            edit.changes.push("remove the token file".to_string());
            edit.after = None;
        }
    }
    staging.notes.push(format!(
        "stop the listen service if it runs: {}",
        manager.stop_command()
    ));
    Ok(())
}

/// `%` doubled: systemd reads `%x` as a specifier in most settings.
fn systemd_specifiers(text: &str) -> String {
    text.replace('%', "%%")
}

/// A double-quoted string for a systemd setting, with C escapes for what would end it.
fn systemd_quoted(text: &str) -> String {
    let mut quoted = String::from("\"");
    for c in systemd_specifiers(text).chars() {
        match c {
            '"' => quoted.push_str("\\\""),
            '\\' => quoted.push_str("\\\\"),
            c if c.is_ascii_control() => quoted.push_str(&format!("\\x{:02x}", c as u32)),
            c => quoted.push(c),
        }
    }
    quoted.push('"');
    quoted
}

/// One word of an `ExecStart=` line: systemd also replaces `$NAME` there, so `$` is doubled,
/// and a word with anything but plain characters is quoted.
fn systemd_word(word: &str) -> String {
    let is_plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+,:@=".contains(c));
    if is_plain {
        word.to_string()
    } else {
        systemd_quoted(word).replace('$', "$$")
    }
}

/// Text for an XML element or comment.
fn xml_text(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::file::lock::LockPolicy;
    use crate::setup::apply::run;
    use crate::setup::manifest::Manifest;
    use crate::setup::plan::plan;
    use crate::setup::{ListenRequest, Wiring};
    use crate::store::files::{FileStore, HomeFiles};

    fn quiet_lock() -> LockPolicy {
        LockPolicy::silent(std::time::Duration::from_secs(1))
    }

    fn service() -> ListenService {
        ListenService {
            client: Client::Claude,
            baton: PathBuf::from("/home/ann/my tools/baton"),
            hub: RemoteHub::new("http://10.0.0.5:7878", "HUB_TOKEN").unwrap(),
            token_file: PathBuf::from("/home/ann/.local/share/baton/listen-token"),
            hub_home: None,
            path: Some("/home/ann/.npm/bin:/usr/bin:/bin".to_string()),
        }
    }

    #[test]
    fn the_command_runs_the_client_s_wake_with_the_token_s_variable_read_from_the_file() {
        let command = service().command();
        assert_eq!(
            command[..6],
            [
                "/home/ann/my tools/baton",
                "listen",
                "--wake",
                "--",
                "/bin/sh",
                "-c"
            ]
        );
        assert_eq!(
            command[6],
            r#"HUB_TOKEN="$(cat "$1")" && export HUB_TOKEN && shift && exec "$@""#
        );
        assert_eq!(
            command[7..9],
            ["baton-wake", "/home/ann/.local/share/baton/listen-token"]
        );
        assert_eq!(command[9..], Client::Claude.wake_command(None)[..]);
    }

    /// The wrapper, run by a real shell as listen would run it (the prompt appended): the
    /// client gets the variable from the file and every argument as it was.
    #[cfg(unix)]
    #[test]
    fn the_wake_wrapper_gives_the_client_the_token_and_its_arguments() {
        let dir = tempfile::tempdir().unwrap();
        let token_file = dir.path().join("token");
        std::fs::write(&token_file, "baton_abc\n").unwrap();
        let mut listen = service();
        listen.token_file = token_file;
        let command = listen.command();
        let output = std::process::Command::new(&command[4])
            .args(&command[5..9])
            .args([
                "/bin/sh",
                "-c",
                r#"printf '%s|' "$HUB_TOKEN" "$@""#,
                "client",
            ])
            .arg("the prompt, with 'quotes'")
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&output.stdout),
            "baton_abc|the prompt, with 'quotes'|"
        );
    }

    #[test]
    fn the_systemd_unit_escapes_what_systemd_would_expand() {
        let mut listen = service();
        listen.hub_home = Some(PathBuf::from("/srv/100% hub"));
        let unit = listen.systemd_unit();
        assert!(unit.starts_with(
            "# baton's listen service for claude, written by `baton setup` (its uninstall \
             removes it)\n[Unit]\n"
        ));
        assert_eq!(client_of_service(&unit), Some(Client::Claude));
        for line in [
            "Environment=\"BATON_URL=http://10.0.0.5:7878\"\n",
            "Environment=\"BATON_TOKEN_FILE=/home/ann/.local/share/baton/listen-token\"\n",
            "Environment=\"BATON_HOME=/srv/100%% hub\"\n",
            "Environment=\"PATH=/home/ann/.npm/bin:/usr/bin:/bin\"\n",
            "ExecStart=\"/home/ann/my tools/baton\" listen --wake -- /bin/sh -c \
             \"HUB_TOKEN=\\\"$$(cat \\\"$$1\\\")\\\" && export HUB_TOKEN && shift && exec \
             \\\"$$@\\\"\" baton-wake /home/ann/.local/share/baton/listen-token claude -p \
             --permission-mode acceptEdits --allowedTools mcp__baton --\n",
            "Restart=always\n",
            "StartLimitIntervalSec=0\n",
            "WantedBy=default.target\n",
        ] {
            assert!(unit.contains(line), "no {line:?} in:\n{unit}");
        }
        assert!(!unit.contains("BATON_TOKEN="), "{unit}");
    }

    #[test]
    fn the_launchd_plist_lists_every_word_and_is_known_as_baton_s() {
        let mut listen = service();
        listen.client = Client::Codex;
        listen.baton = PathBuf::from("/Users/ann/R&D <x>/baton");
        let plist = listen.launchd_plist(Path::new("/Users/ann/Library/Logs/baton-listen.log"));
        assert!(plist.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE plist"));
        assert_eq!(client_of_service(&plist), Some(Client::Codex));
        assert!(plist.contains(
            "\t<key>Label</key>\n\t<string>local.baton.listen</string>\n\t<key>ProgramArguments</key>\n\
             \t<array>\n\t\t<string>/Users/ann/R&amp;D &lt;x&gt;/baton</string>\n\
             \t\t<string>listen</string>\n\t\t<string>--wake</string>\n\t\t<string>--</string>\n\
             \t\t<string>/bin/sh</string>\n"
        ), "{plist}");
        assert!(
            plist.contains(
                "\t\t<string>codex</string>\n\t\t<string>exec</string>\n\
             \t\t<string>--skip-git-repo-check</string>\n\t\t<string>-s</string>\n\
             \t\t<string>workspace-write</string>\n\t\t<string>--</string>\n\t</array>\n"
            ),
            "{plist}"
        );
        assert!(
            plist.contains("\t\t<key>BATON_URL</key>\n\t\t<string>http://10.0.0.5:7878</string>\n")
        );
        assert!(plist.contains("\t<key>KeepAlive</key>\n\t<true/>\n"));
        assert!(plist.ends_with("</dict>\n</plist>\n"));
        // An XML comment holds no `--`.
        let comment = plist.lines().find(|line| line.starts_with("<!--")).unwrap();
        assert!(!comment[4..comment.len() - 3].contains("--"), "{comment}");
    }

    #[test]
    fn only_setup_s_service_files_name_a_client() {
        assert_eq!(client_of_service("[Unit]\nDescription=mine\n"), None);
        assert_eq!(
            client_of_service("# baton's listen service for cursor, …\n"),
            None
        );
    }

    fn remote_wiring(token: Option<&str>) -> Wiring {
        Wiring::Remote {
            baton: PathBuf::from("/opt/baton"),
            hub: RemoteHub::new("http://10.0.0.5:7878", "HUB_TOKEN").unwrap(),
            listen: Some(ListenRequest {
                token: token.map(|token| TokenValue::new(token.to_string())),
                hub_home: None,
            }),
            a2a: None,
        }
    }

    #[test]
    fn a_listen_service_is_planned_for_the_system_s_manager_with_its_token_kept_secret() {
        for (services, file) in [
            (
                ServiceManager::Systemd,
                "xdg/systemd/user/baton-listen.service",
            ),
            (
                ServiceManager::Launchd,
                "home/Library/LaunchAgents/local.baton.listen.plist",
            ),
        ] {
            let dir = tempfile::tempdir().unwrap();
            let env = Environment {
                home: dir.path().join("home"),
                xdg_config_home: Some(dir.path().join("xdg")),
                services,
                ..Environment::default()
            };
            let hub = Home::new(dir.path().join("hub"));
            let wiring = remote_wiring(Some("baton_secret"));
            let plan = plan(
                &FileStore::new(hub.clone(), quiet_lock()),
                &hub,
                &env,
                &Manifest::default(),
                Client::Gemini,
                &wiring,
            )
            .unwrap();
            assert!(plan.agent.is_none() && plan.registration.is_none());
            assert_eq!(plan.hub.as_deref(), Some("http://10.0.0.5:7878"));
            let service = plan
                .files
                .iter()
                .find(|edit| edit.path == dir.path().join(file))
                .unwrap_or_else(|| panic!("no {file} in {:?}", plan.files));
            let text = service.after.as_deref().unwrap();
            assert_eq!(client_of_service(text), Some(Client::Gemini));
            assert!(text.contains("gemini"), "{text}");
            let token = plan
                .files
                .iter()
                .find(|edit| edit.path == listen_token_file(&hub))
                .unwrap();
            assert!(token.is_secret() && token.diff().is_empty());
            for edit in plan.files.iter().filter(|edit| !edit.is_secret()) {
                let text = edit.after.as_deref().unwrap_or_default();
                assert!(!text.contains("baton_secret"), "{}", edit.path.display());
            }
            assert!(
                plan.notes
                    .iter()
                    .any(|note| note.starts_with("start the listen service: ")),
                "{:?}",
                plan.notes
            );
        }
    }

    #[test]
    fn a_listen_service_is_refused_without_a_manager_or_for_two_clients() {
        let dir = tempfile::tempdir().unwrap();
        let hub = Home::new(dir.path().join("hub"));
        let wiring = remote_wiring(None);
        let now = crate::time::now();
        let mut env = Environment {
            home: dir.path().join("home"),
            services: ServiceManager::Unknown,
            ..Environment::default()
        };
        let refused = |env: &Environment, clients: &[Client]| {
            let lock = LockPolicy::silent(std::time::Duration::from_secs(1));
            run(
                &FileStore::new(hub.clone(), lock),
                &HomeFiles::new(hub.clone(), lock),
                env,
                clients,
                &wiring,
                false,
                now,
            )
            .unwrap_err()
            .to_string()
        };
        assert!(refused(&env, &[Client::Codex]).contains("neither"));
        env.services = ServiceManager::Systemd;
        assert!(refused(&env, &[Client::Codex, Client::Claude]).contains("wakes one client"));
    }
}
