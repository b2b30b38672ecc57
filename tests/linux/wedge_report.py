#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""What a wedged outer guest is doing, for its log: run by li_run_outer
(tests/linux/images.sh) when the outer guest has printed nothing for
$LI_STALL seconds, before it is killed.

    wedge_report.py MONITOR_SOCKET PID OUTER_KERNEL_VERSION LOG [KALLSYMS]

(PID: QEMU's, or that of the timeout(1) that runs it.)

Prints '# wedge: ...' lines: how busy QEMU's threads are (spinning vs all
vCPUs halted); each outer vCPU's program counter, CPL, interrupt flag and
CR3, the counter as module:function+off (the module's address from the
log's 'OUTER: modules' line, its functions from the same .ko on this host)
or function+off (from KALLSYMS, the outer kernel's /proc/kallsyms text
symbols as li_outer_kallsyms in tests/linux/images.sh gets them; without
it, _text+off); then presses SysRq 9, l and w (allowed by
tests/linux/outer-init): if every CPU's backtrace and the blocked tasks then
show up in the log, the outer kernel still takes interrupts. A vCPU that was
running the inner guest (nested SVM) shows the inner guest's registers: its
CR3 differs from the other's, and its symbol means nothing."""
import bisect
import os
import re
import socket
import subprocess
import sys
import time


def hmp(sock, cmd):
    sock.sendall(cmd.encode() + b'\n')
    # The monitor echoes what it is sent, redrawing the line per character.
    return [l for l in read_prompt(sock) if not l.endswith(cmd)]


def read_prompt(sock, timeout=5.0):
    buf = b''
    end = time.monotonic() + timeout
    while not buf.endswith(b'(qemu) ') and time.monotonic() < end:
        sock.settimeout(max(0.05, end - time.monotonic()))
        try:
            chunk = sock.recv(65536)
        except socket.timeout:
            break
        if not chunk:
            break
        buf += chunk
    # HMP echoes with terminal escapes; keep the plain lines.
    text = re.sub(r'\x1b\[[0-9;]*[A-Za-z]', '', buf.decode(errors='replace'))
    return [l.strip() for l in text.replace('\r', '\n').split('\n') if l.strip() and '(qemu)' not in l]


def qemu_pid(pid):
    """pid itself if it is QEMU, else its first child (timeout runs QEMU)."""
    try:
        with open(f'/proc/{pid}/comm') as f:
            if f.read().startswith('qemu'):
                return pid
        with open(f'/proc/{pid}/task/{pid}/children') as f:
            kids = f.read().split()
        return int(kids[0]) if kids else pid
    except OSError:
        return pid


def cpu_ticks(pid):
    """utime + stime of process pid (all its threads), in clock ticks."""
    with open(f'/proc/{pid}/stat') as f:
        fields = f.read().rsplit(')', 1)[1].split()
    return int(fields[11]) + int(fields[12])


def module_text_symbols(kver, name):
    """(sorted offsets, names) of the .text functions of module name in
    /lib/modules/kver: its /proc/modules address is where .text starts."""
    path = None
    for root, _, files in os.walk(f'/lib/modules/{kver}/kernel'):
        for f in files:
            if f.endswith('.ko') and f[:-3].replace('-', '_') == name:
                path = os.path.join(root, f)
    if not path:
        return [], []
    try:
        sections = subprocess.run(['readelf', '-SW', path], capture_output=True, text=True).stdout
        idx = re.search(r'\[\s*(\d+)\]\s+\.text\s', sections)
        syms = subprocess.run(['readelf', '-sW', path], capture_output=True, text=True).stdout
    except OSError:
        return [], []
    if not idx:
        return [], []
    found = []
    for line in syms.splitlines():
        f = line.split()
        if len(f) >= 8 and f[3] == 'FUNC' and f[6] == idx.group(1):
            found.append((int(f[1], 16), f[7]))
    found.sort()
    return [a for a, _ in found], [n for _, n in found]


class Symbolizer:
    """Outer kernel addresses as function+off (or _text+off) or
    module:function+off, from the log's 'OUTER: init ... text=' and
    'OUTER: modules ...' lines and the kernel's own symbols."""

    def __init__(self, log, kver, kallsyms=None):
        self.text, self.modules, self.kver, self.cache = None, [], kver, {}
        self.koffs, self.knames = [], []
        try:
            with open(log, errors='replace') as f:
                t = f.read()
        except OSError:
            return
        m = re.findall(r'OUTER: init .* text=0x([0-9a-f]+)', t)
        self.text = int(m[-1], 16) if m else None
        m = re.findall(r'OUTER: modules (.*)', t)
        for word in (m[-1].split() if m else []):
            name, _, rest = word.partition('=')
            addr, _, size = rest.partition(',')
            try:
                self.modules.append((name, int(addr, 16), int(size)))
            except ValueError:
                pass
        self._load_kallsyms(kallsyms)

    def _load_kallsyms(self, path):
        try:
            with open(path) as f:
                syms = sorted((int(a, 16), n) for a, _, n in (l.split()[:3] for l in f if len(l.split()) >= 3))
        except (OSError, TypeError, ValueError):
            return
        base = next((a for a, n in syms if n == '_text'), None)
        if base is not None:
            self.koffs = [a - base for a, _ in syms]
            self.knames = [n for _, n in syms]

    def __call__(self, pc):
        for name, base, size in self.modules:
            if base <= pc < base + size:
                if name not in self.cache:
                    self.cache[name] = module_text_symbols(self.kver, name)
                offs, names = self.cache[name]
                i = bisect.bisect_right(offs, pc - base) - 1
                if i >= 0:
                    return f' {name}:{names[i]}+0x{pc - base - offs[i]:x}'
                return f' {name}+0x{pc - base:x}'
        if self.text is not None and 0 <= pc - self.text < 0x4000000:
            off = pc - self.text
            i = bisect.bisect_right(self.koffs, off) - 1
            if i >= 0:
                return f' {self.knames[i]}+0x{off - self.koffs[i]:x}'
            return f' _text+0x{off:x}'
        return ''


def vcpu_state(sock, n, symbolize):
    """One line on vCPU n: rip (as a symbol), CPL, interrupts, HLT, CR3."""
    hmp(sock, f'cpu {n}')
    regs = ' '.join(hmp(sock, 'info registers'))
    field = lambda name, pat=r'([0-9a-f]+)': (re.search(name + '=' + pat, regs) or [None, None])[1]
    rip = field('RIP')
    if rip is None:
        return 'no registers'
    pc, rfl = int(rip, 16), field('RFL')
    intr = 'on' if rfl and int(rfl, 16) & 0x200 else 'off'
    cpl, hlt, cr3 = field('CPL', r'(\d)') or '?', field('HLT', r'(\d)') or '?', field('CR3') or '?'
    return f'rip 0x{pc:x}{symbolize(pc)} CPL {cpl} interrupts {intr} HLT {hlt} CR3 {cr3}'


def main():
    mon, kver, log = sys.argv[1], sys.argv[3], sys.argv[4]
    pid = qemu_pid(int(sys.argv[2]))
    out = []
    try:
        t0 = cpu_ticks(pid)
        time.sleep(2)
        busy = (cpu_ticks(pid) - t0) / 2.0 / 100.0   # cores, assuming USER_HZ 100
        out.append(f'# wedge: QEMU used {busy:.2f} cores over 2 s '
                   f'({"its vCPUs run (spinning)" if busy > 0.3 else "mostly idle: the outer vCPUs wait or halt"})')
    except (OSError, IndexError, ValueError) as e:
        out.append(f'# wedge: no CPU figure for QEMU ({e})')
    symbolize = Symbolizer(log, kver, sys.argv[5] if len(sys.argv) > 5 else None)
    try:
        s = socket.socket(socket.AF_UNIX)
        s.connect(mon)
        read_prompt(s)
        cpus = hmp(s, 'info cpus')
        out += [f'# wedge: {line}' for line in cpus]
        ncpu = len([l for l in cpus if 'CPU #' in l])
        # Four samples a quarter second apart: a vCPU spinning in one loop
        # shows the same few addresses every time.
        for sample in range(4):
            for n in range(ncpu):
                out.append(f'# wedge: sample {sample} cpu {n}: {vcpu_state(s, n, symbolize)}')
            time.sleep(0.25)
        # Last, SysRq through the keyboard: console loglevel 9 (the outer
        # init keeps it at 1), every CPU's backtrace, blocked tasks.
        out.append('# wedge: SysRq 9, l, w sent: backtraces below mean the outer kernel still takes interrupts')
        print('\n'.join(out), flush=True)
        out = []
        for key in '9lw':
            hmp(s, f'sendkey alt-sysrq-{key}')
            time.sleep(2)
        s.close()
    except OSError as e:
        out.append(f'# wedge: QEMU monitor {mon}: {e}')
    if out:
        print('\n'.join(out), flush=True)


if __name__ == '__main__':
    main()
