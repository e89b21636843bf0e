// The web board of `baton serve`: the login, and where the page is, loaded before app.js (plain script: its
// functions are the page's, as app.js's are).
'use strict';

// ---- the login, and where the page is

// The login token is kept in localStorage, which every tab of this browser shares for this
// origin (scheme, host, port) and which outlives the tab: a link from an alert (Slack,
// ntfy) opens a new tab, and that tab must be logged in, as sessionStorage (one tab's own)
// left it logged out. What that costs, and why it is acceptable here:
// - Any script of this origin can read it. The only script this origin runs is this file:
//   the server serves nothing else here, its Content-Security-Policy allows only its own
//   script (no inline script, no eval, no other origin), and every word a participant wrote
//   is set as text, never markup. A script that could read the storage could as well act
//   with the token held in memory, so sessionStorage would protect nothing more.
// - It lasts on disk in the browser's profile. The server bounds that: the login ends once
//   unused for its time to live (12 hours unless `serve --login-ttl`), at `baton token rm`,
//   or at "Log out" here, and the page drops it at the first refusal.
// - It is never a cookie: the browser sends it only when this script does, as a bearer
//   header, so no other site can make a request carry it (no cross-site request forgery),
//   and the server's Host check keeps a rebound name from reading the page's answers.
function storeToken(token) {
  try {
    localStorage.setItem(TOKEN_KEY, token);
  } catch (_) {
    // Storage refused (a private window that allows none): this tab alone keeps it.
  }
}

function storedToken() {
  try {
    return localStorage.getItem(TOKEN_KEY);
  } catch (_) {
    return null;
  }
}

function forgetToken(token) {
  try {
    if (localStorage.getItem(TOKEN_KEY) === token) localStorage.removeItem(TOKEN_KEY);
  } catch (_) {
    // Nothing stored, nothing to forget.
  }
}

/** A task id as links and the CLI write it (`T-8`, `t-8`, `8`), or null. */
function taskNumber(text) {
  const match = /^(?:[Tt]-)?([0-9]{1,15})$/.exec(String(text ?? '').trim());
  const id = match ? Number(match[1]) : NaN;
  return Number.isSafeInteger(id) && id > 0 ? id : null;
}

/**
 * What the address asks for: a login token (only ever in the fragment, which no request
 * carries), and the project, task and view, from the fragment (an alert's link:
 * `/#project=P&task=T-8`) or the query (what the page writes: `?project=P&task=8`). The
 * fragment is taken out of the address at once, so the token stays in no history entry.
 */
function readAddress() {
  const fragment = new URLSearchParams(location.hash.replace(/^#/, ''));
  const query = new URLSearchParams(location.search);
  const pick = (name) => fragment.get(name) ?? query.get(name);
  const link = {
    token: fragment.get('token') || null,
    project: pick('project') || null,
    task: taskNumber(pick('task')),
    view: VIEWS.includes(pick('view')) ? pick('view') : null,
  };
  if (location.hash) history.replaceState(null, '', location.pathname + location.search);
  return link;
}

function hasTarget(target) {
  return Boolean(target && (target.project || target.task !== null || target.view));
}

/** The target a link gave this tab before it was logged in, once. */
function takePendingTarget() {
  try {
    const saved = JSON.parse(sessionStorage.getItem(TARGET_KEY) || 'null');
    sessionStorage.removeItem(TARGET_KEY);
    if (!saved || typeof saved !== 'object') return null;
    return {
      project: typeof saved.project === 'string' ? saved.project : null,
      task: taskNumber(saved.task),
      view: VIEWS.includes(saved.view) ? saved.view : null,
    };
  } catch (_) {
    return null;
  }
}

/** Shows the login notice, saying why (in the server's words) and what will open after. */
function loggedOut(why, hint) {
  if (state.token) forgetToken(state.token);
  state.token = null;
  state.session++;
  if (state.stream) state.stream.abort();
  state.stream = null;
  // What this tab showed is what it opens again once logged in.
  if (!hasTarget(state.target) && state.me) {
    state.target = { project: state.project, task: state.task, view: state.view };
  }
  if (hasTarget(state.target)) {
    sessionStorage.setItem(TARGET_KEY, JSON.stringify(state.target));
    history.replaceState(null, '', location.pathname + '?' + targetQuery(state.target));
  }
  $('#login-why').textContent = line(why);
  $('#login-hint').textContent = hint ? 'hint: ' + line(hint) : '';
  $('#login-hint').hidden = !hint;
  const target = state.target;
  $('#login-target').textContent = target && target.task !== null
    ? 'Once you are logged in, this tab opens T-' + target.task +
      (target.project ? ' of project ' + line(target.project) : '') + '.'
    : '';
  $('#login-target').hidden = !(target && target.task !== null);
  show('#login', true);
  show('#app', false);
  show('#logout', false);
  showError('#project-error', null);
  for (const panel of ['#task-panel', '#send-panel', '#message-panel']) show(panel, false);
  setLive('off');
}

function targetQuery(target) {
  const query = new URLSearchParams();
  if (target.project) query.set('project', target.project);
  if (target.view && target.view !== 'board') query.set('view', target.view);
  if (target.task !== null && target.task !== undefined) query.set('task', String(target.task));
  return query.toString();
}

/** Logs in with `token` (pasted, or stored by another tab), and shows the board. */
function logIn(token) {
  storeToken(token);
  state.token = token;
  boot();
}

/** A login token from what was pasted: the URL `baton serve` printed, or the token. */
function pastedToken(text) {
  const value = String(text || '').trim();
  const match = /#(?:.*&)?token=([^&\s]+)/.exec(value);
  if (match) return decodeURIComponent(match[1]);
  return /^[A-Za-z0-9_-]+$/.test(value) ? value : null;
}

async function logOut() {
  try {
    await api('POST', '/api/v1/logout');
  } catch (_) {
    // Refused or unreachable: the login is forgotten here all the same.
  }
  loggedOut('You logged out.');
}

/** Keeps the project, view and open task in the address, so a reload comes back to them. */
function remember() {
  const query = targetQuery({ project: state.project, view: state.view, task: state.task });
  history.replaceState(null, '', location.pathname + (query ? '?' + query : ''));
  if (state.project) sessionStorage.setItem(PROJECT_KEY, state.project);
}
