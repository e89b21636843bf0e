//! A hub on another machine (SPEC section 13): two private homes stand for two machines, one
//! serving its board on loopback (`baton serve`), the other acting on it with `BATON_URL`
//! and `BATON_TOKEN`, through the real binaries.

mod hosts;
mod leases;
mod listen;
mod tasks;

#[cfg(unix)]
use std::path::Path;
use std::process::Stdio;
#[cfg(unix)]
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use serde_json::Value;

#[cfg(unix)]
use crate::common::http::free_address;
use crate::common::http::{CLOSED, Served, add_token};
use crate::common::remote::{Agent, Hub, HubHome};
use crate::common::{TestEnv, eventually, files_only, run, task_in};

pub use leases::seconds_from_now;
