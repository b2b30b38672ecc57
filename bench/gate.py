"""The quiet gate: before every measurement, wait (bounded) for an idle host.

A benchmark run on a busy machine measures the other jobs. Before each row's
VM (or ceiling process) starts, the gate takes a short whole-host CPU busy
sample from /proc/stat and reads the 1-minute load average, and waits until
both are below their thresholds, at most `timeout` seconds. A row that had to
start on a busy host anyway is marked busy: it is printed with a marker and
left out of every median, target and ratio.

The load average is the kernel's 1-minute moving average of runnable tasks, so
it also remembers the benchmark's own previous rows (a busy-polling guest, its
worker and the peer are ~3 runnable tasks for seconds at a time). The gate
therefore subtracts an estimate of the benchmark's own share: the CPU time of
this process and its reaped children (os.times) between gates, as a runnable
count, fed through the same exponential decay the kernel uses. That estimate
is a lower bound (oversubscribed threads wait runnable without CPU time), so
the foreign load it leaves is, if anything, too high: the gate errs towards
marking a row busy. Both the raw load and the estimate are printed.

Thresholds are per core, scaled by the cores detected (hostinfo.cores()):
  load:  foreign 1-min load  <  load_per_core * cores     (default 0.25)
  busy:  busy CPU in the sample  <  busy_per_core * cores  (default 0.10 of
         a core per core, i.e. 10 % of the whole host), with nothing of the
         benchmark's running while it is taken.
"""
import math
import os
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


def own_cpu_s():
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


class Gate:
    def __init__(self, cores, enabled=True, timeout=60.0, load_per_core=0.25, busy_per_core=0.10,
                 sample_s=0.5):
        self.cores, self.enabled, self.timeout = cores, enabled, timeout
        self.load_max = load_per_core * cores
        self.busy_max = busy_per_core * cores
        self.sample_s = sample_s
        self.load_per_core, self.busy_per_core = load_per_core, busy_per_core
        self._own_load, self._t, self._cpu = 0.0, time.monotonic(), own_cpu_s()
        self.checked = self.busy_rows = 0

    def own_load(self):
        """The benchmark's own share of the load average, as the kernel's
        1-minute EMA (exp(-5/60) every 5 s, i.e. exp(-dt/60)) of our CPU use."""
        now, cpu = time.monotonic(), own_cpu_s()
        dt = now - self._t
        if dt > 0:
            running = (cpu - self._cpu) / dt
            decay = math.exp(-dt / 60.0)
            self._own_load = self._own_load * decay + running * (1 - decay)
        self._t, self._cpu = now, cpu
        return self._own_load

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
            return ('**Quiet gate: OFF** (`--no-gate`, smoke use only): load and busy % are printed per row '
                    'but nothing waited for a quiet host and no row is marked busy, so these numbers may '
                    'measure other jobs.')
        return (f'**Quiet gate:** before each row, wait up to {self.timeout:.0f} s until a {self.sample_s} s '
                f'/proc/stat sample shows under {100 * self.busy_per_core:.0f} % of the host busy and the '
                f'1-min load average less the bench\'s own share is under {self.load_max:.2f} '
                f'({self.load_per_core} × {self.cores} cores). Rows that started on a busy host are marked † '
                f'and left out of every median, ratio and target: {self.busy_rows} of {self.checked} runs here.')
