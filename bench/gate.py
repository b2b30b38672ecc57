# SPDX-License-Identifier: Apache-2.0
"""The quiet gate: before every measurement, wait (bounded) for an idle host.

A benchmark run on a busy machine measures the other jobs. Before each row's
VM (or ceiling process) starts, the gate takes a short whole-host CPU busy
sample from /proc/stat and reads the 1-minute load average, and waits until
both are below their thresholds, at most `timeout` seconds. A row that had to
start on a busy host anyway is marked busy: it is printed with a marker and
left out of every median, target and ratio.

The load average is the kernel's 1-minute moving average of runnable (and
uninterruptible) tasks, so it also remembers the benchmark's own previous rows
(a busy-polling guest, its worker and the peer are ~3 runnable tasks for
seconds at a time, more than the cores of a small host). The gate therefore
subtracts the benchmark's own share: a background thread counts, every 0.5 s,
the tasks of this process and its descendants that are runnable or in
uninterruptible sleep (state R or D in /proc/<pid>/task/<tid>/stat, children
from /proc/<pid>/task/<tid>/children) and feeds that count through the same
exponential decay the kernel uses (exp(-dt/60)). What is left, load1 minus
that share, is the foreign load. The kernel samples every 5 s, so the two can
be a sample apart (≈ 0.25 per runnable task) right after a row starts or ends;
the threshold leaves room for that. Both figures are printed per row.

Thresholds are per core, scaled by the host's CPUs (the load average and /proc/stat are
host-wide, so the whole host is judged, not only the CPUs the bench may use):
  load:  foreign 1-min load  <  load_per_core * cores     (default 0.4)
  busy:  busy CPU in the sample  <  busy_per_core * cores  (default 0.10 of
         a core per core, i.e. 10 % of the whole host), with nothing of the
         benchmark's running while it is taken.
"""
import math
import os
import threading
import time

from common import read


def cpu_times():
    """(busy, total) jiffies of the whole host from /proc/stat's cpu line."""
    for line in read('/proc/stat').splitlines():
        if line.startswith('cpu '):
            v = [int(x) for x in line.split()[1:]]
            idle = v[3] + v[4]             # idle + iowait
            total = sum(v[:8])             # guest time is already in user
            return total - idle, total
    return 0, 1


def busy_sample(secs):
    """Whole-host busy CPU over `secs`, in cores (0 .. number of CPUs)."""
    b0, t0 = cpu_times()
    time.sleep(secs)
    b1, t1 = cpu_times()
    ncpu = os.cpu_count() or 1
    return ncpu * (b1 - b0) / max(1, t1 - t0)


def load1():
    try:
        return float(read('/proc/loadavg').split()[0])
    except (IndexError, ValueError):
        return 0.0


def _tasks(pid):
    try:
        return os.listdir(f'/proc/{pid}/task')
    except OSError:
        return []


def own_runnable(root):
    """Tasks of `root` and its descendants that count in the load average now."""
    n, todo, seen = 0, [root], set()
    while todo:
        pid = todo.pop()
        if pid in seen:
            continue
        seen.add(pid)
        for tid in _tasks(pid):
            st = read(f'/proc/{pid}/task/{tid}/stat')
            if st and st[st.rindex(')') + 2] in 'RD':
                n += 1
            todo += [int(c) for c in read(f'/proc/{pid}/task/{tid}/children').split()]
    return n


class OwnLoad(threading.Thread):
    """The benchmark's own share of the load average, kept up to date in the
    background (daemon thread, 0.5 s period, a few /proc reads each time)."""

    PERIOD = 0.5

    def __init__(self):
        super().__init__(name='bench-ownload', daemon=True)
        self.value, self.root = 0.0, os.getpid()
        self._stop = threading.Event()

    def run(self):
        t = time.monotonic()
        while not self._stop.wait(self.PERIOD):
            now = time.monotonic()
            n = own_runnable(self.root) - 1        # this sampler itself is running while it counts
            decay = math.exp(-(now - t) / 60.0)
            self.value = self.value * decay + max(0, n) * (1 - decay)
            t = now


class Gate:
    def __init__(self, cores, enabled=True, timeout=60.0, load_per_core=0.4, busy_per_core=0.10,
                 sample_s=0.5):
        self.cores, self.enabled, self.timeout = cores, enabled, timeout
        self.load_max = load_per_core * cores
        self.busy_max = busy_per_core * cores
        self.sample_s = sample_s
        self.load_per_core, self.busy_per_core = load_per_core, busy_per_core
        self.own = OwnLoad()
        self.own.start()
        self.checked = self.busy_rows = 0

    def own_load(self):
        return self.own.value

    def wait(self):
        """Block until quiet or timeout; return the fields every row carries."""
        t0 = time.monotonic()
        while True:
            busy = busy_sample(self.sample_s)
            ld = load1()
            own = self.own_load()
            foreign = max(0.0, ld - own)
            quiet = busy < self.busy_max and foreign < self.load_max
            waited = time.monotonic() - t0
            if quiet or not self.enabled or waited >= self.timeout:
                break
            time.sleep(1.0)
        self.checked += 1
        marked = self.enabled and not quiet
        self.busy_rows += marked
        return dict(load1=ld, own_load=round(own, 2), busy_pct=100.0 * busy / self.cores,
                    gate_wait_s=round(time.monotonic() - t0, 2), busy=int(marked), gate_quiet=int(quiet))

    def describe(self):
        if not self.enabled:
            return ('**Quiet gate: OFF** (`--no-gate`: the smoke, or `--regress` under emulated KVM): load and '
                    'busy % are printed per row but nothing waited for a quiet host and no row is marked busy, '
                    'so these numbers may measure other jobs.')
        return (f'**Quiet gate:** before each row, wait up to {self.timeout:.0f} s until a {self.sample_s} s '
                f'/proc/stat sample shows under {100 * self.busy_per_core:.0f} % of the host busy and the '
                f'1-min load average less the bench\'s own share is under {self.load_max:.2f} '
                f'({self.load_per_core} × {self.cores} cores). Rows that started on a busy host are marked † '
                f'and left out of every median, ratio and target: {self.busy_rows} of {self.checked} runs here.')
