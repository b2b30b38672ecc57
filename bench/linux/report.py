#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Turn the serial log of bench/linux/run.sh's outer guest into results.md and runs.csv.

Reads the outer init's lines
  LBENCH vmm=V q=Q rep=R test=T size=S sess=N rate=X vmm_cpu=P guest_cpu=G secs=W
  LBENCH-FAIL vmm=V q=Q rep=R test=T ... reason=TEXT
and prints seed-shaped tables (rows size x sessions, column groups 1q/2q, minivmm
and QEMU side by side with their ratio), every figure a median [min-max] over the
rounds. norm = rate / outer-guest CPU busy % (100 = one outer vCPU), per run,
then the median.
"""
import argparse
import csv
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import hostinfo  # noqa: E402
from common import fmt, med  # noqa: E402

TESTS = [('rr', 'TCP_RR', 'transactions/s'), ('crr', 'TCP_CRR', 'transactions/s'),
         ('stream', 'TCP_STREAM guest receiving (iperf3 -R)', 'Mbit/s'),
         ('maerts', 'TCP_MAERTS guest sending (iperf3)', 'Mbit/s')]
VMMS = ['minivmm', 'qemu']


def fmr(t, n_runs):
    m, lo, hi = t
    if m is None:
        return '-'
    return fmt(m) if n_runs == 1 else f'{fmt(m)} [{fmt(lo)}–{fmt(hi)}]'


def fmr_int(t, n_runs):
    """median [min-max] as whole numbers (ms, bytes, counts)."""
    m, lo, hi = t
    if m is None:
        return '-'
    return f'{m:.0f}' if n_runs == 1 else f'{m:.0f} [{lo:.0f}–{hi:.0f}]'


def ratio(a, b):
    return f'×{a / b:.2f}' if a is not None and b else '-'


def num(d, k):
    try:
        return float(d[k])
    except (KeyError, ValueError):
        return None


def parse_boot(body, boots, fails):
    """LBOOT vmm=V console=C boot=I q=Q status=S first_ms=F mark_ms=M exit_ms=E ... init_uptime=U"""
    if body.startswith('LBOOT-FAIL'):
        d = dict(re.findall(r'(\w+)=(\S+)', body.split('reason=', 1)[0]))
        d['reason'] = body.split('reason=', 1)[1] if 'reason=' in body else '?'
        d.setdefault('test', 'boot')
        fails.append(d)
        return
    d = dict(re.findall(r'(\w+)=(\S+)', body))
    b = {k: num(d, k) for k in ('first_ms', 'mark_ms', 'exit_ms', 'init_uptime', 'kclock0_ms', 'mark_bytes',
                                'kvm_exits', 'kvm_io_exits', 'kvm_mmio_exits', 'kvm_halt_exits')}
    b.update(vmm=d.get('vmm', '?'), console=d.get('console', '?'), status=d.get('status', '?'),
             boot=d.get('boot', '?'))
    if b['mark_ms'] is None or b['status'] != '0' or 'timeout' in d:
        fails.append(dict(vmm=b['vmm'], test='boot', rep=b['boot'],
                          reason=f"console={b['console']}: no /init mark or bad exit "
                                 f"(status {b['status']}{', timeout' if 'timeout' in d else ''}; "
                                 f"{d.get('lines', '?')} console lines)"))
        return
    # kclock0_ms (printk.time=1 only): when the kernel's printk clock (sched_clock
    # on kvm-clock) read 0, early in setup_arch after the decompressor; before
    # it: the VMM, its firmware, the kernel's load and decompression. (The
    # inner /proc/uptime is no substitute: it runs on jiffies early in boot and
    # falls behind when the nested vCPU misses ticks.)
    b['kernel_ms'] = b['mark_ms'] - b['kclock0_ms'] if b['kclock0_ms'] is not None else None
    boots.append(b)


BOOT_COLS = [('first_ms', '→ first kernel line'), ('mark_ms', '→ /init'),
             ('kclock0_ms', '→ kernel clock 0'), ('kernel_ms', 'kernel clock 0 → /init'),
             ('exit_ms', '→ VMM exit'), ('mark_bytes', 'console bytes to /init'),
             ('kvm_exits', 'KVM exits to /init'), ('kvm_io_exits', 'of them port I/O')]


def boot_table(boots, fails, vmms):
    L = []
    consoles = [c for c in ('full', 'quiet') if any(b['console'] == c for b in boots)]
    consoles += sorted({b['console'] for b in boots} - set(consoles))
    L.append('### Boot: VMM start → inner /init, ms')
    L.append('')
    L.append('| console | VMM | boots | ' + ' | '.join(t for _, t in BOOT_COLS) + ' |')
    L.append('|' + '---|' * (3 + len(BOOT_COLS)))
    ratios = []
    for c in consoles:
        meds = {}
        for v in vmms:
            sel = [b for b in boots if b['console'] == c and b['vmm'] == v]
            if not sel:
                continue
            cells = []
            meds[v] = {}
            for k, _ in BOOT_COLS:
                vals = [b[k] for b in sel if b[k] is not None]
                t = med(vals)
                meds[v][k] = t[0]
                cells.append(fmr_int(t, len(vals)))
            L.append(f'| {c} | {v} | {len(sel)} | ' + ' | '.join(cells) + ' |')
        base = meds.get('qemu')
        for v in meds:
            if v == 'qemu' or not base:
                continue
            L.append(f'| {c} | **{v}/QEMU** | | ' + ' | '.join(
                f'**{ratio(meds[v][k], base[k])}**' if k in ('first_ms', 'mark_ms') else ratio(meds[v][k], base[k])
                for k, _ in BOOT_COLS) + ' |')
            if meds[v]['mark_ms'] and base['mark_ms']:
                ratios.append(f"{c} console: {v}/QEMU {meds[v]['mark_ms'] / base['mark_ms']:.2f}")
    L.append('')
    if ratios:
        L.append('Boot-time ratio (VMM start → /init, medians; < 1: minivmm faster): ' + '; '.join(ratios) + '.')
        L.append('')
    return L


def parse(log):
    kv = re.compile(r'(\w+)=(\S+)')
    runs, fails, info = [], [], {}
    boots = info.setdefault('boots', [])
    with open(log, 'rb') as f:
        for raw in f:
            line = raw.decode('utf-8', 'replace').replace('\r', '').rstrip('\n')
            j = line.find('LBOOT')
            if j >= 0 and not line[j:].startswith('LBOOTLOG'):
                parse_boot(line[j:], boots, fails)
                continue
            i = line.find('LBENCH')
            if i >= 0:
                body = line[i:]
                if body.startswith('LBENCH-FAIL'):
                    reason = body.split('reason=', 1)[1] if 'reason=' in body else '?'
                    d = dict(kv.findall(body.split('reason=', 1)[0]))
                    d['reason'] = reason
                    fails.append(d)
                elif body.startswith('LBENCH '):
                    d = dict(kv.findall(body))
                    try:
                        r = dict(vmm=d['vmm'], q=int(d['q']), rep=int(d['rep']), test=d['test'],
                                 size=int(d['size']), sess=int(d['sess']), rate=float(d['rate']),
                                 vmm_cpu=float(d['vmm_cpu']), guest_cpu=float(d['guest_cpu']),
                                 secs=float(d['secs']))
                    except (KeyError, ValueError):
                        fails.append(dict(d, reason='unparsable line: ' + body[:120]))
                        continue
                    r['norm'] = r['rate'] / r['guest_cpu'] if r['guest_cpu'] > 0 else None
                    r['per_vmm_cpu'] = r['rate'] / r['vmm_cpu'] if r['vmm_cpu'] > 0 else None
                    runs.append(r)
                continue
            m = re.search(r'OUTER: (minivmm|qemu) version: (.*)', line)
            if m:
                info[m.group(1)] = m.group(2).strip()
            m = re.search(r'OUTER: exit (vmm=\S+ q=\S+ rep=\S+ status=\S+ seconds=\S+)', line)
            if m:
                info.setdefault('exits', []).append(m.group(1))
            if 'OUTER: kvm ready' in line:
                info['outer_boots'] = info.get('outer_boots', 0) + 1
    return runs, fails, info


def write_boot_report(a, fails, info):
    boots = info['boots']
    vmms = [v for v in VMMS if any(b['vmm'] == v for b in boots)]
    vmms += sorted({b['vmm'] for b in boots} - set(vmms))
    L = ['# minivmm Linux guest boot time, nested (boot-only mode)', '']
    L.append('- **Absolute figures are emulated**: the outer guest is Debian 6.1 under QEMU **TCG** '
             '(`-accel tcg -cpu max -smp 2`, SVM exposed, kvm-amd inside) on this host (' + hostinfo.host_line() +
             '); the inner Linux boots under minivmm or QEMU microvm *inside* it. Only the **minivmm/QEMU ratios** '
             '(same outer guest, boots alternating, odd boots QEMU first) carry over.')
    L.append(f"- minivmm: `{info.get('minivmm', '?')}` `--cpus 2 --mem 256M --net tap=mtap0,queues=1`. "
             f"QEMU: `{info.get('qemu', '?')}` `-M microvm,x-option-roms=off,rtc=off,acpi=off -enable-kvm -cpu host "
             "-smp 2 -m 256 -device i8042 -netdev tap,ifname=mtap0,vhost=off -device virtio-net-device` "
             "(firmware: qboot). Same inner bzImage (guest-images/linux, tinyconfig 6.1, LZ4) and initramfs "
             "(the TCP benchmark's, ~10 MiB uncompressed), inner cmdline `console=ttyS0 reboot=k panic=-1 "
             "bench.boot=1` (+ `quiet` for the quiet rows" + (f", + `{a.boot_args}`" if a.boot_args else '') + ').')
    L.append('- Each boot runs under bench/linux/bootstamp: the VMM\'s console on a pipe, every line stamped with the '
             'ms since just before the exec. **→ /init**: the inner init\'s first line (`BOOT-INIT`, its first '
             'action). **→ first kernel line**: the first console line that is not the VMM\'s own (with the full '
             'console `Linux version ...`, printed when the console registers, replaying the log buffer; with '
             '`quiet` usually the /init line itself). **→ kernel clock 0** (only with `printk.time=1` in --boot-args): '
             'when the kernel\'s printk clock read 0 (smallest line stamp minus its printk time), early in setup_arch: '
             'VMM start-up, firmware, kernel load and decompression come before it. **KVM exits**: the VM\'s counters in the outer '
             'kernel\'s debugfs, read at the /init line. Then the inner init resets (`reboot -f`, i8042).')
    L.append(f'- Each figure: median [min–max] over the boots. Outer guest emulated by {a.outer}. Host load before the run: {a.load}. '
             f'Build {a.build_secs} s, outer run {a.run_secs} s ({info.get("outer_boots", 0)} outer boot(s)).')
    L.append('')
    L += boot_table(boots, fails, vmms)
    if fails:
        L.append('### Failures')
        L.append('')
        for d in fails:
            L.append(f"- {d.get('vmm', '?')} boot {d.get('rep', d.get('boot', '?'))}: {d['reason']}")
        L.append('')
    if not boots:
        L.append('**No results**: the outer guest produced no LBOOT line (see serial.log).')
        L.append('')
    with open(os.path.join(a.out, 'results.md'), 'w') as f:
        f.write('\n'.join(L))
    with open(os.path.join(a.out, 'boots.csv'), 'w', newline='') as f:
        w = csv.writer(f)
        keys = ['vmm', 'console', 'boot', 'status'] + [k for k, _ in BOOT_COLS] + ['init_uptime']
        w.writerow(keys)
        for b in boots:
            w.writerow(['' if b.get(k) is None else b[k] for k in keys])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--mode', default='quick')
    ap.add_argument('--rounds', type=int, default=1)
    ap.add_argument('--secs', default='?')
    ap.add_argument('--tests', default='')
    ap.add_argument('--build-secs', default='?')
    ap.add_argument('--run-secs', default='?')
    ap.add_argument('--load', default='?')
    ap.add_argument('--boot-args', default='')
    ap.add_argument('--outer', default='?', help='the outer emulator, as its --version names it')
    ap.add_argument('log')
    ap.add_argument('out')
    a = ap.parse_args()
    runs, fails, info = parse(a.log)

    with open(os.path.join(a.out, 'runs.csv'), 'w', newline='') as f:
        w = csv.writer(f)
        w.writerow(['vmm', 'queues', 'round', 'test', 'size', 'sessions', 'rate', 'unit', 'vmm_cpu_pct',
                    'outer_cpu_pct', 'norm', 'rate_per_vmm_cpu_pct', 'window_s'])
        units = {t: u for t, _, u in TESTS}
        for r in runs:
            w.writerow([r['vmm'], r['q'], r['rep'], r['test'], r['size'], r['sess'], r['rate'],
                        units.get(r['test'], '?'), r['vmm_cpu'], r['guest_cpu'],
                        '' if r['norm'] is None else f"{r['norm']:.4g}",
                        '' if r['per_vmm_cpu'] is None else f"{r['per_vmm_cpu']:.4g}", r['secs']])

    if a.mode == 'boot':
        write_boot_report(a, fails, info)
        return
    qs = sorted({r['q'] for r in runs}) or [1, 2]
    nr = a.rounds
    L = []
    L.append(f'# minivmm Linux guest TCP benchmark, nested ({a.mode} mode)')
    L.append('')
    L.append('- **Absolute figures are emulated**: the outer guest is Debian 6.1 under QEMU **TCG** (`-accel tcg -cpu max '
             '-smp 2`, SVM exposed, kvm-amd inside) on this host (' + hostinfo.host_line() + '); the inner Linux runs under minivmm or QEMU '
             'microvm *inside* it. Only the **minivmm/QEMU ratios** (same outer guest, same run, alternating boots) '
             'carry over; even those swing between runs (see min–max).')
    L.append(f"- minivmm: `{info.get('minivmm', '?')}` `--cpus 2 --mem 256M --net tap=mtap0,queues=Q`. "
             f"QEMU: `{info.get('qemu', '?')}` `-M microvm,acpi=off -enable-kvm -cpu host -smp 2 -m 256 "
             "-netdev tap,ifname=mtap0,vhost=off,queues=Q -device virtio-net-device[,mq=on]` (userspace virtio-net). "
             "Same inner kernel (guest-images/linux, tinyconfig 6.1) and initramfs, stock virtio_net, "
             "`ethtool -L eth0 combined Q`.")
    L.append(f'- Servers in the outer guest on the tap mtap0 (10.0.2.1): iperf3 -s (ports 5201–5202), rrbench server '
             f'(port 6000, 2 epoll threads). Clients in the inner guest (10.0.2.2), session/stream i pinned to '
             f'inner CPU i mod 2. {nr} round(s) × queues {"/".join(map(str, qs))} × {{minivmm, QEMU}}: one outer boot per '
             f'(round, queue count) in which both VMMs boot the inner guest in turn (odd rounds QEMU first), all tests '
             f'in each inner boot; {a.secs} s window per test.')
    med_word = 'median of %d runs [min–max]' % nr if nr > 1 else 'a single run (quick mode: no min–max)'
    L.append(f'- Each figure: {med_word}. TCP_STREAM/MAERTS: iperf3 `-l SIZE`, sessions = parallel iperf3 '
             'clients, Mbit/s summed over receivers. TCP_RR: SESSIONS persistent connections, SIZE bytes request → '
             'SIZE bytes response; TCP_CRR: connect, request, response, close; transactions/s summed.')
    L.append('- **norm = rate per outer-guest CPU-percent spent**: the rate divided by the outer guest\'s CPU busy % '
             'over the same window (/proc/stat deltas in the outer guest, 100 = one outer vCPU, max 200), the same '
             'definition as the host benchmark. It includes the servers and the outer kernel\'s tap work. '
             '`VMM CPU%` (the detail table) is user+sys of the minivmm/QEMU process in the outer guest '
             '(/proc/<pid>/stat) over the window.')
    L.append('- **ratio** = minivmm median ÷ QEMU median (> 1: minivmm better), for the rate and for norm. '
             'The CPU window runs from BENCH-BEGIN to BENCH-END as the outer init sees them on the inner console '
             '(iperf3: includes its connection set-up, so ~1.5 s longer than the test; rrbench: the test itself).')
    wedged = sum(1 for d in fails if d.get('vmm') == 'outer')
    L.append(f'- Outer guest emulated by {a.outer}. Host load before the run: {a.load}. Build {a.build_secs} s, outer runs {a.run_secs} s '
             f'({info.get("outer_boots", 0)} outer boots, {wedged} of them wedged or ended early and redone).')
    L.append('')
    for t, title, unit in TESTS:
        rows = sorted({(r['size'], r['sess']) for r in runs if r['test'] == t})
        if not rows:
            continue
        L.append(f'### {title}: {unit}')
        L.append('')
        hdr = ['size', 'sessions']
        for q in qs:
            hdr += [f'{q}q minivmm', f'{q}q norm', f'{q}q QEMU', f'{q}q norm', f'{q}q ratio', f'{q}q norm ratio']
        L.append('| ' + ' | '.join(hdr) + ' |')
        L.append('|' + '---|' * len(hdr))
        for size, sess in rows:
            cells = [str(size), str(sess)]
            for q in qs:
                sel = {v: [r for r in runs if r['test'] == t and r['size'] == size and r['sess'] == sess
                           and r['q'] == q and r['vmm'] == v] for v in VMMS}
                rate = {v: med([r['rate'] for r in sel[v]]) for v in VMMS}
                norm = {v: med([r['norm'] for r in sel[v]]) for v in VMMS}
                cells += [fmr(rate['minivmm'], nr), fmt(norm['minivmm'][0]), fmr(rate['qemu'], nr),
                          fmt(norm['qemu'][0]), ratio(rate['minivmm'][0], rate['qemu'][0]),
                          ratio(norm['minivmm'][0], norm['qemu'][0])]
            L.append('| ' + ' | '.join(cells) + ' |')
        L.append('')
    L.append('### Detail: CPU in the outer guest (medians)')
    L.append('')
    L.append('| test | size | sess | q | VMM | rate | norm | VMM CPU% | outer CPU% | rate per VMM CPU% | n |')
    L.append('|---|---|---|---|---|---|---|---|---|---|---|')
    for t, _, _ in TESTS:
        for size, sess in sorted({(r['size'], r['sess']) for r in runs if r['test'] == t}):
            for q in qs:
                for v in VMMS:
                    s = [r for r in runs if r['test'] == t and r['size'] == size and r['sess'] == sess
                         and r['q'] == q and r['vmm'] == v]
                    if not s:
                        continue
                    L.append(f"| {t} | {size} | {sess} | {q} | {v} | {fmr(med([r['rate'] for r in s]), nr)} | "
                             f"{fmt(med([r['norm'] for r in s])[0])} | {fmt(med([r['vmm_cpu'] for r in s])[0])} | "
                             f"{fmt(med([r['guest_cpu'] for r in s])[0])} | "
                             f"{fmt(med([r['per_vmm_cpu'] for r in s])[0])} | {len(s)} |")
    L.append('')
    if fails:
        L.append('### Failures')
        L.append('')
        for d in fails:
            L.append(f"- {d.get('vmm', '?')} q={d.get('q', '?')} round {d.get('rep', '?')} {d.get('test', '?')}"
                     f"{' size ' + d['size'] if 'size' in d else ''}{' sess ' + d['sess'] if 'sess' in d else ''}: "
                     f"{d['reason']}")
        L.append('')
    if not runs:
        L.append('**No results**: the outer guest produced no LBENCH line (see serial.log).')
        L.append('')
    if info['boots']:
        L += boot_table(info['boots'], fails, VMMS)
    ex = info.get('exits', [])
    if ex:
        L.append('Inner boots (VMM exit status and wall seconds per boot): ' + '; '.join(ex) + '.')
        L.append('')
    with open(os.path.join(a.out, 'results.md'), 'w') as f:
        f.write('\n'.join(L))


if __name__ == '__main__':
    main()
