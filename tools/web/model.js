// The page's model of the application, computed from the stream that
// pmon web sends (doc/events.md): the task lines, snapshots (doc/state.md)
// and the events between them.  A snapshot comes first (when pmon web
// attached, or the oldest it still keeps), after every loss (the
// coordinator dropped events for pmon web: doc/web.md, "Losses") and now
// and then as a checkpoint.  State(n) is the last snapshot at or before
// step n with the events from it to n applied, by the same rules as
// the state model (coordinator/state*.c), so that it is a state the
// coordinator had: events are never applied on top of a snapshot taken
// after them.
(() => {
'use strict';

const SENDS = new Set(['pvm_send', 'pvm_psend', 'pvm_mcast', 'pvm_bcast']);
const RECVS = new Set(['pvm_recv', 'pvm_trecv', 'pvm_nrecv', 'pvm_precv',
  'pvm_probe']);
// Calls in which a task waits for another (state_groups.c:
// state_task_wait).
const BLOCKING = new Set(['pvm_recv', 'pvm_trecv', 'pvm_precv',
  'pvm_barrier']);

// Sends enqueue at their begin, pvm_bcast at its end (record_is_send).
function sendsAt(ev) {
  if (ev.call === 'pvm_bcast') return ev.phase === 'end';
  return SENDS.has(ev.call) && ev.phase === 'begin';
}

const NONE = Object.freeze([]);

// Call names as small numbers, for the columns.
const CALLS = {
  names: [],
  blocking: [],                 // by code: BLOCKING.has(name)
  codes: new Map(),
  code(name) {
    let c = this.codes.get(name);
    if (c === undefined) {
      c = this.names.length;
      this.names.push(name);
      this.blocking.push(BLOCKING.has(name));
      this.codes.set(name, c);
    }
    return c;
  },
};
CALLS.LOST = CALLS.code('lost');
CALLS.EXIT = CALLS.code('pvm_exit');
CALLS.PROBE = CALLS.code('pvm_probe');
CALLS.BARRIER = CALLS.code('pvm_barrier');

// The last nine digits of the integer after key in text, or -1: an
// event's time in ns is above 2^53, where a JavaScript number keeps
// steps of 256 ns, so the exact nanoseconds within its second are read
// from the line (the seconds follow from the number).
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

// What a row of the stream needs of an event (recordOf): one record,
// reused, not a property of a million objects.
const R = { tid: 0, seq: 0, call: '', phase: '', mtid: -1, mseq: -1, group: '',
  t: -1, tc: -1 };

// R from an event's object.
function recordOf(m) {
  R.tid = m.tid;
  R.seq = m.seq;
  R.call = m.call;
  R.phase = m.phase || '';
  R.mtid = R.mseq = -1;
  if (typeof m.match === 'string') {
    const c = m.match.indexOf(':');
    R.mtid = +m.match.slice(0, c);
    R.mseq = +m.match.slice(c + 1);
  }
  R.group = m.group || '';
  R.t = m.t !== undefined ? m.t : -1;
  R.tc = m.tc !== undefined ? m.tc : R.t;
  return R;
}

function dests(ev) {
  const d = Array.isArray(ev.dst) ? ev.dst : [ev.dst];
  return [...new Set(d)].filter((t) => t > 0 && t !== ev.tid);
}

// Rows of numbers in one Float64Array: field f of row k is
// a[k * width + f] (re-read .a after an add).  One array per table, not
// one per field: a row costs one check for room.
class Table {
  constructor(width) {
    this.width = width;
    this.a = new Float64Array(256 * width);
    this.n = 0;
  }

  // Room for rows more rows without growing (a backlog of known size:
  // growing copies what is there).
  reserve(rows) {
    const need = (this.n + rows) * this.width;
    if (need <= this.a.length) return;
    const b = new Float64Array(need);
    b.set(this.a.subarray(0, this.n * this.width));
    this.a = b;
  }

  // A new row; returns where it starts in .a.
  add() {
    const o = this.n * this.width;
    if (o === this.a.length) {
      const b = new Float64Array(this.a.length * 2);
      b.set(this.a);
      this.a = b;
    }
    this.n++;
    return o;
  }
}

// What a task does from one of its events to its next, as the views
// colour it.
const COMPUTING = 0, IN_CALL = 1, BLOCKED = 2, LOST = 3;

// The fields of a line's row (Line).
const L = { IDX: 0, SEQ: 1, X: 2, TC: 3, KIND: 4, CALL_X: 5, BLOCKED_X: 6,
  CALL_T: 7, BLOCKED_T: 8, LOST_T: 9, WIDTH: 10 };

// One task's events in order, with what the views need to draw a
// million of them without looking at each: per event (a row of .t) its
// stream index, seq, logical position and corrected time, what the task
// did until its next event, and the time spent in calls, blocked and in
// lost events before it on both axes (running sums: the share of any
// stretch is a difference).
class Line {
  constructor(tid, ord) {
    this.tid = tid;
    this.ord = ord;             // lines before it in the stream
    this.n = 0;
    this.t = new Table(L.WIDTH);
    this.lastCall = -1;         // the last event's call code, and
    this.lastBegin = false;     // whether it began a call still open
  }

  // Event i (seq, call code, begin or not, logical position x, time
  // tc) closes the stretch after the line's last event; ends: it ends
  // the call the last event began.
  push(i, seq, code, isBegin, x, tc, ends) {
    const o = this.t.add(), a = this.t.a;
    if (o > 0) {
      const p = o - L.WIDTH;
      let kind = COMPUTING;
      if (seq !== a[p + L.SEQ] + 1 && this.lastCall !== CALLS.LOST) kind = LOST;
      else if (ends) kind = CALLS.blocking[code] ? BLOCKED : IN_CALL;
      a[p + L.KIND] = kind;
      const dx = x - a[p + L.X], dt = Math.max(0, tc - a[p + L.TC]);
      a[o + L.CALL_X] = a[p + L.CALL_X] + (kind === IN_CALL ? dx : 0);
      a[o + L.BLOCKED_X] = a[p + L.BLOCKED_X] + (kind === BLOCKED ? dx : 0);
      a[o + L.CALL_T] = a[p + L.CALL_T] + (kind === IN_CALL ? dt : 0);
      a[o + L.BLOCKED_T] = a[p + L.BLOCKED_T] + (kind === BLOCKED ? dt : 0);
      a[o + L.LOST_T] = a[p + L.LOST_T] + (kind === LOST ? dt : 0);
    }
    a[o + L.IDX] = i;
    a[o + L.SEQ] = seq;
    a[o + L.X] = x;
    a[o + L.TC] = tc;
    // Until the next event: a call begun and not ended runs on.
    const open = isBegin && code !== CALLS.EXIT && code !== CALLS.LOST;
    a[o + L.KIND] = open ? (CALLS.blocking[code] ? BLOCKED : IN_CALL) : COMPUTING;
    this.lastCall = code;
    this.lastBegin = open;
    this.n++;
  }

  // Field f of row k.
  at(k, f) {
    return this.t.a[k * L.WIDTH + f];
  }

  // The last k (from lo on) whose field f is <= v: -1 (lo - 1) if none.
  lastAtOrBefore(f, v, lo) {
    const a = this.t.a;
    let l = Math.max(lo, 0), h = this.n - 1;
    if (h < l || a[l * L.WIDTH + f] > v) return l - 1;
    while (l < h) {
      const m = (l + h + 1) >> 1;
      if (a[m * L.WIDTH + f] <= v) l = m; else h = m - 1;
    }
    return l;
  }

  // The first k whose stream index is at least i (n if none).
  firstIndexFrom(i) {
    return this.lastAtOrBefore(L.IDX, i - 1, 0) + 1;
  }
}

// The fields of an event's row (Stream): where its line is (which of
// the texts, from, to), its task, seq, call, phase (1 begin, 2 end, 0
// neither), logical position, corrected time (ns) and its task's line
// (Line.ord).
const E = { TEXT: 0, FROM: 1, TO: 2, TID: 3, SEQ: 4, CALL: 5, PHASE: 6, X: 7, TC: 8, LINE: 9,
  WIDTH: 10 };

// The stream: every event in arrival order (a causal order), with the
// logical position and causal edges the views and the frontier use.
// An event is kept as its line, parsed again when a state applies it or
// a view shows it (event(i)); what the views and the frontier need of
// every event is kept in columns.  A million events so cost their text
// and about a hundred bytes each, not a million objects.
class Stream {
  constructor() { this.reset(); }

  reset() {
    this.info = new Map();      // tid -> task line
    this.segments = [];         // snapshots: {at, ord, state, why}
    this.hello = {};            // pmon web's counts of what it dropped
    this.ord = 0;               // messages so far (stream order)
    this.n = 0;                 // events
    this.texts = [];            // text the events' lines are in
    this.e = new Table(E.WIDTH);  // a row per event
    this.preds = new Map();     // index -> causal predecessors in other tasks
    this.predsAt = -1;          // the last index given one
    this.lines = new Map();     // tid -> Line
    this.arrows = new Table(2); // per message: send index, receive end index
    this.notices = [];
    this.losses = [];           // "lost" notices: {at, events, tasks, snapshot}
    this.problems = [];         // the last snapshot's and those after it
    this.openBarrier = new Map(); // group -> [begin indexes]
    this.episodes = new Map();  // barrier begin index -> its episode
    this.dropped = 0;
    this.degraded = false;
    this.bye = null;
    this.tcMin = Infinity;      // the earliest corrected time
    this.expect = 0;            // messages the hello said follow
    this.received = 0;          // of them (and later ones) so far
  }

  // Whether the messages pmon web kept when the page connected are all
  // in (the live ones follow).
  backlogIn() {
    return this.received >= this.expect;
  }

  // pmon web's hello: kept messages follow (events, snapshots,
  // problems, notices), which the tables make room for at once.
  setHello(m) {
    this.hello = m;
    this.dropped = m.dropped;
    this.expect = m.kept || 0;
    this.e.reserve(this.expect);
  }

  // A message of the stream that is not an event (addLine).
  add(m) {
    m.ord = this.ord++;
    if (m.type === 'task') this.info.set(m.tid, m);
    else if (m.type === 'snapshot') this.addSnapshot(m);
    else if (m.type === 'problem') this.problems.push(m);
    else if (m.type === 'notice') {
      m.at = this.n;      // applies after the events so far
      this.notices.push(m);
      if (m.notice === 'lost') this.losses.push(m);
      // pmon web itself no longer lossless (its hello names its tool).
      if (m.notice === 'degraded' && m.tool === this.hello.tool) this.degraded = true;
      if (m.notice === 'unmonitored') this.info.set(m.tid, { ...m, unmonitored: true });
    }
    else if (m.type === 'bye') this.bye = m.reason;
  }

  // The message text[from, to) of the stream: null for an event (kept
  // as where its line is in text and a row, not as its object), else the
  // message.
  addLine(text, from, to) {
    const m = JSON.parse(text.slice(from, to));
    if (m.type !== undefined || m.seq === undefined) {
      if (m.type !== 'task') this.received++;
      this.add(m);
      return m;
    }
    this.received++;
    recordOf(m);
    if (this.texts[this.texts.length - 1] !== text) this.texts.push(text);
    this.ord++;
    this.addEvent(R, this.texts.length - 1, from, to);
    return null;
  }

  // Event i's line.
  line(i) {
    const o = i * E.WIDTH, a = this.e.a;
    return this.texts[a[o + E.TEXT]].slice(a[o + E.FROM], a[o + E.TO]);
  }

  // Event i as its line says it, with what pmon web leaves out of the
  // line (doc/web.md, "The stream"): its id, its task's host and
  // program, and tc where it equals t.
  event(i) {
    const ev = JSON.parse(this.line(i));
    const task = this.info.get(ev.tid);
    ev.id = ev.tid + ':' + ev.seq;
    if (task !== undefined) {
      ev.host = task.host;
      ev.program = task.program;
    }
    if (ev.tc === undefined && ev.t !== undefined) ev.tc = ev.t;
    return ev;
  }

  // The exact nanoseconds within the second of event i's time key ("t"
  // or "tc"), from its line, or -1.
  exactNs(i, key) {
    const line = this.line(i);
    const ns = lastDigits(line, '"' + key + '":');
    return ns < 0 && key === 'tc' ? lastDigits(line, '"t":') : ns;
  }

  // The logical position after every event.
  logicalEnd() {
    let end = 0;
    for (const l of this.lines.values()) if (l.n > 0) end = Math.max(end, l.at(l.n - 1, L.X));
    return end + 1;
  }

  callOf(i) {
    return CALLS.names[this.e.a[i * E.WIDTH + E.CALL]];
  }

  // Field f of event i's row (E).
  at(i, f) {
    return this.e.a[i * E.WIDTH + f];
  }

  // The state at this point of the stream: from here on, the page's
  // model starts from it.  It lists every problem found so far.
  addSnapshot(m) {
    const seg = { at: this.n, ord: m.ord, state: m.state,
      why: m.why || (this.segments.length ? 'resync' : 'attach') };
    this.segments.push(seg);
    const loss = this.losses[this.losses.length - 1];
    if (loss && !loss.snapshot && seg.why !== 'checkpoint') loss.snapshot = seg;
    this.problems = (m.state.problems || []).map((p) => ({ type: 'problem', ...p }));
    // A task pmon does not instrument has no task line: its name is here.
    for (const t of m.state.tasks || [])
      if (!this.info.has(t.tid))
        this.info.set(t.tid, { ...t, unmonitored: t.state === 'unmonitored' || t.state === 'ended' });
  }

  // The last snapshot at or before step n (null before the first).
  segmentAt(n) {
    const sg = this.segments;
    let a = 0, b = sg.length;
    while (a < b) {
      const m = (a + b) >> 1;
      if (sg[m].at <= n) a = m + 1; else b = m;
    }
    return a > 0 ? sg[a - 1] : null;
  }

  // The last loss at or before step n (null if none).
  lossAt(n) {
    let l = null;
    for (const x of this.losses) if (x.at <= n) l = x;
    return l;
  }

  // Every loss pmon web was told of: those still kept and those it no
  // longer keeps (its hello counts them).
  lostTotal() {
    const h = this.hello;
    const t = { events: h.lost_before || 0, losses: h.losses_before || 0,
      lastMs: h.last_loss_ms || 0 };
    for (const l of this.losses) {
      t.events += l.events || 0;
      t.losses++;
      t.lastMs = Math.max(t.lastMs, l.received_ms || 0);
    }
    return t;
  }

  // Where the events of a loss are missing on one task's line: the
  // index of the task's last event before them and of its first after
  // them (undefined at either end).
  lossGap(tid, first) {
    const l = this.lines.get(tid);
    if (l === undefined) return [undefined, undefined];
    const k = l.lastAtOrBefore(L.SEQ, first - 1, 0) + 1;
    return [k > 0 ? l.at(k - 1, L.IDX) : undefined, k < l.n ? l.at(k, L.IDX) : undefined];
  }

  // The index of event "tid:seq" (or of tid, seq), undefined if not kept.
  find(tid, seq) {
    if (seq === undefined) {
      const c = String(tid).indexOf(':');
      if (c < 0) return undefined;
      seq = +String(tid).slice(c + 1);
      tid = +String(tid).slice(0, c);
    }
    const l = this.lines.get(tid);
    if (l === undefined) return undefined;
    const k = l.lastAtOrBefore(L.SEQ, seq, 0);
    return k >= 0 && l.at(k, L.SEQ) === seq ? l.at(k, L.IDX) : undefined;
  }

  addPred(i, j) {
    this.predsAt = i;
    const p = this.preds.get(i);
    if (p === undefined) this.preds.set(i, [j]);
    else p.push(j);
  }

  // An event (r: the record R) whose line is texts[text][from, to).
  addEvent(r, text, from, to) {
    const i = this.n++;
    const tid = r.tid, seq = r.seq, phase = r.phase;
    const code = CALLS.code(r.call);
    let line = this.lines.get(tid);
    if (line === undefined) {
      line = new Line(tid, this.lines.size);
      // A backlog's events, shared among the tasks announced so far,
      // and an eighth more: a table that grows copies what it has.
      if (this.expect > this.n)
        line.t.reserve(Math.ceil(1.125 * (this.expect - this.n) / Math.max(1, this.info.size)));
      this.lines.set(tid, line);
      this.spawnEdge(tid, i);
    }
    // It ends the call its task's last event began (the space-time bars).
    const ends = phase === 'end' && line.lastBegin && line.lastCall === code;
    if (r.mtid >= 0) {
      const s = this.find(r.mtid, r.mseq);
      if (s !== undefined) {
        this.addPred(i, s);
        // pvm_probe sees the message arrive; the receive after it takes it.
        if (code !== CALLS.PROBE) {
          const o = this.arrows.add();
          this.arrows.a[o] = s;
          this.arrows.a[o + 1] = i;
        }
      }
    }
    if (code === CALLS.BARRIER) this.barrierEdges(tid, seq, phase, r.group, i);
    const n = line.n;
    let x = (n > 0 ? line.at(n - 1, L.X) : 0) + 1;
    if (this.predsAt === i) for (const p of this.preds.get(i)) x = Math.max(x, this.at(p, E.X) + 1);
    // A record without a time (lost events) sits at its task's last.
    const last = n > 0 ? line.at(n - 1, L.TC) : -Infinity;
    let tc = r.tc;
    if (tc >= 0) this.tcMin = Math.min(this.tcMin, tc);
    else {
      tc = r.t >= 0 ? r.t : last;
      if (tc === -Infinity) tc = Number.isFinite(this.tcMin) ? this.tcMin : 0;
    }
    const o = this.e.add(), a = this.e.a;
    a[o + E.TEXT] = text;
    a[o + E.FROM] = from;
    a[o + E.TO] = to;
    a[o + E.TID] = tid;
    a[o + E.SEQ] = seq;
    a[o + E.CALL] = code;
    a[o + E.PHASE] = phase === 'begin' ? 1 : phase === 'end' ? 2 : 0;
    a[o + E.X] = x;
    a[o + E.TC] = tc;
    a[o + E.LINE] = line.ord;
    // Per task the axes only go forwards, so that a line is searchable.
    line.push(i, seq, code, phase === 'begin', x, Math.max(tc, last), ends);
  }

  // A task's first event follows its parent's pvm_spawn begin.
  spawnEdge(tid, i) {
    const t = this.info.get(tid);
    if (t && t.parent > 0 && t.spawn_seq > 0) {
      const p = this.find(t.parent, t.spawn_seq);
      if (p !== undefined) this.addPred(i, p);
    }
  }

  // A barrier's end follows every entry of its episode.
  barrierEdges(tid, seq, phase, group, i) {
    let open = this.openBarrier.get(group);
    if (phase === 'begin') {
      if (open === undefined || open.closed) {
        open = [];
        this.openBarrier.set(group, open);
      }
      open.push(i);
      this.episodes.set(i, open);
      return;
    }
    const b = this.find(tid, seq - 1);
    const episode = b === undefined ? undefined : this.episodes.get(b);
    if (episode === undefined) return;
    episode.closed = true;
    for (const j of episode) if (this.at(j, E.TID) !== tid) this.addPred(i, j);
  }

  // Per task, the last event that causally precedes event i (its past
  // frontier): a walk back over program order, matched sends, spawns
  // and barrier entries.
  frontier(i) {
    const tid = this.at(i, E.TID), seq = this.at(i, E.SEQ);
    const reach = new Map();    // tid -> highest seq known to precede
    const work = [];
    const raise = (j) => {
      const t = this.at(j, E.TID), q = this.at(j, E.SEQ);
      const had = reach.get(t) || 0;
      if (q > had) {
        reach.set(t, q);
        work.push([t, had, q]);
      }
    };
    for (const p of this.preds.get(i) || NONE) raise(p);
    const prev = this.find(tid, seq - 1);
    if (prev !== undefined) raise(prev);
    while (work.length > 0) {
      const [t, lo, hi] = work.pop();
      const l = this.lines.get(t);
      for (let k = l.lastAtOrBefore(L.SEQ, lo, 0) + 1; k < l.n && l.at(k, L.SEQ) <= hi; k++) {
        for (const p of this.preds.get(l.at(k, L.IDX)) || NONE) raise(p);
      }
    }
    const out = {};
    for (const [t, q] of reach) {
      if (t !== tid || q < seq) out[t] = t + ':' + q;
    }
    return out;
  }
}

// The state at one step: a snapshot (seg, from stream.segmentAt) plus
// the events after it applied in order.
class State {
  constructor(stream, seg) {
    this.tasks = new Map();
    this.queues = new Map();    // receiver tid -> [{from, tag, ...}]
    this.groups = new Map();    // name -> {members: Map, waiting: Set}
    this.seg = seg || null;
    this.step = seg ? seg.at : 0;
    this.stopped = new Set();   // stopped by a tool or a breakpoint
    this.stream = stream;
    if (seg) this.fromSnapshot(seg.state);
    this.announce();
    // Notices that came before the snapshot are in it already.
    const ns = stream.notices;
    this.nnotice = 0;           // notices applied
    while (seg && this.nnotice < ns.length && ns[this.nnotice].ord < seg.ord) this.nnotice++;
  }

  // Announced but not in the snapshot: not started at its step.
  announce() {
    for (const t of this.stream.info.values()) {
      if (!this.tasks.has(t.tid)) this.task(t.tid).state = 'new';
    }
  }

  // A copy to go on from, sharing nothing it changes.
  clone() {
    const c = Object.create(State.prototype);
    Object.assign(c, this);
    c.tasks = structuredClone(this.tasks);
    c.queues = structuredClone(this.queues);
    c.groups = structuredClone(this.groups);
    c.stopped = new Set(this.stopped);
    c.announce();
    return c;
  }

  fromSnapshot(s) {
    for (const t of s.tasks || []) {
      const m = this.task(t.tid);
      m.state = t.state === 'stopped' ? (t.blocked ? 'blocked' : 'running') : t.state;
      if (t.state === 'stopped') this.stopped.add(t.tid);
      m.exit_status = t.exit_status;
      m.calls = t.calls;
      m.sent = { ...t.sent };
      m.received = { ...t.received };
      m.time = { pvm: t.time_ns.pvm, blocked: t.time_ns.blocked };
      m.last_seq = t.last_seq;
      m.children = [...t.children];
      if (t.blocked) m.open = { call: t.blocked.in, tc: undefined, src: t.blocked.from,
        tag: t.blocked.tag, group: t.blocked.group, seq: +t.blocked.since.split(':')[1] };
    }
    for (const q of s.queues || []) this.queues.set(q.tid, q.messages.map((x) => ({ ...x })));
    for (const g of s.groups || []) {
      const m = this.group(g.name);
      for (const x of g.members) m.members.set(x.tid, x.inst);
      if (g.barrier) for (const w of g.barrier.waiting) m.waiting.add(w);
    }
  }

  task(tid) {
    let t = this.tasks.get(tid);
    if (t === undefined) {
      t = { tid, state: 'running', open: null, calls: 0, sent: { msgs: 0, bytes: 0 },
        received: { msgs: 0, bytes: 0 }, time: { pvm: 0, blocked: 0 },
        last_seq: 0, children: [], exit_status: undefined };
      this.tasks.set(tid, t);
    }
    return t;
  }

  group(name) {
    let g = this.groups.get(name);
    if (g === undefined) {
      g = { name, members: new Map(), waiting: new Set() };
      this.groups.set(name, g);
    }
    return g;
  }

  queue(tid) {
    let q = this.queues.get(tid);
    if (q === undefined) {
      q = [];
      this.queues.set(tid, q);
    }
    return q;
  }

  live(tid) {
    const t = this.tasks.get(tid);
    return t === undefined || (t.state !== 'exited' && t.state !== 'killed' &&
      t.state !== 'ended');
  }

  enqueue(ev) {
    const t = this.task(ev.tid);
    for (const d of dests(ev)) {
      const b = ev.bytes > 0 ? ev.bytes : 0;
      t.sent.msgs++;
      t.sent.bytes += b;
      this.task(d);
      if (!this.live(d)) continue;   // PVM drops it
      if (this.tasks.get(d).state === 'unmonitored') continue;  // never seen
      this.queue(d).push({ from: ev.tid, tag: ev.tag, ctx: ev.ctx, bytes: ev.bytes,
        send: ev.id });
    }
  }

  // A failed send delivered nothing: its messages leave the queues.
  retract(ev) {
    const id = ev.tid + ':' + (ev.seq - 1);
    const t = this.task(ev.tid);
    for (const [, q] of this.queues) {
      const k = q.findIndex((m) => m.send === id);
      if (k >= 0) {
        t.sent.msgs--;
        t.sent.bytes -= q[k].bytes > 0 ? q[k].bytes : 0;
        q.splice(k, 1);
      }
    }
  }

  receive(ev) {
    const t = this.task(ev.tid);
    t.received.msgs++;
    t.received.bytes += ev.bytes > 0 ? ev.bytes : 0;
    if (ev.match === undefined) return;
    const q = this.queue(ev.tid);
    const k = q.findIndex((m) => m.send === ev.match);
    if (k >= 0) q.splice(k, 1);
  }

  end(t) {
    if (t.state === 'exited' || t.state === 'killed') return;
    t.state = 'exited';
    t.open = null;
    this.queues.delete(t.tid);
    for (const g of this.groups.values()) g.members.delete(t.tid);
  }

  begin(t, ev) {
    t.calls++;
    // A message handler runs inside the call that got its message, and
    // that call is open again at the handler's end (doc/events.md).
    if (ev.call === 'handler' && t.open && !t.outer) t.outer = t.open;
    t.open = { call: ev.call, seq: ev.seq, tc: ev.tc, src: ev.src, tag: ev.tag,
      ctx: ev.ctx, group: ev.group, inst: ev.inst };
    if (ev.call === 'handler' && ev.msg) this.receive(ev);
    else if (sendsAt(ev)) this.enqueue(ev);
    else if (ev.call === 'pvm_barrier') this.group(ev.group).waiting.add(t.tid);
    else if (ev.call === 'pvm_exit') this.end(t);
  }

  finish(t, ev) {
    const open = t.open && t.open.call === ev.call ? t.open : null;
    if (open && open.tc !== undefined && ev.tc > open.tc) {
      t.time.pvm += ev.tc - open.tc;
      if (BLOCKING.has(ev.call)) t.time.blocked += ev.tc - open.tc;
    }
    if (sendsAt(ev)) this.enqueue(ev);
    else if (ev.rc < 0 && ['pvm_send', 'pvm_psend', 'pvm_mcast'].includes(ev.call)) this.retract(ev);
    else if (RECVS.has(ev.call) && ev.call !== 'pvm_probe' && ev.msg) this.receive(ev);
    else if (ev.call === 'pvm_barrier') this.group(ev.group).waiting.delete(t.tid);
    else if (ev.call === 'pvm_joingroup' && ev.rc >= 0) this.group(ev.group).members.set(t.tid, ev.rc);
    else if (ev.call === 'pvm_lvgroup' && ev.rc >= 0) this.group(ev.group).members.delete(t.tid);
    else if (ev.call === 'pvm_spawn') for (const k of ev.children || []) {
      if (!t.children.includes(k)) t.children.push(k);
    }
    else if (ev.call === 'pvm_exit') {
      t.exit_status = ev.rc;
      this.end(t);
    }
    if (t.state !== 'exited' && t.state !== 'killed') t.open = null;
    if (ev.call === 'handler' && t.outer) {
      if (t.state !== 'exited' && t.state !== 'killed') t.open = t.outer;
      t.outer = null;
    }
  }

  apply(ev) {
    const t = this.task(ev.tid);
    t.last_seq = Math.max(t.last_seq, ev.seq + (ev.call === 'lost' ? ev.count - 1 : 0));
    if (ev.call === 'lost') t.open = t.outer = null;
    else if (ev.call === 'pvm_break') return;
    else if (ev.phase === 'begin') this.begin(t, ev);
    else this.finish(t, ev);
    if (t.state !== 'exited' && t.state !== 'killed')
      t.state = t.open && BLOCKING.has(t.open.call) ? 'blocked' : 'running';
  }

  // Stops, continues and kills come as notices (doc/control.md).
  notice(m) {
    // Tasks pmon does not instrument (doc/tasker.md), as pvmd lists them.
    if (m.notice === 'unmonitored') this.task(m.tid).state = 'unmonitored';
    if (m.notice === 'unmonitored_ended') this.task(m.tid).state = 'ended';
    for (const tid of m.tasks || []) {
      if (m.notice === 'stopped') this.stopped.add(tid);
      else if (m.notice === 'continued') this.stopped.delete(tid);
      else if (m.notice === 'killed') {
        const t = this.task(tid);
        this.end(t);
        t.state = 'killed';
        this.stopped.delete(tid);
      }
    }
  }

  noticesUpTo(i) {
    const ns = this.stream.notices;
    for (; this.nnotice < ns.length && ns[this.nnotice].at <= i; this.nnotice++)
      this.notice(ns[this.nnotice]);
  }

  // Moves forward to step n (the first n events applied).
  advance(n) {
    const stream = this.stream;
    for (; this.step < n && this.step < stream.n; this.step++) {
      this.noticesUpTo(this.step);
      this.apply(stream.event(this.step));
    }
    this.noticesUpTo(this.step);
  }

  // The state as doc/state.md names it: stopped comes first.
  shownState(t) {
    const live = t.state !== 'exited' && t.state !== 'killed' && t.state !== 'ended';
    return live && this.stopped.has(t.tid) ? 'stopped' : t.state;
  }

  blockedOf(t) {
    if (t.state !== 'blocked' || !t.open) return null;
    const o = t.open;
    if (o.call === 'pvm_barrier') return { in: o.call, group: o.group };
    return { in: o.call, from: o.src, tag: o.tag };
  }

  // The model in the shape of doc/state.md's tasks, for tests and diffs.
  summary() {
    const tasks = [...this.tasks.values()].sort((a, b) => a.tid - b.tid).map((t) => {
      const i = this.stream.info.get(t.tid) || {};
      return { tid: t.tid, host: i.host, program: i.program, state: this.shownState(t),
        blocked: this.blockedOf(t), queue: (this.queues.get(t.tid) || []).length,
        sent: t.sent.msgs, received: t.received.msgs, last_seq: t.last_seq,
        parent: i.parent };
    });
    return { step: this.step, events: this.stream.n,
      arrows: this.stream.arrows.n,
      base: this.seg ? { at: this.seg.at, why: this.seg.why } : null, tasks };
  }

  // What differs from a snapshot of doc/state.md (the same position).
  compare(snap) {
    const diffs = [];
    for (const s of snap.tasks) {
      const t = this.tasks.get(s.tid);
      if (!t) {
        diffs.push(s.tid + ': not in the model');
        continue;
      }
      const state = s.state;
      // A task that did nothing yet runs, for the coordinator.
      const mineState = t.state === 'new' && !this.stopped.has(t.tid) ? 'running' :
        this.shownState(t);
      if (state !== mineState) diffs.push(s.tid + ': state ' + mineState + ', snapshot ' + s.state);
      const b = this.blockedOf(t);
      const mine = b ? b.in + ' from ' + b.from : 'nothing';
      const theirs = s.blocked ? s.blocked.in + ' from ' + s.blocked.from : 'nothing';
      if (mine !== theirs) diffs.push(s.tid + ': blocked in ' + mine + ', snapshot ' + theirs);
      if (t.sent.msgs !== s.sent.msgs) diffs.push(s.tid + ': sent ' + t.sent.msgs + ', snapshot ' + s.sent.msgs);
      if (t.received.msgs !== s.received.msgs)
        diffs.push(s.tid + ': received ' + t.received.msgs + ', snapshot ' + s.received.msgs);
    }
    const theirs = new Map((snap.queues || []).map((q) => [q.tid, q.messages.length]));
    for (const tid of new Set([...theirs.keys(), ...this.queues.keys()])) {
      const mine = (this.queues.get(tid) || []).length;
      if (mine !== (theirs.get(tid) || 0))
        diffs.push(tid + ': queue ' + mine + ', snapshot ' + (theirs.get(tid) || 0));
    }
    return diffs;
  }
}

// The state at any step, kept every EVERY events of a segment as the
// page goes past, so that going back applies at most that many events
// (a million events take a second or more to apply from the start).
class States {
  constructor(stream) {
    this.stream = stream;
    this.kept = new Map();      // step -> state there (of its segment)
    this.cur = new State(stream, null);
  }

  at(n) {
    const stream = this.stream;
    const seg = stream.segmentAt(n);
    let st = this.cur;
    if (n < st.step || seg !== st.seg) {
      st = null;
      for (let k = n - n % States.EVERY; k > (seg ? seg.at : 0); k -= States.EVERY) {
        const c = this.kept.get(k);
        if (c !== undefined && c.seg === seg) {
          st = c.clone();
          break;
        }
      }
      if (st === null) st = new State(stream, seg);
    }
    while (st.step < n && st.step < stream.n) {
      const next = Math.min(n, st.step - st.step % States.EVERY + States.EVERY);
      st.advance(next);
      if (st.step % States.EVERY === 0 && !this.kept.has(st.step)) this.keep(st);
    }
    st.noticesUpTo(st.step);
    this.cur = st;
    return st;
  }

  keep(st) {
    if (this.kept.size >= States.MAX) this.kept.delete(this.kept.keys().next().value);
    this.kept.set(st.step, st.clone());
  }
}
States.EVERY = 20000;
States.MAX = 200;

window.PmonModel = { Stream, State, States, SENDS, RECVS, BLOCKING, COMPUTING, IN_CALL, BLOCKED, LOST, E, L };
})();
