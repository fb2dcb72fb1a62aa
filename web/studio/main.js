// The studio page: the files, the sample as a grid, the mapping in a CodeMirror 6 YAML editor, and the records and
// rejects it produces, previewed by the server on each edit (debounced). Bundled by scripts/build-studio.mjs.
import { EditorView, basicSetup } from 'codemirror';
import { yaml } from '@codemirror/lang-yaml';
import { setDiagnostics, lintGutter } from '@codemirror/lint';
import { Decoration } from '@codemirror/view';
import { StateEffect, StateField } from '@codemirror/state';
import { translator } from './i18n.js';
import { schemaCompletion } from './complete.js';

const DEBOUNCE_MS = 300;
const GRID_SHOWN = 1000;

const state = {
  lang: localStorage.getItem('wmsbridge-studio-lang') || document.body.dataset.lang || 'pt-BR',
  files: [],
  file: undefined,
  grid: undefined,
  preview: undefined,
  seq: 0,
  timer: undefined,
};
let t = translator(state.lang);

const el = (tag, attrs = {}, ...children) => {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === false) continue;
    if (k === 'class') e.className = v;
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat()) if (c !== undefined && c !== null) e.append(c instanceof Node ? c : String(c));
  return e;
};

/** node.replaceChildren without the undefined entries (conditional parts). */
const put = (node, ...children) => node.replaceChildren(...children.flat().filter((c) => c !== undefined && c !== null && c !== false));

async function call(path, body) {
  const r = await fetch(path, body === undefined ? {} : { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const j = await r.json().catch(() => ({ error: `HTTP ${r.status}` }));
  if (!r.ok) throw Object.assign(new Error(j.error || `HTTP ${r.status}`), { body: j });
  return j;
}

// ---- layout ------------------------------------------------------------------------------------------------
const app = document.getElementById('app');
const ui = {
  files: el('ul', { class: 'files', 'data-testid': 'files' }),
  fileTitle: el('span', { class: 'file-title' }),
  lang: el(
    'select',
    { 'aria-label': 'language', 'data-testid': 'lang' },
    el('option', { value: 'pt-BR' }, 'Português (Brasil)'),
    el('option', { value: 'en' }, 'English'),
  ),
  gridInfo: el('div', { class: 'grid-info' }),
  tabs: el('div', { class: 'tabs' }),
  grid: el('div', { class: 'grid', 'data-testid': 'grid' }),
  cellInfo: el('div', { class: 'cell-info', 'data-testid': 'cell-info' }),
  editorHost: el('div', { class: 'editor', 'data-testid': 'editor' }),
  mappingInfo: el('div', { class: 'mapping-info', 'data-testid': 'mapping-info' }),
  fileName: el('input', { type: 'text', class: 'file-name', 'data-testid': 'file-name', spellcheck: 'false' }),
  save: el('button', { class: 'save', 'data-testid': 'save' }),
  tryIt: el('button', { class: 'try', 'data-testid': 'try' }),
  doctor: el('button', { class: 'try', 'data-testid': 'doctor' }),
  answers: el('div', { class: 'answers', 'data-testid': 'answers' }),
  check: el('pre', { class: 'check', 'data-testid': 'check' }),
  stats: el('div', { class: 'stats', 'data-testid': 'stats' }),
  records: el('div', { class: 'records', 'data-testid': 'records' }),
};
ui.lang.value = state.lang;
const headings = {};
const h = (key) => (headings[key] = el('h2', {}, t(key)));
app.append(
  el('header', {}, el('h1', {}, 'wmsbridge studio'), ui.fileTitle, el('span', { class: 'note', id: 'note-sandbox' }, t('lookupsSandbox')), ui.lang),
  el(
    'main',
    {},
    el('nav', {}, h('files'), ui.files),
    el('section', { class: 'pane sample' }, h('sample'), ui.gridInfo, ui.tabs, ui.grid, ui.cellInfo),
    el(
      'section',
      { class: 'pane mapping' },
      h('mapping'),
      ui.mappingInfo,
      ui.editorHost,
      el('div', { class: 'save-row' }, el('label', {}, el('span', { id: 'file-name-label' }, t('fileName')), ui.fileName), ui.tryIt, ui.doctor, ui.save),
      ui.check,
      ui.answers,
    ),
    el('section', { class: 'pane out' }, h('records'), ui.stats, ui.records),
  ),
);
ui.save.textContent = t('save');
ui.tryIt.textContent = t('tryIt');
ui.tryIt.title = t('tryItHelp');
ui.doctor.textContent = t('doctor');
ui.doctor.title = t('doctorHelp');
ui.lang.addEventListener('change', () => {
  localStorage.setItem('wmsbridge-studio-lang', ui.lang.value);
  location.reload();
});

// ---- editor --------------------------------------------------------------------------------------------------
const setTodo = StateEffect.define();
const todoLine = Decoration.line({ class: 'cm-todo-line' });
const todoField = StateField.define({
  create: () => Decoration.none,
  update(deco, tr) {
    deco = deco.map(tr.changes);
    for (const e of tr.effects) if (e.is(setTodo)) deco = e.value;
    return deco;
  },
  provide: (f) => EditorView.decorations.from(f),
});
const view = new EditorView({
  parent: ui.editorHost,
  doc: '',
  extensions: [
    basicSetup,
    EditorView.lineWrapping,
    yaml(),
    lintGutter(),
    todoField,
    schemaCompletion(() => call('/api/schema')),
    EditorView.updateListener.of((u) => {
      if (u.docChanged) schedulePreview();
    }),
  ],
});
window.studioEditor = view;

function markTodos(lines) {
  const doc = view.state.doc;
  const ranges = lines.filter((n) => n >= 1 && n <= doc.lines).map((n) => todoLine.range(doc.line(n).from));
  view.dispatch({ effects: setTodo.of(Decoration.set(ranges, true)) });
}

function showIssues(issues) {
  const doc = view.state.doc;
  const diags = (issues || []).map((i) => {
    const line = doc.line(Math.min(Math.max(i.line || 1, 1), doc.lines));
    return { from: line.from, to: Math.max(line.to, line.from), severity: 'error', message: `${i.path}: ${i.message}` };
  });
  view.dispatch(setDiagnostics(view.state, diags));
}

// ---- files ---------------------------------------------------------------------------------------------------
async function loadFiles(select) {
  const j = await call('/api/files');
  state.files = j.files;
  put(
    ui.files,
    ...(j.files.length
      ? j.files.map((f) =>
          el(
            'li',
            { class: `file ${f.id === state.file ? 'current' : ''}`, 'data-file': f.id, onclick: () => openFile(f.id) },
            el('span', { class: 'name' }, f.id),
            el('span', { class: `badge ${f.state}`, 'data-testid': 'file-state' }, t(`state_${f.state}`)),
            f.mapping ? el('small', {}, f.mapping.file) : undefined,
          ),
        )
      : [el('li', {}, t('noFiles'))]),
  );
  if (select && j.files.length) await openFile(j.files[0].id);
  else if (!j.files.length) ui.mappingInfo.textContent = t('chooseFile');
}

async function openFile(id) {
  state.file = id;
  for (const li of ui.files.children) li.classList.toggle('current', li.dataset.file === id);
  ui.fileTitle.textContent = id;
  const d = await call(`/api/draft?file=${encodeURIComponent(id)}`);
  ui.fileName.value = d.fileName;
  put(
    ui.mappingInfo,
    el('strong', {}, d.from === 'infer' ? t('fromInfer') : t('fromMapping')),
    d.notes.length ? el('details', {}, el('summary', {}, t('inferNotes')), ...d.notes.map((n) => el('div', { class: 'note' }, n))) : undefined,
  );
  ui.check.textContent = '';
  view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: d.text } });
  await loadGrid();
  await runPreview();
}

// ---- grid ----------------------------------------------------------------------------------------------------
/** The `source:` block of the YAML text: when it changes, the grid is read again with it. */
function sourceBlock(text) {
  const m = /^(source:.*(?:\n(?:[ \t#].*|))*)/m.exec(text);
  return m ? m[1] : '';
}

async function loadGrid(sheet) {
  state.source = sourceBlock(view.state.doc.toString());
  const g = await call('/api/sample', { file: state.file, text: view.state.doc.toString(), ...(sheet ? { sheet } : {}) });
  state.grid = g;
  renderGrid();
}

function renderGrid() {
  const g = state.grid;
  if (!g) return;
  put(
    ui.gridInfo,
    el(
      'div',
      {},
      g.decodedWith === 'infer' ? t('decodedInfer') : t('decodedMapping'),
      g.encoding ? ` · ${t('encoding')}: ${g.encoding}` : '',
      g.delimiter ? ` · ${t('delimiter')}: ${JSON.stringify(g.delimiter)}` : '',
    ),
    ...g.notes.map((n) => el('div', { class: 'note' }, n)),
    g.problem ? el('div', { class: 'problem' }, g.problem) : undefined,
    g.truncated ? el('div', { class: 'note' }, t('truncated', { n: g.rows.length })) : undefined,
  );
  put(ui.tabs, ...(g.sheets || []).map((s) => el('button', { class: `tab ${s === g.sheet ? 'current' : ''}`, onclick: () => loadGrid(s) }, s)));
  const types = Object.keys(g.columns);
  const color = (type) => (type ? `rt-${types.indexOf(type) % 6}` : '');
  const table = el('table', {});
  for (const type of types) {
    const cols = g.columns[type];
    table.append(
      el(
        'tr',
        { class: `colhead ${color(type)}` },
        el('th', {}, type ? `${type}` : '#'),
        ...cols.map((c) =>
          el(
            'th',
            {
              title: `${t('kind')}: ${c.kind}${c.format ? ` (${c.format})` : ''}\n${t('confidence')}: ${c.confidence}\n${t('evidence')}: ${c.evidence}\n${t('examples')}: ${c.examples.join(' | ')}`,
            },
            el('div', { class: 'col-name' }, c.name),
            el('div', { class: 'col-kind' }, `${c.kind} ${Math.round(c.confidence * 100)}%`),
          ),
        ),
      ),
    );
  }
  const colsOf = (type) => g.columns[type ?? ''] ?? g.columns[''] ?? [];
  for (const r of g.rows.slice(0, GRID_SHOWN)) {
    const tr = el('tr', { class: `row ${color(r.recordType)} level-${r.level}`, 'data-line': r.line });
    tr.append(el('td', { class: 'line' }, `${'  '.repeat(r.level)}${r.line}${r.recordType ? ` ${r.recordType}` : ''}`));
    if (r.error) tr.append(el('td', { class: 'parse-error', colspan: 40 }, `${r.error} ${r.text ?? ''}`));
    else for (const c of colsOf(r.recordType)) tr.append(el('td', { 'data-col': c.name, onclick: () => showCell(c.name, r) }, r.cells[c.name] ?? ''));
    table.append(tr);
  }
  put(ui.grid, table);
  markUnsent();
}

function showCell(column, row) {
  const fc = state.preview?.fieldColumns || {};
  const fields = Object.entries(fc)
    .filter(([, cols]) => cols.includes(column))
    .map(([f]) => f);
  for (const td of ui.grid.querySelectorAll('td.sel')) td.classList.remove('sel');
  for (const td of ui.grid.querySelectorAll(`tr[data-line="${row.line}"] td[data-col="${CSS.escape(column)}"]`)) td.classList.add('sel');
  put(
    ui.cellInfo,
    el('strong', {}, fields.length ? t('fieldsFed', { column }) : t('noFields', { column })),
    el('ul', {}, ...fields.map((f) => el('li', { 'data-testid': 'fed-field' }, f))),
  );
}

function markUnsent() {
  const p = state.preview;
  for (const tr of ui.grid.querySelectorAll('tr.unsent, tr.excluded')) tr.classList.remove('unsent', 'excluded');
  if (!p || !p.ok) return;
  for (const g of p.unsent) {
    for (const [a, b] of g.ranges) {
      for (let line = a; line <= b && line - a < GRID_SHOWN; line++) {
        const tr = ui.grid.querySelector(`tr[data-line="${line}"]`);
        if (tr) {
          tr.classList.add(g.kind === 'excluded' ? 'excluded' : 'unsent');
          tr.title = g.kind === 'excluded' ? `${t('excluded')}: ${g.reason ?? ''}` : t('notSelected');
        }
      }
    }
  }
}

function highlight(lines, fields, card) {
  for (const x of ui.records.querySelectorAll('.chosen')) x.classList.remove('chosen');
  card?.classList.add('chosen');
  for (const x of ui.grid.querySelectorAll('.hl, .hl-col')) x.classList.remove('hl', 'hl-col');
  const cols = new Set(fields.flatMap((f) => state.preview?.fieldColumns?.[f] ?? []));
  let first;
  for (const line of lines) {
    const tr = ui.grid.querySelector(`tr[data-line="${line}"]`);
    if (!tr) continue;
    tr.classList.add('hl');
    first ??= tr;
    for (const td of tr.querySelectorAll('td[data-col]')) if (cols.has(td.dataset.col)) td.classList.add('hl-col');
  }
  first?.scrollIntoView({ block: 'nearest' });
}

// ---- preview -------------------------------------------------------------------------------------------------
function schedulePreview() {
  clearTimeout(state.timer);
  state.timer = setTimeout(runPreview, DEBOUNCE_MS);
}

const fmt = (v) => (typeof v === 'string' ? v : JSON.stringify(v));
const linesOf = (x) => (x.lines && x.lines.length ? x.lines : [x.source.line]);
const where = (x) => (x.source.lineEnd ? `${t('lines')} ${x.source.line}-${x.source.lineEnd}` : `${t('line')} ${x.source.line}`);

async function runPreview() {
  if (state.file === undefined) return;
  const seq = ++state.seq;
  ui.stats.textContent = t('previewing');
  document.body.dataset.previewing = 'true';
  let p;
  try {
    p = await call('/api/preview', { file: state.file, text: view.state.doc.toString(), fileName: ui.fileName.value || 'studio.yaml' });
  } catch (err) {
    if (seq === state.seq) ui.stats.textContent = t('error', { message: err.message });
    return;
  } finally {
    if (seq === state.seq) delete document.body.dataset.previewing;
  }
  if (seq !== state.seq) return;
  state.preview = p;
  if (sourceBlock(view.state.doc.toString()) !== state.source) await loadGrid(state.grid?.sheet).catch(() => undefined);
  markTodos(p.todoLines || []);
  showIssues(p.ok ? [] : p.issues);
  if (!p.ok) {
    ui.stats.textContent = t('invalid', { n: p.issues.length });
    put(
      ui.records,
      ...p.issues.map((i) => el('div', { class: 'issue', 'data-testid': 'issue' }, `${i.line ? `${t('line')} ${i.line}: ` : ''}${i.path}: ${i.message}`)),
    );
    return;
  }
  const s = p.stats;
  put(
    ui.stats,
    el('div', {}, t('stats', { rows: s.rows, records: s.records, rejects: s.rejects, skipped: s.skipped, excluded: s.excluded ?? 0, ms: p.ms })),
    p.todos.length ? el('div', { class: 'todo-note' }, t('todos', { list: p.todos.join(', ') })) : undefined,
  );
  const recs = p.records.map((r) =>
    el(
      'div',
      { class: 'record', 'data-testid': 'record', onclick: (e) => highlight(linesOf(r), Object.keys(r.payload).concat('key'), e.currentTarget) },
      el(
        'div',
        { class: 'rec-head' },
        `${r.target} ${r.op} key=${r.key}`,
        el('small', {}, ` ${where(r)}${r.recordTypes ? ` · ${r.recordTypes.join(', ')}` : ''}`),
      ),
      el(
        'table',
        {},
        ...Object.entries(r.payload).map(([k, v]) =>
          el(
            'tr',
            {},
            el('th', {}, k),
            el(
              'td',
              {},
              Array.isArray(v)
                ? v.map((item) =>
                    el(
                      'div',
                      { class: 'item' },
                      Object.entries(item)
                        .map(([ik, iv]) => `${ik}=${fmt(iv)}`)
                        .join('  '),
                    ),
                  )
                : fmt(v),
            ),
          ),
        ),
      ),
    ),
  );
  const rejs = p.rejects.map((r) =>
    el(
      'div',
      { class: 'reject', 'data-testid': 'reject', onclick: (e) => highlight(linesOf(r), r.issues.map((i) => i.field).filter(Boolean), e.currentTarget) },
      el('div', { class: 'rec-head' }, `${t('rejects')}: ${where(r)}${r.key !== undefined ? ` key=${r.key}` : ''}`),
      ...r.issues.map((i) => el('div', { class: 'issue' }, `${i.code}: ${i.message}`)),
    ),
  );
  const unsent = p.unsent.map((g) =>
    el(
      'div',
      { class: `unsent-group ${g.kind}`, 'data-testid': 'unsent' },
      `${g.kind === 'excluded' ? t('excluded') : t('notSelected')}: ${g.count} (${g.ranges
        .slice(0, 10)
        .map(([a, b]) => (a === b ? a : `${a}-${b}`))
        .join(', ')})${g.reason ? ` · ${g.reason}` : ''}`,
    ),
  );
  put(
    ui.records,
    ...(rejs.length ? [el('h3', {}, `${t('rejects')} (${s.rejects})`), ...rejs] : []),
    ...unsent,
    el('h3', {}, `${t('records')} (${s.records})`),
    ...recs,
    s.records > recs.length ? el('div', { class: 'note' }, t('more', { n: s.records - recs.length })) : undefined,
  );
  markUnsent();
}

// ---- save ----------------------------------------------------------------------------------------------------
ui.save.addEventListener('click', async () => {
  ui.save.disabled = true;
  ui.check.className = 'check';
  ui.check.textContent = t('saving');
  try {
    const r = await call('/api/save', { name: ui.fileName.value, text: view.state.doc.toString() });
    const problems = (r.check?.output.match(/^\s+- /gm) || []).length;
    ui.check.className = `check ${r.check && r.check.code === 0 ? 'ok' : 'fail'}`;
    ui.check.textContent = `${t('saved', { path: r.saved })}\n${r.check ? (r.check.code === 0 ? t('checkOk') : t('checkFail', { n: problems })) : ''}\n\n${r.check?.output ?? ''}`;
    await loadFiles(false);
    document.body.dataset.saved = r.check ? String(r.check.code) : 'saved';
  } catch (err) {
    ui.check.className = 'check fail';
    ui.check.textContent = t('error', { message: err.message });
    if (err.body?.issues) showIssues(err.body.issues);
  } finally {
    ui.save.disabled = false;
  }
});

// ---- try it: the sample's records sent to a throw-away embedded sandbox, each answer -------------------------
ui.tryIt.addEventListener('click', async () => {
  ui.tryIt.disabled = true;
  put(ui.answers, el('div', { class: 'note' }, t('trying')));
  try {
    const r = await call('/api/try', { file: state.file, name: ui.fileName.value, text: view.state.doc.toString() });
    const counts = {};
    for (const row of r.results) counts[row.outcome] = (counts[row.outcome] ?? 0) + 1;
    put(
      ui.answers,
      el(
        'strong',
        {},
        t('tryResult', {
          code: r.code,
          counts:
            Object.entries(counts)
              .map(([k, n]) => `${n} ${k}`)
              .join(', ') || '0',
        }),
      ),
      el(
        'table',
        {},
        el('tr', {}, el('th', {}, t('line')), el('th', {}, 'key'), el('th', {}, 'outcome'), el('th', {}, 'wms_id / reason')),
        ...r.results.map((row) =>
          el(
            'tr',
            { class: `answer ${row.outcome}`, 'data-testid': 'answer' },
            el('td', {}, row.line),
            el('td', {}, row.key),
            el('td', {}, row.outcome),
            el('td', {}, row.wms_id || row.reason || row.error || ''),
          ),
        ),
      ),
    );
  } catch (err) {
    put(ui.answers, el('div', { class: 'problem' }, t('error', { message: err.message })));
  } finally {
    ui.tryIt.disabled = false;
  }
});

// ---- doctor: the configured WMS's read-only probes, as `wmsbridge doctor` prints them ------------------------
ui.doctor.addEventListener('click', async () => {
  ui.doctor.disabled = true;
  ui.check.className = 'check';
  ui.check.textContent = t('doctoring');
  try {
    const r = await call('/api/doctor', {});
    ui.check.className = `check ${r.code === 0 ? 'ok' : 'fail'}`;
    ui.check.textContent = `${t(r.code === 0 ? 'doctorOk' : 'doctorFail', { code: r.code })}\n\n${r.output}`;
    document.body.dataset.doctor = String(r.code);
  } catch (err) {
    ui.check.className = 'check fail';
    ui.check.textContent = t('error', { message: err.message });
  } finally {
    ui.doctor.disabled = false;
  }
});

loadFiles(true).catch((err) => (ui.stats.textContent = t('error', { message: err.message })));
