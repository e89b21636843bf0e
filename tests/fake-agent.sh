#!/usr/bin/env bash
# A stand-in for a coding agent, run as a wake command by tests/it/wake.rs.
#
# Each start appends one line to $FAKE_AGENT_RECORD: the time, the identity and directory it
# was started with, the tasks and unread messages its inbox held (reading the messages), and
# the prompt (its last argument). It then claims and completes those tasks with $FAKE_AGENT_BATON
# and appends an `end` line. By default it looks again until no task is left, as an agent
# told to act on every task would; with $FAKE_AGENT_GATE set, it waits for that file to
# exist, removes it (so the next run waits for it again), and handles only what it first saw.
set -u
record=${FAKE_AGENT_RECORD:?FAKE_AGENT_RECORD is not set}
baton=${FAKE_AGENT_BATON:-baton}
prompt=${!#}

# Looks at the inbox as an agent does (its messages then count as read); sets `seen` to the
# task numbers and `messages` to how many unread messages it held.
look() {
    local inbox
    inbox=$("$baton" --json inbox)
    seen=$(echo "$inbox" | grep -o '"id": [0-9]*' | grep -o '[0-9]*$' | tr '\n' ' ')
    messages=$(echo "$inbox" | grep -c '"seq": ')
}

look
echo "start $(date +%s%N) agent=${BATON_AGENT:-} pwd=$PWD saw=[${seen% }] messages=$messages prompt=$prompt" >>"$record"
if [ -n "${FAKE_AGENT_GATE:-}" ]; then
    for _ in $(seq 600); do
        [ -e "$FAKE_AGENT_GATE" ] && break
        sleep 0.1
    done
    rm -f "$FAKE_AGENT_GATE"
fi
sleep "${FAKE_AGENT_PAUSE:-0.2}"
while [ -n "${seen// /}" ]; do
    for id in $seen; do
        "$baton" claim "$id" >/dev/null &&
            "$baton" done "$id" --result "done by ${BATON_AGENT:-}" >/dev/null
    done
    [ -n "${FAKE_AGENT_GATE:-}" ] && break
    look
done
echo "end $(date +%s%N)" >>"$record"
