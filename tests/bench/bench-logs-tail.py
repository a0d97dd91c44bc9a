#!/usr/bin/env python3
"""A burst of 100 pipelined `logs` requests with a huge `lines` on a 64 MiB
log without a line break, and how long a `ping` from another client waits
meanwhile, beside the same ping with no burst. Prints figures; not a
pass/fail test. Target: the burst delays the ping by a few ms at most."""
import json, os, socket, subprocess, tempfile, threading, time

DBGCTL, DBGCTLD = os.environ["DBGCTL"], os.environ["DBGCTLD"]
LOG_BYTES = 64 * 1024 * 1024


def line(method, params, id):
    return (json.dumps({"jsonrpc": "2.0", "id": id, "method": method,
                        "params": params}) + "\n").encode()


def ping_ms(path):
    s = socket.socket(socket.AF_UNIX)
    s.connect(path)
    f = s.makefile()
    t0 = time.perf_counter()
    s.sendall(line("ping", {}, 1))
    f.readline()
    ms = (time.perf_counter() - t0) * 1000
    s.close()
    return ms


def burst(path, session, n, done, sent):
    s = socket.socket(socket.AF_UNIX)
    s.connect(path)
    f = s.makefile()
    s.sendall(b"".join(line("logs", {"session": session, "lines": 100000000,
                                     "max": 1}, i + 1) for i in range(n)))
    sent.set()
    for _ in range(n):
        f.readline()
    done.append(time.perf_counter())
    s.close()


def main():
    d = tempfile.mkdtemp()
    os.chmod(d, 0o700)
    path = d + "/sock"
    env = dict(os.environ, XDG_STATE_HOME=d + "/state")
    daemon = subprocess.Popen([DBGCTLD, "--foreground", "--listen",
                               "unix:" + path], env=env,
                              stderr=subprocess.DEVNULL)
    try:
        for _ in range(500):
            if os.path.exists(path):
                break
            time.sleep(0.01)
        out = subprocess.run([DBGCTL, "-s", path, "launch", "--kind", "exec",
                              "--wait", "--", "sh", "-c",
                              f"head -c {LOG_BYTES} /dev/zero | tr '\\0' x"],
                             env=env, capture_output=True, text=True)
        session = int(json.loads(subprocess.run(
            [DBGCTL, "-s", path, "--json", "list"], env=env,
            capture_output=True, text=True).stdout)["sessions"][-1]["id"])
        quiet = sorted(ping_ms(path) for _ in range(50))[25]
        done, sent, t0 = [], threading.Event(), time.perf_counter()
        th = threading.Thread(target=burst,
                              args=(path, session, 100, done, sent))
        th.start()
        sent.wait()
        during = ping_ms(path)
        th.join()
        print(f"logs-tail: 100 pipelined logs lines=1e8 on a {LOG_BYTES >> 20}"
              f" MiB log without a line break took {(done[0] - t0) * 1000:.1f}"
              f" ms; a ping sent right behind it waited {during:.2f} ms, against"
              f" {quiet:.3f} ms with no burst (target: a few ms)")
    finally:
        subprocess.run([DBGCTL, "-s", path, "shutdown"], env=env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        daemon.wait(timeout=30)


main()
