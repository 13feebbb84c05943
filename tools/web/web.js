// pmon web: the views (doc/web.md).  The stream arrives as Server-Sent
// Events (or, with ?test=1, in one piece from /events?once=1); each view
// draws the model's state at the control panel's step.  Views that can
// hold 100,000 events (space-time, activity) draw on a canvas, only what
// is visible; the others are SVG with data-* attributes.
(() => {
'use strict';

const { Stream, State, SENDS } = window.PmonModel;
const params = new URLSearchParams(location.search);
const KEY = params.get('k') || '';
const TEST = params.get('test') === '1';
const SVGNS = 'http://www.w3.org/2000/svg';
const VIEWS = ['spacetime', 'concurrency', 'spawn', 'system', 'queues', 'activity'];

const stream = new Stream();
let state = new State(stream, null);
let conn = 'loading';    // the connection, as the header says it
let step = 0;            // events applied in the shown state
let follow = true;       // the step follows the end of the stream
let selected = null;     // index of the clicked event
let frontier = null;     // its frontier: tid -> "tid:seq"
let view = VIEWS.includes(params.get('view')) ? params.get('view') : 'spacetime';
let timeMode = params.get('time') === 'real' ? 'real' : 'logical';
let squeeze = true;
let playing = null;
let dirty = false;
let zoom = 1;            // space-time and activity: visible fraction 1/zoom
let pan = 0;             // left edge, 0..1 of the whole axis
const zoomOf = {};       // per time mode, the zoom it was left at
const groupsShown = new Set();

const $ = (id) => document.getElementById(id);
const hex = (tid) => 't' + Number(tid).toString(16);
// Where a task waits, as every pmon view writes it (tools/render.c,
// render_wait): pvm_recv(t40004,1), pvm_recv(any,any), pvm_barrier(g).
const waitText = (b) => b.group !== undefined ? b.in + '(' + b.group + ')' :
  b.in + '(' + (b.from > 0 ? hex(b.from) : 'any') + ',' + (b.tag >= 0 ? b.tag : 'any') + ')';

function el(name, attrs, parent) {
  const e = document.createElementNS(SVGNS, name);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (parent) parent.appendChild(e);
  return e;
}

function taskName(tid) {
  const i = stream.info.get(tid);
  return hex(tid) + (i ? ' ' + i.program.replace(/.*\//, '') : '') +
    (i && i.unmonitored ? ' (unmonitored)' : '');
}

// --- the stream -------------------------------------------------------------

// A line of the stream.  Times are ns since the epoch, above 2^53: as
// JavaScript numbers they keep steps of 256 ns, so an event also keeps
// the nanoseconds within the second of t and tc, read from the line's
// digits (exact); the seconds follow from the number (exactNs).
function parse(text) {
  const m = JSON.parse(text);
  if (m.type === undefined && m.id !== undefined) {
    m.t_ns = lastDigits(text, '"t":');
    m.tc_ns = lastDigits(text, '"tc":');
  }
  return m;
}

// The last nine digits of the integer after key in text, or -1.
function lastDigits(text, key) {
  let b = text.indexOf(key);
  if (b < 0) return -1;
  b += key.length;
  let e = b;
  for (let c = text.charCodeAt(e); c >= 48 && c <= 57; c = text.charCodeAt(++e));
  let n = 0;
  for (let k = Math.max(b, e - 9); k < e; k++) n = n * 10 + text.charCodeAt(k) - 48;
  return n;
}

// [seconds, nanoseconds] of a time and its exact last digits.
const exactNs = (t, ns) => [Math.round((t - ns) / 1e9), ns];

function receive(m) {
  if (m.type === 'hello') {
    stream.reset();
    stream.hello = m;
    stream.dropped = m.dropped;
    if (!m.live) conn = 'coordinator gone';
    restart();
    return;
  }
  stream.add(m);
  if (m.type === 'snapshot' && stream.segments.length === 1) restart();
  if (m.type === 'bye') conn = 'coordinator gone';
  if (follow) step = stream.events.length;
  schedule();
}

function restart() {
  state = new State(stream, stream.segmentAt(0));
  selected = null;
  frontier = null;
}

// The state at the current step: forwards from the shown one, or again
// from the last snapshot at or before the step (after a loss: the one
// that followed it) when going back or across a snapshot.
function stateAt(n) {
  const seg = stream.segmentAt(n);
  if (n < state.step || seg !== state.seg) state = new State(stream, seg);
  state.advance(n);
  return state;
}

function schedule() {
  if (dirty) return;
  dirty = true;
  requestAnimationFrame(() => {
    dirty = false;
    render();
  });
}

// The live stream.  With ?test=1&sse=1 the same EventSource path reads
// /events?once=1 and writes the model at its end (tests: Chromium's
// virtual time waits for a response that ends, not for a live one).
function connect() {
  const once = TEST ? '&once=1' : '';
  const src = new EventSource('/events?k=' + encodeURIComponent(KEY) + once);
  src.onmessage = (e) => {
    const m = parse(e.data);
    if (m.type !== 'end') return receive(m);
    src.close();
    conn = 'loaded';
    render();
    writeModel();
  };
  src.onerror = () => {
    conn = 'disconnected; retrying';
    schedule();
  };
  src.onopen = () => {
    conn = 'live';
    schedule();
  };
}

let loadMs = 0;
async function loadOnce() {
  const r = await fetch('/events?once=1&k=' + encodeURIComponent(KEY));
  const text = await r.text();
  const t0 = performance.now();
  for (const block of text.split('\n\n')) {
    if (block.startsWith('data: ')) receive(parse(block.slice(6)));
  }
  loadMs = performance.now() - t0;
  if (params.has('step')) {
    follow = false;
    step = Math.min(+params.get('step'), stream.events.length);
  }
  if (params.has('select')) selectEvent(stream.byId.get(params.get('select')));
  conn = 'loaded';
  render();
  await writeModel();
}

// ?test=1: the model, and how it compares with the coordinator's
// snapshot, as JSON in <pre id=model> for tests that read the DOM.
async function writeModel() {
  const steps = params.has('steps') ? params.get('steps').split(',').map(Number) : [];
  const at = steps.filter((n) => n >= 0 && n <= stream.events.length).map((n) => stateAt(n).summary());
  const out = stateAt(step).summary();
  out.view = view;
  out.dropped = stream.dropped;
  out.gap = stream.hello.gap || 0;
  out.problems = stream.problems.length;
  out.drawn = drawnCounts();
  out.status = $('status').textContent;
  out.lossinfo = $('lossinfo').textContent;
  out.losslist = [...document.querySelectorAll('#losses li')].map((li) => li.textContent);
  out.lost = stream.lostTotal();
  out.losses = stream.losses.map((l) => ({ at: l.at, events: l.events,
    tasks: l.tasks.map((t) => t.tid), snapshot: l.snapshot ? l.snapshot.at : null }));
  out.segments = stream.segments.map((g) => ({ at: g.at, why: g.why }));
  out.steps = at;
  if (selected !== null) out.frontier = frontier;
  out.details = [...document.querySelectorAll('#details tr')].map((tr) =>
    [...tr.cells].map((c) => c.textContent).join(': '));
  out.problem_lines = [...document.querySelectorAll('#problems li')].map((li) => li.textContent);
  try {
    const r = await fetch('/snapshot?k=' + encodeURIComponent(KEY));
    const snap = await r.json();
    out.snapshot_diffs = step === stream.events.length ? state.compare(snap) : null;
  } catch (e) {
    out.snapshot_diffs = ['no snapshot: ' + e];
  }
  $('model').textContent = JSON.stringify(out);
  document.body.dataset.ready = '1';
}

// ?bench=1 (bench/bench_web.sh): what the page costs with this stream.
function bench() {
  const ms = (f) => {
    const t0 = performance.now();
    f();
    return Math.round((performance.now() - t0) * 10) / 10;
  };
  const shown = view;
  const t = { load: Math.round(loadMs) };
  for (const v of VIEWS) t['render_' + v] = ms(() => { view = v; render(); });
  view = 'spacetime';
  const n = stream.events.length;
  t.step_back = ms(() => { step = n - 1; render(); });
  t.step_forward = ms(() => { step = n; render(); });
  t.frontier_last = ms(() => selectEvent(n - 1));
  view = shown;
  render();
  return t;
}

// What the SVG views drew, counted from their elements.
function drawnCounts() {
  const q = (s) => document.querySelectorAll(s).length;
  return {
    task_icons: q('#concurrency [data-task]'),
    container: q('#concurrency [data-host]'),
    arrows_send: q('#concurrency [data-arrow="send"]'),
    arrows_wait: q('#concurrency [data-arrow="wait"]'),
    spawn_nodes: q('#spawn [data-task]'),
    spacetime_arrows: spacetimeDrawn,
    spacetime_spawns: spacetimeSpawns,
    spacetime_losses: spacetimeLost,
    slider_marks: q('#lossmarks option'),
  };
}

// --- controls ---------------------------------------------------------------

function setStep(n, keepFollow) {
  step = Math.max(0, Math.min(n, stream.events.length));
  if (!keepFollow) follow = step === stream.events.length;
  schedule();
}

function selectEvent(i) {
  if (i === undefined || i === null) return;
  selected = i;
  frontier = stream.frontier(i);
  schedule();
}

function setupControls() {
  $('back').onclick = () => setStep(step - 1);
  $('fwd').onclick = () => setStep(step + 1);
  $('start').onclick = () => setStep(0);
  $('end').onclick = () => setStep(stream.events.length);
  $('slider').oninput = (e) => setStep(+e.target.value);
  $('play').onclick = () => {
    if (playing) {
      clearInterval(playing);
      playing = null;
      $('play').textContent = 'play';
      return;
    }
    if (step >= stream.events.length) setStep(0);
    $('play').textContent = 'pause';
    playing = setInterval(() => {
      const n = Math.max(1, Math.round(stream.events.length / 400));
      setStep(step + n);
      if (step >= stream.events.length) $('play').click();
    }, 50);
  };
  $('timemode').value = timeMode;
  $('timemode').onchange = (e) => {
    zoomOf[timeMode] = { zoom, pan };      // each mode keeps its own
    timeMode = e.target.value;
    ({ zoom, pan } = zoomOf[timeMode] || { zoom: 1, pan: 0 });
    schedule();
  };
  $('zoomreset').onclick = () => { zoom = 1; pan = 0; schedule(); };
  $('squeeze').onchange = (e) => { squeeze = e.target.checked; schedule(); };
  for (const b of document.querySelectorAll('#tabs button')) {
    b.onclick = () => { view = b.dataset.view; schedule(); };
  }
  $('stopall').onclick = () => control('stop *');
  $('contall').onclick = () => control('continue *');
  for (const id of ['stcanvas', 'actcanvas']) {
    const c = $(id);
    c.onwheel = (e) => {
      e.preventDefault();
      const f = e.deltaY < 0 ? 1.25 : 0.8;
      const at = pan + (e.offsetX / c.clientWidth) / zoom;
      zoom = Math.max(1, zoom * f);
      pan = Math.max(0, Math.min(1 - 1 / zoom, at - (e.offsetX / c.clientWidth) / zoom));
      schedule();
    };
  }
  dragToPan($('stcanvas'));
  $('stcanvas').onclick = (e) => {
    if (!dragged) selectEvent(hitEvent(e.offsetX, e.offsetY));
  };
  $('stcanvas').ondblclick = () => { zoom = 1; pan = 0; schedule(); };
}

// Drag to pan the zoomed axis; a drag is not a click.
let dragged = false;
function dragToPan(c) {
  let x0 = null, pan0 = 0;
  c.onmousedown = (e) => { x0 = e.offsetX; pan0 = pan; dragged = false; };
  c.onmousemove = (e) => {
    if (x0 === null || zoom <= 1) return;
    const dx = e.offsetX - x0;
    if (Math.abs(dx) > 3) dragged = true;
    pan = Math.max(0, Math.min(1 - 1 / zoom, pan0 - dx / ((c.clientWidth - LEFT - 10) * zoom)));
    schedule();
  };
  c.onmouseup = c.onmouseleave = () => { x0 = null; };
}

async function control(text) {
  const r = await fetch('/request?k=' + encodeURIComponent(KEY), { method: 'POST', body: text });
  $('details').textContent = text + ': ' + (await r.text());
}

// --- geometry: the x axis of the space-time and activity views --------------

const ROW = 26;
const LEFT = 110;

function taskOrder() {
  return [...stream.byTask.keys()].concat([...stream.info.keys()]
    .filter((t) => !stream.byTask.has(t))).filter((t, i, a) => a.indexOf(t) === i)
    .sort((a, b) => a - b);
}

// Real time with idle gaps squeezed (paper 001 section 4): a gap longer
// than `limit' in which no task recorded anything is drawn `limit' wide.
let squeezeCache = null;
function realAxis() {
  const n = stream.events.length;
  if (squeezeCache && squeezeCache.n === n && squeezeCache.on === squeeze) return squeezeCache;
  const ts = stream.events.map((e) => e.tc).sort((a, b) => a - b);
  const span = Math.max(1, ts[ts.length - 1] - ts[0]);
  const limit = squeeze ? span / 50 : Infinity;
  const at = [0];
  const gaps = [];
  for (let i = 1; i < ts.length; i++) {
    const d = ts[i] - ts[i - 1];
    if (d > limit) gaps.push(i);
    at.push(at[i - 1] + Math.min(d, limit));
  }
  squeezeCache = { n, on: squeeze, ts, at, total: Math.max(1, at[at.length - 1]), gaps };
  return squeezeCache;
}

// Position of time tc on the squeezed axis, 0..1.
function realPos(ax, tc) {
  let lo = 0, hi = ax.ts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (ax.ts[mid] <= tc) lo = mid; else hi = mid - 1;
  }
  const extra = Math.min(tc - ax.ts[lo], (ax.at[lo + 1] ?? ax.at[lo]) - ax.at[lo]);
  return (ax.at[lo] + Math.max(0, extra)) / ax.total;
}

function logicalEnd() {
  let maxX = 1;
  for (const x of stream.lastX.values()) maxX = Math.max(maxX, x);
  return maxX + 1;
}

function toPx(pos, width) {
  return LEFT + (pos - pan) * zoom * (width - LEFT - 10);
}

// --- space-time diagram -------------------------------------------------------

let spacetimeDrawn = 0;
let hitList = [];

function drawSpacetime() {
  const c = $('stcanvas');
  const order = taskOrder();
  const rowOf = new Map(order.map((t, i) => [t, i]));
  const w = c.clientWidth || 1000;
  const rows = Math.max(160, order.length * ROW + 20);
  const h = rows + AXIS_H;
  c.width = w;
  c.height = h;
  const g = c.getContext('2d');
  g.clearRect(0, 0, w, h);
  g.font = '11px sans-serif';
  const y = (tid) => 20 + rowOf.get(tid) * ROW;
  g.strokeStyle = '#9ccc65';   // computing, between calls
  g.beginPath();
  for (const t of order) {
    g.moveTo(LEFT, y(t));
    g.lineTo(w - 10, y(t));
  }
  g.stroke();
  drawAxis(g, w, rows);
  if (timeMode === 'real' && squeeze) drawGaps(g, rows);
  const evs = stream.events;
  const pos = new Float64Array(evs.length);
  if (timeMode === 'real') {
    const ax = realAxis();
    for (let i = 0; i < evs.length; i++) pos[i] = toPx(realPos(ax, evs[i].tc), w);
  } else {
    const end = logicalEnd();
    for (let i = 0; i < evs.length; i++) pos[i] = toPx(evs[i].x / end, w);
  }
  hitList = [];
  spacetimeDrawn = 0;
  drawCallBars(g, pos, y, w);
  drawSpawnArrows(g, pos, y);
  for (const [s, r] of stream.arrows) {
    const a = pos[s], b = pos[r];
    if ((a < LEFT && b < LEFT) || (a > w && b > w)) continue;
    g.strokeStyle = r < step ? '#1565c0' : '#cfd8e3';
    arrow(g, a, y(evs[s].tid), b, y(evs[r].tid));
    if (r < step) spacetimeDrawn++;
  }
  for (let i = 0; i < evs.length; i++) {
    const x = pos[i];
    if (x < LEFT - 2 || x > w) continue;
    const e = evs[i];
    g.fillStyle = i >= step ? '#ccc' : SENDS.has(e.call) ? '#1565c0' :
      e.call === 'lost' ? '#d00' : e.phase === 'begin' ? '#555' : '#999';
    g.fillRect(x - 2, y(e.tid) - 4, 4, 8);
    hitList.push([x, y(e.tid), i]);
  }
  drawLosses(g, pos, y, w);
  drawCursor(g, pos, rows);
  drawFrontier(g, pos, y);
  // Last, the names, over a blank margin: nothing drawn covers them.
  g.clearRect(0, 0, LEFT - 4, rows);
  g.fillStyle = '#333';
  for (const t of order) g.fillText(taskName(t), 4, y(t) + 4);
}

const AXIS_H = 34;
// In a PVM call, blocked; then both beyond the step, paler.
const CALL_COLOURS = ['#ffca28', '#e53935', '#ffeeb8', '#f7b9b8'];

// Each call as a bar from its begin to its end (to the right edge while
// it has none, a deadlock's receive say): red while blocked, amber in
// any other PVM call; the row's green line between calls is computing.
// Bars narrower than a pixel where the row already has one are not
// drawn again: an unzoomed storm costs a bar per pixel, not per call.
function drawCallBars(g, pos, y, w) {
  const evs = stream.events;
  const blocking = window.PmonModel.BLOCKING;
  let style = -1;
  for (const [tid, mine] of stream.byTask) {
    const ry = y(tid) - 3;
    let lastPix = -1;
    for (let k = 0; k < mine.length; k++) {
      const i = mine[k], b = evs[i].begin;
      const last = k === mine.length - 1 && evs[i].phase === 'begin' && evs[i].call !== 'pvm_exit';
      if (b < 0 && !last) continue;
      const from = last ? i : b;
      const x1 = pos[from], x2 = last ? w - 10 : pos[i];
      if (x2 < LEFT || x1 > w) continue;
      const px = Math.floor(x2);
      if (x2 - x1 < 1 && px === lastPix) continue;
      lastPix = px;
      const s = (blocking.has(evs[from].call) ? 1 : 0) + (from < step ? 0 : 2);
      if (s !== style) {    // a colour is parsed each time it is set
        style = s;
        g.fillStyle = CALL_COLOURS[s];
      }
      g.fillRect(x1, ry, Math.max(1, x2 - x1), 6);
    }
  }
}

// A spawned task's arrow: from its parent's pvm_spawn to its first event.
let spacetimeSpawns = 0;
function drawSpawnArrows(g, pos, y) {
  spacetimeSpawns = 0;
  g.strokeStyle = '#8e24aa';
  g.setLineDash([4, 3]);
  for (const [tid, info] of stream.info) {
    const evs = stream.byTask.get(tid);
    if (!info.parent || !info.spawn_seq || !evs || !evs.length) continue;
    const from = stream.byId.get(info.parent + ':' + info.spawn_seq);
    if (from === undefined) continue;
    arrow(g, pos[from], y(info.parent), pos[evs[0]], y(tid));
    spacetimeSpawns++;
  }
  g.setLineDash([]);
}

// The axis under the rows: time since the first event, with units, in
// real time; the logical clock's steps in partial order.
function drawAxis(g, w, top) {
  const span = w - LEFT - 10;
  g.strokeStyle = '#555';
  g.fillStyle = '#333';
  g.font = '10px sans-serif';
  g.beginPath();
  g.moveTo(LEFT, top + 4);
  g.lineTo(w - 10, top + 4);
  g.stroke();
  const at = (x) => pan + (x - LEFT) / (span * zoom);   // 0..1 of the axis
  let label;
  if (timeMode === 'real' && stream.events.length > 0) {
    const ax = realAxis();
    const t0 = ax.ts[0];
    const seen = (at(w - 10) - at(LEFT)) * ax.total;
    const unit = seen >= 2e9 ? [1e9, 's'] : seen >= 2e6 ? [1e6, 'ms'] : seen >= 2e3 ? [1e3, 'µs'] : [1, 'ns'];
    label = (f) => ((realTime(ax, f) - t0) / unit[0]).toFixed(unit[0] > 1 ? 3 : 0) + ' ' + unit[1];
    g.fillText('time since the first event' + (squeeze ? ' (idle gaps squeezed)' : ''), LEFT, top + 30);
  } else {
    const end = logicalEnd();
    label = (f) => String(Math.round(f * end));
    g.fillText('logical time (causal order, not real time)', LEFT, top + 30);
  }
  for (let k = 0; k <= 8; k++) {
    const x = LEFT + k * span / 8;
    g.beginPath();
    g.moveTo(x, top + 4);
    g.lineTo(x, top + 8);
    g.stroke();
    const text = label(at(x));
    const tw = g.measureText(text).width;
    g.fillText(text, Math.min(Math.max(LEFT, x - tw / 2), w - 10 - tw), top + 18);
  }
  g.font = '11px sans-serif';
}

// The time at position f (0..1) of the squeezed axis (realPos's inverse).
function realTime(ax, f) {
  const a = f * ax.total;
  let lo = 0, hi = ax.at.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (ax.at[mid] <= a) lo = mid; else hi = mid - 1;
  }
  return ax.ts[lo] + (a - ax.at[lo]);
}

// Where pmon web lost events (doc/web.md, "Losses"): on the line of
// each task that lost some, a red bar from its last event before them
// to its first after them (at least 8 pixels), labelled with how many
// where the label does not cover another.
let spacetimeLost = 0;
function drawLosses(g, pos, y, w) {
  spacetimeLost = 0;
  g.lineWidth = 5;
  g.font = '10px sans-serif';
  const labelEnd = new Map();   // tid -> right end of its last label
  for (const l of stream.losses) {
    for (const t of l.tasks || []) {
      if (!stream.info.has(t.tid) && !stream.byTask.has(t.tid)) continue;
      const [a, b] = stream.lossGap(t.tid, t.first);
      let x1 = a === undefined ? LEFT : pos[a];
      let x2 = b === undefined ? w - 10 : pos[b];
      if (x2 - x1 < 8) {
        x1 = (x1 + x2) / 2 - 4;
        x2 = x1 + 8;
      }
      if (x2 < LEFT || x1 > w) continue;
      g.strokeStyle = l.at <= step ? 'rgba(211,47,47,0.75)' : 'rgba(211,47,47,0.3)';
      g.beginPath();
      g.moveTo(Math.max(x1, LEFT), y(t.tid));
      g.lineTo(Math.min(x2, w - 10), y(t.tid));
      g.stroke();
      const text = 'lost ' + num(t.events);
      const lx = Math.max(x1, LEFT);
      if (lx > (labelEnd.get(t.tid) ?? -Infinity) + 4) {
        g.fillStyle = '#c62828';
        g.fillText(text, lx, y(t.tid) - 6);
        labelEnd.set(t.tid, lx + g.measureText(text).width);
      }
      spacetimeLost++;
    }
  }
  g.lineWidth = 1;
  g.font = '11px sans-serif';
}

// The squeezed idle gaps, each labelled with the time it removed.
function drawGaps(g, h) {
  const ax = realAxis();
  const limit = (ax.ts[ax.ts.length - 1] - ax.ts[0]) / 50;
  g.strokeStyle = '#e08';
  g.fillStyle = '#e08';
  g.font = '10px sans-serif';
  g.setLineDash([3, 3]);
  let lastEnd = -Infinity;
  for (const i of ax.gaps) {
    const x = toPx(ax.at[i] / ax.total, $('stcanvas').width) - 2;
    g.beginPath();
    g.moveTo(x, 10);
    g.lineTo(x, h - 4);
    g.stroke();
    const text = '−' + dur(ax.ts[i] - ax.ts[i - 1] - limit);
    if (x - 2 > lastEnd) {
      g.fillText(text, x + 2, 10);
      lastEnd = x + 2 + g.measureText(text).width;
    }
  }
  g.setLineDash([]);
  g.font = '11px sans-serif';
}

// A duration in ns, in the unit that suits it: 1.25 s, 340 ms, 12 µs.
function dur(ns) {
  if (ns >= 1e9) return (ns / 1e9).toFixed(2) + ' s';
  if (ns >= 1e6) return (ns / 1e6).toFixed(1) + ' ms';
  if (ns >= 1e3) return (ns / 1e3).toFixed(1) + ' µs';
  return Math.round(ns) + ' ns';
}

function arrow(g, x1, y1, x2, y2) {
  g.beginPath();
  g.moveTo(x1, y1);
  g.lineTo(x2, y2);
  const a = Math.atan2(y2 - y1, x2 - x1);
  g.lineTo(x2 - 7 * Math.cos(a - 0.4), y2 - 7 * Math.sin(a - 0.4));
  g.moveTo(x2, y2);
  g.lineTo(x2 - 7 * Math.cos(a + 0.4), y2 - 7 * Math.sin(a + 0.4));
  g.stroke();
}

function drawCursor(g, pos, h) {
  if (step === 0 || step > pos.length) return;
  const x = pos[step - 1];
  g.strokeStyle = '#2e7d32';
  g.beginPath();
  g.moveTo(x, 5);
  g.lineTo(x, h - 5);
  g.stroke();
}

// The clicked event, and its frontier joined into a line (a stopline).
function drawFrontier(g, pos, y) {
  if (selected === null) return;
  const ev = stream.events[selected];
  g.strokeStyle = '#e65100';
  g.lineWidth = 2;
  g.strokeRect(pos[selected] - 5, y(ev.tid) - 7, 10, 14);
  g.beginPath();
  for (const id of Object.values(frontier || {})) {
    const i = stream.byId.get(id);
    if (i === undefined) continue;
    g.moveTo(pos[i] + 5, y(stream.events[i].tid));
    g.arc(pos[i], y(stream.events[i].tid), 5, 0, 2 * Math.PI);
  }
  g.stroke();
  g.lineWidth = 1;
}

function hitEvent(x, yy) {
  let best = null, bd = 64;
  for (const [hx, hy, i] of hitList) {
    const d = (hx - x) ** 2 + (hy - yy) ** 2;
    if (d < bd) {
      bd = d;
      best = i;
    }
  }
  return best;
}

// --- concurrency view (paper 003 section 2) ---------------------------------

function hostsOf() {
  const hosts = new Map();
  for (const t of taskOrder()) {
    const i = stream.info.get(t);
    const h = i ? i.host : '?';
    if (!hosts.has(h)) hosts.set(h, []);
    hosts.get(h).push(t);
  }
  return hosts;
}

function drawConcurrency(st) {
  const svg = $('concsvg');
  svg.replaceChildren();
  const defs = el('defs', {}, svg);
  const mk = el('marker', { id: 'head', viewBox: '0 0 10 10', refX: 10, refY: 5,
    markerWidth: 7, markerHeight: 7, orient: 'auto-start-reverse' }, defs);
  el('path', { d: 'M0,0 L10,5 L0,10 z' }, mk);
  const where = new Map();
  let hx = 20;
  for (const [host, tids] of hostsOf()) {
    const cols = Math.ceil(Math.sqrt(tids.length));
    const box = el('g', { 'data-host': host }, svg);
    const bw = cols * 90 + 20, bh = Math.ceil(tids.length / cols) * 80 + 40;
    el('rect', { x: hx, y: 20, width: bw, height: bh, rx: 8, class: 'host' }, box);
    el('text', { x: hx + 8, y: 36, class: 'hostname' }, box).textContent = host;
    tids.forEach((t, k) => where.set(t, [hx + 55 + (k % cols) * 90, 80 + Math.floor(k / cols) * 80]));
    hx += bw + 30;
  }
  drawBarriers(svg, st, where, hx);
  drawQueuedArrows(svg, st, where);
  drawWaitArrows(svg, st, where);
  for (const [t, [x, y]] of where) {
    const m = st.tasks.get(t) || { state: 'running' };
    const inGroup = [...groupsShown].some((g) => st.groups.get(g)?.members.has(t));
    const shown = st.tasks.has(t) ? st.shownState(m) : m.state;
    const n = el('g', { 'data-task': t, 'data-state': shown, class: 'task ' + m.state +
      (inGroup ? ' ingroup' : '') + (shown === 'stopped' ? ' stopped' : '') }, svg);
    el('circle', { cx: x, cy: y, r: 20 }, n);
    el('text', { x, y: y + 4, 'text-anchor': 'middle' }, n).textContent = hex(t);
    const label = (shown === 'stopped' ? 'stopped, ' : '') + m.state +
      ((st.queues.get(t) || []).length ? ' q' + st.queues.get(t).length : '');
    el('text', { x, y: y + 34, 'text-anchor': 'middle', class: 'small' }, n).textContent = label;
  }
  svg.setAttribute('width', Math.max(hx + 260, 400));
  svg.setAttribute('height', 400);
  drawGroupList(st);
}

function drawBarriers(svg, st, where, hx) {
  let y = 60;
  for (const g of st.groups.values()) {
    if (g.waiting.size === 0) continue;
    const x = hx + 40;
    const b = el('g', { 'data-barrier': g.name, class: 'barrier' }, svg);
    el('polygon', { points: `${x},${y - 16} ${x + 16},${y} ${x},${y + 16} ${x - 16},${y}` }, b);
    el('text', { x: x + 22, y: y + 4 }, b).textContent = 'barrier ' + g.name + ' (' + g.waiting.size + ')';
    for (const t of g.waiting) {
      if (!where.has(t)) continue;
      const [tx, ty] = where.get(t);
      el('line', { x1: tx, y1: ty, x2: x - 16, y2: y, class: 'wait', 'data-arrow': 'wait',
        'marker-end': 'url(#head)' }, svg);
    }
    y += 50;
  }
}

// Messages sent and not yet received: one arrow per pair, with a count.
function drawQueuedArrows(svg, st, where) {
  for (const [to, q] of st.queues) {
    const by = new Map();
    for (const m of q) by.set(m.from, (by.get(m.from) || 0) + 1);
    for (const [from, n] of by) {
      if (!where.has(from) || !where.has(to)) continue;
      line(svg, where.get(from), where.get(to), 'send', n > 1 ? n + ' msgs' : '1 msg',
        { 'data-from': from, 'data-to': to, 'data-count': n });
    }
  }
}

function drawWaitArrows(svg, st, where) {
  for (const [t, m] of st.tasks) {
    const b = st.blockedOf(m);
    if (!b || b.group !== undefined || !where.has(t)) continue;
    if (b.from > 0 && where.has(b.from)) {
      line(svg, where.get(t), where.get(b.from), 'wait', waitText(b),
        { 'data-from': t, 'data-to': b.from });
    } else {
      const [x, y] = where.get(t);
      el('text', { x: x + 22, y: y - 18, class: 'small wait', 'data-arrow': 'wait',
        'data-from': t }, svg).textContent = waitText(b);
    }
  }
}

function line(svg, [x1, y1], [x2, y2], kind, label, attrs) {
  const d = Math.hypot(x2 - x1, y2 - y1) || 1;
  const ux = (x2 - x1) / d, uy = (y2 - y1) / d;
  const off = kind === 'wait' ? 4 : -4;   // both directions stay visible
  el('line', { x1: x1 + ux * 22 - uy * off, y1: y1 + uy * 22 + ux * off,
    x2: x2 - ux * 22 - uy * off, y2: y2 - uy * 22 + ux * off, class: kind,
    'data-arrow': kind, 'marker-end': 'url(#head)', ...attrs }, svg);
  el('text', { x: (x1 + x2) / 2 - uy * 12, y: (y1 + y2) / 2 + ux * 12, class: 'small' }, svg)
    .textContent = label;
}

function drawGroupList(st) {
  const ul = $('grouplist');
  ul.replaceChildren();
  for (const g of st.groups.values()) {
    const li = document.createElement('li');
    const cb = document.createElement('input');
    cb.type = 'checkbox';
    cb.checked = groupsShown.has(g.name);
    cb.onchange = () => {
      if (cb.checked) groupsShown.add(g.name); else groupsShown.delete(g.name);
      schedule();
    };
    li.append(cb, ' ' + g.name + ' (' + g.members.size + ')');
    li.dataset.group = g.name;
    ul.appendChild(li);
  }
}

// --- object creation (spawn tree) and system views ---------------------------

function drawSpawn(st) {
  const svg = $('spawnsvg');
  svg.replaceChildren();
  const kids = new Map();
  const roots = [];
  for (const t of taskOrder()) {
    const p = stream.info.get(t)?.parent || 0;
    if (p > 0 && (stream.info.has(p) || stream.byTask.has(p))) {
      if (!kids.has(p)) kids.set(p, []);
      kids.get(p).push(t);
    } else roots.push(t);
  }
  let row = 0;
  const place = (t, depth) => {
    const y = 30 + row++ * 34, x = 30 + depth * 60;
    const m = st.tasks.get(t) || { state: 'running' };
    const n = el('g', { 'data-task': t, 'data-parent': stream.info.get(t)?.parent || 0,
      'data-state': m.state, class: 'task ' + m.state }, svg);
    el('circle', { cx: x, cy: y, r: 10 }, n);
    el('text', { x: x + 16, y: y + 4 }, n).textContent = taskName(t) + ' ' +
      (stream.info.get(t)?.host || '') + ' ' + m.state;
    for (const k of kids.get(t) || []) {
      const ky = 30 + row * 34;
      el('path', { d: `M${x},${y + 10} V${ky} H${x + 50}`, class: 'tree' }, svg);
      place(k, depth + 1);
    }
  };
  for (const r of roots) place(r, 0);
  svg.setAttribute('height', 40 + row * 34);
}

function drawSystem(st) {
  const div = $('system');
  div.replaceChildren();
  for (const [host, tids] of hostsOf()) {
    const box = document.createElement('div');
    box.className = 'hostbox';
    box.dataset.host = host;
    const count = {};
    for (const t of tids) {
      const s = st.tasks.get(t)?.state || 'running';
      count[s] = (count[s] || 0) + 1;
    }
    box.dataset.tasks = tids.length;
    const h = document.createElement('h3');
    h.textContent = host + ': ' + tids.length + ' tasks';
    const p = document.createElement('p');
    p.textContent = Object.entries(count).map(([k, v]) => v + ' ' + k).join(', ');
    const ul = document.createElement('ul');
    for (const t of tids) {
      const li = document.createElement('li');
      li.className = st.tasks.get(t)?.state || '';
      li.textContent = taskName(t) + ': ' + li.className;
      ul.appendChild(li);
    }
    box.append(h, p, ul);
    div.appendChild(box);
  }
}

function drawQueues(st) {
  const tb = $('queuerows');
  tb.replaceChildren();
  for (const t of taskOrder()) {
    const q = st.queues.get(t) || [];
    const tr = document.createElement('tr');
    tr.dataset.task = t;
    tr.dataset.queue = q.length;
    const cells = [taskName(t), String(q.length),
      q.map((m) => hex(m.from) + ' tag ' + m.tag + ' ' + m.bytes + ' B').join('; ')];
    for (const c of cells) {
      const td = document.createElement('td');
      td.textContent = c;
      tr.appendChild(td);
    }
    tb.appendChild(tr);
  }
}

// --- activity over time (paper 004 section 5) -------------------------------

// Per task, intervals: computing between calls, in PVM, blocked.
function drawActivity() {
  const c = $('actcanvas');
  const order = taskOrder();
  const w = c.clientWidth || 1000;
  c.width = w;
  c.height = Math.max(120, order.length * ROW + 40);
  const g = c.getContext('2d');
  g.font = '11px sans-serif';
  const ax = realAxis();
  const px = (tc) => toPx(realPos(ax, tc), w);
  const colour = { computing: '#66bb6a', pvm: '#ffca28', blocked: '#e53935', lost: '#9e9e9e' };
  order.forEach((t, r) => {
    const y = 14 + r * ROW;
    g.fillStyle = '#333';
    g.fillText(taskName(t), 4, y + 12);
    let prev = null;
    for (const i of stream.byTask.get(t) || []) {
      if (i >= step) break;
      const e = stream.events[i];
      if (prev !== null) {
        // Events missing in between (lost): what the task did is unknown.
        const kind = e.seq !== prev.seq + 1 && prev.call !== 'lost' ? 'lost' :
          e.phase === 'end' && prev.phase === 'begin' && prev.call === e.call ?
          (window.PmonModel.BLOCKING.has(e.call) ? 'blocked' : 'pvm') : 'computing';
        g.fillStyle = colour[kind];
        const a = px(prev.tc), b = px(e.tc);
        if (b >= LEFT && a <= w) g.fillRect(Math.max(a, LEFT), y, Math.max(1, b - Math.max(a, LEFT)), 16);
      }
      prev = e;
    }
    // A call still open at this step lasts until the step's time.
    if (prev && prev.phase === 'begin' && step > 0) {
      const now = stream.events[step - 1].tc;
      g.fillStyle = colour[window.PmonModel.BLOCKING.has(prev.call) ? 'blocked' : 'pvm'];
      const a = Math.max(px(prev.tc), LEFT), b = px(now);
      if (b > a) g.fillRect(a, y, b - a, 16);
    }
  });
  let lx = LEFT;
  for (const [k, v] of Object.entries(colour)) {
    g.fillStyle = v;
    g.fillRect(lx, c.height - 16, 12, 12);
    g.fillStyle = '#333';
    g.fillText(k, lx + 16, c.height - 6);
    lx += 100;
  }
}

// --- details of the selected event ------------------------------------------

const tidText = (t) => t === -1 ? 'any' : hex(t);
const idText = (id) => {
  const [t, q] = String(id).split(':');
  return hex(t) + ':' + q;
};
const ns9 = (n) => String(n).padStart(9, '0');
const TID_CALLS = new Set(['pvm_mytid', 'pvm_parent', 'pvm_gettid', 'pvm_tidtohost']);

// ev's time since the first event, exact: "+1.000000123 s".
function since(ev) {
  const f = stream.events[0];
  if (!f || ev.tc_ns < 0 || f.tc_ns < 0) return '';
  const [s1, n1] = exactNs(ev.tc, ev.tc_ns), [s0, n0] = exactNs(f.tc, f.tc_ns);
  let s = s1 - s0, n = n1 - n0;
  if (n < 0) { s -= 1; n += 1e9; }
  return '+' + s + '.' + ns9(n) + ' s';
}
const exactText = (t, ns) => ns < 0 ? String(t) : exactNs(t, ns)[0] + ns9(ns);

// The rows of the details table, label and value, in words.
function detailRows(ev) {
  const rows = [['event', idText(ev.id)],
    ['task', hex(ev.tid) + ' ' + ev.program + ' on ' + ev.host]];
  if (ev.call === 'lost') {
    rows.push(['lost', num(ev.count ?? 0) + ' events']);
  } else rows.push(['call', ev.call + ' ' + (ev.phase || '')]);
  if (ev.src !== undefined) rows.push(['from', tidText(ev.src)]);
  if (ev.dst !== undefined) {
    rows.push(['to', Array.isArray(ev.dst) ? ev.dst.map(hex).join(' ') : tidText(ev.dst)]);
  }
  if (ev.tag !== undefined) rows.push(['tag', ev.tag === -1 ? 'any' : String(ev.tag)]);
  if (ev.ctx > 0) rows.push(['context', String(ev.ctx)]);
  if (ev.bytes >= 0 && ev.call !== 'lost') rows.push(['size', num(ev.bytes) + ' B']);
  if (ev.match !== undefined) rows.push(['matched send', idText(ev.match)]);
  if (ev.unmatched) rows.push(['matched send', ev.sender === 'unmonitored' ? 'none (an unmonitored task)' : 'none']);
  if (Array.isArray(ev.children)) rows.push(['children', ev.children.map(hex).join(' ')]);
  if (ev.group !== undefined && ev.group !== '') {
    rows.push(['group', ev.group + (ev.inst >= 0 ? ', instance ' + ev.inst : '')]);
  }
  if (ev.rc !== undefined) rows.push(['returned', TID_CALLS.has(ev.call) && ev.rc > 0 ? hex(ev.rc) : String(ev.rc)]);
  rows.push(['time', since(ev)]);
  if (ev.tc !== undefined) {
    rows.push(['tc (ns)', exactText(ev.tc, ev.tc_ns)], ['t, its host (ns)', exactText(ev.t, ev.t_ns)]);
  }
  for (const f of ['inconsistent', 'again']) if (ev[f]) rows.push(['note', f]);
  return rows;
}

function drawDetails() {
  const d = $('details');
  if (selected === null) return;
  const ev = stream.events[selected];
  const tb = document.createElement('table');
  for (const [k, v] of detailRows(ev)) {
    const tr = tb.insertRow();
    tr.insertCell().textContent = k;
    tr.insertCell().textContent = v;
  }
  const fr = document.createElement('p');
  fr.textContent = 'frontier (the last event before it, per task): ' +
    Object.values(frontier || {}).map(idText).join(', ');
  d.replaceChildren(tb, fr);
  d.dataset.event = ev.id;
}

// --- problems in words, their events and tasks links ---------------------

// Where a task waits, as every pmon view writes it (waitText).
function waitWords(w) {
  return hex(w.tid) + ' in ' + waitText(w);
}

// A problem's sentence: text pieces and links to the events it names.
function problemParts(p) {
  const ev = (id) => ({ id });
  switch (p.kind) {
    case 'deadlock':
      return ['deadlock of ' + p.tasks.length + ' tasks: ' + p.waits.map(waitWords).join(', ')];
    case 'waits_on_exited':
      return [hex(p.tid) + ' waits in ' + p.in + ' on ' + hex(p.exited) + ', which exited'];
    case 'unreceived':
      return [hex(p.tid) + ' exited with a message from ' + hex(p.from) + ' unreceived: tag ' +
        p.tag + ', ' + num(p.bytes) + ' B, sent at ', ev(p.send)];
    case 'race':
      return [hex(p.tid) + ': the wildcard receive ', ev(p.recv), ' got ', ev(p.sends[0]), '; ',
        ev(p.sends[1]), ' could have come first'];
    case 'unpack_mismatch':
      return [hex(p.tid) + ': ' + p.unpacked + ' at ', ev(p.at), ', ' + num(p.offset) +
        ' B into the message of ', ev(p.send), ' (tag ' + p.tag + '), ' +
        (p.packed ? 'where ' + p.packed + ' was packed' : 'past its end')];
    default: {
      const { type, kind, ...rest } = p;
      void type;
      return [kind + ' ' + JSON.stringify(rest)];
    }
  }
}

function drawProblems() {
  const ul = $('problems');
  ul.replaceChildren();
  for (const p of stream.problems) {
    const li = document.createElement('li');
    li.className = p.over ? 'over' : '';
    for (const part of problemParts(p)) {
      if (typeof part === 'string') li.append(part);
      else {
        const a = document.createElement('a');
        a.href = '#';
        a.textContent = idText(part.id);
        a.onclick = (e) => {
          e.preventDefault();
          follow = false;
          selectEvent(stream.byId.get(part.id));
        };
        li.append(a);
      }
    }
    if (p.over) li.append(' (over)');
    ul.appendChild(li);
  }
}

function render() {
  const st = stateAt(step);
  $('slider').max = stream.events.length;
  $('slider').value = step;
  $('stepinfo').textContent = 'step ' + step + ' / ' + stream.events.length + startInfo() +
    (stream.bye !== null ? ' — coordinator gone' : '');
  $('lossinfo').textContent = lossInfo(st);
  drawStatus();
  drawLossList();
  for (const b of document.querySelectorAll('#tabs button')) {
    b.classList.toggle('on', b.dataset.view === view);
  }
  for (const v of VIEWS) $(v).hidden = v !== view;
  document.body.dataset.view = view;
  if (view === 'spacetime') drawSpacetime();
  if (view === 'concurrency') drawConcurrency(st);
  if (view === 'spawn') drawSpawn(st);
  if (view === 'system') drawSystem(st);
  if (view === 'queues') drawQueues(st);
  if (view === 'activity') drawActivity();
  if (TEST) {     // every SVG view, so that tests can read them all
    drawConcurrency(st);
    drawSpawn(st);
  }
  drawDetails();
  drawProblems();
}

const num = (n) => Number(n).toLocaleString('en-US');
const clock = (ms) => new Date(ms).toLocaleTimeString('en-GB');

// "live" only while nothing was lost; otherwise how much and when.
function drawStatus() {
  const l = stream.lostTotal();
  const s = $('status');
  s.textContent = conn + (l.losses ? ', ' + num(l.events) + ' events lost' +
    (l.lastMs ? ' (last at ' + clock(l.lastMs) + ')' : '') : '');
  s.classList.toggle('lossy', l.losses > 0);
}

// What step 0 is when pmon web no longer keeps the start of the run.
function startInfo() {
  const first = stream.segments[0];
  let s = '';
  if (stream.dropped && first) {
    s = ' (the ' + num(stream.dropped) + ' events before step 0 are no longer kept; ' +
      'step 0 is the snapshot there';
  }
  if (stream.hello.gap) {
    const next = stream.segments[1];
    s += (s ? '; ' : ' (') + 'the ' + num(stream.hello.gap) + ' events right after it are ' +
      'gone too, so the states shown are approximate until ' +
      (next ? 'step ' + num(next.at) : 'the end');
  }
  return s ? s + ')' : '';
}

function lostTasks(l) {
  const t = (l.tasks || []).map((x) => hex(x.tid) + ' (' + num(x.events) + ')');
  return t.slice(0, 6).join(', ') + (t.length > 6 ? ' and ' + (t.length - 6) + ' more' : '');
}

// The step control's word on losses: at the step of one, what it lost;
// after one, that the state comes from the snapshot that followed it.
function lossInfo(st) {
  const l = stream.lossAt(step);
  if (!l) return '';
  if (l.at === step) {
    return 'here: lost ' + num(l.events) + ' events of ' + lostTasks(l) +
      '; the state is the coordinator\'s snapshot after the loss';
  }
  if (st.seg && st.seg === l.snapshot) {
    return 'resynchronised at step ' + num(l.at) + ' after losing ' + num(l.events) + ' events';
  }
  return '';
}

// The list of losses (click one to go there) and the slider's marks.
let lossesDrawn = '';
function drawLossList() {
  const h = stream.hello;
  const last = stream.losses[stream.losses.length - 1];
  const key = (h.losses_before || 0) + ':' + (last ? last.ord : -1);
  if (lossesDrawn === key) return;
  lossesDrawn = key;
  const ul = $('losses');
  const marks = $('lossmarks');
  ul.replaceChildren();
  marks.replaceChildren();
  if (h.losses_before) {
    const li = document.createElement('li');
    li.textContent = 'before step 0: ' + num(h.lost_before) + ' events lost in ' +
      num(h.losses_before) + ' losses (no longer kept)';
    ul.appendChild(li);
  }
  for (const l of stream.losses) {
    const li = document.createElement('li');
    li.dataset.step = l.at;
    li.textContent = 'step ' + num(l.at) + ': lost ' + num(l.events) + ' events of ' +
      lostTasks(l) + (l.received_ms ? ', at ' + clock(l.received_ms) : '') +
      (l.problems ? ' (and ' + num(l.problems) + ' problems)' : '');
    li.onclick = () => setStep(l.at);
    ul.appendChild(li);
    const o = document.createElement('option');
    o.value = l.at;
    marks.appendChild(o);
  }
  $('losshead').hidden = ul.children.length === 0;
}

// ?bench=1: everything synchronous, so that it ends before the load
// event, where Chromium's --dump-dom prints the page without virtual
// time (which stops performance.now during a task).
function benchMain() {
  const x = new XMLHttpRequest();
  x.open('GET', '/events?once=1&k=' + encodeURIComponent(KEY), false);
  x.send();
  const t0 = performance.now();
  for (const block of x.responseText.split('\n\n')) {
    if (block.startsWith('data: ')) receive(parse(block.slice(6)));
  }
  loadMs = performance.now() - t0;
  render();
  const out = { events: stream.events.length, timing_ms: bench() };
  $('model').textContent = JSON.stringify(out);
}

setupControls();
if (TEST && params.has('bench')) benchMain();
else if (TEST && params.get('sse') !== '1') loadOnce();
else connect();
})();
