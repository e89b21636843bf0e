// The opencode plugin's logic (hooks/opencode/baton.js) under node's own test runner,
// against a fake opencode `client` and a fake `baton` on a temporary PATH. Run by
// tests/it/opencode.rs (so by `cargo test`) when node is on the machine.
//
//   node --test tests/opencode/

import { test, beforeEach, afterEach } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

import plugin, { batonHooks, follow } from "../../hooks/opencode/baton.js";

let dir;
let savedPath;

// The fake baton logs each run (its arguments and stdin) and answers `hook EVENT` with the
// file answers/EVENT when there is one (nothing otherwise); `hook follow` prints the lines
// of follow.txt, then waits for its stdin to close. It logs the hub it was given, BATON_URL
// and BATON_TOKEN, to env.log.
const FAKE = `#!/bin/sh
dir="$(dirname "$0")"
case "$*" in
  *"hook follow"*)
    printf '%s\\t\\n' "$*" >> "$dir/runs.log"
    cat "$dir/follow.txt" 2>/dev/null
    cat > /dev/null
    exit 0 ;;
esac
input="$(cat)"
printf '%s\\t%s\\n' "$*" "$input" >> "$dir/runs.log"
printf '%s %s\\n' "\${BATON_URL-unset}" "\${BATON_TOKEN-unset}" >> "$dir/env.log"
for event in session-start prompt stop; do
  case " $* " in
    *" hook $event "*)
      # As baton does: a stop hook already active lets the agent stop.
      case "$event $input" in *'stop'*'"stop_hook_active":true'*) exit 0 ;; esac
      [ -f "$dir/answers/$event" ] && cat "$dir/answers/$event"
      exit 0 ;;
  esac
done
exit 0
`;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "baton-plugin-"));
  fs.mkdirSync(path.join(dir, "bin"));
  fs.mkdirSync(path.join(dir, "bin", "answers"));
  savedPath = process.env.PATH;
});

afterEach(() => {
  process.env.PATH = savedPath;
  fs.rmSync(dir, { recursive: true, force: true });
});

function fakeBaton() {
  const program = path.join(dir, "bin", "baton");
  fs.writeFileSync(program, FAKE, { mode: 0o755 });
  process.env.PATH = `${path.join(dir, "bin")}:/usr/bin:/bin`;
}

function answer(event, value) {
  fs.writeFileSync(path.join(dir, "bin", "answers", event), JSON.stringify(value) + "\n");
}

function runs() {
  const log = path.join(dir, "bin", "runs.log");
  if (!fs.existsSync(log)) return [];
  return fs
    .readFileSync(log, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => {
      const [args, input] = line.split("\t");
      return { args, input: input ? JSON.parse(input) : null };
    });
}

/** A fake opencode client that records each prompt it is asked for. */
function fakeClient() {
  const prompts = [];
  return {
    prompts,
    session: {
      promptAsync: async (request) => {
        prompts.push(request);
        return {};
      },
    },
  };
}

async function systemFor(hooks, sessionID) {
  const output = { system: ["opencode's own"] };
  await hooks["experimental.chat.system.transform"]({ sessionID }, output);
  return output.system;
}

const idle = (sessionID) => ({ event: { type: "session.idle", properties: { sessionID } } });

test("the inbox joins the system prompt at session start and before each model call", async () => {
  fakeBaton();
  answer("session-start", { context: "baton: start context" });
  answer("prompt", { context: "baton: prompt context" });
  const { hooks } = batonHooks({ client: fakeClient(), directory: dir });
  assert.deepEqual(await systemFor(hooks, "s1"), ["opencode's own", "baton: start context"]);
  assert.deepEqual(await systemFor(hooks, "s1"), ["opencode's own", "baton: prompt context"]);
  const events = runs().map((run) => run.args);
  assert.deepEqual(events, [
    "hook session-start --client opencode",
    "hook prompt --client opencode",
  ]);
  assert.equal(runs()[0].input.cwd, dir);
});

test("nothing joins the system prompt when the inbox is empty", async () => {
  fakeBaton();
  const { hooks } = batonHooks({ client: fakeClient(), directory: dir });
  assert.deepEqual(await systemFor(hooks, "s1"), ["opencode's own"]);
  assert.deepEqual(await systemFor(hooks, "s1"), ["opencode's own"]);
});

test("the wiring names the agent and the hub for every run", async () => {
  fakeBaton();
  answer("prompt", { context: "x" });
  const { hooks } = batonHooks(
    { client: fakeClient(), directory: dir },
    { agent: "oc", home: path.join(dir, "hub") },
  );
  await systemFor(hooks, "s1");
  assert.equal(runs()[0].args, "--as oc hook session-start --client opencode");
});

test("a remote wiring gives baton the hub's URL and the token from the named variable", async () => {
  fakeBaton();
  answer("prompt", { context: "x" });
  const wiring = { agent: null, home: null, url: "http://hub:7878", tokenEnv: "HUB_TOKEN_TEST" };
  const saved = process.env.HUB_TOKEN_TEST;
  process.env.HUB_TOKEN_TEST = "baton_secret";
  try {
    const { hooks } = batonHooks({ client: fakeClient(), directory: dir }, wiring);
    await systemFor(hooks, "s1");
    delete process.env.HUB_TOKEN_TEST;
    await systemFor(hooks, "s1");
  } finally {
    if (saved === undefined) delete process.env.HUB_TOKEN_TEST;
    else process.env.HUB_TOKEN_TEST = saved;
  }
  // The token is the identity: no --as.
  assert.equal(runs()[0].args, "hook session-start --client opencode");
  const env = fs.readFileSync(path.join(dir, "bin", "env.log"), "utf8").split("\n");
  assert.equal(env[0], "http://hub:7878 baton_secret");
  assert.equal(env[1], "http://hub:7878 unset");
});

test("an idle session with work waiting is prompted once more, and no more in a row", async () => {
  fakeBaton();
  answer("stop", { prompt: "baton: 1 task is still waiting" });
  const client = fakeClient();
  const { hooks } = batonHooks({ client, directory: dir });
  await hooks.event(idle("s1"));
  assert.equal(client.prompts.length, 1);
  assert.deepEqual(client.prompts[0], {
    path: { id: "s1" },
    body: { parts: [{ type: "text", text: "baton: 1 task is still waiting" }] },
  });
  // The turn the plugin started reaches opencode as a message, then the session idles
  // again: the stop hook is told a stop hook is already active, as the others are.
  await hooks["chat.message"]({ sessionID: "s1" }, {});
  await hooks.event(idle("s1"));
  const stops = runs().filter((run) => run.args.includes("hook stop"));
  assert.deepEqual(
    stops.map((run) => run.input.stop_hook_active),
    [false, true],
  );
  assert.equal(client.prompts.length, 1, "one re-prompt in a row");
  // Told nothing, the plugin counts afresh: the next idle may prompt again.
  await hooks.event(idle("s1"));
  assert.equal(client.prompts.length, 2);
});

test("a user's message in between lets the stop prompt once more", async () => {
  fakeBaton();
  answer("stop", { prompt: "again" });
  const { hooks } = batonHooks({ client: fakeClient(), directory: dir });
  await hooks.event(idle("s1"));
  await hooks["chat.message"]({ sessionID: "s1" }, {}); // the plugin's own turn
  await hooks["chat.message"]({ sessionID: "s1" }, {}); // the user's
  await hooks.event(idle("s1"));
  const stops = runs().filter((run) => run.args.includes("hook stop"));
  assert.deepEqual(
    stops.map((run) => run.input.stop_hook_active),
    [false, false],
  );
});

test("no prompt on idle when nothing waits", async () => {
  fakeBaton();
  const client = fakeClient();
  const { hooks } = batonHooks({ client, directory: dir });
  await hooks.event(idle("s1"));
  await hooks.event({ event: { type: "message.updated", properties: {} } });
  assert.equal(client.prompts.length, 0);
});

test("silence when baton is missing from PATH", async () => {
  process.env.PATH = path.join(dir, "nowhere");
  const client = fakeClient();
  const { hooks } = batonHooks({ client, directory: dir });
  assert.deepEqual(await systemFor(hooks, "s1"), ["opencode's own"]);
  await hooks.event(idle("s1"));
  await hooks["chat.message"]({ sessionID: "s1" }, {});
  assert.equal(client.prompts.length, 0);
  const child = follow({}, dir, () => assert.fail("no hand-over without baton"));
  await new Promise((resolve) => setTimeout(resolve, 100));
  if (child) child.kill();
  // The entry point itself neither throws nor needs baton.
  const entry = await plugin.server({ client, directory: dir });
  assert.equal(typeof entry.event, "function");
  assert.equal(plugin.setup, plugin.server);
  assert.equal(plugin.id, "baton");
});

test("a pushed hand-over prompts an idle session with the inbox", async () => {
  fakeBaton();
  answer("prompt", { context: "baton: T-4 is yours" });
  fs.writeFileSync(path.join(dir, "bin", "follow.txt"), '{"task":"T-4","since":"x"}\n');
  const client = fakeClient();
  const { hooks, pushed } = batonHooks({ client, directory: dir });
  await hooks.event(idle("s1"));
  assert.equal(client.prompts.length, 0, "nothing waited yet");
  const seen = new Promise((resolve) => {
    const child = follow({}, dir, async (handover) => {
      await pushed(handover);
      child.kill();
      resolve(handover);
    });
  });
  assert.deepEqual(await seen, { task: "T-4", since: "x" });
  assert.equal(client.prompts.length, 1);
  assert.equal(client.prompts[0].body.parts[0].text, "baton: T-4 is yours");
  assert.ok(runs().some((run) => run.args === "hook follow --client opencode"));
});

test("a push while the session is busy waits for it to go idle", async () => {
  fakeBaton();
  answer("prompt", { context: "baton: T-5 is yours" });
  const client = fakeClient();
  const { hooks, pushed } = batonHooks({ client, directory: dir });
  await systemFor(hooks, "s1"); // a model call: busy
  await pushed({ task: "T-5" });
  assert.equal(client.prompts.length, 0);
  await hooks.event(idle("s1"));
  assert.equal(client.prompts.length, 1);
  assert.equal(client.prompts[0].body.parts[0].text, "baton: T-5 is yours");
});

test("a push before any session prompts nothing: the first model call shows the inbox", async () => {
  fakeBaton();
  answer("session-start", { context: "baton: T-6 is yours" });
  answer("prompt", { context: "baton: T-6 is yours" });
  answer("stop", {});
  const client = fakeClient();
  const { hooks, pushed } = batonHooks({ client, directory: dir });
  await pushed({ task: "T-6" });
  assert.deepEqual(await systemFor(hooks, "s1"), ["opencode's own", "baton: T-6 is yours"]);
  await hooks.event(idle("s1"));
  assert.equal(client.prompts.length, 0, "no prompt for what the session was shown");
});
