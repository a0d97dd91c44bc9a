#!/usr/bin/env python3
"""How launch and stop cost as live sessions grow: at 0 and 1000 live
sessions (BENCH_SCALE="0 1000 3000" for more), the whole-process time of
`dbgctl launch --wait -- /bin/true` beside a posix_spawn+waitpid of
/bin/true, a cooperative stop of one `sleep` session, and `stop --all`
of 1000 sessions; the daemon's RSS per session. Prints one table; not a
pass/fail test."""
import json, os, socket, statistics, subprocess, tempfile, time

DBGCTL, DBGCTLD = os.environ["DBGCTL"], os.environ["DBGCTLD"]
SCALE = [int(n) for n in os.environ.get("BENCH_SCALE", "0 1000").split()]
RUNS = int(os.environ.get("BENCH_RUNS", "15"))


class Rpc:
    def __init__(self, path):
        self.s = socket.socket(socket.AF_UNIX)
        self.s.connect(path)
        self.f = self.s.makefile()
        self.id = 0

    def call(self, method, **params):
        self.id += 1
        self.s.sendall((json.dumps({"jsonrpc": "2.0", "id": self.id,
                                    "method": method, "params": params})
                        + "\n").encode())
        while True:
            r = json.loads(self.f.readline())
            if r.get("id") == self.id:
                if "error" in r:
                    raise RuntimeError(r["error"])
                return r["result"]


def med_ms(f, runs=RUNS):
    t = []
    for _ in range(runs):
        t0 = time.perf_counter()
        f()
        t.append((time.perf_counter() - t0) * 1000)
    return statistics.median(t)


def rss_kib(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def spawn_true():
    pid = os.posix_spawn("/bin/true", ["/bin/true"], os.environ)
    os.waitpid(pid, 0)


def main():
    d = tempfile.mkdtemp()
    os.chmod(d, 0o700)
    path = d + "/sock"
    env = dict(os.environ, XDG_STATE_HOME=d + "/state",
               DBGCTLD_KEEP_ENDED="10")
    daemon = subprocess.Popen([DBGCTLD, "--foreground", "--listen",
                               "unix:" + path], env=env,
                              stderr=subprocess.DEVNULL)
    cli = [DBGCTL, "-s", path]
    try:
        for _ in range(500):
            if os.path.exists(path):
                break
            time.sleep(0.01)
        rpc = Rpc(path)
        live = []
        base = rss_kib(daemon.pid)
        bare = med_ms(spawn_true)
        rows = []
        for n in SCALE:
            while len(live) < n:
                live.append(rpc.call("launch", kind="exec",
                                     argv=["sleep", "1000"], cwd="/")["id"])
            per = (rss_kib(daemon.pid) - base) / n if n else 0
            launch = med_ms(lambda: subprocess.run(
                cli + ["launch", "--kind", "exec", "--wait", "--",
                       "/bin/true"], env=env, stdout=subprocess.DEVNULL,
                check=True))

            def one_stop():
                sid = rpc.call("launch", kind="exec", argv=["sleep", "1000"],
                               cwd="/")["id"]
                t0 = time.perf_counter()
                rpc.call("stop", session=sid)
                return (time.perf_counter() - t0) * 1000
            stop = statistics.median(one_stop() for _ in range(RUNS))
            rows.append((n, launch, bare, launch / bare, stop, per))
        for n, launch, bare_ms, ratio, stop, per in rows:
            print(f"scale: {n:5d} live: launch --wait /bin/true {launch:7.2f}"
                  f" ms ({ratio:.1f}x posix_spawn+waitpid {bare_ms:.2f} ms);"
                  f" one stop {stop:6.2f} ms; daemon RSS "
                  f"{per / 1.024:.1f} KB per live session")
        if live:
            t0 = time.perf_counter()
            r = rpc.call("stop", all=True)
            print(f"scale: stop --all of {r['stopped']} sessions: "
                  f"{(time.perf_counter() - t0) * 1000:.0f} ms "
                  f"(target: under 500 ms at 1000)")
    finally:
        subprocess.run(cli + ["shutdown"], env=env, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        daemon.wait(timeout=120)


main()
