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
const VIEWS = ['board', 'inbox', 'messages', 'agents', 'activity', 'stats'];
// Where the login is kept: see `storeToken`.
const TOKEN_KEY = 'baton-token';
// This tab's project, for a reload that lost the address (sessionStorage: per tab).
const PROJECT_KEY = 'baton-project';
// What a link asked this tab to open while it was not logged in (sessionStorage), so that
// logging in in this very tab (the login URL pasted over it) still opens it.
const TARGET_KEY = 'baton-target';
// How many messages the messages view draws, newest first.
const MESSAGES_DRAWN = 100;
// How many characters of a participant's text are drawn before it is cut: a subject on a
// card, any one-line text elsewhere (a subject caps at 1,000), and a multi-line text, which
// can be shown whole on request.
const CARD_CHARS = 200;
const LINE_CHARS = 1000;
const BLOCK_CHARS = 4000;
// How long typing in the search box pauses before the board is searched.
const SEARCH_PAUSE_MS = 250;
// How many characters of one file's hunks are drawn before they are cut.
const DIFF_CHARS = 20000;

const state = {
  token: null,
  // Counts logins (and logouts): what a login started (its event stream, its retries)
  // stops once another begins.
  session: 0,
  // The login whose human has been seen at the page: from then on its reads are looks.
  arrived: null,
  me: null,
  // The project of the directory `baton serve` runs in: what a new tab opens on.
  startProject: null,
  // What a link asked to open: {project, task, view}, until the board is shown.
  target: null,
  // The event stream's request, to end it at a logout.
  stream: null,
  projects: [],
  project: null,
  view: 'board',
  task: null,
  showFinished: false,
  // What the board is searched for (board.js): a label, words, and the labels seen.
  label: null,
  search: '',
  labelsSeen: new Set(),
  agents: [],
  generation: 0,
  refreshTimer: null,
  // The task last drawn, and which of its cut texts were asked for whole ('body', 'result',
  // 'thread-3'), until another task is opened.
  shownTask: null,
  whole: new Set(),
  // The diff of the task shown, last read: drawn again when the task is.
  diff: null,
  // An action nothing undoes (its button asks first) waiting for its confirmation: {action, task}.
  confirming: null,
  // The task and version whose fields the edit inputs were filled with: `7@<updated_at>`.
  fieldsOf: null,
};

// ---- the API

class ApiError extends Error {
  constructor(message, hint, status) {
    super(message);
    this.hint = hint;
    this.status = status;
  }
}

async function api(method, path, body) {
  const token = state.token;
  const init = { method, headers: { Authorization: 'Bearer ' + token }, cache: 'no-store' };
  // Opening the page is its human at the desk (the first read of a login registers them
  // and renews their leases); after that the page reads again on every change, whether its
  // human is at it or not: like `baton watch`, those looks renew none of their leases
  // (SPEC 3), while what the human does from the page does.
  if (method === 'GET' && state.arrived === state.session) init.headers['baton-observer'] = 'web';
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
  // A refusal of a token this tab no longer uses (another login came since) ends nothing.
  if (response.status === 401 && token === state.token) {
    loggedOut((value && value.error) || 'the server did not take this browser\'s login (401)', value && value.hint);
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

// ---- the views

// What the one whose turn it is should do, by the inbox's reason (as `baton inbox` says it).
const TO_DO = {
  assigned: 'to do',
  changes_requested: 'changes requested',
  question: 'question for you',
  review_requested: 'review requested',
  stalled: 'stalled: lease expired',
  dependency_failed: 'waits on a task that failed',
  dependency_canceled: 'waits on a task that was canceled',
};

function toDo(entry) {
  if (entry.ended_dependency && entry.reason === 'dependency_failed') {
    return 'waits on T-' + entry.ended_dependency + ', which failed';
  }
  if (entry.ended_dependency && entry.reason === 'dependency_canceled') {
    return 'waits on T-' + entry.ended_dependency + ', which was canceled';
  }
  return TO_DO[entry.reason] || line(entry.reason);
}

/** One task of the inbox, with what `baton inbox` shows of it; a click opens it. */
function inboxEntry(entry) {
  const waiting = entry.reason === 'stalled'
    ? line(entry.to) + ' has not renewed its lease'
    : line(entry.waiting) + ' is waiting on you';
  const word = entry.last_word;
  const node = el('li', { class: 'entry task-entry', 'data-task': entry.id, tabindex: 0 },
    el('div', { class: 'entry-head' },
      el('span', { class: 'id' }, 'T-' + entry.id),
      el('span', { class: 'priority' }, '[' + line(entry.priority) + ']'),
      el('span', { class: 'what', 'data-reason': entry.reason }, toDo(entry))),
    el('div', { class: 'subject' }, line(entry.subject)),
    el('div', { class: 'route' },
      'from ' + line(entry.from) + ' to ' + line(entry.to) + ', sent ' + age(entry.created_at) + ' ago; ' + waiting),
    entry.body ? el('pre', { class: 'text' }, block(entry.body)) : null,
    (entry.files || []).length
      ? el('div', { class: 'files-line' }, 'files: ' + entry.files.map((file) => line(file)).join(', '))
      : null,
    word ? el('div', { class: 'last-word' },
      'last ' + line(word.kind).replaceAll('_', ' ') + ' by ' + line(word.by) + ' (' + age(word.at) + ' ago):') : null,
    word && word.text ? el('pre', { class: 'text' }, block(word.text)) : null);
  node.addEventListener('click', () => openTask(entry.id));
  node.addEventListener('keydown', (event) => { if (event.key === 'Enter') openTask(entry.id); });
  return node;
}

/** One message, as `baton messages` lists it; one from another offers a reply. */
function messageEntry(message) {
  const unread = message.unread !== false;
  return el('li', { class: 'entry message' + (unread ? ' unread' : ''), 'data-seq': message.seq },
    el('div', { class: 'entry-head' },
      el('span', { class: 'by' }, line(message.from) + ' → ' + line(message.to)),
      message.type && message.type !== 'text' ? el('span', { class: 'kind' }, line(message.type)) : null,
      unread ? el('span', { class: 'mark mark-unread' }, 'unread') : null,
      when(message.at)),
    el('pre', { class: 'text' }, block(message.body)),
    message.from !== state.me
      ? el('button', { type: 'button', class: 'link reply', 'data-reply': message.from }, 'Reply to ' + line(message.from))
      : null);
}

function renderInbox(inbox) {
  const tasks = (inbox && inbox.tasks) || [];
  const messages = (inbox && inbox.messages) || [];
  $('#inbox-tasks').replaceChildren(...tasks.map(inboxEntry));
  $('#inbox-empty').hidden = tasks.length > 0 || (inbox && inbox.more_tasks > 0);
  $('#inbox-more').hidden = !(inbox && inbox.more_tasks > 0);
  $('#inbox-more').textContent = inbox && inbox.more_tasks ? '… and ' + inbox.more_tasks + ' more' : '';
  $('#inbox-messages').replaceChildren(...messages.map((message) => messageEntry({ ...message, unread: true })));
  $('#inbox-no-messages').hidden = messages.length > 0;
  $('#inbox-mark-read').hidden = messages.length === 0;
}

function renderMessages(mail) {
  const all = (mail && mail.messages) || [];
  const newest = all.slice(-MESSAGES_DRAWN).reverse();
  $('#messages').replaceChildren(...newest.map(messageEntry));
  $('#messages-empty').hidden = all.length > 0;
  $('#messages-older').hidden = all.length <= MESSAGES_DRAWN;
  $('#messages-older').textContent = (all.length - MESSAGES_DRAWN) + ' older messages not shown (baton messages --all)';
  $('#messages-mark-read').hidden = !all.some((message) => message.unread);
}

/** The counts on the Inbox and Messages tabs: tasks waiting, and unread messages. */
function renderCounts(inbox) {
  const tasks = ((inbox && inbox.tasks) || []).length + ((inbox && inbox.more_tasks) || 0);
  const unread = ((inbox && inbox.messages) || []).length;
  $('#inbox-count').textContent = String(tasks);
  $('#inbox-count').hidden = tasks === 0;
  $('#unread-count').textContent = String(unread);
  $('#unread-count').hidden = unread === 0;
}

// The agents' matrix; each cell names its column, for the narrow layout that stacks them.
const AGENT_COLUMNS = ['open', 'working', 'inbox', 'unseen', 'last seen', 'wake', 'clients', 'skills', 'strengths'];

function renderAgents(agents) {
  const rows = (agents.agents || []).map((agent) => {
    const cells = [
      String(agent.open),
      String(agent.working),
      String(agent.inbox),
      String(agent.unseen),
      agent.last_seen ? age(agent.last_seen) + ' ago' : 'never',
      agent.wake ? 'yes' : '—',
      line((agent.clients || []).join(', ')) || '—',
      line((agent.skills || []).join(', ')) || '—',
      line(agent.strengths) || '—',
    ];
    return el('tr', { 'data-agent': agent.name },
      el('th', {}, line(agent.name)),
      cells.map((text, index) => el('td', {
        'data-label': AGENT_COLUMNS[index],
        class: (index === 3 && agent.unseen ? 'warn' : '') + (index === 8 ? ' strengths' : '') || null,
      }, text)));
  });
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

// The buttons of the actions on a task, made by the server from its table of actions: each
// names its action (data-action, data-command) and says what its words are (data-words) and,
// for one nothing undoes, what to ask first (data-confirm, data-yes). Those beside the picker
// of names name a new assignee.
function actionButtons() {
  return [...document.querySelectorAll('#task-actions button[data-action]')];
}

function actionButton(action) {
  return actionButtons().find((button) => button.dataset.action === action);
}

function namesAssignee(button) {
  return button.closest('#reassign-row') !== null;
}

function changesFields(button) {
  return button.closest('#edit-row') !== null;
}

// The inputs of the fields an edit changes, made by the server from its table of actions:
// each names its field (data-name) and the kind of its value (data-value).
function fieldInputs() {
  return [...document.querySelectorAll('#edit-row [data-name]')];
}

/** A field of `task` as its input shows it: lists and ids comma-separated. */
function fieldText(task, name) {
  if (name === 'reviewer') return task.review ? (task.reviewer || task.from) : '';
  const value = task[name];
  return Array.isArray(value) ? value.join(', ') : (value ?? '');
}

/** Fills the inputs with the task's fields, once for each version of the task. */
function fillFields(task) {
  const version = task.id + '@' + task.updated_at;
  if (state.fieldsOf === version) return;
  state.fieldsOf = version;
  for (const input of fieldInputs()) input.value = fieldText(task, input.dataset.name);
}

/** What the inputs change on `task`: only the fields that differ, each in its kind. */
function editsOf(task) {
  const edits = {};
  for (const input of fieldInputs()) {
    const name = input.dataset.name;
    const text = input.value;
    if (text === fieldText(task, name)) continue;
    const items = text.split(',').map((item) => item.trim()).filter((item) => item !== '');
    if (input.dataset.value === 'list') edits[name] = items;
    else if (input.dataset.value === 'ids') edits[name] = items.map((id) => Number(id.replace(/^t-/i, '')));
    else edits[name] = text;
  }
  return edits;
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
      field('held', task.held_by ? holding(task.held_by) : null),
      field('touches', (task.touches || []).map((pattern) => line(pattern)).join(', ')),
      field('reserved', (task.reservations || []).map((reservation) => line(reservation.pattern)).join(', ')),
      field('skill', task.skill ? line(task.skill) : null),
      field('labels', (task.labels || []).map((label) => line(label)).join(', ')),
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
    task.body
      ? el('pre', { class: 'text', id: 'task-body' }, block(task.body, 'body'))
      : el('p', { class: 'none', id: 'task-no-body' }, 'no description'),
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
    task.worktree ? [el('h3', {}, 'diff'), el('section', { id: 'task-diff' }, el('p', { class: 'none' }, 'reading…'))] : null,
  ];
  $('#task-detail').replaceChildren(...detail.flat().filter(Boolean));
  if (task.worktree && state.diff && state.diff.task === task.id) renderDiff(state.diff);
  renderActions(task);
}

/**
 * The buttons of what the viewer may do with the task now, as the server judged it with
 * the state machine (`offered`): nothing else is offered, so a button never leads to a
 * refusal for who acts or where the task is (only for missing words).
 */
function renderActions(task) {
  const offered = new Set(task.offered || []);
  const shown = actionButtons().filter((button) => offered.has(button.dataset.action));
  for (const button of actionButtons()) {
    if (!namesAssignee(button)) button.hidden = !offered.has(button.dataset.action);
  }
  const worded = shown.filter((button) => button.dataset.words).map((button) => button.dataset.words);
  const picks = shown.some(namesAssignee);
  $('#action-label').textContent = worded.length ? 'Words: ' + worded.join(', or ') : '';
  $('#action-label').hidden = worded.length === 0;
  $('#action-text').hidden = worded.length === 0 && !picks;
  $('#reassign-row').hidden = !picks;
  const edits = shown.some(changesFields);
  $('#edit-row').hidden = !edits;
  if (edits) fillFields(task);
  // The picker offers everyone but the assignee, and chooses nobody by itself: a human who
  // reassigns picks whom (the viewer too, but never by default).
  fillNames('#reassign-to', ['', ...state.agents.filter((name) => name !== task.to)], 'reassign to…');
  enablePicked();
  const pending = state.confirming;
  if (pending && (pending.task !== task.id || !offered.has(pending.action))) hideConfirm();
  $('#task-actions').hidden = offered.size === 0;
  const none = $('#task-none');
  if (offered.size > 0) {
    none.hidden = true;
  } else {
    none.hidden = false;
    none.textContent = FINISHED.includes(task.status)
      ? 'T-' + task.id + ' is ' + line(task.status) + ': nothing moves it again.'
      : 'Nothing here is yours to do now' + (task.turn ? ': it is ' + line(task.turn) + '\'s turn.' : '.');
  }
}

/** The buttons that name a new assignee, usable once a name is picked. */
function enablePicked() {
  for (const button of actionButtons().filter(namesAssignee)) button.disabled = !$('#reassign-to').value;
}

/** Fills a <select> with names (`''` as `empty`, a choice of none), keeping what was chosen. */
function fillNames(selector, names, empty) {
  const select = $(selector);
  const chosen = select.value;
  select.replaceChildren(...names.map((name) => el('option', { value: name }, name === '' ? empty : line(name))));
  if (names.includes(chosen)) select.value = chosen;
}

// ---- refreshing what is shown

function scheduleRefresh() {
  clearTimeout(state.refreshTimer);
  state.refreshTimer = setTimeout(refresh, 100);
}

async function refresh() {
  if (!state.token || !state.project || !state.me) return;
  const generation = ++state.generation;
  const current = () => generation === state.generation;
  try {
    const agents = await api('GET', projectPath('/agents'));
    state.arrived = state.session;
    if (!current()) return;
    state.agents = (agents.agents || []).map((agent) => agent.name);
    fillNames('#send-to', state.agents.filter((name) => name !== state.me));
    fillNames('#message-to', ['@all', ...state.agents.filter((name) => name !== state.me)]);
    // Looking at the inbox view is being shown the inbox (its hand-overs count as seen);
    // elsewhere the counts are read without that. Messages stay unread either way until
    // the viewer marks them read.
    const inbox = await api('GET', projectPath('/inbox?peek=true' + (state.view === 'inbox' ? '' : '&record=false')));
    if (!current()) return;
    renderCounts(inbox);
    if (state.view === 'board') {
      const tasks = await api('GET', projectPath('/board' + boardQuery()));
      if (current()) renderBoard(tasks);
      const reservations = await api('GET', projectPath('/reservations'));
      if (current()) renderReservations(reservations);
    } else if (state.view === 'inbox') {
      renderInbox(inbox);
    } else if (state.view === 'messages') {
      const mail = await api('GET', projectPath('/messages?all=true&peek=true'));
      if (current()) renderMessages(mail);
    } else if (state.view === 'agents') {
      renderAgents(agents);
    } else if (state.view === 'stats') {
      const stats = await api('GET', projectPath('/stats?since=' + encodeURIComponent($('#stats-since').value)));
      if (current()) renderStats(stats);
    } else {
      const records = await api('GET', projectPath('/log?n=50'));
      if (current()) renderActivity(records);
    }
    if (state.task !== null) {
      const task = await api('GET', projectPath('/tasks/' + state.task + '?offered=true'));
      if (current()) renderTask(task);
      if (task.worktree) {
        let diff;
        try {
          diff = await api('GET', projectPath('/tasks/' + task.id + '/diff'));
        } catch (error) {
          diff = { task: task.id, error: error.message };
        }
        if (current() && state.task === task.id) {
          state.diff = diff;
          renderDiff(diff);
        }
      }
    }
    if (current()) showError('#project-error', null);
  } catch (error) {
    if (current() && state.token) showError('#project-error', error);
  }
}

/**
 * The projects, and the one to show: the one a link named, else this tab's (a reload),
 * else the project of the directory `baton serve` runs in, else the first.
 */
async function loadProjects(wanted) {
  const projects = await api('GET', '/api/v1/projects');
  state.projects = (projects || []).map((project) => project.id);
  fillNames('#project', state.projects);
  const known = (id) => id && state.projects.includes(id) ? id : null;
  state.project = known(wanted) || known(state.project) || known(sessionStorage.getItem(PROJECT_KEY)) ||
    known(state.startProject) || state.projects[0] || null;
  if (state.project) $('#project').value = state.project;
  if (!state.project) {
    showError('#project-error', new ApiError('no projects on this hub yet', 'baton project init makes one'));
  } else if (wanted && !known(wanted)) {
    showError('#project-error', new ApiError('no project ' + wanted + ' on this hub; showing ' + state.project));
  }
}

// ---- acting

/** Runs `action` on the open task; a final one asks first. */
function act(action) {
  if (actionButton(action).dataset.confirm) {
    askFirst(action);
    return;
  }
  send(action);
}

function askFirst(action) {
  const button = actionButton(action);
  state.confirming = { action, task: state.task };
  $('#confirm-question').textContent = button.dataset.confirm.replace('{id}', 'T-' + state.task);
  $('#confirm-yes').textContent = button.dataset.yes;
  show('#confirm', true);
  $('#confirm-no').focus();
}

function hideConfirm() {
  state.confirming = null;
  show('#confirm', false);
}

async function send(action) {
  const button = actionButton(action);
  const text = $('#action-text').value;
  let body = {};
  if (namesAssignee(button)) body = { to: $('#reassign-to').value };
  if (changesFields(button)) body = { edits: editsOf(state.shownTask) };
  if (text.trim()) body.text = text;
  try {
    await api('POST', projectPath('/tasks/' + state.task + '/' + button.dataset.command), body);
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
    scheduleRefresh();
  } catch (error) {
    showError('#message-error', error);
  }
}

function openMessage(to) {
  show('#message-panel', true);
  if (to && [...$('#message-to').options].some((option) => option.value === to)) $('#message-to').value = to;
  $('#message-text').focus();
}

/**
 * Marks read the messages the view drew (`list`: where they are), up to the newest of them:
 * one that arrived since it was drawn stays unread.
 */
async function markRead(list) {
  const seqs = [...document.querySelectorAll(list + ' .entry.message.unread')]
    .map((entry) => Number(entry.dataset.seq))
    .filter((seq) => Number.isSafeInteger(seq));
  if (seqs.length === 0) return;
  try {
    await api('GET', projectPath('/messages?through=' + Math.max(...seqs)));
    showError('#project-error', null);
  } catch (error) {
    showError('#project-error', error);
  }
  scheduleRefresh();
}

function openTask(id) {
  if (state.task !== id) {
    state.whole.clear();
    state.shownTask = null;
    state.diff = null;
    hideConfirm();
    $('#action-text').value = '';
    showError('#task-error', null);
    $('#task-detail').replaceChildren();
    $('#task-actions').hidden = true;
    $('#task-none').hidden = true;
    $('#task-title').textContent = 'T-' + id;
  }
  state.task = id;
  show('#task-panel', true);
  remember();
  refresh();
}

function closeTask() {
  state.task = null;
  hideConfirm();
  show('#task-panel', false);
  remember();
}

function setView(view) {
  state.view = VIEWS.includes(view) ? view : 'board';
  for (const name of VIEWS) {
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

/** Follows the event stream for as long as the login `session` lasts. */
async function listen(session) {
  let delay = 500;
  const live = () => session === state.session && state.token;
  while (live()) {
    const stream = new AbortController();
    state.stream = stream;
    try {
      const response = await fetch('/api/v1/events', {
        headers: { Authorization: 'Bearer ' + state.token, Accept: 'text/event-stream' },
        cache: 'no-store',
        signal: stream.signal,
      });
      if (response.status === 401) {
        // The words come from the API's refusal, which says why (expired, removed).
        const refusal = await response.json().catch(() => null);
        if (live()) loggedOut((refusal && refusal.error) || 'the server did not take this browser\'s login', refusal && refusal.hint);
        return;
      }
      if (!response.ok || !response.body) throw new Error('HTTP ' + response.status);
      setLive('on');
      delay = 500;
      scheduleRefresh(); // whatever changed while the stream was down
      await readEvents(response.body.pipeThrough(new TextDecoderStream()).getReader());
    } catch (_) {
      // Dropped, refused or ended by a logout: try again below, if still logged in.
    }
    if (!live()) return;
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

/** Keeps the panels below the header, however many rows it wraps to on a narrow window. */
function followHeader() {
  const header = $('#top');
  const place = () => document.documentElement.style.setProperty('--top', header.offsetHeight + 'px');
  place();
  if (window.ResizeObserver) new ResizeObserver(place).observe(header);
}

function wire() {
  followHeader();
  for (const tab of document.querySelectorAll('.tab')) {
    tab.addEventListener('click', () => setView(tab.dataset.view));
  }
  $('#project').addEventListener('change', () => {
    state.project = $('#project').value;
    for (const list of ['#columns', '#finished', '#reservations', '#agents tbody', '#agent-problems', '#activity',
      '#inbox-tasks', '#inbox-messages', '#messages', '#stats tbody', '#stats-plots']) {
      $(list).replaceChildren();
    }
    state.labelsSeen = new Set();
    state.label = null;
    closeTask();
    remember();
    refresh();
  });
  $('#reservations').addEventListener('click', (event) => {
    const button = event.target.closest('button.end-reservation');
    if (button) endReservation(button);
  });
  $('#stats-since').addEventListener('change', refresh);
  $('#toggle-finished').addEventListener('click', () => {
    state.showFinished = !state.showFinished;
    refresh();
  });
  $('#close-task').addEventListener('click', closeTask);
  wireSearch();
  $('#task-detail').addEventListener('click', (event) => {
    const target = event.target.closest('[data-whole]');
    if (!target || !state.shownTask) return;
    state.whole.add(target.dataset.whole);
    renderTask(state.shownTask);
  });
  for (const button of actionButtons()) {
    button.addEventListener('click', () => act(button.dataset.action));
  }
  $('#confirm-yes').addEventListener('click', () => {
    const pending = state.confirming;
    hideConfirm();
    if (pending && pending.task === state.task) send(pending.action);
  });
  $('#confirm-no').addEventListener('click', hideConfirm);
  $('#reassign-to').addEventListener('change', enablePicked);
  $('#task-actions').addEventListener('submit', (event) => event.preventDefault());
  $('#activity').addEventListener('click', (event) => {
    const target = event.target.closest('[data-open]');
    if (target) openTask(Number(target.dataset.open));
  });
  for (const list of ['#messages', '#inbox-messages']) {
    $(list).addEventListener('click', (event) => {
      const target = event.target.closest('[data-reply]');
      if (target) openMessage(target.dataset.reply);
    });
  }
  $('#inbox-mark-read').addEventListener('click', () => markRead('#inbox-messages'));
  $('#messages-mark-read').addEventListener('click', () => markRead('#messages'));
  $('#messages-write').addEventListener('click', () => openMessage(null));
  $('#open-send').addEventListener('click', () => { show('#send-panel', true); $('#send-subject').focus(); });
  $('#open-message').addEventListener('click', () => openMessage(null));
  $('#logout').addEventListener('click', logOut);
  for (const button of document.querySelectorAll('[data-close]')) {
    button.addEventListener('click', () => show('#' + button.dataset.close, false));
  }
  $('#send-form').addEventListener('submit', submitSend);
  $('#message-form').addEventListener('submit', submitMessage);
  $('#login-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const token = pastedToken($('#login-paste').value);
    $('#login-paste').value = '';
    if (token) logIn(token);
    else $('#login-why').textContent = 'That is not the URL baton serve printed, nor a token.';
  });
  // A link opened in a tab already showing the page changes only the fragment, which
  // loads nothing: it is read as a new address (a login, a task to open) all the same.
  window.addEventListener('hashchange', () => {
    const link = readAddress();
    if (!link.token && !hasTarget(link)) return;
    state.target = hasTarget(link) ? link : state.target;
    const token = link.token || state.token;
    if (token) logIn(token);
    else loggedOut('This browser is not logged in to this hub.');
  });
  // Another tab logged in (the login URL opened there) or out: this one follows.
  window.addEventListener('storage', (event) => {
    if (event.key !== TOKEN_KEY && event.key !== null) return;
    const token = storedToken();
    if (token && token !== state.token) {
      if (state.token) state.token = token;
      else logIn(token);
    } else if (!token && state.token) {
      state.token = null;
      loggedOut('This browser logged out (in another tab).');
    }
  });
  document.addEventListener('keydown', (event) => {
    if (event.key === 'Escape') {
      for (const panel of ['#send-panel', '#message-panel']) show(panel, false);
      if (!$('#confirm').hidden) hideConfirm();
      else if (!$('#task-panel').hidden) closeTask();
    }
  });
  // Ages move on even when nothing changes.
  setInterval(() => { if (state.token && state.me) refresh(); }, 30000);
}

/** Logs in and shows the board, opening what a link asked for; tried again while the
 * server cannot answer. */
async function boot() {
  const session = ++state.session;
  const target = state.target;
  // The stream of a login before this one ends with it.
  if (state.stream) state.stream.abort();
  state.stream = null;
  try {
    const page = await api('GET', '/api/v1/page');
    if (session !== state.session) return;
    state.me = page && page.agent;
    state.startProject = page && page.project;
    $('#whoami').textContent = 'as ' + line(state.me);
    showError('#project-error', null);
    await loadProjects(target && target.project);
  } catch (error) {
    if (session === state.session && state.token) {
      showError('#project-error', error);
      setTimeout(() => { if (session === state.session && state.token) boot(); }, 2000);
    }
    return;
  }
  if (session !== state.session) return;
  state.target = null;
  sessionStorage.removeItem(TARGET_KEY);
  show('#login', false);
  show('#app', true);
  show('#logout', true);
  if (target && target.task !== null) {
    state.task = null;
    openTask(target.task);
  }
  setView((target && target.view) || state.view);
  listen(session);
}

function start() {
  wire();
  const link = readAddress();
  if (link.token) storeToken(link.token);
  state.target = hasTarget(link) ? link : takePendingTarget();
  state.token = link.token || storedToken();
  if (!state.token) {
    loggedOut('This browser is not logged in to this hub.');
    return;
  }
  boot();
}

start();
