// The web board of `baton serve`: a task's diff, loaded before app.js (plain script: its
// functions are the page's, as app.js's are).
'use strict';

// ---- a task's diff (SPEC 18.4): every byte of it is participant text, set as text

const short = (commit) => String(commit ?? '').slice(0, 12);

/** What follows a file's name: renamed from, uncommitted, untracked. */
function fileMarks(file) {
  return (file.renamed_from ? ' (renamed from ' + line(file.renamed_from) + ')' : '') +
    (file.untracked ? ' [untracked]' : file.uncommitted ? ' [uncommitted]' : '');
}

/** One file's hunks, a line each (added, removed, a hunk's head), cut as `block` cuts. */
function hunkLines(hunks, key) {
  const [kept, left] = state.whole.has(key) ? [String(hunks), 0] : cut(hunks, DIFF_CHARS);
  const lines = kept.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  const nodes = lines.map((text) => el('span', {
    class: text.startsWith('@@') ? 'hunk' : text.startsWith('+') ? 'add' : text.startsWith('-') ? 'del' : null,
  }, escaped(text, '\t') + '\n'));
  if (left) nodes.push(el('button', { type: 'button', class: 'link more', 'data-whole': key }, more(left) + ' (show all)'));
  return nodes;
}

/** The diff of the task shown: its branch and commits, the stat, then each file's hunks. */
function renderDiff(diff) {
  const section = $('#task-diff');
  if (!section) return;
  if (diff.error) {
    section.replaceChildren(el('p', { class: 'none' }, line(diff.error)));
    return;
  }
  const files = diff.files || [];
  const lateOnes = (diff.commits || []).filter((commit) => commit.not_reviewed).map((commit) => short(commit.id));
  const added = files.reduce((sum, file) => sum + file.added, 0);
  const removed = files.reduce((sum, file) => sum + file.removed, 0);
  const left = diff.left_out || {};
  const nodes = [
    el('p', { class: 'diff-head' }, line(diff.branch) + ' against ' + line(diff.base) +
      ' (from ' + short(diff.from) + ' to ' + short(diff.tip) + ')'),
    el('ul', { class: 'commits' }, (diff.commits || []).map((commit) => el('li', { class: commit.not_reviewed ? 'not-reviewed' : null },
      short(commit.id) + ' ' + line(commit.subject) + (commit.not_reviewed ? '  [not reviewed]' : '')))),
    left.commits ? el('p', { class: 'none' }, '… and ' + left.commits + ' more commits') : null,
    lateOnes.length && diff.reviewed
      ? el('p', { class: 'diff-note' }, 'not reviewed: ' + lateOnes.join(', ') + ' (made after the review of ' + short(diff.reviewed) + ')')
      : null,
    diff.uncommitted && diff.uncommitted.state === 'not_visible'
      ? el('p', { class: 'diff-note' }, 'its worktree is on ' + (diff.uncommitted.host ? line(diff.uncommitted.host) : 'another machine') +
        ': its uncommitted changes are not visible from here')
      : null,
    files.length
      ? el('table', { class: 'diff-stat' }, files.map((file) => el('tr', {},
        el('td', {}, line(file.path) + fileMarks(file)),
        el('td', {}, file.binary ? 'binary' : '+' + file.added + ' -' + file.removed))))
      : el('p', { class: 'none' }, 'no changes'),
    el('p', { class: 'diff-sum' }, files.length + ' files changed, ' + added + ' added, ' + removed + ' removed' +
      (left.files ? '; ' + left.files + ' more files not listed' : '') +
      (left.hunks ? '; the hunks of ' + left.hunks + ' files left out' : '')),
    files.map((file, index) => [
      el('h4', { class: 'diff-file' }, line(file.path) + fileMarks(file)),
      file.binary ? el('p', { class: 'none' }, 'binary file: content not shown')
        : file.cut ? el('p', { class: 'none' }, 'hunks left out: the diff is large')
          : file.hunks ? el('pre', { class: 'text diff' }, hunkLines(file.hunks, 'diff-' + index)) : null,
    ]),
  ];
  section.replaceChildren(...nodes.flat(2).filter(Boolean));
}
