// pmon web: the views (doc/web.md).  The stream arrives as Server-Sent
// Events (or, with ?test=1, in one piece from /events?once=1); each view
// draws the model's state at the control panel's step.  Views that can
// hold 100,000 events (space-time, activity) draw on a canvas, only what
// is visible; the others are SVG with data-* attributes.
(() => {
'use strict';

const { Stream, States, SENDS } = window.PmonModel;
const params = new URLSearchParams(location.search);
const KEY = params.get('k') || '';
const TEST = params.get('test') === '1';
const SVGNS = 'http://www.w3.org/2000/svg';
const VIEWS = ['spacetime', 'concurrency', 'spawn', 'system', 'queues', 'activity'];

const stream = new Stream();
let states = new States(stream);
let state = states.cur;
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

// Times are ns since the epoch, above 2^53: as JavaScript numbers they
// keep steps of 256 ns, so the stream keeps the nanoseconds within the
// second of t and tc, read from the line's digits (exact); the seconds
// follow from the number.  [seconds, nanoseconds] of a time:
const exactNs = (t, ns) => [Math.round((t - ns) / 1e9), ns];

// The messages of the stream in text (SSE: "data: LINE" and a blank
// line each); returns what is left of an unfinished one.
let ended = false;              // the once=1 stream ended
function feed(text) {
  let at = 0;
  for (let e; (e = text.indexOf('\n\n', at)) >= 0; at = e + 2) {
    if (text.startsWith('data: ', at)) receive(text, at + 6, e);
  }
  return at === 0 ? text : text.slice(at);
}

// The message text[from, to).
function receive(text, from, to) {
  if (text.startsWith('{"type":"hello"', from)) {
    const m = JSON.parse(text.slice(from, to));
    stream.reset();
    stream.setHello(m);
    if (!m.live) conn = 'coordinator gone';
    restart();
    return;
  }
  if (text.startsWith('{"type":"end"', from)) {
    ended = true;
    return;
  }
  const m = stream.addLine(text, from, to);
  if (m !== null && m.type === 'snapshot' && stream.segments.length === 1) restart();
  if (m !== null && m.type === 'bye') conn = 'coordinator gone';
  if (follow) step = stream.n;
  schedule();
}

function restart() {
  states = new States(stream);
  state = states.at(0);
  selected = null;
  frontier = null;
}

// The state at the current step: forwards from the shown one, or again
// from the last snapshot at or before the step (after a loss: the one
// that followed it) when going back or across a snapshot, by way of the
// states kept on the way (States).
function stateAt(n) {
  state = states.at(n);
  return state;
}

// A redraw at the next frame, and not sooner after the last than it
// took (drawing takes at most half the time), or four times that while
// what pmon web kept still loads (a fifth: the status shows how far).
let drawnAt = 0, drawMs = 0;
function schedule() {
  if (dirty) return;
  dirty = true;
  const wait = drawnAt + (stream.backlogIn() ? 1 : 4) * drawMs - performance.now();
  const later = () => requestAnimationFrame(() => {
    dirty = false;
    const t0 = performance.now();
    render();
    drawnAt = performance.now();
    drawMs = drawnAt - t0;
  });
  if (wait > 0) setTimeout(later, wait);
  else later();
}

// The live stream, read in chunks as it arrives (a fetch, not an
// EventSource: a million lines of backlog cost their parsing, not a DOM
// event each, and the page draws between chunks).  It reconnects when
// the stream breaks; pmon web then sends everything again, from its
// hello.  With ?test=1&sse=1 the same path reads /events?once=1 and
// writes the model at its end (tests: Chromium's virtual time waits
// for a response that ends, not for a live one).
async function connect() {
  const once = TEST ? '&once=1' : '';
  for (;;) {
    try {
      const r = await fetch('/events?k=' + encodeURIComponent(KEY) + once);
      if (!r.ok) throw new Error(r.status + ' ' + (await r.text()));
      conn = 'live';
      schedule();
      const reader = r.body.pipeThrough(new TextDecoderStream()).getReader();
      let rest = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        rest = feed(rest + value);
        if (ended) {
          conn = 'loaded';
          render();
          await writeModel();
          return;
        }
      }
      conn = 'disconnected; retrying';
    } catch (e) {
      conn = 'disconnected (' + e.message + '); retrying';
    }
    schedule();
    await new Promise((ok) => setTimeout(ok, 2000));
  }
}

let loadMs = 0;
async function loadOnce() {
  const r = await fetch('/events?once=1&k=' + encodeURIComponent(KEY));
  const text = await r.text();
  const t0 = performance.now();
  feed(text);
  loadMs = performance.now() - t0;
  if (params.has('step')) {
    follow = false;
    step = Math.min(+params.get('step'), stream.n);
  }
  if (params.has('select')) selectEvent(stream.find(params.get('select')));
  conn = 'loaded';
  render();
  await writeModel();
}

// ?test=1: the model, and how it compares with the coordinator's
// snapshot, as JSON in <pre id=model> for tests that read the DOM.
async function writeModel() {
  const steps = params.has('steps') ? params.get('steps').split(',').map(Number) : [];
  const at = steps.filter((n) => n >= 0 && n <= stream.n).map((n) => stateAt(n).summary());
  const out = stateAt(step).summary();
  out.view = view;
  out.dropped = stream.dropped;
  out.gap = stream.hello.gap || 0;
  out.problems = stream.problems.length;
  out.drawn = drawnCounts();
  out.status = $('status').textContent;
  out.loaded_ms = Math.round(loadedMs);
  out.mode = $('mode').textContent;
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
    out.snapshot_diffs = step === stream.n ? state.compare(snap) : null;
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
  const n = stream.n;
  t.step_back = ms(() => { step = n - 1; render(); });
  t.step_forward = ms(() => { step = n; render(); });
  t.frontier_last = ms(() => selectEvent(n - 1));
  // A zoom into the middle of the run, then a pan: what a user does.
  t.zoom = ms(() => { zoom = 16; pan = 0.5; render(); });
  t.pan = ms(() => { pan = 0.52; render(); });
  t.zoom_out = ms(() => { zoom = 1; pan = 0; render(); });
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
  step = Math.max(0, Math.min(n, stream.n));
  if (!keepFollow) follow = step === stream.n;
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
  $('end').onclick = () => setStep(stream.n);
  $('slider').oninput = (e) => setStep(+e.target.value);
  $('play').onclick = () => {
    if (playing) {
      clearInterval(playing);
      playing = null;
      $('play').textContent = 'play';
      return;
    }
    if (step >= stream.n) setStep(0);
    $('play').textContent = 'pause';
    playing = setInterval(() => {
      const n = Math.max(1, Math.round(stream.n / 400));
      setStep(step + n);
      if (step >= stream.n) $('play').click();
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
      const w = c.clientWidth || 1000;
      const at = fromPx(e.offsetX, w);     // stays under the pointer
      zoom = Math.max(1, zoom * (e.deltaY < 0 ? 1.25 : 0.8));
      pan = clampPan(at - (e.offsetX - LEFT) / (zoom * spanPx(w)));
      schedule();
    };
  }
  dragToPan($('stcanvas'));
  $('stcanvas').onclick = (e) => {
    if (!dragged) selectEvent(hitEvent(e.offsetX, e.offsetY));
  };
  $('stcanvas').ondblclick = () => { zoom = 1; pan = 0; schedule(); };
  const ov = $('overview');
  ov.onmousedown = (e) => {
    overviewTo(e.offsetX);
    ov.onmousemove = (m) => overviewTo(m.offsetX);
  };
  ov.onmouseup = ov.onmouseleave = () => { ov.onmousemove = null; };
}

const clampPan = (p) => Math.max(0, Math.min(1 - 1 / zoom, p));

// Drag to pan the zoomed axis, shift-drag to zoom into a box; a drag is
// not a click.
let dragged = false;
let box = null;                 // [from, to] pixels of a shift-drag
function dragToPan(c) {
  let x0 = null, pan0 = 0, boxing = false;
  c.onmousedown = (e) => {
    x0 = e.offsetX;
    pan0 = pan;
    dragged = false;
    boxing = e.shiftKey;
  };
  c.onmousemove = (e) => {
    if (x0 === null) return;
    const dx = e.offsetX - x0;
    if (Math.abs(dx) > 3) dragged = true;
    if (boxing) box = [x0, e.offsetX];
    else if (zoom > 1) pan = clampPan(pan0 - dx / (spanPx(c.clientWidth || 1000) * zoom));
    schedule();
  };
  c.onmouseup = () => {
    if (boxing && box && Math.abs(box[1] - box[0]) > 3) {
      const w = c.clientWidth || 1000;
      const a = fromPx(Math.min(...box), w), b = fromPx(Math.max(...box), w);
      zoom = Math.max(1, 1 / Math.max(1e-12, b - a));
      pan = clampPan(a);
    }
    x0 = null;
    box = null;
    schedule();
  };
  c.onmouseleave = () => {
    x0 = null;
    box = null;
  };
}

async function control(text) {
  const r = await fetch('/request?k=' + encodeURIComponent(KEY), { method: 'POST', body: text });
  $('details').textContent = text + ': ' + (await r.text());
}

// --- geometry: the x axis of the space-time and activity views --------------

const ROW = 26;
const LEFT = 110;
const RIGHT = 10;

// The tasks, by tid: those with events, and those announced without
// any -- for the time lines (all: false) only if they had not ended
// before the stream starts (a task of an earlier program: an empty row).
function taskOrder(all) {
  const first = stream.segments[0];
  const over = new Set(all ? [] : ((first && first.state.tasks) || []).filter((t) =>
    ['exited', 'killed', 'ended'].includes(t.state)).map((t) => t.tid));
  return [...stream.lines.keys()].concat([...stream.info.keys()]
    .filter((t) => !stream.lines.has(t) && !over.has(t)))
    .filter((t, i, a) => a.indexOf(t) === i).sort((a, b) => a - b);
}

// Pixel px of a canvas w wide and u, 0..1 of the whole axis.
const spanPx = (w) => Math.max(1, w - LEFT - RIGHT);
const toPx = (u, w) => LEFT + (u - pan) * zoom * spanPx(w);
const fromPx = (px, w) => pan + (px - LEFT) / (zoom * spanPx(w));

// An axis maps a native coordinate (a logical position, or a corrected
// time) to u and back, and names the columns of a task's line that
// hold its events' coordinates and the running sums of its calls.
function logicalAxis() {
  const end = Math.max(2, stream.logicalEnd());
  return {
    real: false,
    u: (c) => c / end,
    c: (u) => u * end,
    linear: [0, 1 / end],       // u = (c - origin) * scale
    co: L.X,
    sums: [L.CALL_X, L.BLOCKED_X, -1],
    end,
  };
}

// Real time on the corrected clock with idle gaps squeezed (paper 001,
// section 4): a stretch longer than 1/50 of the run in which no task
// recorded anything is drawn 1/50 wide.  The gaps are found per 1/1024
// of the run (each bucket's first and last time: a gap is wider than
// 20 buckets, so it lies between two occupied ones), in one pass over
// the times and not a sort of them.
let squeezeCache = null;
function realAxis() {
  const n = stream.n;
  if (squeezeCache && squeezeCache.n === n && squeezeCache.on === squeeze) return squeezeCache;
  const ea = stream.e.a, W = E.WIDTH;
  let t0 = Infinity, t1 = -Infinity;
  for (let o = E.TC; o < n * W; o += W) {
    if (ea[o] < t0) t0 = ea[o];
    if (ea[o] > t1) t1 = ea[o];
  }
  if (n === 0) t0 = t1 = 0;
  const span = Math.max(1, t1 - t0);
  const limit = squeeze ? span / 50 : Infinity;
  const gaps = [];              // [last time before, first time after]
  if (squeeze && n > 1) {
    const B = 1024;
    const lo = new Float64Array(B).fill(Infinity), hi = new Float64Array(B).fill(-Infinity);
    for (let o = E.TC; o < n * W; o += W) {
      const t = ea[o], b = Math.floor((t - t0) / span * (B - 1));
      if (t < lo[b]) lo[b] = t;
      if (t > hi[b]) hi[b] = t;
    }
    let prev = -1;
    for (let b = 0; b < B; b++) {
      if (lo[b] === Infinity) continue;
      if (prev >= 0 && lo[b] - hi[prev] > limit) gaps.push([hi[prev], lo[b]]);
      prev = b;
    }
  }
  const at = [];                // each gap's start on the squeezed axis
  let removed = 0;
  for (const [a, b] of gaps) {
    at.push(a - t0 - removed);
    removed += b - a - limit;
  }
  const total = Math.max(1, span - removed);
  // The last gap starting at or before v (on the axis: sq true).
  const gapAt = (v, sq) => {
    let k = -1;
    while (k + 1 < gaps.length && (sq ? at[k + 1] : gaps[k + 1][0]) <= v) k++;
    return k;
  };
  squeezeCache = {
    n, on: squeeze, real: true, t0, t1, limit, gaps, at, total,
    u: (c) => {
      const k = gapAt(c, false);
      if (k < 0) return (c - t0) / total;
      const [a, b] = gaps[k];
      return (c <= b ? at[k] + Math.min(c - a, limit) : at[k] + limit + c - b) / total;
    },
    c: (u) => {
      const v = u * total, k = gapAt(v, true);
      if (k < 0) return t0 + v;
      return v <= at[k] + limit ? gaps[k][0] + v - at[k] : gaps[k][1] + v - at[k] - limit;
    },
    linear: gaps.length === 0 ? [t0, 1 / total] : null,
    co: L.TC,
    sums: [L.CALL_T, L.BLOCKED_T, L.LOST_T],
  };
  return squeezeCache;
}

const axisOf = (mode) => mode === 'real' ? realAxis() : logicalAxis();

// The native coordinate at each pixel edge of the visible axis.
function pixelEdges(ax, w) {
  const e = new Float64Array(spanPx(w) + 1);
  for (let p = 0; p < e.length; p++) e[p] = ax.c(fromPx(LEFT + p, w));
  return e;
}

// --- what the tasks did, per pixel ---------------------------------------------

const { COMPUTING, IN_CALL, BLOCKED, LOST, E, L } = window.PmonModel;

// Rectangles to fill, per colour, drawn in one path each.
class Fills {
  constructor() { this.by = new Map(); }
  add(colour, x, y, w, h) {
    let a = this.by.get(colour);
    if (a === undefined) this.by.set(colour, a = []);
    a.push(x, y, w, h);
  }
  draw(g) {
    for (const [colour, a] of this.by) {
      g.fillStyle = colour;
      g.beginPath();
      for (let k = 0; k < a.length; k += 4) g.rect(a[k], a[k + 1], a[k + 2], a[k + 3]);
      g.fill();
    }
  }
}

// One task's line, pixel by pixel (Vampir's aggregation): each pixel of
// the row shows how its stretch was spent -- blocked, in a call, events
// lost, computing -- as stacked heights, so a pixel that holds a
// thousand calls shows their share instead of whichever came last; a
// call that fills the pixel fills its height.  The cost is a search per
// pixel edge, whatever the number of events.  o: {ax, edges, y, h,
// until (the coordinate where the line stops; Infinity: an open call
// runs to the edge), limit (events considered), paleFrom (coordinate
// from which the colours are pale, or Infinity), colours: [blocked,
// call, lost, computing or null, and the pale four]}.
function lineBars(fills, line, o) {
  const a = line.t.a, W = L.WIDTH, co = o.ax.co, [call, blocked, lost] = o.ax.sums;
  const n = Math.min(line.n, o.limit);
  if (n === 0) return;
  const first = a[co];
  const end = Math.min(o.until, a[(n - 1) * W + L.KIND] === COMPUTING && n === line.n ?
    a[(n - 1) * W + co] : o.until);
  // Running sums at coordinate c: vc, vb, vl (k: the last event <= c).
  let k = -1, vc = 0, vb = 0, vl = 0;
  const sumsAt = (c) => {
    c = Math.min(c, end);
    k = line.lastAtOrBefore(co, c, k);
    if (k >= n) k = n - 1;
    if (k < 0) {
      vc = vb = vl = 0;
      return;
    }
    const r = k * W;
    vc = a[r + call];
    vb = a[r + blocked];
    vl = lost >= 0 ? a[r + lost] : 0;
    const next = k + 1 < n ? a[r + W + co] : end;
    const d = Math.min(c, next) - a[r + co];
    if (d > 0) {
      const kind = a[r + L.KIND];
      if (kind === IN_CALL) vc += d;
      else if (kind === BLOCKED) vb += d;
      else if (kind === LOST) vl += d;
    }
  };
  const e = o.edges, H = o.h;
  const h = (s) => s <= 0 ? 0 : Math.max(1, Math.round(H * s));
  sumsAt(e[0]);
  let c0 = vc, b0 = vb, l0 = vl;
  let run = -1, runFrom = 0;
  const flush = (to) => {
    if (run <= 0) return;
    const pale = run >> 24 & 1, hb = run & 0xff, hc = run >> 8 & 0xff, hl = run >> 16 & 0x7f;
    const col = o.colours, base = pale ? 4 : 0;
    let y = o.y + H;
    const put = (hh, colour) => {
      if (hh <= 0 || !colour) return;
      y -= hh;
      fills.add(colour, LEFT + runFrom, y, to - runFrom, hh);
    };
    put(hb, col[base]);
    put(Math.min(hc, H - hb), col[base + 1]);
    put(Math.min(hl, Math.max(0, H - hb - hc)), col[base + 2]);
    put(Math.max(0, (run >> 25 & 0x7f) - hb - hc - hl), col[base + 3]);
  };
  for (let p = 0; p + 1 < e.length; p++) {
    const a = e[p], b = e[p + 1];
    sumsAt(b);
    const dc = b - a;
    let key = 0;
    if (dc > 0 && b > first && a < end) {
      const hb = h((vb - b0) / dc), hc = h((vc - c0) / dc), hl = h((vl - l0) / dc);
      const covered = (Math.min(b, end) - Math.max(a, first)) / dc;
      const hall = o.colours[3] ? Math.min(H, h(covered)) : 0;
      key = hb | hc << 8 | hl << 16 | (a >= o.paleFrom ? 1 << 24 : 0) | hall << 25;
      if ((key & 0x1ffffff) === 0 && hall === 0) key = 0;
    }
    if (key !== run) {
      flush(p);
      run = key;
      runFrom = p;
    }
    c0 = vc;
    b0 = vb;
    l0 = vl;
  }
  flush(e.length - 1);
}

// --- space-time diagram -------------------------------------------------------

let spacetimeDrawn = 0;
let spacetimeRows = [];         // the tasks, top to bottom, as last drawn
const AXIS_H = 34;
const ROW_Y = (r) => 20 + r * ROW;
// Blocked, in a PVM call (no colour for lost or computing: the row's
// green line); then the same beyond the step, paler.
const CALL_COLOURS = ['#e53935', '#ffca28', null, null, '#f7b9b8', '#ffeeb8', null, null];
// More messages than this on screen are drawn once per pixel pair,
// without heads.
const ARROWS_ONE_BY_ONE = 2000;

function drawSpacetime() {
  const c = $('stcanvas');
  const order = taskOrder();
  spacetimeRows = order;
  const rowOf = new Map(order.map((t, i) => [t, i]));
  const w = c.clientWidth || 1000;
  const rows = Math.max(160, order.length * ROW + 20);
  const h = rows + AXIS_H;
  c.width = w;
  c.height = h;
  const g = c.getContext('2d');
  g.clearRect(0, 0, w, h);
  g.font = '11px sans-serif';
  const y = (tid) => ROW_Y(rowOf.get(tid));
  g.strokeStyle = '#9ccc65';   // computing, between calls
  g.beginPath();
  for (const t of order) {
    g.moveTo(LEFT, y(t));
    g.lineTo(w - RIGHT, y(t));
  }
  g.stroke();
  const ax = axisOf(timeMode);
  const edges = pixelEdges(ax, w);
  drawAxis(g, ax, w, rows);
  if (ax.real && squeeze) drawGaps(g, ax, w, rows);
  const px = eventPx(ax, w);
  const rowY = new Float64Array(stream.lines.size);
  for (const line of stream.lines.values()) rowY[line.ord] = y(line.tid);
  const fills = new Fills();
  for (const [tid, line] of stream.lines) {
    const ks = line.firstIndexFrom(step);
    lineBars(fills, line, { ax, edges, y: y(tid) - 3, h: 6, until: Infinity, limit: line.n,
      paleFrom: ks < line.n ? line.at(ks, ax.co) : Infinity, colours: CALL_COLOURS });
  }
  // A band of messages goes under the bars, single arrows over them.
  const msgs = visibleMessages(px, w);
  if (msgs.n > ARROWS_ONE_BY_ONE) drawBand(g, px, rowY, w, msgs);
  fills.draw(g);
  if (msgs.n <= ARROWS_ONE_BY_ONE) drawArrows(g, px, rowY, msgs);
  drawSpawnArrows(g, px, y);
  drawMarks(g, ax, edges, y, w);
  drawLosses(g, px, y, w);
  drawCursor(g, px, rows);
  drawFrontier(g, px, y);
  if (box) {
    g.fillStyle = 'rgba(21,101,192,0.15)';
    g.fillRect(Math.min(...box), 0, Math.abs(box[1] - box[0]), rows);
  }
  // Last, the names, over a blank margin: nothing drawn covers them.
  g.clearRect(0, 0, LEFT - 4, rows);
  g.fillStyle = '#333';
  for (const t of order) g.fillText(taskName(t), 4, y(t) + 4);
  drawOverview(w);
}

// Event i's pixel on the axis ax of a canvas w wide, as a function: a
// multiplication where the axis is linear (partial order, real time
// without squeezed gaps), which is what a hundred thousand arrows need.
function eventPx(ax, w) {
  const ea = stream.e.a, W = E.WIDTH, f = ax.real ? E.TC : E.X;
  if (ax.linear) {
    const [origin, scale] = ax.linear, k = scale * zoom * spanPx(w);
    const b = LEFT - pan * zoom * spanPx(w);
    return (i) => k * (ea[i * W + f] - origin) + b;
  }
  return (i) => toPx(ax.u(ea[i * W + f]), w);
}

// The messages with an end on screen: their offsets in stream.arrows.a
// (seen[0..n)); spacetimeDrawn counts those received before the step.
function visibleMessages(px, w) {
  const ar = stream.arrows.a, na = 2 * stream.arrows.n;
  const seen = new Int32Array(stream.arrows.n);
  let n = 0;
  spacetimeDrawn = 0;
  for (let k = 0; k < na; k += 2) {
    const a = px(ar[k]), b = px(ar[k + 1]);
    if ((a < LEFT && b < LEFT) || (a > w && b > w)) continue;
    seen[n++] = k;
    if (ar[k + 1] < step) spacetimeDrawn++;
  }
  return { seen, n };
}

// An arrow per message from its send to the receive that took it.
// rowY: each line's (Line.ord) y.
function drawArrows(g, px, rowY, msgs) {
  const ar = stream.arrows.a, ea = stream.e.a, W = E.WIDTH;
  const y = (i) => rowY[ea[i * W + E.LINE]];
  for (let j = 0; j < msgs.n; j++) {
    const s = ar[msgs.seen[j]], r = ar[msgs.seen[j] + 1];
    g.strokeStyle = r < step ? '#1565c0' : '#cfd8e3';
    arrow(g, px(s), y(s), px(r), y(r));
  }
}

// More than ARROWS_ONE_BY_ONE messages: a band, one line per pixel pair
// between two rows, without heads.
function drawBand(g, px, rowY, w, msgs) {
  const ar = stream.arrows.a, ea = stream.e.a, W = E.WIDTH;
  // The last receive pixel drawn per send pixel and pair of rows (and
  // before or after the step): most of a storm's arrows repeat one.
  const rows = rowY.length, wp = Math.ceil(w) + 2;
  const lastB = rows * rows * wp * 2 <= 1 << 23 ? new Int32Array(rows * rows * wp * 2).fill(-1) : null;
  const drawn = lastB ? null : new Set();
  const paths = [new Path2D(), new Path2D()];
  for (let j = 0; j < msgs.n; j++) {
    const s = ar[msgs.seen[j]], r = ar[msgs.seen[j] + 1];
    const a = Math.round(Math.min(Math.max(px(s), -1), w + 1)) + 1;
    const b = Math.round(Math.min(Math.max(px(r), -1), w + 1)) + 1;
    const before = r < step ? 0 : 1;
    const ra = ea[s * W + E.LINE], rb = ea[r * W + E.LINE];
    if (lastB) {
      const key = ((ra * rows + rb) * wp + a) * 2 + before;
      if (lastB[key] === b) continue;
      lastB[key] = b;
    } else {
      const key = (((ra * rows + rb) * wp + a) * wp + b) * 2 + before;
      if (drawn.has(key)) continue;
      drawn.add(key);
    }
    const p = paths[before];
    p.moveTo(a - 1, rowY[ra]);
    p.lineTo(b - 1, rowY[rb]);
  }
  g.strokeStyle = '#cfd8e3';
  g.stroke(paths[1]);
  // Light enough that the bars show through a band of messages.
  g.strokeStyle = 'rgba(21,101,192,0.35)';
  g.stroke(paths[0]);
}

// A mark per event where a row shows few enough to tell them apart.
function drawMarks(g, ax, edges, y, w) {
  const fills = new Fills();
  const first = edges[0], last = edges[edges.length - 1];
  for (const [tid, line] of stream.lines) {
    const k0 = line.lastAtOrBefore(ax.co, first, 0) + 1;
    const k1 = line.lastAtOrBefore(ax.co, last, k0);
    if (k1 - k0 + 1 > edges.length / 3) continue;
    const yy = y(tid) - 4;
    for (let k = Math.max(0, k0 - 1); k <= Math.min(line.n - 1, k1 + 1); k++) {
      const i = line.at(k, L.IDX), x = toPx(ax.u(line.at(k, ax.co)), w);
      const call = stream.callOf(i);
      fills.add(i >= step ? '#ccc' : SENDS.has(call) ? '#1565c0' : call === 'lost' ? '#d00' :
        stream.at(i, E.PHASE) === 1 ? '#555' : '#999', x - 2, yy, 4, 8);
    }
  }
  fills.draw(g);
}

// The event drawn nearest to (x, yy), within 8 pixels, or null.
function hitEvent(x, yy) {
  const c = $('stcanvas'), w = c.clientWidth || 1000;
  const r = Math.round((yy - ROW_Y(0)) / ROW);
  const line = stream.lines.get(spacetimeRows[r]);
  if (line === undefined || Math.abs(yy - ROW_Y(r)) > 8) return null;
  const ax = axisOf(timeMode);
  const k = line.lastAtOrBefore(ax.co, ax.c(fromPx(x, w)), 0);
  let best = null, bd = 8;
  for (const j of [k, k + 1]) {
    if (j < 0 || j >= line.n) continue;
    const d = Math.abs(toPx(ax.u(line.at(j, ax.co)), w) - x);
    if (d <= bd) {
      bd = d;
      best = line.at(j, L.IDX);
    }
  }
  return best;
}

// A spawned task's arrow: from its parent's pvm_spawn to its first event.
let spacetimeSpawns = 0;
function drawSpawnArrows(g, px, y) {
  spacetimeSpawns = 0;
  g.strokeStyle = '#8e24aa';
  g.setLineDash([4, 3]);
  for (const [tid, info] of stream.info) {
    const line = stream.lines.get(tid);
    if (!info.parent || !info.spawn_seq || !line || !line.n) continue;
    const from = stream.find(info.parent, info.spawn_seq);
    if (from === undefined) continue;
    arrow(g, px(from), y(info.parent), px(line.at(0, L.IDX)), y(tid));
    spacetimeSpawns++;
  }
  g.setLineDash([]);
}

// The axis under the rows: time since the first event, with units, in
// real time; the logical clock's steps in partial order.
function drawAxis(g, ax, w, top) {
  const span = spanPx(w);
  g.strokeStyle = '#555';
  g.fillStyle = '#333';
  g.font = '10px sans-serif';
  g.beginPath();
  g.moveTo(LEFT, top + 4);
  g.lineTo(w - RIGHT, top + 4);
  g.stroke();
  let label;
  if (ax.real) {
    const seen = ax.c(fromPx(w - RIGHT, w)) - ax.c(fromPx(LEFT, w));
    const unit = seen >= 2e9 ? [1e9, 's'] : seen >= 2e6 ? [1e6, 'ms'] : seen >= 2e3 ? [1e3, 'µs'] : [1, 'ns'];
    label = (x) => ((ax.c(fromPx(x, w)) - ax.t0) / unit[0]).toFixed(unit[0] > 1 ? 3 : 0) + ' ' + unit[1];
    g.fillText('time since the first event' + (squeeze ? ' (idle gaps squeezed)' : ''), LEFT, top + 30);
  } else {
    label = (x) => String(Math.round(ax.c(fromPx(x, w))));
    g.fillText('logical time (causal order, not real time)', LEFT, top + 30);
  }
  for (let k = 0; k <= 8; k++) {
    const x = LEFT + k * span / 8;
    g.beginPath();
    g.moveTo(x, top + 4);
    g.lineTo(x, top + 8);
    g.stroke();
    const text = label(x);
    const tw = g.measureText(text).width;
    g.fillText(text, Math.min(Math.max(LEFT, x - tw / 2), w - RIGHT - tw), top + 18);
  }
  g.font = '11px sans-serif';
}

// Where pmon web lost events (doc/web.md, "Losses"): on the line of
// each task that lost some, a red bar from its last event before them
// to its first after them (at least 8 pixels), labelled with how many
// where the label does not cover another.
let spacetimeLost = 0;
function drawLosses(g, px, y, w) {
  spacetimeLost = 0;
  g.lineWidth = 5;
  g.font = '10px sans-serif';
  const labelEnd = new Map();   // tid -> right end of its last label
  for (const l of stream.losses) {
    for (const t of l.tasks || []) {
      if (!stream.info.has(t.tid) && !stream.lines.has(t.tid)) continue;
      const [a, b] = stream.lossGap(t.tid, t.first);
      let x1 = a === undefined ? LEFT : px(a);
      let x2 = b === undefined ? w - RIGHT : px(b);
      if (x2 - x1 < 8) {
        x1 = (x1 + x2) / 2 - 4;
        x2 = x1 + 8;
      }
      if (x2 < LEFT || x1 > w) continue;
      g.strokeStyle = l.at <= step ? 'rgba(211,47,47,0.75)' : 'rgba(211,47,47,0.3)';
      g.beginPath();
      g.moveTo(Math.max(x1, LEFT), y(t.tid));
      g.lineTo(Math.min(x2, w - RIGHT), y(t.tid));
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
function drawGaps(g, ax, w, h) {
  g.strokeStyle = '#e08';
  g.fillStyle = '#e08';
  g.font = '10px sans-serif';
  g.setLineDash([3, 3]);
  let lastEnd = -Infinity;
  for (const [a, b] of ax.gaps) {
    const x = toPx(ax.u(b), w) - 2;
    if (x < LEFT || x > w - RIGHT) continue;
    g.beginPath();
    g.moveTo(x, 10);
    g.lineTo(x, h - 4);
    g.stroke();
    const text = '−' + dur(b - a - ax.limit), tw = g.measureText(text).width;
    // Right of the line, or left of it at the right edge.
    const lx = x + 2 + tw > w ? x - 2 - tw : x + 2;
    if (lx > lastEnd) {
      g.fillText(text, lx, 10);
      lastEnd = lx + tw;
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

function drawCursor(g, px, h) {
  if (step === 0 || step > stream.n) return;
  const x = px(step - 1);
  g.strokeStyle = '#2e7d32';
  g.beginPath();
  g.moveTo(x, 5);
  g.lineTo(x, h - 5);
  g.stroke();
}

// The clicked event, and its frontier joined into a line (a stopline).
function drawFrontier(g, px, y) {
  if (selected === null) return;
  g.strokeStyle = '#e65100';
  g.lineWidth = 2;
  g.strokeRect(px(selected) - 5, y(stream.at(selected, E.TID)) - 7, 10, 14);
  g.beginPath();
  for (const id of Object.values(frontier || {})) {
    const i = stream.find(id);
    if (i === undefined) continue;
    g.moveTo(px(i) + 5, y(stream.at(i, E.TID)));
    g.arc(px(i), y(stream.at(i, E.TID)), 5, 0, 2 * Math.PI);
  }
  g.stroke();
  g.lineWidth = 1;
}

// The overview strip: the whole run, every task a thin row, and the
// part the diagram shows outlined; a click or drag there moves to it.
let overviewKey = '', overviewImage = null;
function drawOverview(w) {
  const c = $('overview');
  const order = spacetimeRows;
  const H = 44;
  if (c.width !== w) c.width = w;
  c.height = H;
  const g = c.getContext('2d');
  const ax = axisOf(timeMode);
  const key = [stream.n, timeMode, squeeze, w, step, order.length].join();
  if (key !== overviewKey) {
    overviewKey = key;
    const z = zoom, p = pan;
    zoom = 1;
    pan = 0;
    const edges = pixelEdges(ax, w);
    const rh = Math.max(1, Math.min(6, Math.floor((H - 4) / Math.max(1, order.length))));
    const fills = new Fills();
    order.forEach((tid, r) => {
      const line = stream.lines.get(tid);
      if (!line) return;
      const ks = line.firstIndexFrom(step);
      lineBars(fills, line, { ax, edges, y: 2 + r * rh, h: rh, until: Infinity, limit: line.n,
        paleFrom: ks < line.n ? line.at(ks, ax.co) : Infinity,
        colours: ['#e53935', '#ffca28', '#9e9e9e', '#9ccc65', '#f7b9b8', '#ffeeb8', '#ddd', '#dcedc8'] });
    });
    zoom = z;
    pan = p;
    g.clearRect(0, 0, w, H);
    fills.draw(g);
    g.fillStyle = '#333';
    g.font = '10px sans-serif';
    g.fillText('whole run', 4, 14);
    overviewImage = g.getImageData(0, 0, w, H);
  } else g.putImageData(overviewImage, 0, 0);
  const x1 = LEFT + pan * spanPx(w), x2 = LEFT + (pan + 1 / zoom) * spanPx(w);
  g.strokeStyle = '#1565c0';
  g.lineWidth = 2;
  g.strokeRect(x1, 1, Math.max(2, x2 - x1), H - 2);
  g.lineWidth = 1;
}

// Moves the window of the diagram to centre on overview pixel x.
function overviewTo(x) {
  const w = $('overview').width;
  const u = (x - LEFT) / spanPx(w);
  pan = Math.max(0, Math.min(1 - 1 / zoom, u - 0.5 / zoom));
  schedule();
}

// --- concurrency view (paper 003 section 2) ---------------------------------

function hostsOf() {
  const hosts = new Map();
  for (const t of taskOrder(true)) {
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
  for (const t of taskOrder(true)) {
    const p = stream.info.get(t)?.parent || 0;
    if (p > 0 && (stream.info.has(p) || stream.lines.has(p))) {
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
  for (const t of taskOrder(true)) {
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

// Per task over corrected time up to the step: computing (between
// calls), in PVM, blocked, events lost; a call still open at the step
// lasts until the step's time.  Drawn per pixel like the space-time
// bars (lineBars): the shares of each pixel's stretch.
const ACTIVITY_COLOURS = { blocked: '#e53935', pvm: '#ffca28', lost: '#9e9e9e', computing: '#66bb6a' };
function drawActivity() {
  const c = $('actcanvas');
  const order = taskOrder();
  const w = c.clientWidth || 1000;
  c.width = w;
  c.height = Math.max(120, order.length * ROW + 40);
  const g = c.getContext('2d');
  g.font = '11px sans-serif';
  const ax = realAxis();
  const edges = pixelEdges(ax, w);
  const now = step > 0 ? stream.at(step - 1, E.TC) : -Infinity;
  const fills = new Fills();
  const col = ACTIVITY_COLOURS;
  order.forEach((t, r) => {
    const y = 14 + r * ROW;
    const line = stream.lines.get(t);
    if (!line || step === 0) return;
    lineBars(fills, line, { ax, edges, y, h: 16, until: now, limit: line.firstIndexFrom(step),
      paleFrom: Infinity, colours: [col.blocked, col.pvm, col.lost, col.computing] });
  });
  fills.draw(g);
  g.clearRect(0, 0, LEFT - 4, c.height - 20);
  g.fillStyle = '#333';
  order.forEach((t, r) => g.fillText(taskName(t), 4, 14 + r * ROW + 12));
  let lx = LEFT;
  for (const [k, v] of Object.entries(col)) {
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

// Event i's time since the first event, exact: "+1.000000123 s".
function since(i) {
  if (stream.n === 0) return '';
  const ni = stream.exactNs(i, 'tc'), n0 = stream.exactNs(0, 'tc');
  if (ni < 0 || n0 < 0) return '';
  const [s1, n1] = exactNs(stream.at(i, E.TC), ni), [s0] = exactNs(stream.at(0, E.TC), n0);
  let s = s1 - s0, n = n1 - n0;
  if (n < 0) { s -= 1; n += 1e9; }
  return '+' + s + '.' + ns9(n) + ' s';
}
const exactText = (t, ns) => ns < 0 ? String(t) : exactNs(t, ns)[0] + ns9(ns);

// The rows of the details table, label and value, in words.
function detailRows(i) {
  const ev = stream.event(i);
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
  rows.push(['time', since(i)]);
  if (ev.tc !== undefined) {
    rows.push(['tc (ns)', exactText(ev.tc, stream.exactNs(i, 'tc'))],
      ['t, its host (ns)', exactText(ev.t, stream.exactNs(i, 't'))]);
  }
  for (const f of ['inconsistent', 'again']) if (ev[f]) rows.push(['note', f]);
  return rows;
}

function drawDetails() {
  const d = $('details');
  if (selected === null) return;
  const ev = stream.event(selected);
  const tb = document.createElement('table');
  for (const [k, v] of detailRows(selected)) {
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
          selectEvent(stream.find(part.id));
        };
        li.append(a);
      }
    }
    if (p.over) li.append(' (over)');
    ul.appendChild(li);
  }
}

// When the page had modelled and drawn what pmon web kept (ms since
// the navigation began; 0 before): what a user waits for.
let loadedMs = 0;
function render() {
  const st = stateAt(step);
  $('slider').max = stream.n;
  $('slider').value = step;
  $('stepinfo').textContent = 'step ' + step + ' / ' + stream.n + startInfo() +
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
  if (loadedMs === 0 && stream.backlogIn() && stream.n > 0) loadedMs = performance.now();
}

const num = (n) => Number(n).toLocaleString('en-US');
const clock = (ms) => new Date(ms).toLocaleTimeString('en-GB');

// "live" only while nothing was lost; otherwise how much and when.
function drawStatus() {
  const l = stream.lostTotal();
  const s = $('status');
  const loading = stream.backlogIn() ? '' : ', loading what pmon web keeps: ' +
    Math.floor(100 * stream.received / stream.expect) + '% of ' + num(stream.expect);
  s.textContent = conn + loading + (l.losses ? ', ' + num(l.events) + ' events lost' +
    (l.lastMs ? ' (last at ' + clock(l.lastMs) + ')' : '') : '');
  s.classList.toggle('lossy', l.losses > 0);
  // How pmon web subscribed (doc/web.md, "Losses").
  const h = stream.hello;
  $('mode').textContent = h.lossless === undefined ? '' : !h.lossless ?
    'lossy: pmon web loses events when it lags' : stream.degraded ?
    'made lossy: pmon web stopped reading for too long' :
    'lossless: the application waits rather than pmon web lose events';
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
  const tf = performance.now();
  x.send();
  const t0 = performance.now();
  const text = x.responseText;
  const t1 = performance.now();
  feed(text);
  loadMs = performance.now() - t0;
  render();
  const out = { events: stream.n, timing_ms: bench() };
  out.timing_ms.load_text = Math.round(t1 - t0);
  out.timing_ms.fetch = Math.round(t0 - tf);

  $('model').textContent = JSON.stringify(out);
}

setupControls();
if (TEST && params.has('bench')) benchMain();
else if (TEST && params.get('sse') !== '1') loadOnce();
else connect();
})();
