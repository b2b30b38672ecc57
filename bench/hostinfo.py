#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""What kind of host a measurement ran on, detected, never assumed.

Used by bench/bench.py (the report's host line), bench/check.py (which
re-detects and compares) and bench/linux/report.py. Run it alone to see the
line for this machine:  python3 bench/hostinfo.py
"""
import os
import re
import subprocess


def _read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ''


def kvm_flavour():
    """Which KVM module serves /dev/kvm: 'PVM', 'VMX' (kvm-intel), 'SVM' (kvm-amd),
    or 'none' when there is no /dev/kvm."""
    if not os.path.exists('/dev/kvm'):
        return 'none'
    modules = set(os.listdir('/sys/module')) if os.path.isdir('/sys/module') else set()
    if 'kvm_pvm' in modules:
        return 'PVM'
    if 'kvm_intel' in modules:
        return 'VMX'
    if 'kvm_amd' in modules:
        return 'SVM'
    flags = cpu_flags()
    if 'vmx' in flags:
        return 'VMX'
    if 'svm' in flags:
        return 'SVM'
    return 'unknown'


def cpu_flags():
    m = re.search(r'^flags\s*:\s*(.*)$', _read('/proc/cpuinfo'), re.M)
    return set(m.group(1).split()) if m else set()


def nested():
    """True when this host is itself a virtual machine (CPUID hypervisor bit)."""
    return 'hypervisor' in cpu_flags()


def hypervisor_vendor():
    """The hypervisor under this host, as the kernel names it ('KVM', ...), or ''."""
    t = _read('/sys/hypervisor/type').strip()
    if t:
        return t
    # The kernel's boot line; dmesg may be restricted to root.
    try:
        out = subprocess.run(['dmesg'], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                             timeout=5).stdout
    except (OSError, subprocess.SubprocessError):
        out = ''
    m = re.search(r'Hypervisor detected: (\S+)', out)
    return m.group(1) if m else ''


def cpu_model():
    m = re.search(r'^model name\s*:\s*(.*)$', _read('/proc/cpuinfo'), re.M)
    return m.group(1).strip() if m else 'unknown CPU'


def cores():
    """CPUs this process may run on (what a benchmark can use), at least 1."""
    return len(online_cpus()) or 1


def _cpu_list(text):
    cpus = set()
    for part in text.strip().split(','):
        if not part:
            continue
        lo, _, hi = part.partition('-')
        cpus.update(range(int(lo), int(hi or lo) + 1))
    return cpus


def online_cpus():
    """Sorted CPU numbers that are online and in this process's affinity mask
    (sched_getaffinity ∩ /sys/devices/system/cpu/online): where vCPUs, workers
    and the host peer may be placed. Never assumes CPUs are numbered 0..n-1."""
    cpus = set(os.sched_getaffinity(0))
    online = _read('/sys/devices/system/cpu/online')
    if online.strip():
        try:
            cpus &= _cpu_list(online)
        except ValueError:
            pass
    return sorted(cpus) or [0]


MAX_GUEST_QUEUES = 8    # the test guest polls one queue per vCPU, at most 8 (docs/testguest.md)


def queue_counts(n=None):
    """Queue-pair counts a benchmark runs: powers of two up to cores/2 (each
    pair wants a vCPU and a worker core), at least 1 and 2 so even a 2-core
    host shows the oversubscribed 2-queue case, at most MAX_GUEST_QUEUES."""
    n = cores() if n is None else n
    top = min(MAX_GUEST_QUEUES, max(2, n // 2))
    out, q = [], 1
    while q <= top:
        out.append(q)
        q *= 2
    return out


def loadavg():
    return ' '.join(_read('/proc/loadavg').split()[:3])


def describe():
    """A dict of what was detected, for meta data and CSV."""
    return dict(kvm=kvm_flavour(), nested=nested(), hypervisor=hypervisor_vendor(), cpu=cpu_model(),
                cores=cores(), cpus=online_cpus(), kernel=os.uname().release, node=os.uname().nodename,
                load=loadavg())


KVM_NOTES = {
    'PVM': 'pagetable-based virtualization: guest CPL3 runs at native speed, exits and interrupts are '
           'expensive, guest kernel code is emulated',
    'VMX': 'Intel VT-x (kvm-intel)',
    'SVM': 'AMD-V (kvm-amd)',
    'none': 'no /dev/kvm',
    'unknown': 'KVM module not recognised',
}


def host_line(d=None):
    """One sentence describing the host, e.g.
    '/dev/kvm: PVM (…), nested (this host is a KVM guest); 2 cores (AMD EPYC); kernel 6.18.44'."""
    d = d or describe()
    where = 'nested (this host is itself a %s guest)' % (d['hypervisor'] or 'virtual machine') \
        if d['nested'] else 'bare metal'
    return '/dev/kvm: %s (%s), %s; %d cores (%s); kernel %s' % (
        d['kvm'], KVM_NOTES.get(d['kvm'], ''), where, d['cores'], d['cpu'], d['kernel'])


if __name__ == '__main__':
    print(host_line())
    print('load average:', loadavg())
    print('online CPUs usable here:', ','.join(map(str, online_cpus())), '; bench queue counts:',
          ' '.join(map(str, queue_counts())))
