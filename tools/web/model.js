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

function dests(ev) {
  const d = Array.isArray(ev.dst) ? ev.dst : [ev.dst];
  return [...new Set(d)].filter((t) => t > 0 && t !== ev.tid);
}

// The stream: every event in arrival order (a causal order), with the
// logical position and causal edges the views and the frontier use.
class Stream {
  constructor() { this.reset(); }

  reset() {
    this.info = new Map();      // tid -> task line
    this.segments = [];         // snapshots: {at, ord, state, why}
    this.hello = {};            // pmon web's counts of what it dropped
    this.ord = 0;               // messages so far (stream order)
    this.events = [];
    this.byId = new Map();      // "tid:seq" -> index
    this.byTask = new Map();    // tid -> [index...]
    this.arrows = [];           // [send index, receive end index]
    this.notices = [];
    this.losses = [];           // "lost" notices: {at, events, tasks, snapshot}
    this.problems = [];         // the last snapshot's and those after it
    this.lastX = new Map();     // tid -> logical position of last event
    this.openBarrier = new Map(); // group -> [begin indexes]
    this.dropped = 0;
    this.bye = null;
    this.tcMin = Infinity;
    this.tcMax = 0;
  }

  add(m) {
    m.ord = this.ord++;
    if (m.type === 'task') this.info.set(m.tid, m);
    else if (m.type === 'snapshot') this.addSnapshot(m);
    else if (m.type === 'problem') this.problems.push(m);
    else if (m.type === 'notice') {
      m.at = this.events.length;      // applies after the events so far
      this.notices.push(m);
      if (m.notice === 'lost') this.losses.push(m);
      if (m.notice === 'unmonitored') this.info.set(m.tid, { ...m, unmonitored: true });
    }
    else if (m.type === 'bye') this.bye = m.reason;
    else if (m.type === undefined && m.id !== undefined) this.addEvent(m);
  }

  // The state at this point of the stream: from here on, the page's
  // model starts from it.  It lists every problem found so far.
  addSnapshot(m) {
    const seg = { at: this.events.length, ord: m.ord, state: m.state,
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
    const mine = this.byTask.get(tid) || [];
    const k = this.firstAfter(mine, first - 1);
    return [mine[k - 1], mine[k]];
  }

  addEvent(ev) {
    const i = this.events.length;
    ev.i = i;
    ev.preds = [];              // causal predecessors in other tasks
    const mine = this.byTask.get(ev.tid);
    // The begin of the call this event ends, for the space-time bars.
    const prev = mine === undefined ? undefined : this.events[mine[mine.length - 1]];
    ev.begin = ev.phase === 'end' && prev !== undefined && prev.phase === 'begin' &&
      prev.call === ev.call ? prev.i : -1;
    if (mine === undefined) {
      this.byTask.set(ev.tid, [i]);
      this.spawnEdge(ev);
    } else mine.push(i);
    if (ev.match !== undefined && this.byId.has(ev.match)) {
      const s = this.byId.get(ev.match);
      ev.preds.push(s);
      // pvm_probe sees the message arrive; the receive after it takes it.
      if (ev.call !== 'pvm_probe') this.arrows.push([s, i]);
    }
    this.barrierEdges(ev);
    let x = (this.lastX.get(ev.tid) || 0) + 1;
    for (const p of ev.preds) x = Math.max(x, this.events[p].x + 1);
    ev.x = x;
    this.lastX.set(ev.tid, x);
    if (ev.tc !== undefined) {
      this.tcMin = Math.min(this.tcMin, ev.tc);
      this.tcMax = Math.max(this.tcMax, ev.tc);
    }
    this.byId.set(ev.id, i);
    this.events.push(ev);
  }

  // A task's first event follows its parent's pvm_spawn begin.
  spawnEdge(ev) {
    const t = this.info.get(ev.tid);
    if (t && t.parent > 0 && t.spawn_seq > 0) {
      const p = this.byId.get(t.parent + ':' + t.spawn_seq);
      if (p !== undefined) ev.preds.push(p);
    }
  }

  // A barrier's end follows every entry of its episode.
  barrierEdges(ev) {
    if (ev.call !== 'pvm_barrier') return;
    let open = this.openBarrier.get(ev.group);
    if (ev.phase === 'begin') {
      if (open === undefined || open.closed) {
        open = [];
        this.openBarrier.set(ev.group, open);
      }
      open.push(ev.i);
      ev.episode = open;
      return;
    }
    const b = this.beginOf(ev);
    if (b === undefined || !b.episode) return;
    b.episode.closed = true;
    for (const j of b.episode) if (this.events[j].tid !== ev.tid) ev.preds.push(j);
  }

  beginOf(ev) {
    const i = this.byId.get(ev.tid + ':' + (ev.seq - 1));
    return i === undefined ? undefined : this.events[i];
  }

  // The first index of a task's events (in seq order) with seq > lo.
  firstAfter(mine, lo) {
    let a = 0, b = mine.length;
    while (a < b) {
      const m = (a + b) >> 1;
      if (this.events[mine[m]].seq <= lo) a = m + 1; else b = m;
    }
    return a;
  }

  // Per task, the last event that causally precedes event i (its past
  // frontier): a walk back over program order, matched sends, spawns
  // and barrier entries.
  frontier(i) {
    const ev = this.events[i];
    const reach = new Map();    // tid -> highest seq known to precede
    const work = [];
    const raise = (j) => {
      const e = this.events[j];
      const had = reach.get(e.tid) || 0;
      if (e.seq > had) {
        reach.set(e.tid, e.seq);
        work.push([e.tid, had, e.seq]);
      }
    };
    for (const p of ev.preds) raise(p);
    const prev = this.byId.get(ev.tid + ':' + (ev.seq - 1));
    if (prev !== undefined) raise(prev);
    while (work.length > 0) {
      const [tid, lo, hi] = work.pop();
      const mine = this.byTask.get(tid);
      for (let k = this.firstAfter(mine, lo); k < mine.length; k++) {
        const e = this.events[mine[k]];
        if (e.seq > hi) break;
        for (const p of e.preds) raise(p);
      }
    }
    const out = {};
    for (const [tid, seq] of reach) {
      if (tid !== ev.tid || seq < ev.seq) out[tid] = tid + ':' + seq;
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
    // Announced but not in the snapshot: not started at its step.
    for (const t of stream.info.values()) {
      if (!this.tasks.has(t.tid)) this.task(t.tid).state = 'new';
    }
    // Notices that came before the snapshot are in it already.
    const ns = stream.notices;
    this.nnotice = 0;           // notices applied
    while (seg && this.nnotice < ns.length && ns[this.nnotice].ord < seg.ord) this.nnotice++;
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
    const evs = this.stream.events;
    for (; this.step < n && this.step < evs.length; this.step++) {
      this.noticesUpTo(this.step);
      this.apply(evs[this.step]);
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
    return { step: this.step, events: this.stream.events.length,
      arrows: this.stream.arrows.length,
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

window.PmonModel = { Stream, State, SENDS, RECVS, BLOCKING };
})();
