// The web board of `baton serve` (SPEC 12.1): plain script, no framework, nothing fetched
// but the hub's own API.
//
// Every word an agent wrote reaches the page through `line` or `block` and is set as text
// (textContent, text nodes), never as markup (SPEC 10). Those two show control characters
// and bidirectional overrides as visible escapes (`\u{1b}`), as the CLI does, and cut long
// text before it is drawn: a browser laying out a board full of the largest texts baton
// accepts (256 KiB each, or more in a board.json edited by hand) would stall the tab.
'use strict';

const OPEN = ['pending', 'working', 'input_required', 'review_requested', 'changes_requested'];
const FINISHED = ['completed', 'failed', 'canceled'];
const PRIORITIES = ['urgent', 'high', 'normal', 'low'];
const UNSEEN_AFTER_MS = 5 * 60 * 1000;
const TOKEN_KEY = 'baton-token';
const PROJECT_KEY = 'baton-project';
// How many characters of a participant's text are drawn before it is cut: a subject on a
// card, any one-line text elsewhere (a subject caps at 1,000), and a multi-line text, which
// can be shown whole on request.
const CARD_CHARS = 200;
const LINE_CHARS = 1000;
const BLOCK_CHARS = 4000;

const state = {
  token: null,
  me: null,
  projects: [],
  project: null,
  view: 'board',
  task: null,
  showFinished: false,
  agents: [],
  generation: 0,
  refreshTimer: null,
  // The task last drawn, and which of its cut texts were asked for whole ('body', 'result',
  // 'thread-3'), until another task is opened.
  shownTask: null,
  whole: new Set(),
};

// ---- text from participants (SPEC 10; the same rule as crate::text::is_hidden)

function isHidden(code) {
  return code < 0x20 || (code >= 0x7f && code <= 0x9f) ||
    (code >= 0x202a && code <= 0x202e) || (code >= 0x2066 && code <= 0x2069) ||
    code === 0x2028 || code === 0x2029;
}

function escaped(text, keep) {
  let out = '';
  for (const ch of String(text ?? '')) {
    const code = ch.codePointAt(0);
    out += isHidden(code) && !keep.includes(ch) ? '\\u{' + code.toString(16) + '}' : ch;
  }
  return out;
}

/** The first `most` characters (code points) of `text`, and how many it has beyond them. */
function cut(text, most) {
  const whole = String(text ?? '');
  // No string has more characters than UTF-16 units: a short one is whole.
  if (whole.length <= most) return [whole, 0];
  let end = 0;
  for (let count = 0; count < most && end < whole.length; count++) {
    end += whole.codePointAt(end) > 0xffff ? 2 : 1;
  }
  let left = 0;
  for (let at = end; at < whole.length; at++) {
    const unit = whole.charCodeAt(at);
    // The second half of a surrogate pair is no character of its own.
    if (unit < 0xdc00 || unit > 0xdfff) left++;
  }
  return [whole.slice(0, end), left];
}

/** What stands for the `left` characters a cut text does not show. */
function more(left) { return '… ' + left.toLocaleString('en-US') + ' more characters'; }

/** One-line text: everything hidden escaped, newlines too; cut after `most` characters. */
function line(text, most = LINE_CHARS) {
  const [kept, left] = cut(text, most);
  return escaped(kept, '') + (left ? more(left) : '');
}

/**
 * Multi-line text, as nodes: newlines and tabs kept, everything else hidden escaped; cut
 * after BLOCK_CHARS characters, with a button that draws the rest, unless `key` (which
 * names the text within its task) was asked for whole.
 */
function block(text, key) {
  const [kept, left] = state.whole.has(key) ? [String(text ?? ''), 0] : cut(text, BLOCK_CHARS);
  const nodes = [escaped(kept, '\n\t')];
  if (left) {
    nodes.push(el('button', { type: 'button', class: 'link more', 'data-whole': key }, more(left) + ' (show all)'));
  }
  return nodes;
}

// ---- small DOM helpers

const $ = (selector) => document.querySelector(selector);

/** An element with attributes and children; strings become text nodes. */
function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === 'class') node.className = value;
    else node.setAttribute(key, value === true ? '' : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(typeof child === 'string' ? document.createTextNode(child) : child);
  }
  return node;
}

function show(selector, visible) { $(selector).hidden = !visible; }

function age(at) {
  const seconds = Math.max(0, Math.floor((Date.now() - Date.parse(at)) / 1000));
  if (seconds < 60) return seconds + 's';
  if (seconds < 3600) return Math.floor(seconds / 60) + 'm';
  if (seconds < 86400) return Math.floor(seconds / 3600) + 'h';
  return Math.floor(seconds / 86400) + 'd';
}

function when(at) {
  if (!at) return '—';
  return el('time', { datetime: at, title: at }, new Date(at).toLocaleString() + ' (' + age(at) + ' ago)');
}

// ---- the API

class ApiError extends Error {
  constructor(message, hint, status) {
    super(message);
    this.hint = hint;
    this.status = status;
  }
}

async function api(method, path, body) {
  const init = { method, headers: { Authorization: 'Bearer ' + state.token }, cache: 'no-store' };
  if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(path, init);
  } catch (error) {
    throw new ApiError('the server does not answer (' + error.message + ')');
  }
  const text = await response.text();
  let value = null;
  try {
    value = text ? JSON.parse(text) : null;
  } catch (_) {
    // The log may come as JSON lines, one record each.
    try {
      value = text.split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l));
    } catch (_) {
      value = null;
    }
  }
  if (response.status === 401) {
    loggedOut('the server did not take this tab\'s token (' + ((value && value.error) || '401') + ')');
  }
  if (!response.ok) {
    throw new ApiError((value && value.error) || 'HTTP ' + response.status, value && value.hint, response.status);
  }
  return value;
}

const projectPath = (rest) => '/api/v1/projects/' + encodeURIComponent(state.project) + rest;

/** Shows an error (and its hint) in the element `selector`, or hides it for `null`. */
function showError(selector, error) {
  const node = $(selector);
  node.replaceChildren();
  if (!error) {
    node.hidden = true;
    return;
  }
  node.append(el('span', { class: 'message' }, 'error: ' + line(error.message)));
  if (error.hint) node.append(el('span', { class: 'hint' }, 'hint: ' + line(error.hint)));
  node.hidden = false;
}

// ---- login and where the page is

function takeToken() {
  const match = /(?:^#|&)token=([^&]*)/.exec(location.hash);
  if (match) {
    sessionStorage.setItem(TOKEN_KEY, decodeURIComponent(match[1]));
    history.replaceState(null, '', location.pathname + location.search);
  }
  return sessionStorage.getItem(TOKEN_KEY);
}

function loggedOut(why) {
  sessionStorage.removeItem(TOKEN_KEY);
  state.token = null;
  $('#login-why').textContent = why;
  show('#login', true);
  show('#app', false);
  for (const panel of ['#task-panel', '#send-panel', '#message-panel']) show(panel, false);
  setLive('off');
}

/** Keeps the project, view and open task in the address, so a reload comes back to them. */
function remember() {
  const query = new URLSearchParams();
  if (state.project) query.set('project', state.project);
  if (state.view !== 'board') query.set('view', state.view);
  if (state.task !== null) query.set('task', String(state.task));
  history.replaceState(null, '', location.pathname + (query.toString() ? '?' + query : ''));
  if (state.project) sessionStorage.setItem(PROJECT_KEY, state.project);
}

// ---- the views

function byPriority(a, b) {
  return PRIORITIES.indexOf(a.priority) - PRIORITIES.indexOf(b.priority) || a.id - b.id;
}

function isUnseen(task) {
  const delivery = task.delivery;
  return OPEN.includes(task.status) && delivery && ['queued', 'woken'].includes(delivery.state) &&
    Date.now() - Date.parse(delivery.since) > UNSEEN_AFTER_MS;
}

function marks(task) {
  const found = [];
  if (task.blocked_by && task.blocked_by.length) {
    found.push(['blocked', 'blocked by ' + task.blocked_by.map((id) => 'T-' + id).join(', ')]);
  }
  if (task.stalled) found.push(['stalled', 'stalled']);
  if (isUnseen(task)) found.push(['unseen', 'unseen ' + age(task.delivery.since)]);
  if (task.turn && task.reason !== 'assigned') found.push(['turn', 'waiting for ' + line(task.turn)]);
  if (task.archived) found.push(['archived', 'archived']);
  return found.map(([kind, text]) => el('span', { class: 'mark mark-' + kind, 'data-mark': kind }, text));
}

function card(task) {
  const priority = PRIORITIES.includes(task.priority) ? task.priority : 'normal';
  const node = el('article', {
    class: 'card priority-' + priority + (state.me && task.turn === state.me ? ' my-turn' : ''),
    'data-task': task.id,
    'data-status': task.status,
    tabindex: 0,
  },
  el('div', { class: 'card-head' },
    el('span', { class: 'id' }, 'T-' + task.id),
    el('span', { class: 'priority' }, line(task.priority)),
    el('span', { class: 'age', title: task.created_at }, age(task.created_at))),
  el('div', { class: 'subject' }, line(task.subject, CARD_CHARS)),
  el('div', { class: 'route' }, line(task.from) + ' → ' + line(task.to)),
  el('div', { class: 'marks' }, marks(task)));
  node.addEventListener('click', () => openTask(task.id));
  node.addEventListener('keydown', (event) => { if (event.key === 'Enter') openTask(task.id); });
  return node;
}

function column(status, tasks) {
  const mine = tasks.filter((task) => task.status === status).sort(byPriority);
  return el('section', { class: 'column', 'data-status': status },
    el('h2', {}, status.replaceAll('_', ' '), el('span', { class: 'count' }, String(mine.length))),
    mine.map(card));
}

function renderBoard(tasks) {
  $('#columns').replaceChildren(...OPEN.map((status) => column(status, tasks)));
  $('#finished').replaceChildren(...FINISHED.map((status) => column(status, tasks)));
  $('#finished').hidden = !state.showFinished;
  $('#toggle-finished').textContent = state.showFinished ? 'Hide finished' : 'Show finished';
}

function renderAgents(agents) {
  const rows = (agents.agents || []).map((agent) => el('tr', { 'data-agent': agent.name },
    el('th', {}, line(agent.name)),
    el('td', {}, String(agent.open)),
    el('td', {}, String(agent.working)),
    el('td', {}, String(agent.inbox)),
    el('td', { class: agent.unseen ? 'warn' : null }, String(agent.unseen)),
    el('td', {}, agent.last_seen ? age(agent.last_seen) + ' ago' : 'never'),
    el('td', {}, agent.wake ? 'yes' : '—'),
    el('td', {}, line((agent.clients || []).join(', ')) || '—'),
    el('td', {}, line((agent.skills || []).join(', ')) || '—'),
    el('td', { class: 'strengths' }, line(agent.strengths) || '—')));
  $('#agents tbody').replaceChildren(...rows);
  $('#agent-problems').replaceChildren(...(agents.problems || []).map(
    (problem) => el('li', {}, line(typeof problem === 'string' ? problem : JSON.stringify(problem)))));
}

function renderActivity(records) {
  const items = (records || []).slice().reverse().map((record) => el('li', { 'data-action': record.action },
    el('time', { datetime: record.at, title: record.at }, age(record.at)),
    el('span', { class: 'actor' }, line(record.actor)),
    el('span', { class: 'action' }, line(record.action)),
    record.task ? el('button', { type: 'button', class: 'link', 'data-open': record.task }, 'T-' + record.task) : null,
    record.to_status ? el('span', { class: 'status' },
      (record.from_status ? line(record.from_status) + ' → ' : '') + line(record.to_status)) : null,
    record.text ? el('span', { class: 'text' }, line(record.text)) : null));
  $('#activity').replaceChildren(...items);
}

/** A line of the task's fields; none for an empty value. */
function field(name, value) {
  if (value === null || value === undefined || value === '') return [];
  return [el('dt', {}, name), el('dd', { 'data-field': name }, value)];
}

function renderTask(task) {
  state.shownTask = task;
  $('#task-title').textContent = 'T-' + task.id + ' ' + line(task.subject);
  const delivery = task.delivery;
  const detail = [
    el('dl', { class: 'fields' },
      field('status', line(task.status)),
      field('priority', line(task.priority)),
      field('from', line(task.from)),
      field('to', line(task.to)),
      field('reviewer', task.review ? line(task.reviewer || task.from) : 'no review'),
      field('turn', task.turn ? line(task.turn) + ' (' + line(task.reason) + ')' : null),
      field('after', (task.after || []).map((id) => 'T-' + id).join(', ')),
      field('blocked by', (task.blocked_by || []).map((id) => 'T-' + id).join(', ')),
      field('skill', task.skill ? line(task.skill) : null),
      field('created', when(task.created_at)),
      field('updated', when(task.updated_at)),
      field('claimed', task.claimed_at ? when(task.claimed_at) : null),
      field('lease until', task.lease_expires_at ? when(task.lease_expires_at) : null),
      field('delivery', delivery
        ? 'to ' + line(delivery.to) + ': ' + line(delivery.state) + ' since ' + age(delivery.since) + ' ago' +
          (delivery.woken_at ? ', woken ' + age(delivery.woken_at) + ' ago' : '') +
          (delivery.seen_at ? ', seen ' + age(delivery.seen_at) + ' ago' : '')
        : 'none'),
      marks(task).length ? field('marks', el('span', { class: 'marks' }, marks(task))) : null),
    el('h3', {}, 'body'),
    el('pre', { class: 'text', id: 'task-body' }, task.body ? block(task.body, 'body') : '—'),
    el('h3', {}, 'files'),
    (task.files || []).length
      ? el('ul', { class: 'files' }, task.files.map((file) => el('li', {}, line(file))))
      : el('p', { class: 'none' }, 'none'),
    task.result ? [el('h3', {}, 'result'), el('pre', { class: 'text', id: 'task-result' }, block(task.result, 'result'))] : null,
    el('h3', {}, 'thread'),
    el('ol', { class: 'thread', id: 'thread' }, (task.thread || []).map((entry, index) => el('li', { 'data-kind': entry.kind },
      el('div', { class: 'entry-head' },
        el('span', { class: 'by' }, line(entry.by)),
        el('span', { class: 'kind' }, line(entry.kind)),
        when(entry.at)),
      entry.text ? el('pre', { class: 'text' }, block(entry.text, 'thread-' + index)) : null))),
    (task.thread || []).length ? null : el('p', { class: 'none' }, 'no entries yet'),
  ];
  $('#task-detail').replaceChildren(...detail.flat().filter(Boolean));
  const open = OPEN.includes(task.status);
  $('#answer').hidden = task.status !== 'input_required';
  $('#approve').hidden = task.status !== 'review_requested';
  $('#request-changes').hidden = task.status !== 'review_requested';
  $('#cancel').hidden = !open;
  $('#reassign-row').hidden = !open || task.status === 'review_requested';
  $('#task-actions').hidden = !open;
}

/** Fills a <select> with names, keeping what was chosen. */
function fillNames(selector, names) {
  const select = $(selector);
  const chosen = select.value;
  select.replaceChildren(...names.map((name) => el('option', { value: name }, line(name))));
  if (names.includes(chosen)) select.value = chosen;
}

// ---- refreshing what is shown

function scheduleRefresh() {
  clearTimeout(state.refreshTimer);
  state.refreshTimer = setTimeout(refresh, 100);
}

async function refresh() {
  if (!state.token || !state.project) return;
  const generation = ++state.generation;
  const current = () => generation === state.generation;
  try {
    const agents = await api('GET', projectPath('/agents'));
    if (!current()) return;
    state.agents = (agents.agents || []).map((agent) => agent.name);
    fillNames('#send-to', state.agents.filter((name) => name !== state.me));
    fillNames('#message-to', ['@all', ...state.agents.filter((name) => name !== state.me)]);
    fillNames('#reassign-to', state.agents);
    if (state.view === 'board') {
      const tasks = await api('GET', projectPath('/board' + (state.showFinished ? '?all=true' : '')));
      if (current()) renderBoard(tasks);
    } else if (state.view === 'agents') {
      renderAgents(agents);
    } else {
      const records = await api('GET', projectPath('/log?n=50'));
      if (current()) renderActivity(records);
    }
    if (state.task !== null) {
      const task = await api('GET', projectPath('/tasks/' + state.task));
      if (current()) renderTask(task);
    }
    if (current()) showError('#project-error', null);
  } catch (error) {
    if (current() && state.token) showError('#project-error', error);
  }
}

async function loadProjects() {
  const projects = await api('GET', '/api/v1/projects');
  state.projects = (projects || []).map((project) => project.id);
  const picker = $('#project');
  fillNames('#project', state.projects);
  const wanted = [new URLSearchParams(location.search).get('project'), state.project,
    sessionStorage.getItem(PROJECT_KEY)].find((id) => id && state.projects.includes(id));
  state.project = wanted || state.projects[0] || null;
  if (state.project) picker.value = state.project;
  if (!state.project) showError('#project-error', new ApiError('no projects on this hub yet', 'baton project init makes one'));
}

// ---- acting

async function act(action) {
  const text = $('#action-text').value;
  let body = {};
  if (action === 'reassign') body = { to: $('#reassign-to').value };
  else if (text.trim()) body = { text };
  try {
    await api('POST', projectPath('/tasks/' + state.task + '/' + action), body);
    $('#action-text').value = '';
    showError('#task-error', null);
    scheduleRefresh();
  } catch (error) {
    showError('#task-error', error);
  }
}

async function submitSend(event) {
  event.preventDefault();
  const body = {
    to: $('#send-to').value,
    subject: $('#send-subject').value,
    priority: $('#send-priority').value,
    review: $('#send-review').checked,
  };
  if ($('#send-body').value) body.body = $('#send-body').value;
  try {
    const sent = await api('POST', projectPath('/tasks'), body);
    $('#send-form').reset();
    showError('#send-error', null);
    show('#send-panel', false);
    if (sent && sent.task) openTask(sent.task.id);
  } catch (error) {
    showError('#send-error', error);
  }
}

async function submitMessage(event) {
  event.preventDefault();
  try {
    await api('POST', projectPath('/messages'), { to: $('#message-to').value, text: $('#message-text').value });
    $('#message-form').reset();
    showError('#message-error', null);
    show('#message-panel', false);
  } catch (error) {
    showError('#message-error', error);
  }
}

function openTask(id) {
  if (state.task !== id) {
    state.whole.clear();
    state.shownTask = null;
    $('#action-text').value = '';
    showError('#task-error', null);
    $('#task-detail').replaceChildren();
    $('#task-title').textContent = 'T-' + id;
  }
  state.task = id;
  show('#task-panel', true);
  remember();
  refresh();
}

function closeTask() {
  state.task = null;
  show('#task-panel', false);
  remember();
}

function setView(view) {
  state.view = ['board', 'agents', 'activity'].includes(view) ? view : 'board';
  for (const name of ['board', 'agents', 'activity']) {
    show('#' + name + '-view', name === state.view);
    $('#tab-' + name).classList.toggle('active', name === state.view);
  }
  remember();
  refresh();
}

// ---- live: the event stream, read with fetch (EventSource cannot send the bearer header)

function setLive(mode) {
  const node = $('#live');
  node.className = 'live ' + mode;
  node.dataset.live = mode;
  node.textContent = { on: 'live', off: 'offline', retry: 'reconnecting…' }[mode];
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function listen() {
  let delay = 500;
  while (state.token) {
    try {
      const response = await fetch('/api/v1/events', {
        headers: { Authorization: 'Bearer ' + state.token, Accept: 'text/event-stream' },
        cache: 'no-store',
      });
      if (response.status === 401) {
        loggedOut('the server did not take this tab\'s token');
        return;
      }
      if (!response.ok || !response.body) throw new Error('HTTP ' + response.status);
      setLive('on');
      delay = 500;
      scheduleRefresh(); // whatever changed while the stream was down
      await readEvents(response.body.pipeThrough(new TextDecoderStream()).getReader());
    } catch (_) {
      // Dropped or refused: try again below.
    }
    if (!state.token) return;
    setLive('retry');
    await sleep(delay);
    delay = Math.min(delay * 2, 10000);
  }
}

/** Reads `event:`/`data:` lines until the stream ends; each complete event refreshes. */
async function readEvents(reader) {
  let buffer = '';
  let data = [];
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    let end;
    while ((end = buffer.search(/\r\n|\n|\r/)) >= 0) {
      const text = buffer.slice(0, end);
      buffer = buffer.slice(end + (buffer.startsWith('\r\n', end) ? 2 : 1));
      if (text === '') {
        if (data.length) onEvent(data.join('\n'));
        data = [];
      } else if (text.startsWith('data:')) {
        data.push(text.slice(5).replace(/^ /, ''));
      }
      // `event:` names (always `change`), `id:` and `: keep-alive` comments need nothing.
    }
  }
}

function onEvent(data) {
  let change = null;
  try {
    change = JSON.parse(data);
  } catch (_) {
    return;
  }
  if (change && change.project && !state.projects.includes(change.project)) {
    loadProjects().catch(() => {});
  }
  if (!change || !change.project || change.project === state.project) scheduleRefresh();
}

// ---- start

function wire() {
  for (const tab of document.querySelectorAll('.tab')) {
    tab.addEventListener('click', () => setView(tab.dataset.view));
  }
  $('#project').addEventListener('change', () => {
    state.project = $('#project').value;
    for (const list of ['#columns', '#finished', '#agents tbody', '#agent-problems', '#activity']) {
      $(list).replaceChildren();
    }
    closeTask();
    remember();
    refresh();
  });
  $('#toggle-finished').addEventListener('click', () => {
    state.showFinished = !state.showFinished;
    refresh();
  });
  $('#close-task').addEventListener('click', closeTask);
  $('#task-detail').addEventListener('click', (event) => {
    const target = event.target.closest('[data-whole]');
    if (!target || !state.shownTask) return;
    state.whole.add(target.dataset.whole);
    renderTask(state.shownTask);
  });
  for (const button of document.querySelectorAll('#task-actions button[data-action]')) {
    button.addEventListener('click', () => act(button.dataset.action));
  }
  $('#task-actions').addEventListener('submit', (event) => event.preventDefault());
  $('#activity').addEventListener('click', (event) => {
    const target = event.target.closest('[data-open]');
    if (target) openTask(Number(target.dataset.open));
  });
  $('#open-send').addEventListener('click', () => { show('#send-panel', true); $('#send-subject').focus(); });
  $('#open-message').addEventListener('click', () => { show('#message-panel', true); $('#message-text').focus(); });
  for (const button of document.querySelectorAll('[data-close]')) {
    button.addEventListener('click', () => show('#' + button.dataset.close, false));
  }
  $('#send-form').addEventListener('submit', submitSend);
  $('#message-form').addEventListener('submit', submitMessage);
  document.addEventListener('keydown', (event) => {
    if (event.key === 'Escape') {
      for (const panel of ['#send-panel', '#message-panel']) show(panel, false);
      if (!$('#task-panel').hidden) closeTask();
    }
  });
  // Ages move on even when nothing changes.
  setInterval(() => { if (state.token) refresh(); }, 30000);
}

/** Logs in and shows the board; tried again while the server cannot answer. */
async function boot() {
  const query = new URLSearchParams(location.search);
  try {
    const me = await api('GET', '/api/v1/whoami');
    state.me = me && me.agent;
    $('#whoami').textContent = 'as ' + line(state.me);
    showError('#project-error', null);
    await loadProjects();
  } catch (error) {
    if (state.token) {
      showError('#project-error', error);
      setTimeout(boot, 2000);
    }
    return;
  }
  show('#login', false);
  show('#app', true);
  const task = Number(query.get('task'));
  if (Number.isInteger(task) && task > 0) {
    state.task = task;
    show('#task-panel', true);
  }
  setView(query.get('view') || 'board');
  listen();
}

function start() {
  wire();
  state.token = takeToken();
  if (!state.token) {
    loggedOut('This tab has no login token.');
    return;
  }
  boot();
}

start();
