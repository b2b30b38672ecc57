#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""minivmm rate-limit benchmark: the program behind `make bench-limits`
(bench/run.sh --limits, which makes the namespace and removes it).

Does a device held to a configured rate carry that rate, no more and not
much less? For TX (guest to host: the guest's net-gen sends as fast as its
ring takes frames, the limiter holds it back) and RX (host to guest: netpeer
sends half as much again as the limit, the guest's net-sink counts) at three
limits, 10 Mbit/s, 100 Mbit/s and 5000 frames/s, each measured over a 5 s
window from minivmm's own counters (bytes or frames the device carried, the
same bytes the limiter counts: frames without their virtio header). Beside
each direction, the same device without a limit: a limit it cannot reach
unlimited is marked so, not counted as met or missed.

Then a one-time burst: TX held to 10 Mbit/s with a 1 MB burst, the device's
bytes sampled every 100 ms from the guest's start, plotted against the
limiter's model (limits-burst.png).

Writes results.md, runs.csv and limits-burst.{dat,png} in --out. Prints,
never asserts: a row outside +-5 % is marked in the table.
"""
import argparse
import csv
import json
import math
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hostinfo  # noqa: E402
from common import BASE, PORT, fmt, log, tool  # noqa: E402
from gate import Gate  # noqa: E402
from vm import VM, guest_fields, netpeer, resolve_guest, stop_guest_and_wait  # noqa: E402

WARM_S = 1.0        # the bucket's first fill (a tenth of a second's worth) is spent in here
TOLERANCE = 0.05    # the issue's +-5 %

# label, --net key=value ("" none), what the limit counts, its rate (bytes or frames a second),
# the frame size the traffic uses
ROWS = [
    ('10 Mbit/s', 'bw=125000/100', 'bytes', 1.25e6, 1514),
    ('100 Mbit/s', 'bw=1250000/100', 'bytes', 12.5e6, 1514),
    ('5000 frames/s', 'ops=500/100', 'frames', 5000.0, 64),
]
# the one-time burst row: 10 Mbit/s, 1 MB at once
BURST = dict(spec='bw=125000/100/1000000', size=125000, burst=1000000, rate=1.25e6, frame=1514, secs=4.0)


def device(stats):
    """(bytes, frames) of net0 in one direction pair: {'tx': (...), 'rx': (...)}."""
    qs = stats['net'][0]['queues']
    return {d: (sum(q[f'{d}_bytes'] for q in qs), sum(q[f'{d}_frames'] for q in qs)) for d in ('tx', 'rx')}


def cfg_for(direction, spec):
    c = dict(BASE, queues=1)
    if spec:
        c['extra_net'] = [f'{direction}-{spec}']
    return c


def measure_tx(spec, frame, window, tmp):
    """The guest sends flat out for the whole run; the device's TX over the window."""
    secs = math.ceil(WARM_S + window + 1.5)
    cnt = subprocess.Popen(netpeer('count', '--port', PORT, '--idle-ms', 1500, '--timeout-ms', 60000, '--json'),
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    vm = VM(cfg_for('tx', spec), f'test=net-gen size={frame} queues=1 secs={secs} count=0', tmp + '.out')
    try:
        vm.ready('net-gen')
        time.sleep(WARM_S)
        s0 = vm.stats_now()
        time.sleep(window)
        s1 = vm.stats_now()
        vm.wait(secs + 15)
    finally:
        vm.kill()
        cnt.kill()
        cnt.communicate()
    return s0, s1, vm


def measure_rx(spec, frame, offered_fps, window, tmp):
    """netpeer sends offered_fps for the whole run; the device's RX over the window."""
    dur = WARM_S + window + 0.5
    vm = VM(cfg_for('rx', spec), f'test=net-sink queues=1 secs={math.ceil(dur + 6)}', tmp + '.out')
    try:
        vm.ready('net-sink')
        resolve_guest('tap')
        snd = subprocess.Popen(netpeer('send', '--dst', '10.0.0.2', '--port', PORT,
                                       '--count', int(offered_fps * dur), '--size', frame, '--flows', 4,
                                       '--rate', int(offered_fps), '--timeout-ms', 60000, '--json'),
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        time.sleep(WARM_S)
        s0 = vm.stats_now()
        time.sleep(window)
        s1 = vm.stats_now()
        snd.communicate(timeout=60)
        stop_guest_and_wait(vm, 'tap', PORT, 10)
    finally:
        vm.kill()
    return s0, s1, vm


def run_row(direction, label, spec, unit, rate, frame, window, tmp):
    """One measured window: the rate the device carried, in the limit's unit."""
    if direction == 'tx':
        s0, s1, vm = measure_tx(spec, frame, window, tmp)
    else:
        # half as much again as the limit; an unlimited row is offered what its limited twin is
        fps = 1.5 * (rate / frame if unit == 'bytes' else rate)
        s0, s1, vm = measure_rx(spec, frame, fps, window, tmp)
    if not s0 or not s1:
        raise RuntimeError('no statistics from minivmm: ' + ' | '.join(vm.text().strip().splitlines()[-2:]))
    d0, d1 = device(s0)[direction], device(s1)[direction]
    dt = s1['_t'] - s0['_t']
    carried = (d1[0] - d0[0]) / dt if unit == 'bytes' else (d1[1] - d0[1]) / dt
    n = s1['net'][0]
    return dict(direction=direction, limit=label, spec=spec or 'none', unit=unit, configured=rate,
                carried=carried, window_s=dt, frames=d1[1] - d0[1],
                throttled=n.get(f'{direction}_throttled', 0) - s0['net'][0].get(f'{direction}_throttled', 0),
                tx_dropped=sum(q['tx_dropped'] for q in n['queues']))


def run_burst(tmp, outdir):
    """TX with a one-time burst: the device's bytes every 100 ms from the guest's start."""
    secs = math.ceil(BURST['secs'] + 2)
    cnt = subprocess.Popen(netpeer('count', '--port', PORT, '--idle-ms', 1500, '--timeout-ms', 60000, '--json'),
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    vm = VM(cfg_for('tx', BURST['spec']), f'test=net-gen size={BURST["frame"]} queues=1 secs={secs} count=0',
            tmp + '.out')
    pts = []
    try:
        vm.ready('net-gen')
        t0 = None
        while True:
            s = vm.stats_now()
            if not s:
                break
            if t0 is None:
                t0 = s['_t']
            pts.append((s['_t'] - t0, device(s)['tx'][0]))
            if s['_t'] - t0 >= BURST['secs']:
                break
            time.sleep(max(0.0, 0.1 - (time.monotonic() - s['_t'])))
        vm.wait(secs + 15)
    finally:
        vm.kill()
        cnt.kill()
        cnt.communicate()
    dat = os.path.join(outdir, 'limits-burst.dat')
    with open(dat, 'w') as f:
        f.write('# seconds since the guest was ready, bytes the device sent, the limiter allows at most\n')
        for t, b in pts:
            f.write(f'{t:.3f} {b} {BURST["size"] + BURST["burst"] + BURST["rate"] * t:.0f}\n')
    if pts and subprocess.run(['which', 'gnuplot'], stdout=subprocess.DEVNULL).returncode == 0:
        png = os.path.join(outdir, 'limits-burst.png')
        script = '\n'.join([
            'set terminal png size 800,500', f"set output '{png}'",
            "set title 'TX held to 10 Mbit/s with a 1 MB one-time burst'",
            "set xlabel 'seconds since the guest was ready'", "set ylabel 'MB the device sent'",
            'set key top left', 'set grid', 'set yrange [0:*]',
            f"plot '{dat}' using 1:($2/1e6) with linespoints title 'sent (minivmm counters)', "
            f"'{dat}' using 1:($3/1e6) with lines dashtype 2 title 'bucket + burst + 1.25 MB/s'"])
        subprocess.run(['gnuplot'], input=script, text=True, stderr=subprocess.DEVNULL)
    # the rate after the burst is spent: the slope of the last half
    late = [p for p in pts if p[0] >= BURST['secs'] / 2]
    slope = (late[-1][1] - late[0][1]) / (late[-1][0] - late[0][0]) if len(late) > 1 else None
    first = next((b for t, b in pts if t >= 0.5), None)
    return dict(points=len(pts), first_half_s_bytes=first, late_rate=slope)


def verdict(r, ceiling):
    """ok / OFF / unreachable, for a limited row against its unlimited twin."""
    if ceiling is not None and ceiling < r['configured'] * (1 + TOLERANCE):
        return f'not reachable here: unlimited, the device carries {fmt(ceiling)}'
    ratio = r['carried'] / r['configured']
    return 'ok' if abs(ratio - 1) <= TOLERANCE else 'OFF (outside +-5 %)'


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--out', required=True)
    ap.add_argument('--window', type=float, default=5.0)
    ap.add_argument('--no-gate', action='store_true')
    a = ap.parse_args()
    os.makedirs(os.path.join(a.out, 'logs'), exist_ok=True)
    emulated = bool(os.environ.get('MINIVMM_EMULATED_KVM'))
    gate = Gate(os.cpu_count() or 1, enabled=not a.no_gate)
    rows, t_start = [], time.monotonic()
    for direction in ('tx', 'rx'):
        for label, spec, unit, rate, frame in ROWS:
            for limited in (False, True):
                g = gate.wait()
                tmp = os.path.join(a.out, 'logs', f'{direction}-{unit}-{int(rate)}-{"lim" if limited else "free"}')
                log(f'[{time.monotonic() - t_start:5.0f}s] {direction} {label if limited else "no limit"} '
                    f'({frame}-byte frames)')
                try:
                    r = run_row(direction, label if limited else f'none ({label} twin)', spec if limited else '',
                                unit, rate, frame, a.window, tmp)
                except Exception as e:      # a failed row is reported, never fatal
                    log(f'  failed: {e}')
                    r = dict(direction=direction, limit=label, spec=spec if limited else 'none', unit=unit,
                             configured=rate, error=str(e)[:300])
                r.update(limited=limited, frame=frame, busy=g['busy'])
                rows.append(r)
    g = gate.wait()
    log(f'[{time.monotonic() - t_start:5.0f}s] tx burst')
    try:
        burst = run_burst(os.path.join(a.out, 'logs', 'burst'), a.out)
    except Exception as e:
        log(f'  failed: {e}')
        burst = dict(error=str(e)[:300])

    head = ['direction', 'limit', '--net', 'configured', 'carried over the window', 'carried ÷ configured',
            'throttled', 'verdict']
    lines = []
    for r in rows:
        if not r['limited']:
            continue
        twin = next((t for t in rows if not t['limited'] and t['direction'] == r['direction'] and
                     t['unit'] == r['unit'] and t['configured'] == r['configured'] and 'carried' in t), None)
        ceiling = twin['carried'] if twin else None
        unit = 'B/s' if r['unit'] == 'bytes' else 'frames/s'
        if 'error' in r:
            lines.append([r['direction'], r['limit'], f"{r['direction']}-{r['spec']}", f"{fmt(r['configured'])} {unit}",
                          '-', '-', '-', 'failed: ' + r['error']])
            continue
        lines.append([r['direction'], r['limit'], f"{r['direction']}-{r['spec']}",
                      f"{fmt(r['configured'])} {unit}", f"{fmt(r['carried'])} {unit} ({r['window_s']:.2f} s)",
                      f"{r['carried'] / r['configured']:.3f}", str(r['throttled']),
                      verdict(r, ceiling) + (' (busy host)' if r['busy'] else '')])
    free = [[r['direction'], r['frame'],
             'the guest, flat out' if r['direction'] == 'tx' else
             f"netpeer, {fmt(1.5 * r['configured'])} {'B/s' if r['unit'] == 'bytes' else 'frames/s'} "
             f"(1.5 × {r['limit'].split('(')[-1].rstrip(')')})",
             f"{fmt(r['carried'])} {'B/s' if r['unit'] == 'bytes' else 'frames/s'}"
             if 'carried' in r else 'failed: ' + r.get('error', '')] for r in rows if not r['limited']]

    def table(h, ls):
        return '\n'.join(['| ' + ' | '.join(h) + ' |', '|' + '---|' * len(h)] +
                         ['| ' + ' | '.join(str(c) for c in line) + ' |' for line in ls])

    text = [f'# minivmm rate limits ({time.strftime("%Y-%m-%d %H:%M")})', '',
            f'{hostinfo.host_line(hostinfo.describe())}; minivmm `{tool("minivmm")}`; window {a.window:g} s '
            f'after {WARM_S:g} s of traffic; one tap queue pair, io_uring.', '',
            gate.describe(), '']
    if emulated:
        text += ['**Under emulated KVM (tests/with-kvm.sh): no figure here is a measurement.**', '']
    text += ['## Held to a rate', '', table(head, lines), '',
             'carried: bytes (frames without their virtio header, as the limiter counts them) or frames the device '
             'moved in that direction between two statistics snapshots, divided by the time between them.', '',
             '## The same device without a limit', '', table(['direction', 'frame bytes', 'offered by', 'carried'], free), '',
             '## A one-time burst', '']
    if 'error' in burst:
        text += [f'failed: {burst["error"]}', '']
    else:
        late = burst['late_rate']
        text += [f'TX held to 10 Mbit/s (1.25 MB/s) with a 1 MB one-time burst: {burst["points"]} samples; '
                 f'{fmt(burst["first_half_s_bytes"])} bytes sent in the first 0.5 s (the burst and the full bucket, '
                 f'1.125 MB, at the guest\'s own speed), then {fmt(late)} B/s '
                 f'({late / BURST["rate"]:.3f} of the limit) once spent. Plot: `limits-burst.png` '
                 '(data: `limits-burst.dat`).' if late else 'too few samples', '']
    out = '\n'.join(text)
    with open(os.path.join(a.out, 'results.md'), 'w') as f:
        f.write(out)
    with open(os.path.join(a.out, 'runs.csv'), 'w', newline='') as f:
        keys = sorted({k for r in rows for k in r})
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        for r in rows:
            w.writerow(r)
    with open(os.path.join(a.out, 'meta.json'), 'w') as f:
        json.dump(dict(window=a.window, emulated=emulated, burst=burst), f, indent=1)
    print(out)


if __name__ == '__main__':
    main()
