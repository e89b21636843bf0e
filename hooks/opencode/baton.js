// baton's plugin for opencode: what the shell hooks give Claude Code, Codex and Gemini CLI.
//
// `baton setup --client opencode` writes this file into opencode's plugin directory (and
// removes it again with `--uninstall`); the WIRING line below is filled in by setup with
// the baton program, the agent and the hub it was set up for. For a hub on another machine
// (`baton setup --url URL --token-env VAR`) it holds the hub's URL and the name of the
// variable that holds the token, and baton is run with BATON_URL and BATON_TOKEN from them.
//
// - Before each model call, the agent's inbox joins the system prompt (`baton hook
//   session-start` for a session's first call, `baton hook prompt` after).
// - When the session goes idle while work waits for the agent, it is prompted once more
//   (`baton hook stop`), at most as many times in a row as baton's stop hooks allow: the
//   hook is told when the last turn was the plugin's own re-prompt, as a client's stop
//   hook is told that a stop hook is already active.
// - Before a tool edits files (the tools in the wiring's `editTools`), `baton hook
//   pre-edit` is asked; an edit of a path another agent reserved is refused by throwing
//   baton's reason, which the model reads as the tool's result.
// - While opencode runs, `baton hook follow` announces the live session and prints a line
//   per hand-over to the agent; an idle session is then prompted with its inbox.
//
// baton is run with argument lists, never through a shell. Its answers are one JSON object
// a line, their text already framed by baton. A missing or failing baton makes the plugin
// do nothing, without a word in the session.

import { spawn } from "node:child_process";

const WIRING = {};

/** The most of one answer read from baton, in bytes (its answers stay under 16 KiB). */
const ANSWER_LIMIT = 64 * 1024;
/** How long a hook may take before its answer is given up (baton answers within 2 s). */
const HOOK_TIMEOUT_MS = 5000;

/** Runs baton with `args`, writes `input` to its stdin, and resolves with its stdout (or
 * null when it cannot be run, fails or takes too long). Never rejects. */
function runBaton(wiring, args, input, directory) {
  return new Promise((resolve) => {
    let child;
    try {
      child = spawn(wiring.program || "baton", commandArgs(wiring, args), {
        cwd: directory || undefined,
        env: batonEnv(wiring),
        stdio: ["pipe", "pipe", "ignore"],
      });
    } catch {
      resolve(null);
      return;
    }
    let out = "";
    let done = false;
    const finish = (value) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve(value);
    };
    const timer = setTimeout(() => {
      try {
        child.kill("SIGKILL");
      } catch {}
      finish(null);
    }, HOOK_TIMEOUT_MS);
    child.on("error", () => finish(null));
    child.stdout.on("data", (chunk) => {
      if (out.length < ANSWER_LIMIT) out += chunk.toString("utf8");
    });
    child.on("close", (code) => finish(code === 0 ? out : null));
    child.stdin.on("error", () => {});
    child.stdin.end(input);
  });
}

function commandArgs(wiring, args) {
  return wiring.agent ? ["--as", wiring.agent, ...args] : args;
}

function batonEnv(wiring) {
  const env = { ...process.env };
  if (wiring.home) env.BATON_HOME = wiring.home;
  if (wiring.store) env.BATON_STORE = wiring.store;
  if (wiring.url) {
    env.BATON_URL = wiring.url;
    // The token is read when baton runs, never written in this file; without it baton is
    // refused by the hub, and the plugin does nothing.
    const token = wiring.tokenEnv ? process.env[wiring.tokenEnv] : undefined;
    if (token) env.BATON_TOKEN = token;
    else delete env.BATON_TOKEN;
  }
  return env;
}

/** baton's answer, or null when it said nothing or something not its shape. */
function parseAnswer(text) {
  if (!text || !text.trim()) return null;
  try {
    const value = JSON.parse(text.trim().split("\n")[0]);
    return value && typeof value === "object" && !Array.isArray(value) ? value : null;
  } catch {
    return null;
  }
}

/** The hooks for one opencode instance. `wiring` is setup's (or a test's). */
export function batonHooks({ client, directory }, wiring = WIRING) {
  // Per session: whether its first model call happened, whether its last turn was the
  // plugin's own re-prompt, and how many turns the plugin started that opencode has yet to
  // report as a message.
  const sessions = new Map();
  const session = (id) => {
    if (!sessions.has(id)) {
      sessions.set(id, { started: false, reprompted: false, ours: 0, idle: false });
    }
    return sessions.get(id);
  };
  let latest = null;
  let pushWaiting = false;

  const hook = async (event, state) => {
    const input = JSON.stringify({
      cwd: directory || process.cwd(),
      stop_hook_active: Boolean(state && state.reprompted),
    });
    const out = await runBaton(wiring, ["hook", event, "--client", "opencode"], input, directory);
    return parseAnswer(out);
  };

  const prompt = async (id, text) => {
    const state = session(id);
    state.ours += 1;
    state.idle = false;
    const request = { path: { id }, body: { parts: [{ type: "text", text }] } };
    try {
      const api = client && client.session;
      if (api && typeof api.promptAsync === "function") await api.promptAsync(request);
      else if (api && typeof api.prompt === "function") await api.prompt(request);
      else state.ours -= 1;
    } catch {
      state.ours = Math.max(0, state.ours - 1);
    }
  };

  /** A hand-over arrived for the agent: an idle session is prompted with the inbox now; a
   * busy one gets it before its next model call, and is prompted when it goes idle. Before
   * any session (the follower pushes the unseen work waiting when opencode starts), there
   * is no one to prompt: the first session's first model call shows the inbox. */
  const pushed = async () => {
    if (latest === null) return;
    pushWaiting = true;
    if (session(latest).idle) await deliverPush(latest);
  };

  const deliverPush = async (id) => {
    pushWaiting = false;
    const answer = await hook("prompt", null);
    if (answer && typeof answer.context === "string") {
      // New work: the stop rule counts again from here.
      session(id).reprompted = false;
      await prompt(id, answer.context);
    }
  };

  const hooks = {
    "tool.execute.before": async (input, output) => {
      const tool = input && input.tool;
      if (!tool || !Array.isArray(wiring.editTools) || !wiring.editTools.includes(tool)) return;
      const call = JSON.stringify({
        cwd: directory || process.cwd(),
        session_id: input.sessionID,
        tool_name: tool,
        tool_input: (output && output.args) || {},
      });
      const out = await runBaton(wiring, ["hook", "pre-edit", "--client", "opencode"], call, directory);
      const answer = parseAnswer(out);
      if (answer && typeof answer.deny === "string") throw new Error(answer.deny);
    },
    "experimental.chat.system.transform": async (input, output) => {
      const id = input && input.sessionID;
      const state = id ? session(id) : null;
      if (id) latest = id;
      const event = state && !state.started ? "session-start" : "prompt";
      if (state) {
        state.started = true;
        state.idle = false;
      }
      const answer = await hook(event, state);
      if (answer && typeof answer.context === "string" && output && Array.isArray(output.system)) {
        output.system.push(answer.context);
      }
    },
    "chat.message": async (input) => {
      const id = input && input.sessionID;
      if (!id) return;
      latest = id;
      const state = session(id);
      state.idle = false;
      if (state.ours > 0) state.ours -= 1;
      else state.reprompted = false; // the user spoke: a stop may keep it going again
    },
    event: async ({ event } = {}) => {
      if (!event || event.type !== "session.idle") return;
      const id = event.properties && event.properties.sessionID;
      if (!id) return;
      latest = id;
      const state = session(id);
      state.idle = true;
      if (pushWaiting) {
        await deliverPush(id);
        return;
      }
      const answer = await hook("stop", state);
      if (answer && typeof answer.prompt === "string") {
        await prompt(id, answer.prompt);
        state.reprompted = true;
      } else {
        state.reprompted = false;
      }
    },
  };
  return { hooks, pushed };
}

/** Starts `baton hook follow`, which lives as long as its stdin is open (so as long as
 * opencode), and calls `onHandover` for each line it prints. A baton that cannot follow
 * just ends: nothing is retried or said. */
export function follow(wiring, directory, onHandover) {
  let child;
  try {
    child = spawn(
      wiring.program || "baton",
      commandArgs(wiring, ["hook", "follow", "--client", "opencode"]),
      { cwd: directory || undefined, env: batonEnv(wiring), stdio: ["pipe", "pipe", "ignore"] },
    );
  } catch {
    return null;
  }
  child.on("error", () => {});
  child.stdin.on("error", () => {});
  let buffer = "";
  child.stdout.on("data", (chunk) => {
    buffer += chunk.toString("utf8");
    let newline;
    while ((newline = buffer.indexOf("\n")) >= 0) {
      const line = buffer.slice(0, newline);
      buffer = buffer.slice(newline + 1);
      const handover = parseAnswer(line);
      if (handover) Promise.resolve(onHandover(handover)).catch(() => {});
    }
    if (buffer.length > ANSWER_LIMIT) buffer = "";
  });
  // Not waited for: opencode may exit while it runs.
  if (typeof child.unref === "function") child.unref();
  return child;
}

/** opencode's plugin entry (both generations call one of these with the instance's
 * context: `server` in 1.x, `setup` in 2.x). */
async function start(context = {}) {
  const { hooks, pushed } = batonHooks(context, WIRING);
  follow(WIRING, context.directory, pushed);
  return hooks;
}

export default { id: "baton", server: start, setup: start };
