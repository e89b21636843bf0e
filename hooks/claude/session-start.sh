#!/bin/sh
# Claude Code SessionStart hook: puts the agent's baton inbox in its context as a session starts.
# The agent's name comes from BATON_AGENT (default: claude); set BATON_BIN when baton is
# not on PATH. The client's turn always goes on: this script exits 0 whatever happens.
: "${BATON_AGENT:=claude}"
export BATON_AGENT
baton="${BATON_BIN:-baton}"
command -v "$baton" >/dev/null 2>&1 || exit 0
"$baton" hook session-start --client claude || true
exit 0
