// The web board of `baton serve`: text from participants and small DOM helpers, loaded before app.js (plain script: its
// functions are the page's, as app.js's are).
'use strict';

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
 * names the text within its task) was asked for whole. Without a `key` (a list, where the
 * task's panel shows it whole) the cut says so and offers nothing.
 */
function block(text, key) {
  const [kept, left] = key && state.whole.has(key) ? [String(text ?? ''), 0] : cut(text, BLOCK_CHARS);
  const nodes = [escaped(kept, '\n\t')];
  if (left && key) {
    nodes.push(el('button', { type: 'button', class: 'link more', 'data-whole': key }, more(left) + ' (show all)'));
  } else if (left) {
    nodes.push(el('span', { class: 'more' }, more(left)));
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

// Dates as the browser's user reads them: in the languages they set it to
// (navigator.languages, what it sends as Accept-Language), not in whatever locale the
// browser's process started in, nor in one locale for everyone.
const DATES = new Intl.DateTimeFormat(navigator.languages, { dateStyle: 'medium', timeStyle: 'short' });

function when(at) {
  if (!at) return '—';
  return el('time', { datetime: at, title: at }, DATES.format(new Date(at)) + ' (' + age(at) + ' ago)');
}
