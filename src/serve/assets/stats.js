// The web board of `baton serve`: the stats view (SPEC 19), how the team is doing, drawn
// from `GET …/stats` (docs/stats.md names its fields). Loaded before app.js (plain script:
// its functions are the page's, as app.js's are); app.js reads and calls `renderStats`.
//
// Agent names are participants' text: they reach the table and the plots through `line`,
// as text nodes, never as markup.
'use strict';

const SVG_NS = 'http://www.w3.org/2000/svg';
// The columns of the stats table after the agent's name, as the narrow layout labels them.
const STATS_COLUMNS = ['finished', 'claim → finish', 'waited on human', 'rework', 'unseen > 5m'];
// How many characters of an agent's name a plot draws: a name is at most 64 (SPEC 1), but
// a log edited by hand may hold anything.
const PLOT_NAME_CHARS = 24;

/** A length in seconds as the CLI writes one: `45s`, `20m 05s`, `1h 05m`, `3d 02h`; `—` for none. */
function readableLength(seconds) {
  if (seconds === null || seconds === undefined) return '—';
  const whole = Math.max(0, Math.floor(seconds));
  const two = (number) => String(number).padStart(2, '0');
  if (whole < 60) return whole + 's';
  if (whole < 3600) return Math.floor(whole / 60) + 'm ' + two(whole % 60) + 's';
  if (whole < 86400) return Math.floor(whole / 3600) + 'h ' + two(Math.floor((whole % 3600) / 60)) + 'm';
  return Math.floor(whole / 86400) + 'd ' + two(Math.floor((whole % 86400) / 3600)) + 'h';
}

/** An SVG element with attributes and children; strings become text nodes (as `el`). */
function svg(tag, attrs, ...children) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value !== null && value !== undefined) node.setAttribute(key, String(value));
  }
  for (const child of children.flat()) {
    if (child !== null && child !== undefined) {
      node.append(typeof child === 'string' ? document.createTextNode(child) : child);
    }
  }
  return node;
}

/**
 * A plot of one bar an agent: its length `value(agent)` against the largest (none for no
 * value), the agent's name before it and `label(agent)` after it.
 */
function barPlot(id, title, agents, value, label) {
  const row = 24;
  const top = 28;
  const nameWidth = 170;
  const barWidth = 300;
  const width = nameWidth + barWidth + 90;
  const height = top + agents.length * row + 4;
  const largest = Math.max(0, ...agents.map((agent) => value(agent) || 0));
  const plot = svg('svg', {
    id, class: 'plot', viewBox: '0 0 ' + width + ' ' + height, width, height, role: 'img', 'aria-label': title,
  }, svg('title', {}, title), svg('text', { x: 0, y: 16, class: 'plot-title' }, title));
  agents.forEach((agent, index) => {
    const y = top + index * row;
    const measured = value(agent);
    const length = largest > 0 && measured ? Math.max(2, (measured / largest) * barWidth) : 0;
    plot.append(svg('g', { class: 'plot-row', 'data-agent': agent.agent },
      svg('text', { x: nameWidth - 8, y: y + 16, 'text-anchor': 'end', class: 'plot-name' },
        line(agent.agent, PLOT_NAME_CHARS)),
      svg('rect', { x: nameWidth, y: y + 4, width: length, height: row - 8, rx: 3, class: 'bar' },
        svg('title', {}, line(agent.agent) + ': ' + label(agent))),
      svg('text', { x: nameWidth + length + 6, y: y + 16, class: 'plot-value' }, label(agent))));
  });
  return plot;
}

/** One row of the stats table: `name` (already made safe) and its figures. */
function statsRow(name, figures, attrs) {
  const cells = [
    String(figures.finished),
    readableLength(figures.claim_to_finish_median_seconds),
    readableLength(figures.waited_on_human_seconds),
    figures.rework_per_task === null || figures.rework_per_task === undefined
      ? '—' : figures.rework_per_task.toFixed(2),
    String(figures.unseen_handovers),
  ];
  return el('tr', attrs,
    el('th', {}, name),
    cells.map((text, index) => el('td', {
      'data-label': STATS_COLUMNS[index],
      class: index === 4 && figures.unseen_handovers ? 'warn' : null,
    }, text)));
}

/** The stats view: its window, the plots, and the table of every agent's figures. */
function renderStats(stats) {
  const agents = stats.agents || [];
  $('#stats-window').textContent = stats.since
    ? 'The last ' + line(stats.window) + ', since ' + new Date(stats.since).toLocaleString() + '.'
    : 'Everything the activity log holds.';
  show('#stats-none', agents.length === 0);
  show('#stats-no-humans', !(stats.humans || []).length);
  $('#stats-plots').replaceChildren(...(agents.length ? [
    barPlot('stats-finished', 'Tasks finished', agents,
      (agent) => agent.finished, (agent) => String(agent.finished)),
    barPlot('stats-median', 'Median claim → finish', agents,
      (agent) => agent.claim_to_finish_median_seconds,
      (agent) => readableLength(agent.claim_to_finish_median_seconds)),
  ] : []));
  const rows = agents.map((agent) => statsRow(
    line(agent.agent) + (agent.human ? ' (human)' : ''), agent, { 'data-agent': agent.agent }));
  if (agents.length) rows.push(statsRow('all agents', stats.team || {}, { class: 'team' }));
  $('#stats tbody').replaceChildren(...rows);
}
