#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""minivmm network benchmark: the program behind `make bench` / `make bench-quick`.

Runs inside a network namespace prepared by bench/run.sh (which also cleans it
up): a bridge br0 (10.0.0.1/24) for tap backends and a veth pair vm0/vh0
(vh0 = 10.0.1.1/24) for the packet and xdp backends. In one run, interleaved:
the host's own ceilings (bench/ceilings.py, build/tools/rawnet), the test guest
under minivmm and under QEMU (-M microvm, userspace virtio-net, vhost=off)
driven by build/tools/netpeer and by the raw blaster, an idle networked VM, and
boots. Before every row the quiet gate (bench/gate.py) waits for an idle host
and marks rows that did not get one. Writes results.md, runs.csv, meta.json
and PNG plots.

Modules: gate (quiet gate), sample (/proc, counters, minivmm statistics),
vm (VMs, CPU placement, netpeer), ceilings (rawnet ceilings and blaster),
workloads (one function per row kind), report (tables, targets, CSV, plots).

Benchmarks never assert on time: targets are printed, never enforced.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import baseline  # noqa: E402
import common  # noqa: E402
import hostinfo  # noqa: E402
import report  # noqa: E402
from ceilings import CEILING_MODES, run_ceiling  # noqa: E402
from common import BASE, BOOT_VMMS, QEMU, cfg_label, log, read, tool  # noqa: E402
from gate import Gate  # noqa: E402
from workloads import run_boot, run_idle, run_rr, run_rx, run_rxb, run_tx  # noqa: E402

# xdp rows (minivmm --net xdp=vm0: AF_XDP TX/RX against a plain AF_XDP
# process, build/tools/rawnet, and worker CPU per frame against tap) are on by
# default now that minivmm has the AF_XDP backend; --no-xdp leaves them out. A
# minivmm that refuses the backend makes those rows fail (and `--smoke` with
# them), with minivmm's reason.
XDP_ROWS_DEFAULT = True

QUEUES = hostinfo.queue_counts()
LEVELS = [10000, 100000, 500000, 0]      # offered pps for the per-load-level rows; 0 = as fast as it goes

MODES = {
    # runs, measured window (s), warm-up (s), ...
    'smoke': dict(runs=1, window=0.25, warm=0.15, sizes=[64], sessions=[1, 20], queues=[1], boots=3,
                  rr_count=1500, variants='smoke', size_queues=[1], rate=600000, idle=1.0, levels=[],
                  threads_rows=False, ceilings=['tap-write'],
                  # The blast outlasts the window by this much: the snapshot
                  # opening the window (SIGUSR1 and its answer) can take longer
                  # than the whole 0.4 s under emulated KVM.
                  blast_slack=1.0),
    'quick': dict(runs=3, window=0.6, warm=0.2, sizes=[64, 512, 1514], sessions=[1, 20, 50, 100],
                  queues=QUEUES, boots=15, rr_count=8000, variants='some', size_queues=[1], rate=1000000,
                  idle=5.0, levels=LEVELS, threads_rows=True, ceilings=CEILING_MODES),
    'full': dict(runs=5, window=2.0, warm=0.4, sizes=[64, 128, 256, 512, 1024, 1514],
                 sessions=[1, 20, 50, 100], queues=QUEUES, boots=50, rr_count=30000, variants='all',
                 size_queues=QUEUES, rate=1000000, idle=5.0, levels=LEVELS, threads_rows=True,
                 ceilings=CEILING_MODES),
    # make bench-regress: the rows of baseline.REGRESS_ROWS only, each beside the baseline's
    'regress': dict(runs=5, window=1.0, warm=0.3, sizes=[64], sessions=[1], queues=[1], boots=0, rr_count=0,
                    variants='regress', size_queues=[1], rate=1000000, idle=0, levels=[], threads_rows=False,
                    ceilings=[]),
}

def cfgs_for(M, xdp):
    """(workload, cfg, size) jobs for one round, in the order they run. Each
    group starts with the host ceiling its VMM rows are compared with."""
    if M['variants'] == 'regress':
        return baseline.regress_jobs(BASE, xdp)
    jobs, seen = [], set()

    def add(w, size=64, base=BASE, **kw):
        c = dict(base)
        c.update(kw)
        c.setdefault('queues', 1)
        key = (w, cfg_label(c), size)
        if key not in seen:
            seen.add(key)
            jobs.append((w, c, size))

    def ceiling(mode):
        if mode in M['ceilings']:
            add('ceil', base=dict(vmm='host', backend=mode.split('-')[0], threads='-', pin='-', engine='-'),
                mode=mode)

    some, every = M['variants'] in ('some', 'all'), M['variants'] == 'all'
    # tap: TX, then RX (UDP sender and raw blaster), minivmm and QEMU
    ceiling('tap-write')
    for q in M['queues']:
        add('tx', queues=q)
        add('tx', base=QEMU, queues=q)
    for size in M['sizes'][1:]:
        for q in M['size_queues']:
            add('tx', size, queues=q)
            add('tx', size, base=QEMU, queues=q)
    ceiling('tap-read')
    for q in M['queues']:
        add('rxb', queues=q, rate=0)
        add('rxb', base=QEMU, queues=q, rate=0)
        add('rx', queues=q)
        add('rx', base=QEMU, queues=q)
    for size in M['sizes'][1:]:
        for q in M['size_queues']:
            add('rx', size, queues=q)
            add('rx', size, base=QEMU, queues=q)
    if some:
        for w in ('tx', 'rxb'):
            extra = dict(rate=0) if w == 'rxb' else {}
            add(w, queues=1, pin='on', **extra)
            add(w, queues=1, engine='epoll', **extra)
        # a guest that sleeps when its ring is empty (hlt, woken by the
        # device's interrupt) instead of spinning: the core it frees is
        # the one the worker (or QEMU's I/O thread) needs on a small host
        add('rxb', queues=1, rate=0, guest='halt')
        add('rxb', base=QEMU, queues=1, rate=0, guest='halt')
    # per load level (minivmm tap 1q, RX from the blaster), default polling and poll-us=auto
    for rate in M['levels']:
        add('rxb', queues=1, rate=rate)
        add('rxb', queues=1, rate=rate, poll='auto')
    # threads=auto vs threads=1 vs one per pair
    if M['threads_rows']:
        for q in M['queues']:
            for thr in ('auto', '1', 'pq'):
                add('tx', queues=q, threads=thr)
                add('rxb', queues=q, threads=thr, rate=0)
    # packet backend
    ceiling('packet-write')
    add('tx', backend='packet')
    ceiling('packet-read-ring')
    ceiling('packet-read')
    add('rxb', backend='packet', rate=0)
    if some:
        add('rx', backend='packet')
        add('rxb', backend='packet', rx='recv', rate=0)
    # xdp backend (AF_XDP on the veth, copy mode)
    ceiling('xdp-tx')
    if xdp:
        add('tx', backend='xdp')
    ceiling('xdp-rx')
    if xdp:
        add('rxb', backend='xdp', rate=0)
        if some:
            add('rxb', backend='xdp', rate=0, guest='halt')
    if every:
        for q in M['queues']:
            # xdp only at 1 queue: the namespace's veth has one queue, so the blaster and the
            # AF_XDP ceilings (queue 0) see every frame; more pairs need a multi-queue veth
            for backend in ('tap', 'packet') + (('xdp',) if xdp and q == 1 else ()):
                for threads in (('pq', '1') if q > 1 else ('pq',)):
                    for pin in ('off', 'on'):
                        for engine in ('uring', 'epoll'):
                            c = dict(queues=q, backend=backend, threads=threads, pin=pin, engine=engine)
                            add('tx', **c)
                            add('rxb', rate=0, **c)
            add('rxb', queues=q, backend='packet', rx='recv', rate=0)
    # idle networked VM: worker CPU and resident memory
    add('idle', poll='auto')
    add('idle')
    add('idle', base=QEMU)
    for q in M['queues']:
        add('rr', queues=q)
        add('rr', base=QEMU, queues=q)
    return jobs


def run_job(w, cfg, size, M, tmp):
    if w == 'ceil':
        return [run_ceiling(cfg['mode'], size, M, tmp)]
    if w == 'tx':
        return [run_tx(cfg, size, M, tmp)]
    if w == 'rx':
        return [run_rx(cfg, size, M, tmp, cfg_label(cfg))]
    if w == 'rxb':
        return [run_rxb(cfg, size, M, tmp)]
    if w == 'idle':
        return [run_idle(cfg, M, tmp)]
    return run_rr(cfg, size, M['sessions'], M, tmp)


def version(argv):
    try:
        return subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                              text=True).stdout.splitlines()[0].strip()
    except (OSError, IndexError):
        return 'not installed'


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--mode', choices=MODES, default='quick')
    ap.add_argument('--out', required=True)
    ap.add_argument('--runs', type=int)
    ap.add_argument('--no-qemu', action='store_true')
    ap.add_argument('--xdp', dest='xdp', action='store_true', default=XDP_ROWS_DEFAULT,
                    help='minivmm --net xdp= rows (the default)')
    ap.add_argument('--no-xdp', dest='xdp', action='store_false',
                    help='leave out the minivmm --net xdp= rows')
    ap.add_argument('--only', help='run only rows whose "workload label" matches this regex')
    ap.add_argument('--no-gate', action='store_true', help='smoke only: do not wait for a quiet host')
    ap.add_argument('--gate-timeout', type=float, default=60.0)
    ap.add_argument('--gate-load', type=float, default=0.4, help='foreign 1-min load allowed per core')
    ap.add_argument('--gate-busy', type=float, default=0.10, help='busy CPU allowed per core in the sample')
    ap.add_argument('--baseline-bin', help="the baseline's minivmm (bench/baseline.sh): a twin of every minivmm row")
    ap.add_argument('--baseline-rev', help='the revision --baseline-bin was built from, as given')
    a = ap.parse_args()
    emulated = bool(os.environ.get('MINIVMM_EMULATED_KVM'))
    if a.no_gate and a.mode != 'smoke' and not (a.mode == 'regress' and emulated):
        ap.error('--no-gate is for --smoke only: a quick or full run must not measure a busy host')
    if bool(a.baseline_bin) != bool(a.baseline_rev):
        ap.error('--baseline-bin and --baseline-rev go together')
    M = dict(MODES[a.mode])
    if a.runs:
        M['runs'] = a.runs
    os.makedirs(a.out, exist_ok=True)
    tmpd = os.path.join(a.out, 'logs')
    os.makedirs(tmpd, exist_ok=True)
    host = hostinfo.describe()
    # the gate judges the whole host (load average and /proc/stat are host-wide), not just our CPUs
    gate = Gate(os.cpu_count() or 1, enabled=not a.no_gate, timeout=a.gate_timeout, load_per_core=a.gate_load,
                busy_per_core=a.gate_busy)
    meta = dict(mode=a.mode, host=host['node'], kernel=host['kernel'], load=read('/proc/loadavg').strip(),
                host_line=hostinfo.host_line(host), host_caveat=report.host_caveat(host), cores=host['cores'],
                cpus=host['cpus'], queues=M['queues'], xdp=a.xdp, gate=not a.no_gate, only=a.only,
                minivmm=version([tool('minivmm'), '--version']), qemu=version(['qemu-system-x86_64', '--version']),
                emulated=emulated)
    jobs = cfgs_for(M, a.xdp)
    if a.no_qemu:
        jobs = [j for j in jobs if j[1]['vmm'] != 'qemu']
    if a.only:
        jobs = [j for j in jobs if re.search(a.only, f'{j[0]} {cfg_label(j[1])}')]
    if a.baseline_bin:
        common.MINIVMM['base'] = os.path.abspath(a.baseline_bin)
        bver = version([a.baseline_bin, '--version'])
        bhash = os.path.basename(os.path.dirname(os.path.abspath(a.baseline_bin)))
        meta['baseline'] = dict(rev=a.baseline_rev, hash=bhash, short=bhash[:7], version=bver)
        # the smoke twins only the rows of make bench-regress it has, to stay seconds long
        jobs = baseline.with_twins(jobs, only_regress_rows=a.mode == 'smoke')
    cannot = set()          # baseline rows its minivmm refused: tried once
    rows, boots = [], []
    t_start = time.monotonic()
    for rep in range(M['runs']):
        for i, (w, cfg, size) in enumerate(baseline.round_order(jobs, rep)):
            if cfg_label(cfg) in cannot:
                continue
            tmp = os.path.join(tmpd, f'{w}-{i}-r{rep}')
            g = gate.wait()
            log(f'[{time.monotonic() - t_start:6.1f}s] run {rep + 1}/{M["runs"]} {w} {cfg_label(cfg)} size {size}'
                f' (load {g["load1"]:.2f}, own {g["own_load"]:.2f}, busy {g["busy_pct"]:.0f} %'
                f'{", BUSY" if g["busy"] else ""}, waited {g["gate_wait_s"]:.0f} s)')
            try:
                res = run_job(w, cfg, size, M, tmp)
            except Exception as e:          # a failed run is reported, never fatal
                log(f'  failed: {e}')
                if cfg.get('build') == 'base' and baseline.refused(str(e)):
                    log(f'  {baseline.CANNOT}: not tried again')
                    cannot.add(cfg_label(cfg))
                rows.append(dict(workload=w, cfg=cfg, label=cfg_label(cfg), size=size, rep=rep, sessions=0,
                                 error=str(e)[:300], **g))
                continue
            for r in res:
                r.setdefault('sessions', 0)
                r.update(workload=w, cfg=cfg, label=cfg_label(cfg), size=size, rep=rep, **g)
                report.derive(r, size)
                rows.append(r)
        if (a.only and not re.search(a.only, 'boot')) or not M['boots']:
            continue
        g = gate.wait()
        for vmm in (v for v in BOOT_VMMS if not (a.no_qemu and v == 'qemu')):
            for k in range(max(1, M['boots'] // M['runs'])):
                b = run_boot(vmm, os.path.join(tmpd, f'boot-{vmm}-{rep}-{k}'))
                b.update(vmm=vmm, rep=rep, **g)
                boots.append(b)
    log(f'[{time.monotonic() - t_start:6.1f}s] done, writing results')
    meta['elapsed_s'] = round(time.monotonic() - t_start)
    meta['gate_text'] = gate.describe()
    cmp = None
    if a.baseline_bin:
        cmp = baseline.comparisons(report.group(rows))
        meta['baseline']['rows'] = baseline.summary(cmp)
    text = report.results_md(rows, boots, M, meta, cmp)
    with open(os.path.join(a.out, 'results.md'), 'w') as f:
        f.write(text)
    with open(os.path.join(a.out, 'meta.json'), 'w') as f:
        json.dump(meta, f, indent=1)
    report.write_csv(rows, boots, os.path.join(a.out, 'runs.csv'))
    report.plots(rows, a.out, M)
    print(text)
    log(f'results in {a.out}/ (results.md, runs.csv, meta.json, *.png); {time.monotonic() - t_start:.0f} s')


if __name__ == '__main__':
    main()
