#!/usr/bin/env python3
"""thread_cpu.py PID PREFIX OUTFILE: how much CPU the threads of PID whose
name starts with PREFIX (e.g. net0-) use, to tell a spinning worker from an
idle one.

Creates OUTFILE.ready once its signal handlers are in place. Samples
/proc/PID/task/*/{comm,schedstat} (time on CPU in ns) every 20 ms; SIGUSR1
starts the measured window (again), SIGTERM/SIGINT or the end of PID ends
it, and one line goes to OUTFILE:

  window <s> cpu <s> util <cores> peak <cores> busiest <name> <s> threads <n>

cpu: the sum over matching threads of their CPU time between the first and
the last sample that saw them (threads come and go when the device is reset
and its workers restarted). util = cpu / window. peak: the highest use over
any 200 ms stretch. busiest: the thread with the most CPU time.
"""
import os
import signal
import sys
import time

PERIOD = 0.02
PEAK_SPAN = 0.2


def sample(pid, prefix):
    out = {}
    base = "/proc/%d/task" % pid
    try:
        tids = os.listdir(base)
    except OSError:
        return None
    for tid in tids:
        try:
            with open("%s/%s/comm" % (base, tid)) as f:
                name = f.read().strip()
            if not name.startswith(prefix):
                continue
            with open("%s/%s/schedstat" % (base, tid)) as f:
                ns = int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            continue
        out[tid] = (name, ns)
    return out


def main():
    pid, prefix, outfile = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    stop, restart = [], []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    signal.signal(signal.SIGINT, lambda *_: stop.append(1))
    signal.signal(signal.SIGUSR1, lambda *_: restart.append(1))
    open(outfile + ".ready", "w").close()
    first, last = {}, {}
    deltas = []          # (time, cpu seconds since the previous sample)
    prev = None
    t0 = time.monotonic()
    t = t0
    while not stop:
        t = time.monotonic()
        if restart:
            restart.clear()
            first, last, deltas, prev, t0 = {}, {}, [], None, t
        s = sample(pid, prefix)
        if s is None:
            break
        for tid, (name, ns) in s.items():
            first.setdefault(tid, (name, ns))
            last[tid] = (name, ns)
        if prev is not None:
            d = sum(ns - prev[tid][1] for tid, (_, ns) in s.items() if tid in prev)
            deltas.append((t, d / 1e9))
        prev = s
        time.sleep(PERIOD)
    window = max(t - t0, 1e-9)
    per = {}
    for tid, (name, ns) in last.items():
        c = (ns - first[tid][1]) / 1e9
        per[name] = per.get(name, 0.0) + c
    cpu = sum(per.values())
    peak = 0.0
    for i, (ti, _) in enumerate(deltas):
        acc, j = 0.0, i
        while j < len(deltas) and deltas[j][0] - ti < PEAK_SPAN:
            acc += deltas[j][1]
            j += 1
        span = (deltas[j - 1][0] - ti) + PERIOD if j > i else PERIOD
        if span >= PEAK_SPAN * 0.75 or window < PEAK_SPAN:
            peak = max(peak, acc / span)
    busiest = max(per.items(), key=lambda kv: kv[1]) if per else ("none", 0.0)
    with open(outfile, "w") as f:
        f.write("window %.3f cpu %.4f util %.3f peak %.3f busiest %s %.4f threads %d\n" %
                (window, cpu, cpu / window, peak, busiest[0], busiest[1], len(last)))


if __name__ == "__main__":
    main()
