# SPDX-License-Identifier: Apache-2.0
"""results.md, runs.csv and the plots from the rows of one benchmark run.

Every median, ratio and target uses only rows that ran on a quiet host (the
gate's `busy` flag clear) and did not fail. Busy rows are counted and marked
(†) but never averaged in; a group whose every run was busy says so instead of
showing a number."""
import csv
import os
import statistics
import subprocess

import baseline
from ceilings import ceiling_of
from common import BASE, BOOT_VMMS, QEMU, cfg_label, fmr, fmt, log, med, ratio

BUSY = '†'

COLS = ['rate', 'norm', 'mbit_s', 'ceil_frac', 'vmm_cpu_pct', 'vcpu_cpu_pct', 'io_cpu_pct', 'io_ns_frame',
        'wrk_ns_frame', 'wrk_ns_frame_win', 'wrk_wake_frame', 'host_cpu_pct', 'vmm_cs_s', 'host_cs_s',
        'vmm_cs_frame', 'rss_kb']
GATE_COLS = ['busy', 'load1', 'own_load', 'busy_pct', 'gate_wait_s']


def derive(r, size):
    if r.get('rate') is not None and r.get('host_cpu_pct'):
        r['norm'] = r['rate'] / r['host_cpu_pct']
    if r.get('rate') is not None:
        r['mbit_s'] = r['rate'] * size * 8 / 1e6
    if r.get('wrk_cpu_ns') and r.get('wrk_frames'):
        r['wrk_ns_frame'] = r['wrk_cpu_ns'] / r['wrk_frames']


def good(rs):
    return [r for r in rs if not r.get('error') and not r.get('busy')]


def busy_runs(rs):
    return [r for r in rs if not r.get('error') and r.get('busy')]


def val(rs, col):
    return med([r.get(col) for r in good(rs)])[0]


def cell(rs, col, ranged=False, scale=1.0):
    """A group's median (and [min–max]) over its quiet runs; says so when all were busy."""
    ok = good(rs)
    if not ok:
        b = busy_runs(rs)
        if not b:
            return '-'
        return f'{BUSY} all {len(b)} runs busy' if ranged else BUSY
    t = med([r.get(col) * scale if r.get(col) is not None else None for r in ok])
    return fmr(t) if ranged else fmt(t[0])


def ncell(rs):
    b = len(busy_runs(rs))
    e = len([r for r in rs if r.get('error')])
    s = str(len(good(rs)))
    if b:
        s += f' (+{b}{BUSY})'
    if e:
        s += f' ({e} failed)'
    return s


def gate_cells(rs):
    """Load and pre-window busy % of the runs (quiet ones, else all)."""
    src = good(rs) or [r for r in rs if not r.get('error')] or rs
    return [fmt(med([r.get('load1') for r in src])[0], 2), fmt(med([r.get('busy_pct') for r in src])[0], 0)]


def group(rows):
    g = {}
    for r in rows:
        g.setdefault((r['workload'], r['label'], r['size'], r.get('sessions', 0)), []).append(r)
    return g


def annotate(rows):
    """Each VMM row's rate as a fraction of the matching host ceiling measured
    in the same round (rep), or of the ceiling's median when that round's was
    busy or failed."""
    by_rep, allc = {}, {}
    for r in good([r for r in rows if r['workload'] == 'ceil']):
        by_rep[(r['cfg']['mode'], r['size'], r['rep'])] = r['rate']
        allc.setdefault((r['cfg']['mode'], r['size']), []).append(r['rate'])
    medc = {k: statistics.median(v) for k, v in allc.items()}
    for r in rows:
        mode = ceiling_of(r['workload'], r['cfg']) if r['cfg']['vmm'] != 'host' else None
        if not mode or r.get('rate') is None:
            continue
        c = by_rep.get((mode, r['size'], r['rep'])) or medc.get((mode, r['size']))
        r['ceiling'] = mode
        r['ceil_frac'] = r['rate'] / c if c else None
    return medc


def host_caveat(h):
    """What the detected host means for the figures."""
    if h['kvm'] == 'PVM' or h['nested']:
        return ('This host is virtualized (%s): absolute numbers are not those of a bare-metal VMX/SVM host; '
                'only ratios measured in this same run mean something.' % h['kvm'])
    return 'Bare-metal %s host: absolute numbers are this machine\'s.' % h['kvm']


def header_md(M, meta):
    cores = meta['cores']
    xdp = ('minivmm `--net xdp=vm0` rows are **on** (the default; `--no-xdp` leaves them out).' if meta['xdp'] else
           'minivmm `--net xdp=` rows are **off** (`--no-xdp`); the plain AF_XDP ceilings run regardless.')
    only = f"\n- **Subset:** only rows matching `{meta['only']}` (`--only`)." if meta.get('only') else ''
    return f"""# minivmm network benchmark ({meta['mode']} mode)

- Host (detected): {meta['host_line']}; load before the run: {meta['load']}.
- {meta['host_caveat']}
- {meta['gate_text']}
- CPUs used: {','.join(map(str, meta['cpus']))} (online ∩ affinity); queue pairs measured: {', '.join(map(str, M['queues']))}
  (powers of two up to cores/2, at least 1 and 2). Pinned rows put vCPU i and worker j on the host's CPUs in turn;
  the blaster and ceiling peers take the last CPU.
- **Oversubscription:** the test guest busy-polls one vCPU per queue pair. With {cores} cores, a row whose
  vCPUs + workers + host peer exceed {cores} measures scheduling contention, not scaling. Rows marked
  `guest=halt` run the guest with `idle=halt`: its RX queue sleeps in `hlt` when empty and the device's
  interrupt wakes it (as a Linux guest's idle loop), so its vCPU takes only the CPU it works with.
- minivmm {meta['minivmm']} vs {meta['qemu']} (`-M microvm`, `virtio-net-device`, userspace virtio-net,
  vhost=off, `mq=on` with queues>1) on the same tap+bridge, measured in the same run, interleaved.
  {xdp}{only}
- **Host ceilings** (`build/tools/rawnet`, one core each) run in the same rounds as the VMM rows; `×ceil` is a
  VMM rate ÷ the matching ceiling of the same round (tap TX ÷ tap-write, RX ÷ tap-read, packet ÷ packet-write /
  packet-read(-ring), xdp ÷ xdp-tx / xdp-rx).
- Every figure is the median of the quiet runs among {M['runs']} with [min–max]; each run measures a {M['window']} s
  steady-state window after {M['warm']} s of warm-up.
- **norm = rate per host CPU-percent spent**: the row's rate (frames/s or transactions/s) divided by the
  whole-host CPU busy percentage over the same window (from /proc/stat deltas; 100 = one core, max {cores * 100}).
  Because the guest busy-polls, host CPU includes the spinning vCPUs; `io ns/frame` isolates the VMM's own work.
"""


COLS_DOC = """Columns of the detail tables: `rate` (tx: frames/s the VMM handed to the host kernel, from the
tap's / veth's counters; rx: frames/s delivered to the guest = guest net-sink count / sender time;
rr: transactions/s from netpeer echo-check), `×ceil` (rate ÷ the matching host ceiling of the same round),
`norm` (rate per whole-host CPU %), `Mbit/s` (rate × frame size), `VMM CPU%` (user+sys of the VMM process
from /proc/<pid>/stat, vCPUs included), `I/O CPU%` (VMM threads other than vCPUs — minivmm's net
workers/ctrl/main, QEMU's main loop — from /proc/<pid>/task/*/sched), `io ns/frame` (that I/O CPU per
frame; rr: per frame each way), `wrk ns/frame` (minivmm workers' cpu_ns over the window, from two
`--stats=json` snapshots taken with SIGUSR1, ÷ frames they moved in it), `wake/frame` (the workers'
voluntary context switches — wake-ups — per frame, same snapshots), `host CPU%` (/proc/stat),
`VMM cs/s` (voluntary+involuntary switches of all VMM threads), `host cs/s` (/proc/stat ctxt),
`cs/frame` (VMM switches per frame), `RSS` (VmHWM, kB), `load` (1-min load average before the row),
`busy%` (whole-host busy CPU in the gate's sample just before the row), `n` (quiet runs; +k† busy runs
left out), then guest-side counters.
"""


def base_label(vmm, q, w):
    c = dict(BASE if vmm == 'minivmm' else QEMU, queues=q)
    if w == 'rxb':
        c['rate'] = 0
    return cfg_label(c)


def seed_table(g, workload, title, ratecol, sizes, sessions, queues, vmms):
    out = [f'### {title}', '']
    hdr = '| VMM | size | sessions | ' + ' | '.join(f'{q}q {ratecol} | {q}q norm | {q}q ×ceil' for q in queues) + ' |'
    out += [hdr, '|' + '---|' * (3 + 3 * len(queues))]
    for vmm in vmms:
        for size in sizes:
            for s in sessions:
                cells, any_ = [], False
                for q in queues:
                    rs = g.get((workload, base_label(vmm, q, workload), size, s), [])
                    any_ |= bool(rs)
                    cells += [cell(rs, 'rate', ranged=True), cell(rs, 'norm'), cell(rs, 'ceil_frac')]
                if any_:
                    sess = s if workload == 'rr' else 'q flows'
                    out.append(f'| {vmm} | {size} | {sess} | ' + ' | '.join(cells) + ' |')
    for size in sizes:
        for s in sessions:
            cells, ok = [], False
            for q in queues:
                a = g.get((workload, base_label('minivmm', q, workload), size, s), [])
                b = g.get((workload, base_label('qemu', q, workload), size, s), [])
                ra, rb = val(a, 'rate'), val(b, 'rate')
                na, nb = val(a, 'norm'), val(b, 'norm')
                ok |= bool(ra and rb)
                cells += [f'×{ra/rb:.2f}' if ra and rb else '-', f'×{na/nb:.2f}' if na and nb else '-', '']
            if ok:
                sess = s if workload == 'rr' else 'q flows'
                out.append(f'| minivmm/qemu | {size} | {sess} | ' + ' | '.join(cells) + ' |')
    if len(out) == 4:
        out.append('| (no rows) | ' + ' | '.join([''] * (2 + 3 * len(queues))) + ' |')
    return out + ['']


def table(heads, lines):
    out = ['| ' + ' | '.join(heads) + ' |', '|' + '---|' * len(heads)]
    out += ['| ' + ' | '.join(str(c) for c in l) + ' |' for l in lines]
    if not lines:
        out.append('| ' + ' | '.join(['(no rows)'] + [''] * (len(heads) - 1)) + ' |')
    return out + ['']


CEIL_WHAT = {
    'tap-write': 'write() 64 B frames into the tap (IFF_VNET_HDR, as minivmm), into the bridge',
    'tap-read': 'read() from the tap while the blaster floods the bridge',
    'packet-write': 'AF_PACKET send() per frame on vm0, qdisc bypass',
    'packet-read': 'AF_PACKET recv() per frame on vm0, blaster on vh0',
    'packet-read-ring': 'AF_PACKET TPACKET_V3 RX ring on vm0, blaster on vh0',
    'xdp-tx': 'AF_XDP copy mode, queue 0 of vm0, own UMEM',
    'xdp-rx': 'AF_XDP copy mode, queue 0 of vm0 (libxdp default program), blaster on vh0',
}


def ceilings_table(g):
    lines = []
    for (w, label, size, _), rs in sorted(g.items(), key=lambda kv: kv[0][1]):
        if w != 'ceil':
            continue
        mode = rs[0]['cfg']['mode']
        bound = sum(r.get('blaster_bound', 0) for r in good(rs))
        lines.append([mode, CEIL_WHAT.get(mode, ''), size, cell(rs, 'rate', ranged=True),
                      cell(rs, 'cpu_ns_frame'), cell(rs, 'offered_pps'),
                      f'{bound} of {len(good(rs))}' if 'read' in mode or mode == 'xdp-rx' else '-',
                      *gate_cells(rs), ncell(rs)])
    return ['### Host ceilings (plain processes, one core each, same run)', '',
            'Readers are fed by the raw blaster; "blaster-bound" counts runs where the reader kept up with '
            'the blaster (≥ 98 % of what it offered), i.e. the ceiling is at least that and the blaster is the '
            'limit.', ''] + table(['ceiling', 'what', 'size', 'pps', 'CPU ns/frame', 'blaster offered pps',
                                   'blaster-bound', 'load', 'busy%', 'n'], lines)


def rxb_table(g):
    lines = []
    for (w, label, size, _), rs in sorted(g.items(), key=lambda kv: (kv[0][2], kv[0][1])):
        if w != 'rxb' or rs[0]['cfg'].get('rate'):
            continue
        lines.append([label, size, cell(rs, 'offered_pps'), cell(rs, 'rate', ranged=True),
                      cell(rs, 'delivered_pct'), cell(rs, 'ceil_frac'), cell(rs, 'reorders'),
                      cell(rs, 'guest_lost'), cell(rs, 'vmm_drops_run'), cell(rs, 'kernel_drops'),
                      cell(rs, 'backend_drops_run'), cell(rs, 'wrk_ns_frame_win'), cell(rs, 'wrk_wake_frame'),
                      cell(rs, 'io_ns_frame'), *gate_cells(rs), ncell(rs)])
    return ['### Host → guest driven by the raw blaster (rawnet blast, AF_PACKET, as fast as it goes)', '',
            '`offered` = frames the blaster put on the wire ÷ blast time (the bridge\'s / vh0\'s tx_packets + '
            'tx_dropped); `delivered` = frames the guest\'s net-sink counted ÷ blast time; `deliv %` = '
            'delivered ÷ offered; `×ceil` = delivered ÷ the host\'s own reader (tap-read, packet-read, xdp-rx); '
            '`reorders` and `lost` are net-sink\'s per-flow sequence checks; `VMM drops` = frames minivmm '
            'dropped itself (rx_dropped + rx_filtered + tx_dropped of --stats=json, whole run); `kernel drops` '
            '= dropped before the VMM read them (tap tx_dropped, or vh0 tx_dropped for the veth); '
            '`backend drops` = the packet/AF_XDP socket\'s own drop counter.', ''] + table(
        ['config', 'size', 'offered pps', 'delivered pps', 'deliv %', '×ceil', 'reorders', 'lost', 'VMM drops',
         'kernel drops', 'backend drops', 'wrk ns/frame', 'wake/frame', 'io ns/frame', 'load', 'busy%', 'n'],
        lines)


def levels_table(g, M):
    lines = []
    for poll in ('', 'auto'):
        for rate in M['levels']:
            c = dict(BASE, queues=1, rate=rate)
            if poll:
                c['poll'] = poll
            rs = g.get(('rxb', cfg_label(c), 64, 0), [])
            if not rs:
                continue
            lines.append([poll or 'default', f'{rate // 1000}k' if rate else 'max', cell(rs, 'offered_pps'),
                          cell(rs, 'rate'), cell(rs, 'wrk_cpu_pct'), cell(rs, 'wrk_ns_frame_win'),
                          cell(rs, 'wrk_wake_frame'), cell(rs, 'wrk_wake_s'), cell(rs, 'delivered_pct'),
                          *gate_cells(rs), ncell(rs)])
    return ['### minivmm per load level (tap, 1 queue, 64 B, RX from the blaster at a paced rate)', '',
            'Worker figures from two `--stats=json` snapshots (SIGUSR1) around the window: CPU % of one core, '
            'CPU ns per frame, wake-ups (voluntary context switches) per frame and per second.', ''] + table(
        ['poll-us', 'asked pps', 'offered pps', 'delivered pps', 'worker CPU %', 'wrk ns/frame', 'wake/frame',
         'wake/s', 'deliv %', 'load', 'busy%', 'n'], lines)


def idle_table(g, M):
    lines = []
    for (w, label, size, _), rs in sorted(g.items(), key=lambda kv: kv[0][1]):
        if w != 'idle':
            continue
        lines.append([label, cell(rs, 'wrk_cpu_pct'), cell(rs, 'wrk_wake_s'), cell(rs, 'io_cpu_pct'),
                      cell(rs, 'vcpu_cpu_pct'), cell(rs, 'rss_kb', scale=1 / 1024), *gate_cells(rs), ncell(rs)])
    return [f'### Idle networked VM (guest net-sink, no traffic, {M["idle"]:g} s)', '',
            '`worker CPU %` from minivmm\'s own counters (SIGUSR1 snapshots); `I/O CPU %` is every non-vCPU '
            'thread (for QEMU its main loop); the test guest busy-polls its rings, so its vCPU is busy whatever '
            'the VMM does. RSS = VmHWM in MB.', ''] + table(
        ['config', 'worker CPU %', 'worker wake/s', 'I/O CPU %', 'vCPU CPU %', 'RSS MB', 'load', 'busy%', 'n'],
        lines)


def threads_table(g, M):
    lines = []
    for w in ('tx', 'rxb'):
        for q in M['queues']:
            cs = {}
            for thr in ('auto', '1', 'pq'):
                c = dict(BASE, queues=q, threads=thr)
                if w == 'rxb':
                    c['rate'] = 0
                cs[thr] = g.get((w, cfg_label(c), 64, 0), [])
            if not any(cs.values()):
                continue
            fixed = {t: val(rs, 'rate') for t, rs in cs.items() if t != 'auto' and val(rs, 'rate')}
            best = max(fixed, key=fixed.get) if fixed else None
            a = val(cs['auto'], 'rate')
            verdict = '-'
            if a and best:
                lo = min(r['rate'] for r in good(cs[best]))
                hi_a = max(r['rate'] for r in good(cs['auto']))
                if a >= fixed[best] or hi_a >= lo:
                    verdict = f'within noise (×{a / fixed[best]:.2f})'
                else:
                    verdict = f'worse by {100 * (1 - a / fixed[best]):.0f} %'
            lines.append(['TX' if w == 'tx' else 'RX (blaster)', q, cell(cs['auto'], 'rate', ranged=True),
                          cell(cs['1'], 'rate', ranged=True), cell(cs['pq'], 'rate', ranged=True),
                          {'1': 'threads=1', 'pq': 'per-queue'}.get(best, '-'), verdict])
    return ['### threads=auto vs fixed choices (tap, 64 B)', '',
            '"within noise": auto\'s median is at least the best fixed choice\'s, or its best run reaches the '
            'best fixed choice\'s worst run. On a host with cores to spare, see the cost model in '
            'docs/benchmarks.md for what the fixed choices should give.', ''] + table(
        ['direction', 'queues', 'threads=auto', 'threads=1', 'per-queue', 'best fixed', 'auto vs best'], lines)


def detail_table(g, workload, extra):
    heads = ['config', 'size', 'sess', 'rate', '×ceil', 'norm', 'Mbit/s', 'VMM CPU%', 'vCPU CPU%', 'I/O CPU%',
             'io ns/frame', 'wrk ns/frame', 'wake/frame', 'host CPU%', 'VMM cs/s', 'host cs/s', 'cs/frame',
             'RSS kB'] + [e[0] for e in extra] + ['load', 'busy%', 'n']
    cols = ['ceil_frac', 'norm', 'mbit_s', 'vmm_cpu_pct', 'vcpu_cpu_pct', 'io_cpu_pct', 'io_ns_frame',
            'wrk_ns_frame_win', 'wrk_wake_frame', 'host_cpu_pct', 'vmm_cs_s', 'host_cs_s', 'vmm_cs_frame', 'rss_kb']
    keys = sorted((k for k in g if k[0] == workload), key=lambda k: (k[2], k[3], not k[1].startswith('minivmm'), k[1]))
    lines = []
    for k in keys:
        rs = g[k]
        lines.append([k[1], k[2], k[3] or '-', cell(rs, 'rate', ranged=True)] + [cell(rs, c) for c in cols] +
                     [cell(rs, e[1]) for e in extra] + gate_cells(rs) + [ncell(rs)])
    return table(heads, lines)


# ---------------------------------------------------------------- targets
TARGETS = [
    'tap TX ≥ 0.95 × raw tap write',
    'tap TX ≥ 2 × QEMU',
    'tap RX ≥ 0.9 × offered (blaster)',
    'tap RX ≥ 1.5 × QEMU (blaster)',
    'tap RX: no frames dropped inside the VMM',
    'tap RX ≥ 0.9 × offered (blaster, guest idle=halt)',
    'tap RX ≥ 1.5 × QEMU (blaster, guest idle=halt)',
    'AF_XDP TX ≥ 0.9 × plain AF_XDP',
    'AF_XDP RX ≥ 0.9 × plain AF_XDP',
    'AF_XDP RX ≥ 0.9 × plain AF_XDP (guest idle=halt)',
    'AF_XDP worker CPU/frame ≤ ½ tap (TX)',
    'AF_XDP worker CPU/frame ≤ ½ tap (RX)',
    'AF_XDP worker CPU/frame ≤ ½ tap (RX, guest idle=halt)',
    'idle worker CPU ≤ 1 % (poll-us=auto)',
    'resident memory ≤ 4 MB (idle, networked)',
    'boot: VMM start → test guest exit ≤ 10 ms',
]


def target_line(name, value, goal, higher, measured, why_missing='not measured'):
    """(name, measured text, goal text, status): 'met', 'missed by X %' or 'not measured (...)'."""
    if value is None:
        return (name, measured or '-', f'{"≥" if higher else "≤"} {goal:g}', f'not measured ({why_missing})')
    ok = value >= goal if higher else value <= goal
    if ok:
        st = 'met'
    elif higher:
        st = f'missed by {100 * (1 - value / goal):.1f} %'
    else:
        st = f'missed by {100 * (value / goal - 1):.1f} %' if goal else f'missed ({value:g} > 0)'
    return (name, measured, f'{"≥" if higher else "≤"} {goal:g}', st)


def why(rs):
    if not rs:
        return 'no such row in this run'
    if busy_runs(rs) and not good(rs):
        return f'all {len(busy_runs(rs))} runs busy'
    if not good(rs):
        return 'every run failed: ' + (rs[0].get('error') or '')[:80]
    return 'a figure is missing'


def tap_rx_targets(offered_name, qemu_name, rx, rxq):
    """The two tap RX targets of one guest kind: delivered ÷ offered, and ÷ QEMU's."""
    d = val(rx, 'delivered_pct')
    v = d / 100 if d is not None else None
    out = [target_line(offered_name, v, 0.9, True,
                       f'×{v:.2f} ({fmt(val(rx, "rate"))} of {fmt(val(rx, "offered_pps"))} pps)' if v else None,
                       why(rx))]
    v = ratio(val(rx, 'rate'), val(rxq, 'rate'))
    out.append(target_line(qemu_name, v, 1.5, True,
                           f'×{v:.2f} ({fmt(val(rx, "rate"))} vs {fmt(val(rxq, "rate"))} pps)' if v else None,
                           why(rx if not val(rx, 'rate') else rxq)))
    return out


def targets(g, boots, ceil_med):
    T = []
    mv = lambda w, **kw: g.get((w, cfg_label(dict(BASE, queues=1, **kw)), 64, 0), [])
    qm = lambda w, **kw: g.get((w, cfg_label(dict(QEMU, queues=1, **kw)), 64, 0), [])
    tx, txq = mv('tx'), qm('tx')
    cw = ceil_med.get(('tap-write', 64))
    v = val(tx, 'ceil_frac')
    T.append(target_line(TARGETS[0], v, 0.95, True,
                         f'×{v:.2f} ({fmt(val(tx, "rate"))} vs {fmt(cw)} pps)' if v else None, why(tx)))
    v = ratio(val(tx, 'rate'), val(txq, 'rate'))
    T.append(target_line(TARGETS[1], v, 2.0, True,
                         f'×{v:.2f} ({fmt(val(tx, "rate"))} vs {fmt(val(txq, "rate"))} pps)' if v else None,
                         why(tx if not val(tx, 'rate') else txq)))
    rx, rxq = mv('rxb', rate=0), qm('rxb', rate=0)
    # The same against a guest that sleeps when its ring is empty: on a host
    # with fewer free cores than busy threads, the spinning guest's vCPU
    # takes the CPU the worker needs (docs/benchmarks.md, "RX and the guest").
    rh, rhq = mv('rxb', rate=0, guest='halt'), qm('rxb', rate=0, guest='halt')
    T += tap_rx_targets(TARGETS[2], TARGETS[3], rx, rxq)
    drops = [r.get('vmm_drops_run') for r in good(rx) if r.get('vmm_drops_run') is not None]
    v = max(drops) if drops else None
    T.append(target_line(TARGETS[4], v, 0, False, f'{v} frames (worst run)' if v is not None else None, why(rx)))
    T += tap_rx_targets(TARGETS[5], TARGETS[6], rh, rhq)
    xt, xr = mv('tx', backend='xdp'), mv('rxb', backend='xdp', rate=0)
    xh = mv('rxb', backend='xdp', rate=0, guest='halt')
    for name, rs, mode in ((TARGETS[7], xt, 'xdp-tx'), (TARGETS[8], xr, 'xdp-rx'), (TARGETS[9], xh, 'xdp-rx')):
        v = val(rs, 'ceil_frac')
        T.append(target_line(name, v, 0.9, True,
                             f'×{v:.2f} ({fmt(val(rs, "rate"))} vs {fmt(ceil_med.get((mode, 64)))} pps)' if v else
                             None, why(rs)))
    for name, x, t in ((TARGETS[10], xt, tx), (TARGETS[11], xr, rx), (TARGETS[12], xh, rh)):
        a, b = val(x, 'wrk_ns_frame_win'), val(t, 'wrk_ns_frame_win')
        v = ratio(a, b)
        T.append(target_line(name, v, 0.5, False, f'×{v:.2f} ({fmt(a)} vs {fmt(b)} ns/frame)' if v else None,
                             why(x if not a else t)))
    idle = g.get(('idle', cfg_label(dict(BASE, queues=1, poll='auto')), 64, 0), [])
    v = val(idle, 'wrk_cpu_pct')
    T.append(target_line(TARGETS[13], v, 1.0, False, f'{v:.2f} % of a core' if v is not None else None, why(idle)))
    v = val(idle, 'rss_kb')
    q = val(g.get(('idle', cfg_label(dict(QEMU, queues=1)), 64, 0), []), 'rss_kb')
    T.append(target_line(TARGETS[14], v / 1024 if v else None, 4.0, False,
                         f'{v / 1024:.2f} MB (QEMU {fmt(q / 1024 if q else None)} MB)' if v else None, why(idle)))
    def boot_med(vmm):
        return med([b['rate'] for b in boots if b['vmm'] == vmm and b.get('rc') == 0 and not b.get('busy')])[0]
    bm, bk, bq = boot_med('minivmm'), boot_med('minivmm --irqchip=kernel'), boot_med('qemu')
    T.append(target_line(TARGETS[15], bm, 10.0, False,
                         f'{bm:.1f} ms (`--irqchip=kernel` {fmt(bk)} ms, QEMU {fmt(bq)} ms)' if bm else None,
                         'no quiet boot' if boots else 'no boots in this run'))
    out = ['## Targets (issue 12; printed, never enforced)', '',
           'Medians of quiet runs only (busy runs left out); "missed by X %" is how far the measured value is '
           'from the goal, relative to the goal.', '']
    return out + table(['target', 'measured', 'goal', 'status'], [list(t) for t in T])


def results_md(rows, boots, M, meta, cmp=None):
    """The whole report; cmp (baseline.comparisons) adds the HEAD ÷ baseline section."""
    ceil_med = annotate(rows)
    g = group(rows)
    vm = ['minivmm', 'qemu']
    Q = M['queues']
    md = [header_md(M, meta)]
    md += ceilings_table(g)
    md += seed_table(g, 'tx', 'Guest → host UDP (guest net-gen, host netpeer count), tap+bridge: frames/s',
                     'pps', M['sizes'], [0], Q, vm)
    md += seed_table(g, 'rxb', 'Host → guest, raw blaster (rawnet blast into the bridge), tap: frames/s delivered',
                     'pps', [64], [0], Q, vm)
    md += seed_table(g, 'rx', 'Host → guest UDP (host netpeer send, guest net-sink), tap+bridge: '
                     'frames/s delivered', 'pps', M['sizes'], [0], Q, vm)
    md += seed_table(g, 'rr', 'Request/response UDP 64 B (netpeer echo-check --window N), tap+bridge: '
                     'transactions/s', 'trans/s', [64], M['sessions'], Q, vm)
    md += ['Latency: netpeer gives no percentiles; the detail table shows the mean latency computed as '
           'sessions / transactions-per-second (Little\'s law), not measured per transaction.', '']
    md += rxb_table(g)
    md += levels_table(g, M)
    md += idle_table(g, M)
    md += threads_table(g, M)
    md += ['## Detail: every configuration, every column (medians of quiet runs; rate with [min–max])', '',
           COLS_DOC]
    md += ['### Guest → host (tx)', '']
    md += detail_table(g, 'tx', [('guest pps', 'guest_pps'), ('peer got %', 'delivered_pct'),
                                 ('VMM drops', 'vmm_drops_run')])
    md += ['### Host → guest, UDP sender (rx)', '']
    md += detail_table(g, 'rx', [('offered pps', 'offered_pps'), ('loss %', 'loss_pct'),
                                 ('guest lost', 'guest_lost'), ('reorders', 'reorders'), ('guest bad', 'guest_bad')])
    md += ['### Host → guest, raw blaster (rxb)', '']
    md += detail_table(g, 'rxb', [('offered pps', 'offered_pps'), ('deliv %', 'delivered_pct'),
                                  ('reorders', 'reorders'), ('guest bad', 'guest_bad')])
    md += ['### Request/response (rr)', '']
    md += detail_table(g, 'rr', [('mean lat µs (computed)', 'mean_lat_us'), ('lost', 'rr_lost'),
                                 ('guest drops', 'guest_drops')])
    md += ['### Start-up: VMM start → test guest exit (test=hello, no network device)', '']
    lines = []
    for v in BOOT_VMMS:
        bs = [b for b in boots if b['vmm'] == v and b.get('rc') == 0]
        lines.append([v, cell(bs, 'rate', ranged=True), cell(bs, 'guest_up_ms'), *gate_cells(bs or [{}]), ncell(bs)])
    md += table(['VMM', 'wall ms (median [min–max])', "guest up ms (minivmm's own report)", 'load', 'busy%', 'n'],
                lines)
    md += ['### Linux guest TCP (iperf3 in a nested Linux guest)', '',
           'Measured separately by `bench/linux/run.sh` (part of `make bench`): a stock Linux kernel '
           'boots impractically slowly on a PVM host, so it runs nested in a QEMU TCG outer guest, '
           'minivmm and QEMU side by side. See docs/benchmarks.md, "Linux guest TCP".', '']
    errs = [r for r in rows if r.get('error')]
    if errs:
        md += [f'### Failed runs: {len(errs)}', '']
        md += table(['workload', 'config', 'round', 'error'],
                    [[r['workload'], r['label'], r['rep'] + 1, r['error'].replace('|', '/')] for r in errs[:20]])
    if cmp is not None:
        md += baseline.section_md(cmp, meta)
    md += [f'Run time {meta.get("elapsed_s", 0)} s.', '']
    md += targets(g, boots, ceil_med)
    return '\n'.join(md)


def write_csv(rows, boots, path):
    flat = []
    for r in rows:
        d = {k: v for k, v in r.items() if k != 'cfg'}
        d.update({f'cfg_{k}': v for k, v in r['cfg'].items()})
        flat.append(d)
    for b in boots:
        flat.append(dict(b, workload='boot', size=0, cfg_vmm=b['vmm'], label=f"{b['vmm']} boot"))
    keys = ['workload', 'rep', 'label', 'cfg_vmm', 'cfg_backend', 'cfg_mode', 'cfg_rx', 'cfg_queues', 'cfg_threads',
            'cfg_pin', 'cfg_engine', 'cfg_poll', 'cfg_rate', 'size', 'sessions'] + GATE_COLS + COLS
    for d in flat:
        for k in d:
            if k not in keys and k != 'counters':
                keys.append(k)
    with open(path, 'w', newline='') as f:
        w = csv.DictWriter(f, fieldnames=keys, extrasaction='ignore')
        w.writeheader()
        for d in flat:
            w.writerow({k: (f'{v:.6g}' if isinstance(v, float) else v) for k, v in d.items()})


def plots(rows, outdir, M):
    """gnuplot PNGs: pps vs queues (tx, blaster rx), rate vs frame size, rr tps vs sessions."""
    g = group(good(rows))
    dat = os.path.join(outdir, 'plot.dat')
    blocks, txt = [], []

    empty = set()

    def block(name, pts):
        lines = [f'# {name}'] + [f'{x} {m} {lo} {hi}' for x, (m, lo, hi) in pts if m is not None]
        if len(lines) == 1:
            lines.append('0 0 0 0')
            empty.add(name)
        blocks.append(name)
        txt.append('\n'.join(lines))

    def series(w, vmm, col, xs, key, scale=1.0):
        return [(x, tuple(v * scale if v is not None else None for v in
                          med([r.get(col) for r in g.get(key(x), [])]))) for x in xs]

    for w in ('tx', 'rxb'):
        for vmm in ('minivmm', 'qemu'):
            block(f'{w}-{vmm}-rate', series(w, vmm, 'rate', M['queues'],
                                           lambda q: (w, base_label(vmm, q, w), 64, 0), 1e-6))
    for w in ('tx', 'rx'):
        for vmm in ('minivmm', 'qemu'):
            block(f'{w}-{vmm}-size', series(w, vmm, 'mbit_s', M['sizes'],
                                           lambda s: (w, base_label(vmm, 1, w), s, 0)))
    for vmm in ('minivmm', 'qemu'):
        for q in M['queues']:
            block(f'rr-{vmm}-{q}q', series('rr', vmm, 'rate', M['sessions'],
                                          lambda s: ('rr', base_label(vmm, q, 'rr'), 64, s)))
    with open(dat, 'w') as f:
        f.write('\n\n\n'.join(txt) + '\n')
    idx = {n: i for i, n in enumerate(blocks)}

    def plot(fn, title, xl, yl, items, logx=False):
        if all(n in empty for n, _ in items):
            return f'# {fn}: nothing measured'
        s = [f"set output '{os.path.join(outdir, fn)}'", f"set title '{title}'", f"set xlabel '{xl}'",
             f"set ylabel '{yl}'", 'set key top left', 'set grid', 'set yrange [0:*]']
        s.append('set logscale x 2' if logx else 'unset logscale x')
        s.append('plot ' + ', '.join(f"'{dat}' index {idx[n]} using 1:2:3:4 with yerrorlines title '{t}'"
                                     for n, t in items))
        return '\n'.join(s)
    gp = ['set terminal pngcairo size 800,500' if has_cairo() else 'set terminal png size 800,500']
    gp.append('set xtics (' + ', '.join(f"'{q}' {q}" for q in M['queues']) + ')')
    gp.append(plot('scaling.png', 'UDP 64 B frames/s by queue pairs (median, min-max)', 'queue pairs', 'Mpps',
                   [(f'{w}-{v}-rate', f'{v} {"guest TX" if w == "tx" else "guest RX (blaster)"}')
                    for w in ('tx', 'rxb') for v in ('minivmm', 'qemu')]))
    gp.append('set xtics auto')
    gp.append(plot('size.png', 'throughput by frame size, 1 queue pair', 'frame bytes', 'Mbit/s',
                   [(f'{w}-{v}-size', f'{v} {w}') for w in ('tx', 'rx') for v in ('minivmm', 'qemu')], logx=True))
    gp.append(plot('rr.png', 'request/response 64 B: transactions/s by concurrent sessions', 'sessions',
                   'transactions/s', [(f'rr-{v}-{q}q', f'{v} {q}q') for v in ('minivmm', 'qemu')
                                      for q in M['queues']]))
    gpf = os.path.join(outdir, 'plots.gp')
    with open(gpf, 'w') as f:
        f.write('\n'.join(gp) + '\n')
    try:
        p = subprocess.run(['gnuplot', gpf], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if p.returncode:
            log('gnuplot failed:', p.stdout[-500:])
    except FileNotFoundError:
        log('gnuplot not installed (Debian: gnuplot-nox): no PNGs')


_cairo = []


def has_cairo():
    if not _cairo:
        p = subprocess.run(['gnuplot', '-e', 'set terminal'], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True) if os.path.exists('/usr/bin/gnuplot') else None
        _cairo.append(bool(p and 'pngcairo' in p.stdout))
    return _cairo[0]
