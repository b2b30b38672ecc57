# SPDX-License-Identifier: Apache-2.0
"""What every benchmark module shares: paths, the namespace's addresses, logging,
file reading, and how numbers are summarised and printed."""
import os
import statistics
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MAC = '52:54:00:12:34:56'          # QEMU's default; minivmm gets the same so ARP caches stay valid
PORT = 5001
# bench/run.sh's namespace: bridge br0 10.0.0.1 for taps (guest 10.0.0.2), veth vm0/vh0 with
# vh0 10.0.1.1 (guest 10.0.1.2 behind vm0) for the packet and xdp backends.
BRIDGE, VETH_VM, VETH_HOST = 'br0', 'vm0', 'vh0'
TAP = 't0'


def tool(name):
    return os.path.join(ROOT, 'build', name)


# The minivmm binary of each build a row can name (cfg 'build'): this tree's, and
# with bench/run.sh --baseline the baseline revision's (bench/baseline.sh).
MINIVMM = {'head': tool('minivmm')}


def minivmm_of(cfg):
    return MINIVMM[cfg.get('build', 'head')]


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ''


def mac_of(dev):
    return read(f'/sys/class/net/{dev}/address').strip()


def host_ip(backend):
    return '10.0.0.1' if backend == 'tap' else '10.0.1.1'


def guest_ip(backend):
    return '10.0.0.2' if backend == 'tap' else '10.0.1.2'


def med(vals):
    v = [x for x in vals if x is not None]
    return (statistics.median(v), min(v), max(v)) if v else (None, None, None)


def fmt(x, digits=None):
    if x is None:
        return '-'
    if isinstance(x, str):
        return x
    if digits is not None:
        return f'{x:.{digits}f}'
    ax = abs(x)
    if ax >= 100000:
        return f'{x/1e6:.3f}M'
    if ax >= 1000:
        return f'{x/1e3:.1f}k'
    if ax >= 10:
        return f'{x:.0f}'
    return f'{x:.2f}'


def fmr(t):
    m, lo, hi = t
    if m is None:
        return '-'
    return f'{fmt(m)} [{fmt(lo)}–{fmt(hi)}]'


def pct(x):
    return '-' if x is None else f'{100 * x:.0f} %'


def ratio(a, b):
    return a / b if a is not None and b else None


# ---------------------------------------------------------------- configurations
# The start-up rows: minivmm as it starts by default (a split irqchip),
# minivmm with KVM's whole irqchip and PIT (see docs/benchmarks.md,
# "Start-up"), QEMU.
BOOT_VMMS = ('minivmm', 'minivmm --irqchip=kernel', 'qemu')


BASE = dict(vmm='minivmm', backend='tap', threads='pq', pin='off', engine='uring')
QEMU = dict(vmm='qemu', backend='tap', threads='-', pin='off', engine='-')


def cfg_label(c):
    """One line naming a configuration; rows are grouped by it."""
    if c['vmm'] == 'host':
        return f"host {c['mode']}"
    if c['vmm'] == 'qemu':
        s = f"qemu tap {c['queues']}q"
    else:
        b = c['backend'] + ('/' + c['rx'] if c.get('rx') else '')
        s = f"minivmm {b} {c['queues']}q thr={c['threads']} pin={c['pin']} {c['engine']}"
        if c.get('poll'):
            s += f" poll={c['poll']}"
    if 'rate' in c:
        s += ' @' + (f"{c['rate'] // 1000}k" if c['rate'] else 'max')
    if c.get('guest'):
        s += f" guest={c['guest']}"
    if c.get('build') == 'base':
        s += ' [baseline]'
    return s
