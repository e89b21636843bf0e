#!/bin/sh
# Gemini CLI SessionStart hook: puts the agent's baton inbox in its context as a session starts.
# The agent's name comes from BATON_AGENT (default: gemini); set BATON_BIN when baton is
# not on PATH. The client's turn always goes on: this script exits 0 whatever happens.
: "${BATON_AGENT:=gemini}"
export BATON_AGENT
baton="${BATON_BIN:-baton}"
if ! command -v "$baton" >/dev/null 2>&1; then
    # Gemini CLI parses stdout as JSON, so even "nothing to say" is an object.
    echo "{}"
    exit 0
fi
"$baton" hook session-start --client gemini || true
exit 0
