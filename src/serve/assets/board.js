// The web board of `baton serve`: the board view (its cards, columns and marks, the
// reservations under them), loaded before app.js (plain script: its functions are the
// page's, as app.js's are).
'use strict';

// ---- the board

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
  if (task.held_by) found.push(['held', 'held: ' + holding(task.held_by)]);
  if (task.stalled) found.push(['stalled', 'stalled']);
  if (isUnseen(task)) found.push(['unseen', 'unseen ' + age(task.delivery.since)]);
  if (task.turn && task.reason !== 'assigned') found.push(['turn', 'waiting for ' + line(task.turn)]);
  if (task.archived) found.push(['archived', 'archived']);
  return found.map(([kind, text]) => el('span', { class: 'mark mark-' + kind, 'data-mark': kind }, text));
}

/** A reservation as the CLI names it: `src/date/** by codex (T-3)`. */
function holding(reservation) {
  return line(reservation.pattern) + ' by ' + line(reservation.agent) +
    (reservation.task ? ' (T-' + reservation.task + ')' : '');
}

/** How long a reservation still holds. */
function holdsFor(reservation) {
  if (reservation.expires_at) {
    const minutes = Math.max(0, Math.round((Date.parse(reservation.expires_at) - Date.now()) / 60000));
    return minutes + 'm left';
  }
  return reservation.task ? 'while T-' + reservation.task + ' is worked on' : 'until ended';
}

/**
 * Who holds what, each with a button that ends it: the holder's own, or (as the project's
 * coordinator or a human of it) another agent's, who is told; the server refuses anyone else.
 */
function renderReservations(reservations) {
  const items = (reservations || []).map((reservation) => el('li', {
    'data-reservation': reservation.id, 'data-agent': reservation.agent,
  },
  el('span', { class: 'pattern' }, holding(reservation)),
  el('span', { class: 'none' }, ' ' + (reservation.exclusive ? '' : 'shared, ') + holdsFor(reservation) +
    (reservation.reason ? ': ' + line(reservation.reason) : '')),
  el('button', { type: 'button', class: 'end-reservation', 'data-agent': reservation.agent,
    'data-pattern': reservation.pattern }, 'End')));
  $('#reservations').replaceChildren(...items);
  $('#reservations-none').hidden = items.length > 0;
}

async function endReservation(button) {
  try {
    await api('POST', projectPath('/reservations/end'), {
      agent: button.dataset.agent === state.me ? null : button.dataset.agent,
      patterns: [button.dataset.pattern],
    });
    showError('#reservations-error', null);
  } catch (error) {
    showError('#reservations-error', error);
  }
  refresh();
}

/** Whether the task waits on the viewer: its card is outlined, as the legend says. */
function isMine(task) {
  return Boolean(state.me) && task.turn === state.me;
}

function card(task) {
  const priority = PRIORITIES.includes(task.priority) ? task.priority : 'normal';
  const node = el('article', {
    class: 'card priority-' + priority + (isMine(task) ? ' my-turn' : ''),
    // What the outline means, for a pointer resting on it (the legend says it too).
    title: isMine(task) ? 'your turn' : null,
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
  labelChips(task.labels),
  el('div', { class: 'marks' }, marks(task)));
  // A click on one of its labels searches by it (see `wireSearch`) rather than opening it.
  node.addEventListener('click', (event) => { if (!event.target.closest('[data-label]')) openTask(task.id); });
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
  for (const task of tasks) for (const label of task.labels || []) state.labelsSeen.add(label);
  renderSearch();
  $('#columns').replaceChildren(...OPEN.map((status) => column(status, tasks)));
  $('#finished').replaceChildren(...FINISHED.map((status) => column(status, tasks)));
  $('#finished').hidden = !state.showFinished;
  $('#toggle-finished').textContent = state.showFinished ? 'Hide finished' : 'Show finished';
}

// ---- labels and the search (SPEC 19): the hub searches; the page asks and shows

/** A task's labels as chips, each a button that searches by it; none for no labels. */
function labelChips(labels) {
  if (!labels || labels.length === 0) return null;
  return el('div', { class: 'labels' }, labels.map((label) => labelChip(label)));
}

/** One label as a chip: its name set as text (it is a participant's), pressed when it is the one searched by. */
function labelChip(label) {
  const pressed = state.label === label;
  return el('button', {
    type: 'button',
    class: 'chip' + (pressed ? ' active' : ''),
    'data-label': label,
    'aria-pressed': pressed ? 'true' : 'false',
    title: pressed ? 'showing only this label: click for every task' : 'show only this label',
  }, line(label));
}

/** What the board is asked for: finished tasks too, a label, words. */
function boardQuery() {
  const query = new URLSearchParams();
  if (state.showFinished) query.set('all', 'true');
  if (state.label) query.set('label', state.label);
  if (state.search) query.set('search', state.search);
  const text = query.toString();
  return text ? '?' + text : '';
}

/** The chips of the labels seen on this project's board, and what the search is on. */
function renderSearch() {
  const labels = [...state.labelsSeen].sort();
  if (state.label && !state.labelsSeen.has(state.label)) labels.push(state.label);
  $('#label-chips').replaceChildren(...labels.map(labelChip));
  const on = [];
  if (state.label) on.push('labelled ' + line(state.label));
  if (state.search) on.push('holding “' + line(state.search) + '”');
  $('#search-on').textContent = on.length ? 'showing only tasks ' + on.join(' and ') : '';
  show('#search-clear', on.length > 0);
}

/** Searches again: now for `label` (null: none) and the words typed. */
function searchBy(label) {
  state.label = label;
  renderSearch();
  scheduleRefresh();
}

/** The search box and the chips. Typing searches once the typing pauses. */
function wireSearch() {
  let typing = null;
  $('#search').addEventListener('input', () => {
    clearTimeout(typing);
    typing = setTimeout(() => {
      const words = $('#search').value.trim();
      if (words === state.search) return;
      state.search = words;
      renderSearch();
      scheduleRefresh();
    }, SEARCH_PAUSE_MS);
  });
  $('#board-view').addEventListener('click', (event) => {
    const chip = event.target.closest('[data-label]');
    if (chip) searchBy(state.label === chip.dataset.label ? null : chip.dataset.label);
  });
  $('#search-clear').addEventListener('click', () => {
    $('#search').value = '';
    state.search = '';
    searchBy(null);
  });
}
