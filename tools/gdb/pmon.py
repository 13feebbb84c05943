# pmon.py: gdb glue for pmon (issue 5).  Load it into gdb:
#
#	(gdb) source tools/gdb/pmon.py		or  gdb -x tools/gdb/pmon.py ...
#
# Whenever gdb stops a PVM task, it runs `pmon flush` (so that everything
# the application recorded up to the stop reaches every pmon tool, a
# visualizer attached separately included) and `pmon snapshot --json`,
# and prints what pmon knows of the stopped task: its tid, program and
# host, its state and where it is blocked, its message queue and traffic,
# the tasks it waits for and those that wait for it, and a count of the
# application's tasks by state.  If pmon is not running it prints one
# line saying so.
#
# Commands:
#	pmon snapshot		that summary, on demand
#	pmon ps [ARGS]		pmon ps
#	pmon problems [ARGS]	pmon problems
#	pmon queues [ARGS]	pmon queues
#	pmon flush		pmon flush
#	pmon stop-all		pmon stop '*': the whole application stops
#	pmon continue-all	pmon continue '*'
#	set pmon auto on|off	the summary at every stop (on by default)
#	set pmon timeout SECS	how long one pmon command may take (10)
#	show pmon command	which pmon binary and PVM_TMP are used
#
# The pmon binary: $PMON, else `pmon` in PATH, else build/bin/pmon of the
# repository this file is in.  The virtual machine: the PVM_TMP of gdb's
# environment, else that of the process being debugged (PVM tasks get
# their pvmd's environment).  Sourcing the file again replaces it.

import json
import os
import shutil
import subprocess

import gdb

try:
    _PMON_REPO = os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))))
except NameError:		# no __file__: exec'd some other way
    _PMON_REPO = None

_PMON_LIVE = ("running", "blocked", "stopped")


class _PmonError(Exception):
    """A pmon command could not be run or failed; str() is one line."""


def _pmon_tid(t):
    if t is None:
        return "?"
    if t == -1:
        return "any task"
    if t <= 0:
        return str(t)
    return "t%x" % t


def _pmon_event(ev):
    """ "262147:23" -> "t40003:23" """
    try:
        tid, seq = str(ev).split(":", 1)
        return "%s:%s" % (_pmon_tid(int(tid)), seq)
    except ValueError:
        return str(ev)


def _pmon_plural(n, word):
    return "%d %s%s" % (n, word, "" if n == 1 else "s")


class _PmonExt:
    def __init__(self):
        self.auto = True
        self.timeout = 10

    # --- running pmon -----------------------------------------------------

    def binary(self):
        p = os.environ.get("PMON")
        if p:
            return p
        p = shutil.which("pmon")
        if p:
            return p
        if _PMON_REPO is not None:
            p = os.path.join(_PMON_REPO, "build", "bin", "pmon")
            if os.access(p, os.X_OK):
                return p
        return None

    @staticmethod
    def inferior_pid():
        try:
            inf = gdb.selected_inferior()
        except gdb.error:
            return 0
        return inf.pid if inf is not None and inf.is_valid() else 0

    @staticmethod
    def inferior_env(pid, name):
        try:
            with open("/proc/%d/environ" % pid, "rb") as f:
                for kv in f.read().split(b"\0"):
                    k, sep, v = kv.partition(b"=")
                    if sep and k.decode(errors="replace") == name:
                        return v.decode(errors="replace")
        except OSError:
            pass
        return None

    def pvm_tmp(self):
        """PVM_TMP of gdb's environment, else of the debugged process."""
        v = os.environ.get("PVM_TMP")
        if v:
            return v
        pid = self.inferior_pid()
        return self.inferior_env(pid, "PVM_TMP") if pid > 0 else None

    def run(self, args):
        """Runs pmon ARGS; returns its stdout.  Raises _PmonError."""
        exe = self.binary()
        if exe is None:
            raise _PmonError("no pmon command: set $PMON, or put pmon in PATH")
        env = dict(os.environ)
        tmp = self.pvm_tmp()
        if tmp:
            env["PVM_TMP"] = tmp
        what = "pmon " + " ".join(args)
        try:
            r = subprocess.run([exe] + list(args), env=env,
                               stdin=subprocess.DEVNULL,
                               capture_output=True,
                               timeout=self.timeout or None,
                               start_new_session=True)
        except subprocess.TimeoutExpired:
            raise _PmonError("`%s` did not answer within %d s (PVM_TMP=%s)"
                            % (what, self.timeout, tmp or "unset"))
        except OSError as e:
            raise _PmonError("cannot run %s: %s" % (exe, e.strerror))
        if r.returncode != 0:
            err = r.stderr.decode(errors="replace").strip().splitlines()
            msg = err[0] if err else "exit status %d" % r.returncode
            if "no pmon coordinator" in msg:
                msg = "not running for this virtual machine (PVM_TMP=%s)" \
                      % (tmp or "unset")
            raise _PmonError(msg)
        return r.stdout.decode(errors="replace")

    def snapshot(self):
        self.run(["flush"])
        out = self.run(["snapshot", "--json"])
        try:
            return json.loads(out)
        except ValueError as e:
            raise _PmonError("pmon snapshot --json: bad JSON: %s" % e)

    # --- the stopped task ---------------------------------------------------

    @staticmethod
    def inferior_tid():
        """The PVM tid libpvm3 holds in the stopped process, if any."""
        try:
            v = int(gdb.parse_and_eval("*(int *)&pvmmytid"))
        except (gdb.error, RuntimeError, ValueError):
            return None
        return v if v > 0 else None

    @staticmethod
    def find_task(snap, pid, tid):
        tasks = snap.get("tasks", [])
        if tid is not None:	# enrolled in PVM: its tid says which task
            for t in tasks:
                if t.get("tid") == tid:
                    return t
            return None
        same = [t for t in tasks if t.get("pid") == pid]
        live = [t for t in same if t.get("state") in _PMON_LIVE]
        pick = live or same
        return pick[-1] if pick else None

    @staticmethod
    def where(b):
        s = "in " + b.get("in", "?")
        if "from" in b:
            s += " from " + _pmon_tid(b["from"])
            tag = b.get("tag", -1)
            s += " tag " + ("any" if tag == -1 else str(tag))
            if b.get("ctx"):
                s += " ctx %d" % b["ctx"]
        if "group" in b:
            s += " group " + str(b["group"])
        if "count" in b:
            s += " count %d" % b["count"]
        if "root" in b:
            s += " root %d" % b["root"]
        return s

    def state_text(self, t):
        st = t.get("state", "?")
        parts = []
        if st == "stopped":
            s = t.get("stopped") or {}
            by = "by pmon"
            if s.get("tool"):
                by += " (tool %d)" % s["tool"]
            if s.get("breakpoint"):
                by += " at breakpoint %d" % s["breakpoint"]
            at = s.get("at")
            if at:
                by += ", %s %s" % (at.get("phase", "?"), at.get("call", "?"))
                if "peer" in at:
                    by += " peer " + _pmon_tid(at["peer"])
                if "tag" in at:
                    by += " tag %d" % at["tag"]
            parts.append("stopped " + by)
        elif st == "exited" and "exit_status" in t:
            parts.append("exited, status %d" % t["exit_status"])
        else:
            parts.append(st)
        b = t.get("blocked")
        if b:
            w = "blocked " + self.where(b)
            if b.get("since"):
                w += " (since %s)" % _pmon_event(b["since"])
            if st == "blocked":
                parts[0] = w
            else:
                parts.append(w)
        return ", ".join(parts)

    @staticmethod
    def matches(b, m):
        """Would receive b take message m?"""
        return (b.get("from", -1) in (-1, m.get("from")) and
                b.get("tag", -1) in (-1, m.get("tag")) and
                b.get("ctx", 0) == m.get("ctx", 0))

    def relations(self, snap, t):
        """(waits for, waited on by): lists of strings."""
        tasks = {x["tid"]: x for x in snap.get("tasks", []) if "tid" in x}
        groups = {g.get("name"): g for g in snap.get("groups", [])}
        me = t["tid"]
        waits, by = [], []
        b = t.get("blocked")
        if b and "from" in b:
            if b["from"] == -1:
                waits.append("any task")
            else:
                o = tasks.get(b["from"])
                waits.append("%s (%s)" % (_pmon_tid(b["from"]),
                                          o.get("state", "?") if o else
                                          "unknown"))
            q = self.queue_of(snap, me)
            if any(self.matches(b, m) for m in q):
                waits.append("a matching message is queued")
        elif b and "group" in b:
            g = groups.get(b["group"]) or {}
            inb = set(((g.get("barrier") or {}).get("waiting")) or [])
            if "count" in b:
                rest = [m["tid"] for m in g.get("members", [])
                        if m.get("tid") not in inb and m.get("tid") != me]
                waits.extend(_pmon_tid(x) for x in rest)
            if not waits:
                waits.append("group " + str(b["group"]))
        for o in snap.get("tasks", []):
            ob = o.get("blocked")
            if o is t or not ob or o.get("state") not in _PMON_LIVE:
                continue
            if "from" in ob and ob["from"] in (me, -1):
                tag = ob.get("tag", -1)
                by.append("%s (%s%s)" % (_pmon_tid(o["tid"]), ob.get("in"),
                          "" if tag == -1 else " tag %d" % tag))
            elif "count" in ob:
                g = groups.get(ob.get("group")) or {}
                inb = set(((g.get("barrier") or {}).get("waiting")) or [])
                mem = {m.get("tid") for m in g.get("members", [])}
                if me in mem and me not in inb:
                    by.append("%s (%s group %s)" % (
                        _pmon_tid(o["tid"]), ob.get("in"), ob.get("group")))
        return waits, by

    @staticmethod
    def queue_of(snap, tid):
        for q in snap.get("queues", []):
            if q.get("tid") == tid:
                return q.get("messages", [])
        return []

    @staticmethod
    def application(snap, t):
        """The tasks of t's program tree (parent links up to a root)."""
        tasks = {x["tid"]: x for x in snap.get("tasks", []) if "tid" in x}
        root, seen = t, set()
        while root.get("parent") in tasks and root["tid"] not in seen:
            seen.add(root["tid"])
            root = tasks[root["parent"]]
        kids = {}
        for x in tasks.values():
            kids.setdefault(x.get("parent"), []).append(x)
        app, ids, todo = [], set(), [root]
        while todo:
            x = todo.pop()
            if x["tid"] in ids:
                continue
            ids.add(x["tid"])
            app.append(x)
            todo.extend(kids.get(x["tid"], []))
        return app

    def app_line(self, snap, t):
        app = self.application(snap, t)
        progs, states = {}, {}
        for x in app:
            progs[x.get("program", "?")] = progs.get(x.get("program", "?"),
                                                     0) + 1
            states[x.get("state", "?")] = states.get(x.get("state", "?"),
                                                     0) + 1
        order = ["running", "blocked", "stopped", "exited", "killed"]
        st = ", ".join("%d %s" % (states[s], s) for s in
                       order + sorted(set(states) - set(order))
                       if s in states)
        pr = ", ".join("%d %s" % (n, p) for p, n in sorted(progs.items()))
        ids = {x["tid"] for x in app}
        other = sum(1 for x in snap.get("tasks", []) if x["tid"] not in ids
                    and x.get("state") in _PMON_LIVE
                    and x.get("program") != "pvmgs")
        line = "application: %s (%s): %s" % (_pmon_plural(len(app), "task"),
                                             pr, st)
        if other:
            line += "; %s live outside it" % _pmon_plural(other, "other task")
        return line

    def summary(self, snap, pid):
        tid = self.inferior_tid()
        t = self.find_task(snap, pid, tid)
        n = len(snap.get("tasks", []))
        if t is None:
            what = "pid %d" % pid + (" (%s)" % _pmon_tid(tid) if tid else "")
            return ["%s is not a task pmon monitors (%s known)"
                    % (what, _pmon_plural(n, "task"))]
        lines = ["%s %s on %s, pid %s: %s" % (
            _pmon_tid(t["tid"]), t.get("program", "?"), t.get("host", "?"),
            t.get("pid", "?"), self.state_text(t))]
        q = self.queue_of(snap, t["tid"])
        qs = "queue: %s" % _pmon_plural(len(q), "message")
        if q:
            qs += " (" + ", ".join("%s tag %s %d B" % (
                _pmon_tid(m.get("from")), m.get("tag"), m.get("bytes", 0))
                for m in q[:3]) + (", ..." if len(q) > 3 else "") + ")"
        s, r = t.get("sent", {}), t.get("received", {})
        lines.append("  %s; sent %d msgs (%d B), received %d msgs (%d B), "
                     "%d calls" % (qs, s.get("msgs", 0), s.get("bytes", 0),
                                   r.get("msgs", 0), r.get("bytes", 0),
                                   t.get("calls", 0)))
        waits, by = self.relations(snap, t)
        if waits or by:
            lines.append("  waits for: %s; waited on by: %s" % (
                ", ".join(waits) or "-", ", ".join(by) or "-"))
        lines.append(self.app_line(snap, t))
        return lines

    def report(self):
        """The summary of the selected inferior, as lines; _PmonError."""
        pid = self.inferior_pid()
        if pid <= 0:
            raise _PmonError("no process to look up")
        return self.summary(self.snapshot(), pid)

    # --- gdb's stop event -------------------------------------------------

    def on_stop(self, event):
        if not self.auto or self.inferior_pid() <= 0:
            return
        try:
            lines = self.report()
        except _PmonError as e:
            lines = [str(e)]
        except Exception as e:	# never a traceback at every stop
            lines = ["internal error: %s: %s" % (type(e).__name__, e)]
        for l in lines:
            gdb.write("pmon: %s\n" % l)
        gdb.flush()


_pmon_old = globals().get("_pmon_ext")
if _pmon_old is not None:
    try:
        gdb.events.stop.disconnect(_pmon_old.on_stop)
    except (ValueError, RuntimeError):
        pass
_pmon_ext = _PmonExt()
if _pmon_old is not None:	# sourced again: keep the settings
    _pmon_ext.auto, _pmon_ext.timeout = _pmon_old.auto, _pmon_old.timeout
gdb.events.stop.connect(_pmon_ext.on_stop)


# --- commands ---------------------------------------------------------------

def _pmon_print(args):
    try:
        out = _pmon_ext.run(args)
    except _PmonError as e:
        raise gdb.GdbError("pmon: %s" % e)
    gdb.write(out)
    gdb.flush()


class _PmonPrefix(gdb.Command):
    """Ask pmon, the PVM monitor, about the application (tools/gdb/pmon.py).

Every stop of the inferior also prints pmon's view of it (set pmon auto)."""

    def __init__(self):
        super().__init__("pmon", gdb.COMMAND_STATUS, gdb.COMPLETE_NONE, True)

    def invoke(self, arg, from_tty):
        gdb.execute("help pmon", from_tty)


class _PmonSnapshot(gdb.Command):
    """pmon's view of the task gdb debugs, after a flush: its tid, program,
host, state, where it is blocked, its queue, its traffic, the tasks it waits
for and those waiting on it; and the application's tasks by state."""

    def __init__(self):
        super().__init__("pmon snapshot", gdb.COMMAND_STATUS,
                         gdb.COMPLETE_NONE)

    def invoke(self, arg, from_tty):
        try:
            lines = _pmon_ext.report()
        except _PmonError as e:
            raise gdb.GdbError("pmon: %s" % e)
        for l in lines:
            gdb.write("pmon: %s\n" % l)
        gdb.flush()


class _PmonRun(gdb.Command):
    def __init__(self, name, args, takes_args, doc):
        self.__doc__ = doc
        self.args = args
        self.takes_args = takes_args
        super().__init__("pmon " + name, gdb.COMMAND_STATUS,
                         gdb.COMPLETE_NONE)

    def invoke(self, arg, from_tty):
        extra = gdb.string_to_argv(arg)
        if extra and not self.takes_args:
            raise gdb.GdbError("pmon: this command takes no arguments")
        _pmon_print(self.args + extra)
        pid = _pmon_ext.inferior_pid()
        if self.args[0] == "continue" and pid > 0:
            # The SIGCONT is pending in the process gdb holds: gdb reports
            # it (a stop) when it resumes the process.
            gdb.write("pmon: pid %d stays stopped until gdb resumes it; gdb "
                      "will then report pmon's SIGCONT\n" % pid)


_PmonPrefix()
_PmonSnapshot()
for _n, _a, _t, _d in (
        ("ps", ["ps"], True,
         "Run `pmon ps`: every task, its state, where blocked, traffic."),
        ("problems", ["problems"], True,
         "Run `pmon problems`: deadlocks, races, unreceived messages..."),
        ("queues", ["queues"], True,
         "Run `pmon queues [TASK]`: messages sent and not received yet."),
        ("flush", ["flush"], False,
         "Run `pmon flush`: everything recorded so far reaches every tool."),
        ("stop-all", ["stop", "*"], False,
         "Run `pmon stop '*'`: stop every task of the virtual machine, "
         "visibly\nto every pmon tool.  Resume them with pmon continue-all."),
        ("continue-all", ["continue", "*"], False,
         "Run `pmon continue '*'`: continue every stopped task.  The task "
         "gdb\nholds stays stopped until gdb lets it go; when it does, gdb "
         "reports\nthe SIGCONT pmon sent it (handle SIGCONT nostop noprint "
         "hides that).")):
    _PmonRun(_n, _a, _t, _d)


class _PmonSetPrefix(gdb.Command):
    """Settings of the pmon glue."""

    def __init__(self, verb):
        self.verb = verb
        super().__init__(verb + " pmon", gdb.COMMAND_DATA, gdb.COMPLETE_NONE,
                         True)

    def invoke(self, arg, from_tty):
        if self.verb == "show":
            for what in ("auto", "timeout", "command"):
                gdb.execute("show pmon " + what, from_tty)
        else:
            gdb.execute("help set pmon", from_tty)


class _PmonAuto(gdb.Parameter):
    """Whether every stop prints pmon's view of the stopped task."""
    set_doc = "Set whether every stop prints pmon's view of the task."
    show_doc = "Show whether every stop prints pmon's view of the task."

    def __init__(self):
        super().__init__("pmon auto", gdb.COMMAND_DATA, gdb.PARAM_BOOLEAN)
        self.value = _pmon_ext.auto

    def get_set_string(self):
        _pmon_ext.auto = bool(self.value)
        return ""

    def get_show_string(self, svalue):
        return "pmon's summary at every stop is %s." % svalue


class _PmonTimeout(gdb.Parameter):
    """How many seconds one pmon command may take (0: no limit)."""
    set_doc = "Set how many seconds one pmon command may take."
    show_doc = "Show how many seconds one pmon command may take."

    def __init__(self):
        super().__init__("pmon timeout", gdb.COMMAND_DATA,
                         gdb.PARAM_ZUINTEGER)
        self.value = _pmon_ext.timeout

    def get_set_string(self):
        _pmon_ext.timeout = int(self.value)
        return ""

    def get_show_string(self, svalue):
        return "A pmon command may take %s s (0: no limit)." % svalue


class _PmonShowCommand(gdb.Command):
    """Show the pmon binary and the PVM_TMP the glue uses."""

    def __init__(self):
        super().__init__("show pmon command", gdb.COMMAND_DATA,
                         gdb.COMPLETE_NONE)

    def invoke(self, arg, from_tty):
        gdb.write("pmon: %s, PVM_TMP=%s\n" % (
            _pmon_ext.binary() or "not found", _pmon_ext.pvm_tmp() or "unset"))


try:
    gdb.execute("show pmon", to_string=True)
except gdb.error:
    _PmonSetPrefix("set")
    _PmonSetPrefix("show")
_PmonAuto()
_PmonTimeout()
_PmonShowCommand()
