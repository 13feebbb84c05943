#!/usr/bin/env python3
# web_live.py: how long pmon web's page takes, as a user opens it, to
# model and draw what pmon web keeps (BENCHMARKS.md, "make bench-web").
#
#	web_live.py CHROMIUM URL RUNS
#
# Loads URL&test=1&sse=1 RUNS times in one headless Chromium, which the
# script drives over --remote-debugging-pipe (the DevTools protocol on
# file descriptors 3 and 4: no WebSocket, nothing to install).  The page
# reads the stream in chunks as a browser does and writes its model when
# it has it all (doc/web.md); its loaded_ms is the time from the start
# of the navigation until the page had modelled and drawn every kept
# event.  Prints one line: loaded_ms=MEDIAN events=N.
import fcntl
import json
import os
import subprocess
import sys
import tempfile
import time


class Browser:
    def __init__(self, chromium, profile):
        to_chrome_r, self.to_chrome = os.pipe()
        self.from_chrome, from_chrome_w = os.pipe()
        # Chromium reads commands on fd 3 and writes on fd 4; the shell
        # puts its ends there (from 10 and up, which 3 and 4 cannot be).
        r = fcntl.fcntl(to_chrome_r, fcntl.F_DUPFD, 10)
        w = fcntl.fcntl(from_chrome_w, fcntl.F_DUPFD, 10)
        for fd in (to_chrome_r, from_chrome_w):
            os.close(fd)
        self.proc = subprocess.Popen(
            ["bash", "-c", 'exec "$@" 3<&%d 4>&%d %d<&- %d>&-' % (r, w, r, w),
             "bash", chromium, "--headless=new", "--no-sandbox",
             "--disable-gpu", "--user-data-dir=" + profile,
             "--window-size=1280,720", "--remote-debugging-pipe",
             "about:blank"],
            pass_fds=(r, w), stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL)
        os.close(r)
        os.close(w)
        self.buf = b""
        self.id = 0

    def call(self, method, session=None, **params):
        self.id += 1
        msg = {"id": self.id, "method": method, "params": params}
        if session:
            msg["sessionId"] = session
        os.write(self.to_chrome, json.dumps(msg).encode() + b"\0")
        while True:
            m = self.read()
            if m.get("id") == self.id:
                if "error" in m:
                    raise RuntimeError(method + ": " + m["error"]["message"])
                return m["result"]

    def read(self):
        while b"\0" not in self.buf:
            chunk = os.read(self.from_chrome, 1 << 20)
            if not chunk:
                raise RuntimeError("chromium closed its pipe")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\0", 1)
        return json.loads(line)

    def close(self):
        # Browser.close lets Chromium end its helpers before the profile
        # goes away.
        try:
            os.write(self.to_chrome, json.dumps(
                {"id": 0, "method": "Browser.close"}).encode() + b"\0")
            self.proc.wait(timeout=20)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait()


def evaluate(b, session, expr):
    r = b.call("Runtime.evaluate", session, expression=expr,
               returnByValue=True)
    return r["result"].get("value")


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: web_live.py CHROMIUM URL RUNS")
    chromium, url, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as profile:
        b = Browser(chromium, profile)
        try:
            loaded, events = [], None
            for _ in range(runs):
                target = b.call("Target.createTarget", url="about:blank")
                session = b.call("Target.attachToTarget", flatten=True,
                                 targetId=target["targetId"])["sessionId"]
                b.call("Page.navigate", session, url=url + "&test=1&sse=1")
                deadline = time.time() + 120
                while evaluate(b, session,
                               "document.body && document.body.dataset.ready") != "1":
                    if time.time() > deadline:
                        sys.exit("web_live.py: the page did not load in 120 s")
                    time.sleep(0.05)
                model = json.loads(evaluate(
                    b, session, "document.getElementById('model').textContent"))
                loaded.append(model["loaded_ms"])
                events = model["events"]
                b.call("Target.closeTarget", targetId=target["targetId"])
        finally:
            b.close()
    loaded.sort()
    print("loaded_ms=%d events=%s" % (loaded[len(loaded) // 2], events))


main()
