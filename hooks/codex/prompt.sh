#!/bin/sh
# Codex UserPromptSubmit hook: puts the agent's baton inbox in its context on each prompt.
# The agent's name comes from BATON_AGENT (default: codex); set BATON_BIN when baton is
# not on PATH. The client's turn always goes on: this script exits 0 whatever happens.
: "${BATON_AGENT:=codex}"
export BATON_AGENT
baton="${BATON_BIN:-baton}"
command -v "$baton" >/dev/null 2>&1 || exit 0
"$baton" hook prompt --client codex || true
exit 0
