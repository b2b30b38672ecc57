#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""What the kernel does with minivmm's io_uring RX loop, counted (issue 12 §2).

Run by bench/uring-trace.sh inside the benchmark's namespace: boots the test
guest (net-sink) under a 1-queue minivmm with engine=uring on a tap in br0,
floods it with 64-byte frames from the raw blaster, and for `secs` seconds of
that load records the tracefs events io_uring/io_uring_submit_req,
io_uring_poll_arm and io_uring_complete in a private trace instance. It
prints, for minivmm's own rings only, the requests submitted per opcode, how
many armed an internal poll (parked in the kernel until the fd was ready), and
the completions per opcode by result, -EAGAIN (-11) apart; then the guest's
sequence check under the same load (reorders, lost) as the reorder proof.
"""
import argparse
import collections
import json
import math
import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ceilings import Blaster  # noqa: E402
from common import PORT  # noqa: E402
from vm import VM, guest_fields, resolve_guest, stop_guest_and_wait  # noqa: E402

TRACING = '/sys/kernel/tracing'
EVENTS = ('io_uring_submit_req', 'io_uring_poll_arm', 'io_uring_complete')
EAGAIN = -11
LINE = re.compile(r'^\s*(?P<comm>.+?)-(?P<pid>\d+)\s+\[\d+\].*?\s(?P<ev>io_uring_\w+): ring (?P<ring>\S+), '
                  r'req (?P<req>\S+), user_data \S+, (?:opcode (?P<op>\w+)|result (?P<res>-?\d+))')


def write(path, text):
    with open(path, 'w') as f:
        f.write(text)


class Instance:
    """A private ftrace instance, so the global buffer and other users are untouched."""

    def __init__(self, name, buffer_kb):
        if not os.path.isdir(os.path.join(TRACING, 'events', 'io_uring')):
            raise SystemExit(f'uring-trace: no io_uring events under {TRACING} (tracefs not mounted, or a kernel '
                             'without CONFIG_IO_URING tracepoints)')
        self.path = os.path.join(TRACING, 'instances', name)
        os.makedirs(self.path, exist_ok=True)
        write(os.path.join(self.path, 'tracing_on'), '0')
        write(os.path.join(self.path, 'buffer_size_kb'), str(buffer_kb))
        write(os.path.join(self.path, 'trace'), '')
        for ev in EVENTS:
            write(os.path.join(self.path, 'events', 'io_uring', ev, 'enable'), '1')

    def on(self, yes):
        write(os.path.join(self.path, 'tracing_on'), '1' if yes else '0')

    def lost(self):
        n = 0
        for cpu in os.listdir(os.path.join(self.path, 'per_cpu')):
            st = open(os.path.join(self.path, 'per_cpu', cpu, 'stats')).read()
            m = re.search(r'^overrun: (\d+)', st, re.M)
            n += int(m.group(1)) if m else 0
        return n

    def lines(self):
        with open(os.path.join(self.path, 'trace')) as f:
            for line in f:
                if not line.startswith('#'):
                    yield line

    def remove(self):
        for ev in EVENTS:
            try:
                write(os.path.join(self.path, 'events', 'io_uring', ev, 'enable'), '0')
            except OSError:
                pass
        try:
            os.rmdir(self.path)
        except OSError as e:
            print(f'uring-trace: could not remove {self.path}: {e}', file=sys.stderr)


def count(lines, tids):
    """Counters for the rings minivmm's threads submitted to (other processes'
    io_uring events in the same window are left out)."""
    recs = []
    rings = set()
    for line in lines:
        m = LINE.match(line)
        if not m:
            continue
        recs.append(m)
        if m['ev'] == 'io_uring_submit_req' and int(m['pid']) in tids:
            rings.add(m['ring'])
    submit, armed = collections.Counter(), collections.Counter()
    done = collections.defaultdict(collections.Counter)
    op_of = {}
    for m in recs:
        if m['ring'] not in rings:
            continue
        if m['ev'] == 'io_uring_submit_req':
            submit[m['op']] += 1
            op_of[m['req']] = m['op']          # requests are recycled: the latest submission wins
        elif m['ev'] == 'io_uring_poll_arm':
            armed[m['op']] += 1
        else:
            res = int(m['res'])
            kind = 'EAGAIN' if res == EAGAIN else ('ok' if res > 0 else ('zero' if res == 0 else 'error'))
            done[op_of.get(m['req'], '(armed before the window)')][kind] += 1
            if kind == 'error':
                done[op_of.get(m['req'], '(armed before the window)')][f'err{res}'] += 1
    return dict(rings=len(rings), events=len(recs), submit=dict(submit), poll_arm=dict(armed),
                complete={k: dict(v) for k, v in done.items()})


def table(c, secs):
    ops = sorted(set(c['submit']) | set(c['poll_arm']) | set(c['complete']), key=lambda o: -c['submit'].get(o, 0))
    out = [f'| opcode | submitted | per s | poll armed | armed % | completed | res > 0 | res 0 | -EAGAIN | other < 0 |',
           '|---|---|---|---|---|---|---|---|---|---|']
    for op in ops:
        s, a, d = c['submit'].get(op, 0), c['poll_arm'].get(op, 0), c['complete'].get(op, {})
        other = ', '.join(f'{k[3:]}×{v}' for k, v in sorted(d.items()) if k.startswith('err')) or '0'
        out.append(f"| {op} | {s} | {s / secs:.0f} | {a} | {100.0 * a / s if s else 0:.1f} | "
                   f"{sum(v for k, v in d.items() if not k.startswith('err'))} | {d.get('ok', 0)} | "
                   f"{d.get('zero', 0)} | {d.get('EAGAIN', 0)} | {other} |")
    return '\n'.join(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--secs', type=float, default=1.0, help='traced seconds of load')
    ap.add_argument('--rate', type=int, default=0, help='blaster pps (0: as fast as it goes)')
    ap.add_argument('--size', type=int, default=64)
    ap.add_argument('--net-extra', default='', help='more --net keys, e.g. poll-us=auto,fixed-buffers=on')
    ap.add_argument('--buffer-mb', type=int, default=64, help='trace buffer per CPU')
    ap.add_argument('--out', default='bench/out/uring-trace')
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    cfg = dict(vmm='minivmm', backend='tap', queues=1, threads='pq', pin='off', engine='uring')
    if a.net_extra:
        for kv in a.net_extra.split(','):
            k, _, v = kv.partition('=')
            if k == 'poll-us':
                cfg['poll'] = v
            else:
                cfg.setdefault('extra_net', []).append(kv)
    warm = 0.3
    vm = VM(cfg, f'test=net-sink queues=1 secs={math.ceil(a.secs + warm + 15)}', os.path.join(a.out, 'vm.out'))
    inst = Instance(f'minivmm-uring-{os.getpid()}', a.buffer_mb * 1024)
    try:
        vm.ready('net-sink')
        resolve_guest('tap')
        bl = Blaster('tap', warm + a.secs + 0.2, size=a.size, flows=4, rate=a.rate)
        time.sleep(warm)
        s0 = vm.stats_now()
        inst.on(True)
        t0 = time.monotonic()
        time.sleep(a.secs)
        inst.on(False)
        secs = time.monotonic() - t0
        s1 = vm.stats_now()
        tids = {int(t) for t in os.listdir(f'/proc/{vm.pid}/task')}
        bj = bl.wait(a.secs + 30)
        time.sleep(0.2)
        stop_guest_and_wait(vm, 'tap', PORT, 15)
        lost = inst.lost()
        c = count(inst.lines(), tids)
    finally:
        vm.kill()
        inst.remove()
    g = guest_fields(vm.text(), r'net-sink done')
    rxf = (sum(q['rx_frames'] for q in s1['net'][0]['queues']) -
           sum(q['rx_frames'] for q in s0['net'][0]['queues'])) if s0 and s1 else None
    c.update(secs=secs, lost_events=lost, vmm_rx_frames=rxf, guest=g, blaster=dict(pps=bj['pps'], sent=bj['frames']),
             net=vm.argv[vm.argv.index('--net') + 1])
    with open(os.path.join(a.out, 'uring-trace.json'), 'w') as f:
        json.dump(c, f, indent=1)
    print(f'# io_uring under RX load: minivmm --net {c["net"]}\n')
    print(f'{secs:.2f} s traced, blaster {bj["pps"]:.0f} pps offered, minivmm delivered {rxf} frames to the guest '
          f'in the window ({rxf / secs:.0f}/s); {c["rings"]} ring(s) of minivmm, {c["events"]} io_uring events '
          'recorded in all' + (f', **{lost} events lost** (raise --buffer-mb or shorten --secs)' if lost else '')
          + '.\n')
    print(table(c, secs))
    print(f'\nReorder check under the same load (net-sink, whole run): rx {g.get("rx")} reorders {g.get("reorders")} '
          f'lost {g.get("lost")} bad {g.get("bad")} corrupt {g.get("corrupt")}'
          + ('' if g else ' — net-sink printed no counters: ' + ' | '.join(vm.text().strip().splitlines()[-2:])))
    print(f'\n(JSON: {os.path.join(a.out, "uring-trace.json")})')


if __name__ == '__main__':
    main()
