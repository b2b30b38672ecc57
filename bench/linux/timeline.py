#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Where a nested inner boot's time goes, per VMM: phases of the inner kernel's
own log (printk timestamps) between the VMM's start and the inner /init.

    bench/linux/timeline.py SERIAL_LOG [--md]

SERIAL_LOG is bench/linux/run.sh --boot-only's serial.log, run with
--boot-args printk.time=1,bench.dmesg=1 --bootlog all: every boot's stamped
console (LBOOTLOG lines), each with the inner kernel's log dumped by the inner
init after its first line (BOOT-DMESG-BEGIN ... -END) and the "BOOT-KMSG" line
it logged right after "BOOT-UPTIME": that line's kernel timestamp and the
moment bootstamp saw "BOOT-UPTIME" date the kernel clock's 0 on the VMM's
clock. Before it: the VMM's start, its firmware, the kernel's load and
decompression. After it: the kernel's phases by their log lines, as the
kernel's clock (kvm-clock) measured them. Console bytes per phase are those
the console printed with timestamps in the phase (0 with `quiet`).

Prints, per phase, the median [min-max] over boots (ms) for each VMM and
console kind.

Caveat (nested): the inner kernel's clock is kvm-clock without a stable TSC
(the kernel says "Marking TSC unstable due to TSCs unsynchronized"), and a
line is stamped by the vCPU that logged it: lines from the second vCPU (the
initramfs unpack runs in a kworker) can be off by up to seconds, which moves
time between "VMM start -> kernel clock 0" and the later phases of that boot.
The totals are the VMM's wall clock (bootstamp) and do not have this error;
compare the phases by their medians, over many boots.
"""
import argparse
import re
import statistics
import sys
from collections import defaultdict

# (name, first line of the phase's end, what drives it); a phase runs from the
# previous phase's end. Regexes on the kernel log's message text.
PHASES = [
    ('kernel clock 0 → `Memory:`', r'^Memory: ', 'setup_arch: e820, MP table or ACPI, memblock, page tables, per-CPU areas'),
    ('→ console registered', r'^printk: console \[ttyS0\] enabled',
     'scheduler, RCU, IRQs; the console registers and prints the log so far'),
    ('→ `Calibrating delay loop`', r'^Calibrating delay loop',
     'APIC and IOAPIC set-up, timer check, TSC (kvm-clock gives its rate: no calibration)'),
    ('→ `smp: Bringing up secondary CPUs`', r'^smp: Bringing up secondary CPUs',
     'FPU/XSAVE set-up (the nested XSAVE warning), alternatives, first initcalls'),
    ('→ `smp: Brought up`', r'^smp: Brought up', 'SMP bring-up: INIT/SIPI, the AP starts, TSC sync check'),
    ('→ `Unpacking initramfs...`', r'^Unpacking initramfs', 'core and fs initcalls (net core, clocksource switch)'),
    ('→ `Run /init as init process`', r'^Run /init as init process',
     'device initcalls (virtio-mmio probe, 8250 probe, IPv6) while the initramfs unpacks, freeing init memory'),
    ('→ the inner init\'s first line', r'^BOOT-KMSG', 'exec of /init (busybox sh), its first commands'),
]
PROBES = [('initramfs unpack', r'^Unpacking initramfs', r'^Freeing initrd memory'),
          ('virtio-mmio probe', r'^virtio-mmio: Registering device', r'^(NET: Registered PF_INET6|Serial: 8250)'),
          ('8250 probe', r'^Serial: 8250/16550 driver', r'^serial8250: ttyS0'),
          ('XSAVE warning', r'^------------\[ cut here \]', r'^---\[ end trace')]

TS = re.compile(r'^\[\s*(\d+)\.(\d+)\]\s?(.*)$')


def parse(log):
    boots = defaultdict(list)   # (vmm, console, boot) -> [(wall_ms, text)]
    head = re.compile(r'LBOOTLOG vmm=(\S+) console=(\S+) boot=(\S+) \| +([0-9.]+) ?(.*)$')
    with open(log, 'rb') as f:
        for raw in f:
            line = raw.decode('utf-8', 'replace').rstrip('\r\n')
            m = head.search(line)
            if m:
                boots[(m.group(1), m.group(2), m.group(3))].append((float(m.group(4)), m.group(5)))
    return boots


def analyse(lines):
    """One boot: {phase: ms}, {phase: console bytes}, pre-kernel ms, or None."""
    in_dump = False
    klog = []           # (kernel ms, text) from the dmesg dump
    printed = []        # (kernel ms, bytes) printed on the console before /init
    wall_uptime = None
    seen_init = False
    for wall, text in lines:
        if text == 'BOOT-DMESG-BEGIN':
            in_dump = True
            continue
        if text == 'BOOT-DMESG-END':
            in_dump = False
            continue
        if text.startswith('BOOT-INIT'):
            seen_init = True
        if text.startswith('BOOT-UPTIME') and wall_uptime is None:
            wall_uptime = wall
        m = TS.match(text)
        if not m:
            continue
        t = int(m.group(1)) * 1000 + int(m.group(2)) / 1000
        if in_dump:
            klog.append((t, m.group(3)))
        elif not seen_init:
            printed.append((t, len(text) + 2))   # "\r\n"
    kmsg = next((t for t, s in klog if s.startswith('BOOT-KMSG')), None)
    if kmsg is None or wall_uptime is None:
        return None
    out, nbytes = {}, {}
    start = 0.0
    for name, rx, _ in PHASES:
        end = next((t for t, s in klog if re.search(rx, s)), None)
        if end is None:
            out[name] = None
            continue
        out[name] = end - start
        nbytes[name] = sum(b for t, b in printed if start <= t < end)
        start = end
    for name, a, b in PROBES:
        ta = next((t for t, s in klog if re.search(a, s)), None)
        tb = next((t for t, s in klog if re.search(b, s) and (ta is None or t >= ta)), None)
        out[name] = tb - ta if ta is not None and tb is not None else None
    pre = wall_uptime - kmsg
    return out, nbytes, pre, wall_uptime


def med(v):
    v = [x for x in v if x is not None]
    return statistics.median(v) if v else None


def fmt(x):
    return '-' if x is None else f'{x:.0f}'


def cell(v):
    """median [min-max] of the values that are there."""
    v = [x for x in v if x is not None]
    if not v:
        return '-'
    return f'{statistics.median(v):.0f} [{min(v):.0f}–{max(v):.0f}]'


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('log')
    a = ap.parse_args()
    boots = parse(a.log)
    res = defaultdict(list)
    for (vmm, console, _), lines in boots.items():
        r = analyse(lines)
        if r:
            res[(vmm, console)].append(r)
    if not res:
        print('timeline: no boot with a dmesg dump (run with --boot-args printk.time=1,bench.dmesg=1 --bootlog all)',
              file=sys.stderr)
        return 1
    cols = sorted(res, key=lambda k: (k[1] != 'full', k[0] != 'minivmm', k[0] != 'qemu', k))
    hdr = ['phase'] + [f'{v} {c} (n={len(res[(v, c)])})' for v, c in cols] + \
          [f'{v} {c} console B' for v, c in cols if c == 'full'] + ['what drives it']
    print('| ' + ' | '.join(hdr) + ' |')
    print('|' + '---|' * len(hdr))
    rows = [('VMM start → kernel clock 0', 'pre', 'the VMM (and its firmware), loading the kernel and initrd, the decompressor')]
    rows += [(n, n, why) for n, _, why in PHASES]
    rows += [('VMM start → the inner init\'s first line', 'total', '')]
    for label, key, why in rows:
        cells = [label]
        for k in cols:
            if key == 'pre':
                cells.append(cell([r[2] for r in res[k]]))
            elif key == 'total':
                cells.append(cell([r[3] for r in res[k]]))
            else:
                cells.append(cell([r[0].get(key) for r in res[k]]))
        for k in cols:
            if k[1] == 'full':
                cells.append(fmt(med([r[1].get(key) for r in res[k]])) if key not in ('pre', 'total') else '')
        cells.append(why)
        print('| ' + ' | '.join(cells) + ' |')
    print()
    print('Inside those phases (kernel clock, ms):')
    print()
    print('| span | ' + ' | '.join(f'{v} {c}' for v, c in cols) + ' |')
    print('|---|' + '---|' * len(cols))
    for name, _, _ in PROBES:
        print(f'| {name} | ' + ' | '.join(cell([r[0].get(name) for r in res[k]]) for k in cols) + ' |')
    return 0


if __name__ == '__main__':
    sys.exit(main())
