//! The integration test binary: every test runs the real `baton` in a private `BATON_HOME`.
//! One binary (not one per file) keeps link time down; each area has its own module.

mod common;

mod agents;
mod board;
mod channels;
mod clients;
mod clients_woken;
mod delivery;
mod delivery_faces;
mod dependencies;
mod doctor;
mod edges;
mod faults;
mod floors;
mod fuzz;
mod hook;
mod hostile_files;
mod http;
mod log_truth;
mod mail;
mod mcp;
mod mcp_http;
mod opencode;
mod projects;
mod serve;
mod setup;
mod snapshots_human;
mod tokens;
mod untrusted;
mod wake;
mod wake_env;
mod web;
mod webdriver;
