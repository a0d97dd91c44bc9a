#!/usr/bin/env python3
"""Three stalled subscribers on a session printing as fast as it can: the
daemon's memory, and ping latency from another client, beside the same
with no subscriber. Prints figures; not a pass/fail test."""
import json, os, socket, statistics, subprocess, tempfile, time

DBGCTL, DBGCTLD = os.environ["DBGCTL"], os.environ["DBGCTLD"]


def rpc(sock, f, method, params=None, id=1):
    msg = {"jsonrpc": "2.0", "id": id, "method": method, "params": params or {}}
    sock.sendall((json.dumps(msg) + "\n").encode())
    while True:
        r = json.loads(f.readline())
        if r.get("id") == id:
            return r


def rss_kib(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return -1


def ping_ms(path, n=200):
    s = socket.socket(socket.AF_UNIX)
    s.connect(path)
    f = s.makefile()
    times = []
    for i in range(n):
        t0 = time.perf_counter()
        rpc(s, f, "ping", id=i + 1)
        times.append((time.perf_counter() - t0) * 1000)
    s.close()
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.99) - 1]


def run(stalled):
    d = tempfile.mkdtemp()
    os.chmod(d, 0o700)
    path = d + "/sock"
    env = dict(os.environ, XDG_STATE_HOME=d + "/state")
    daemon = subprocess.Popen([DBGCTLD, "--foreground", "--listen", "unix:" + path],
                              env=env, stderr=subprocess.DEVNULL)
    try:
        for _ in range(200):
            if os.path.exists(path):
                break
            time.sleep(0.01)
        subs = []
        for _ in range(stalled):
            s = socket.socket(socket.AF_UNIX)
            s.connect(path)
            f = s.makefile()
            rpc(s, f, "subscribe")
            subs.append(s)
        base = rss_kib(daemon.pid)
        subprocess.run([DBGCTL, "-s", path, "launch", "--kind", "exec", "--",
                        "yes", "a line a session prints as fast as it can"],
                       env=env, check=True, stdout=subprocess.DEVNULL)
        time.sleep(1.0)     # let it print: a benchmark, not a test
        med, p99 = ping_ms(path)
        grown = rss_kib(daemon.pid) - base
        subprocess.run([DBGCTL, "-s", path, "stop", "--all"], env=env,
                       stdout=subprocess.DEVNULL)
        return med, p99, grown
    finally:
        subprocess.run([DBGCTL, "-s", path, "shutdown"], env=env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        daemon.wait(timeout=20)


for stalled in (0, 3):
    med, p99, grown = run(stalled)
    print(f"subscribers: {stalled} stalled beside a printing session: ping "
          f"median {med:.3f} ms, p99 {p99:.3f} ms; daemon grew {grown} KiB")
