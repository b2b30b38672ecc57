#!/usr/bin/env python3
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
    return os.cpu_count() or 1


def loadavg():
    return ' '.join(_read('/proc/loadavg').split()[:3])


def describe():
    """A dict of what was detected, for meta data and CSV."""
    return dict(kvm=kvm_flavour(), nested=nested(), hypervisor=hypervisor_vendor(), cpu=cpu_model(),
                cores=cores(), kernel=os.uname().release, node=os.uname().nodename, load=loadavg())


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
