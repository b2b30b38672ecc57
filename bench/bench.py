#!/usr/bin/env python3
"""minivmm network benchmark: the program behind `make bench` / `make bench-quick`.

Runs inside a network namespace prepared by bench/run.sh (which also cleans it
up): a bridge br0 (10.0.0.1/24) for tap backends and a veth pair vm0/vh0
(vh0 = 10.0.1.1/24) for the packet backend. Boots the test guest under minivmm
and under QEMU (-M microvm, userspace virtio-net, vhost=off) in the same run,
drives it with build/tools/netpeer, samples /proc and interface counters over a
steady-state window, and writes results.md, runs.csv and PNG plots.

Benchmarks never assert on time: targets are printed, never enforced.
"""
import argparse, csv, math, json, os, re, signal, statistics, subprocess, sys, threading, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, 'bench'))
import hostinfo  # noqa: E402
HZ = os.sysconf('SC_CLK_TCK')
MAC = '52:54:00:12:34:56'          # QEMU's default; minivmm gets the same so ARP caches stay valid
PORT = 5001
NCPU = os.cpu_count()

# ---------------------------------------------------------------- modes
MODES = {
    # runs, measured window (s), warm-up (s)
    'smoke': dict(runs=1, window=0.25, warm=0.15, sizes=[64], sessions=[1, 20], queues=[1],
                  boots=3, rr_count=1500, variants=False, size_queues=[1], rate=600000),
    'quick': dict(runs=3, window=0.6, warm=0.2, sizes=[64, 512, 1514], sessions=[1, 20, 50, 100],
                  queues=[1, 2, 4], boots=15, rr_count=8000, variants='some', size_queues=[1],
                  rate=1000000),
    'full': dict(runs=5, window=2.0, warm=0.4, sizes=[64, 128, 256, 512, 1024, 1514],
                 sessions=[1, 20, 50, 100], queues=[1, 2, 4], boots=50, rr_count=30000,
                 variants='all', size_queues=[1, 2, 4], rate=1000000),
}


def log(*a):
    print(*a, file=sys.stderr, flush=True)


# ---------------------------------------------------------------- /proc sampling
def read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ''


def host_stat():
    cpu = ctxt = None
    for line in read('/proc/stat').splitlines():
        if line.startswith('cpu '):
            v = [int(x) for x in line.split()[1:]]
            idle = v[3] + v[4]
            total = sum(v[:8])       # guest time is already in user
            cpu = (total - idle, total)
        elif line.startswith('ctxt '):
            ctxt = int(line.split()[1])
    return cpu, ctxt


def is_vcpu_thread(comm):
    return bool(re.match(r'(vcpu\d+|CPU \d+/KVM)$', comm))


def proc_snapshot(pid):
    """Process user+sys (ticks), per-thread runtime (ns) and context switches."""
    s = {'ticks': 0, 'threads': {}}
    st = read(f'/proc/{pid}/stat')
    if st:
        f = st[st.rindex(')') + 2:].split()
        s['ticks'] = int(f[11]) + int(f[12])
    try:
        tids = os.listdir(f'/proc/{pid}/task')
    except OSError:
        tids = []
    for tid in tids:
        comm = read(f'/proc/{pid}/task/{tid}/comm').strip()
        status = read(f'/proc/{pid}/task/{tid}/status')
        vol = invol = 0
        for line in status.splitlines():
            if line.startswith('voluntary_ctxt_switches'):
                vol = int(line.split()[1])
            elif line.startswith('nonvoluntary_ctxt_switches'):
                invol = int(line.split()[1])
        rt = 0.0
        m = re.search(r'se\.sum_exec_runtime\s*:\s*([\d.]+)', read(f'/proc/{pid}/task/{tid}/sched'))
        if m:
            rt = float(m.group(1)) * 1e6      # ms -> ns
        s['threads'][tid] = (comm, rt, vol + invol)
    hwm = re.search(r'VmHWM:\s*(\d+)', read(f'/proc/{pid}/status'))
    s['hwm_kb'] = int(hwm.group(1)) if hwm else 0
    return s


def iface_counters():
    out = {}
    for dev in ('vm0', 'vh0', 'br0') + tuple(d for d in os.listdir('/sys/class/net') if d.startswith('t0')):
        base = f'/sys/class/net/{dev}/statistics/'
        if os.path.isdir(base):
            out[dev] = {k: int(read(base + k) or 0) for k in
                        ('rx_packets', 'tx_packets', 'rx_dropped', 'tx_dropped')}
    return out


def snap(pid):
    return dict(t=time.monotonic(), host=host_stat(), proc=proc_snapshot(pid), ifc=iface_counters())


def window_metrics(a, b, frames_fn):
    dt = b['t'] - a['t']
    (hb0, ht0), c0 = a['host']
    (hb1, ht1), c1 = b['host']
    m = {'window_s': dt}
    m['host_cpu_pct'] = 100.0 * NCPU * (hb1 - hb0) / max(1, ht1 - ht0)   # percent of one core
    m['host_cs_s'] = (c1 - c0) / dt
    m['vmm_cpu_pct'] = 100.0 * (b['proc']['ticks'] - a['proc']['ticks']) / HZ / dt
    io_ns = vcpu_ns = cs = 0.0
    for tid, (comm, rt1, cs1) in b['proc']['threads'].items():
        comm0, rt0, cs0 = a['proc']['threads'].get(tid, (comm, 0.0, 0))
        if is_vcpu_thread(comm):
            vcpu_ns += rt1 - rt0
        else:
            io_ns += rt1 - rt0
        cs += cs1 - cs0
    m['vcpu_cpu_pct'] = 100.0 * vcpu_ns / 1e9 / dt
    m['io_cpu_pct'] = 100.0 * io_ns / 1e9 / dt
    m['vmm_cs_s'] = cs / dt
    m['rss_kb'] = b['proc']['hwm_kb']
    frames = frames_fn(a['ifc'], b['ifc'])
    if frames is not None:
        m['rate'] = frames / dt
        m['io_ns_frame'] = io_ns / frames if frames else 0.0
        m['vmm_cs_frame'] = cs / frames if frames else 0.0
    return m


def ifdelta(a, b, dev, key):
    if dev not in a or dev not in b:
        return None
    return b[dev][key] - a[dev][key]


# ---------------------------------------------------------------- VMs
class VM:
    def __init__(self, cfg, cmdline, out):
        self.cfg, self.out = cfg, out
        q = cfg['queues']
        tg = os.path.join(ROOT, 'build/testguest/testguest.elf')
        if cfg['backend'] == 'packet':
            cmdline += ' ip=10.0.1.2 peer=10.0.1.1'
        if cfg['vmm'] == 'minivmm':
            cpus = str(q)
            net = ('tap=t0' if cfg['backend'] == 'tap' else 'packet=vm0') + f',queues={q},mac={MAC}'
            net += f",engine={cfg['engine']}"
            if cfg['threads'] != 'pq':
                net += f",threads={cfg['threads']}"
            if cfg.get('rx'):
                net += f",rx={cfg['rx']}"
            if cfg['pin'] == 'on':
                cpus += ',pin=' + ','.join(str(i % NCPU) for i in range(q))
                nw = q if cfg['threads'] == 'pq' else int(cfg['threads'])
                net += ',cpus=' + ','.join(str((i + 1) % NCPU) for i in range(nw))
            argv = [os.path.join(ROOT, 'build/minivmm'), '--kernel', tg, '--mem', '64M', '--cpus', cpus,
                    '--stats=json', '--cmdline', cmdline]
            if cfg.get('net', True):
                argv[-2:-2] = ['--net', net]
        else:
            argv = ['qemu-system-x86_64', '-M', 'microvm,x-option-roms=off,rtc=off,acpi=off',
                    '-name', 'bench,debug-threads=on', '-enable-kvm', '-cpu', 'host,-arch-capabilities',
                    '-m', '64', '-smp', str(q), '-nodefaults', '-no-user-config', '-nographic',
                    '-serial', 'stdio', '-device', 'isa-debug-exit,iobase=0x501,iosize=2',
                    '-device', 'i8042', '-no-reboot', '-global', 'virtio-mmio.force-legacy=false']
            if cfg.get('net', True):
                argv += ['-netdev', f'tap,id=n0,ifname=t0,script=no,downscript=no,vhost=off,queues={q}',
                         '-device', f'virtio-net-device,netdev=n0,mac={MAC}' + (',mq=on' if q > 1 else '')]
            argv += ['-kernel', tg, '-append', cmdline]
        subprocess.run(['ip', 'neigh', 'flush', 'all'], stderr=subprocess.DEVNULL)
        self.fh = open(out, 'w')
        self.t0 = time.monotonic()
        self.p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=self.fh, stderr=subprocess.STDOUT)
        self.pid = self.p.pid

    def attach(self, timeout=10):
        """Put the tap into the bridge once the VMM has created it."""
        if self.cfg['backend'] != 'tap':
            return True
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if os.path.isdir('/sys/class/net/t0'):
                subprocess.run(['ip', 'link', 'set', 't0', 'master', 'br0', 'up'], stderr=subprocess.DEVNULL)
                return True
            if self.p.poll() is not None:
                return False
            time.sleep(0.01)
        return False

    def text(self):
        return read(self.out)

    def wait_line(self, pat, timeout=15):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if re.search(pat, self.text(), re.M):
                return True
            if self.p.poll() is not None:
                return bool(re.search(pat, self.text(), re.M))
            time.sleep(0.01)
        return False

    def wait(self, timeout):
        try:
            self.p.wait(timeout)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
        self.fh.close()
        return self.p.returncode

    def kill(self):
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait()
        self.fh.close()

    def exit_json(self):
        lines = [l for l in self.text().splitlines() if l.startswith('{')]
        return json.loads(lines[-1]) if lines else None


def netpeer(*args):
    return [os.path.join(ROOT, 'build/tools/netpeer')] + [str(a) for a in args]


def guest_fields(text, pat):
    m = re.search(pat + r'((?: \S+ \d+)+)', text)
    if not m:
        return {}
    w = m.group(1).split()
    return {w[i]: int(w[i + 1]) for i in range(0, len(w) - 1, 2)}


def worker_ns(js):
    if not js:
        return None, None
    n = js['net'][0]
    ns = sum(w['cpu_ns'] for w in n['workers'])
    fr = sum(q['tx_frames'] + q['rx_frames'] for q in n['queues'])
    return ns, fr


def dest_ip(cfg):
    return '10.0.1.2' if cfg['backend'] == 'packet' else '10.0.0.2'


# ---------------------------------------------------------------- workloads
def run_tx(cfg, size, M, tmp):
    """Guest -> host: guest net-gen for a fixed time, host netpeer count."""
    q = cfg['queues']
    secs = max(1, math.ceil(M['warm'] + M['window'] + 0.5))   # the guest sends for whole seconds
    cnt = subprocess.Popen(netpeer('count', '--port', PORT, '--idle-ms', 400, '--timeout-ms', 60000, '--json'),
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    time.sleep(0.05)
    vm = VM(cfg, f'test=net-gen size={size} queues={q} secs={secs} count=0', tmp + '.out')
    r = {}
    try:
        if not vm.attach() or not vm.wait_line(r'net-gen ready'):
            raise RuntimeError('guest not ready: ' + vm.text()[-300:])
        time.sleep(M['warm'])
        dev, key = ('t0', 'rx_packets') if cfg['backend'] == 'tap' else ('vm0', 'tx_packets')
        a = snap(vm.pid)
        time.sleep(M['window'])
        b = snap(vm.pid)
        if not b['proc']['threads']:
            raise RuntimeError('the VM ended before the measured window did (host overloaded?)')
        r = window_metrics(a, b, lambda x, y: ifdelta(x, y, dev, key))
        rc = vm.wait(secs + 15)
    finally:
        vm.kill()
    try:
        out, _ = cnt.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        cnt.kill()
        out, _ = cnt.communicate()
    pj = json.loads(out[out.index('{'):]) if '{' in out else {}
    g = guest_fields(vm.text(), r'net-gen done')
    ns, fr = worker_ns(vm.exit_json())
    r.update(rc=rc, guest_tx=g.get('tx'), guest_pps=g.get('pps'), peer_rx=pj.get('received'),
             peer_gaps=pj.get('gaps'), wrk_cpu_ns=ns, wrk_frames=fr)
    r['delivered_pct'] = 100.0 * pj['received'] / g['tx'] if g.get('tx') and 'received' in pj else None
    return r


SEND_EST = {}


def run_rx(cfg, size, M, tmp):
    """Host -> guest: netpeer send at a high rate, guest net-sink counts."""
    q = cfg['queues']
    rate = M['rate']
    dur = M['warm'] + M['window'] + 0.3
    # The sender is paced to `rate` but is often slower on 2 busy cores: size the count from what it
    # achieved in earlier runs of this config (or any run of this frame size) so a run lasts about `dur`.
    key = (cfg_key(cfg), size)
    est = SEND_EST.get(key) or SEND_EST.get(size) or min(rate, 500000)
    count = int(min(rate, 1.1 * est) * dur)
    # secs bounds the run if the stop datagram is lost
    vm = VM(cfg, f'test=net-sink queues={q} secs={math.ceil(dur + 4)}', tmp + '.out')
    r = {}
    try:
        if not vm.attach() or not vm.wait_line(r'net-sink ready'):
            raise RuntimeError('guest not ready: ' + vm.text()[-300:])
        # Resolve the guest's MAC first so the first frames are not lost to ARP.
        subprocess.run(['ping', '-c', '1', '-W', '1', dest_ip(cfg)], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        snd = subprocess.Popen(netpeer('send', '--dst', dest_ip(cfg), '--port', PORT, '--count', count,
                                       '--size', size, '--flows', max(4, 2 * q), '--rate', rate,
                                       '--timeout-ms', 30000, '--json'),
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        time.sleep(M['warm'])
        a = snap(vm.pid)
        end = time.monotonic() + M['window']
        while time.monotonic() < end and snd.poll() is None:   # the window never outlasts the sender
            time.sleep(0.01)
        b = snap(vm.pid)
        out, _ = snd.communicate(timeout=60)
        time.sleep(0.2)
        subprocess.run(netpeer('stop', '--dst', dest_ip(cfg), '--port', PORT, '--repeat', 3),
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        rc = vm.wait(10)
        sj = json.loads(out[out.index('{'):]) if '{' in out else {}
        if sj.get('rate_pps'):
            SEND_EST[key] = SEND_EST[size] = sj['rate_pps']
        g = guest_fields(vm.text(), r'net-sink done')
        # frames offered to the VMM in the window (for per-frame CPU): the host side's TX counter
        dev = 't0' if cfg['backend'] == 'tap' else 'vh0'
        r = window_metrics(a, b, lambda x, y: ifdelta(x, y, dev, 'tx_packets'))
        r['offered_pps'] = r.pop('rate', None)
        elapsed = sj.get('elapsed_ms') or (dur * 1000)
        sent = sj.get('sent', count)
        rx = g.get('rx', 0)
        r['rate'] = rx / (elapsed / 1000.0)          # delivered to the guest
        r['loss_pct'] = 100.0 * (sent - rx) / sent if sent else None
        if r.get('offered_pps'):
            # CPU per delivered frame: scale the window's frame count by the delivery ratio
            frames = r['offered_pps'] * r['window_s'] * (rx / sent if sent else 1)
            io_ns = r['io_ns_frame'] * r['offered_pps'] * r['window_s']
            r['io_ns_frame'] = io_ns / frames if frames else 0.0
            r['vmm_cs_frame'] = r['vmm_cs_s'] * r['window_s'] / frames if frames else 0.0
        ns, fr = worker_ns(vm.exit_json())
        r.update(rc=rc, sent=sent, send_pps=sj.get('rate_pps'), guest_rx=rx, guest_lost=g.get('lost'),
                 guest_bad=(g.get('bad', 0) + g.get('corrupt', 0) + g.get('badsum', 0)) if g else None,
                 wrk_cpu_ns=ns, wrk_frames=fr)
        return r
    finally:
        vm.kill()


def run_rr(cfg, size, sessions_list, M, tmp):
    """Request/response: guest net-echo, host netpeer echo-check --window N. One boot, one window per N."""
    q = cfg['queues']
    vm = VM(cfg, f'test=net-echo queues={q} secs=120', tmp + '.out')
    res = []
    try:
        if not vm.attach() or not vm.wait_line(r'net-echo ready'):
            raise RuntimeError('guest not ready: ' + vm.text()[-300:])
        subprocess.run(['ping', '-c', '1', '-W', '1', dest_ip(cfg)], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        for n in sessions_list:
            count = M['rr_count'] if n > 1 else max(300, M['rr_count'] // 8)
            a = snap(vm.pid)
            p = subprocess.run(netpeer('echo-check', '--dst', dest_ip(cfg), '--port', PORT, '--count', count,
                                       '--sizes', f'{size}-{size}', '--flows', min(n, 8), '--window', n,
                                       '--allow-loss', '--json'),
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)
            b = snap(vm.pid)
            j = json.loads(p.stdout[p.stdout.index('{'):]) if '{' in p.stdout else {}
            r = window_metrics(a, b, lambda x, y: None)
            el = (j.get('elapsed_ms') or 1) / 1000.0
            r['rate'] = j.get('received', 0) / el
            r['io_ns_frame'] = r['io_cpu_pct'] / 100 * 1e9 / (2 * r['rate']) if r['rate'] else 0.0
            r['vmm_cs_frame'] = r['vmm_cs_s'] / (2 * r['rate']) if r['rate'] else 0.0
            r['mean_lat_us'] = 1e6 * n / r['rate'] if r['rate'] else None   # Little's law
            r.update(sessions=n, rr_sent=j.get('sent'), rr_received=j.get('received'), rr_lost=j.get('lost'),
                     rr_corrupt=j.get('corrupt'), rr_result=j.get('result'))
            res.append(r)
        subprocess.run(netpeer('stop', '--dst', dest_ip(cfg), '--port', PORT, '--repeat', 3),
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        rc = vm.wait(15)
        g = guest_fields(vm.text(), r'net-echo done')
        ns, fr = worker_ns(vm.exit_json())
        for r in res:
            r.update(rc=rc, guest_rx=g.get('rx'), guest_drops=g.get('drops'), wrk_cpu_ns=ns, wrk_frames=fr)
        return res
    finally:
        vm.kill()


def run_boot(vmm, tmp):
    """VMM start -> test guest exit, test=hello, no network device."""
    cfg = dict(vmm=vmm, backend='tap', queues=1, threads='pq', pin='off', engine='uring', net=False)
    vm = VM(cfg, 'test=hello', tmp + '.out')
    # A blocking wait: Popen.wait(timeout) polls with sleeps of up to 50 ms,
    # which would swamp a ~10 ms start-up. The timer only guards a hang.
    guard = threading.Timer(30, vm.kill)
    guard.start()
    vm.p.wait()
    end = time.monotonic()
    guard.cancel()
    rc = vm.wait(1)
    r = {'rate': (end - vm.t0) * 1000.0, 'rc': rc}
    m = re.search(r'boot time: ([\d.]+) ms', vm.text())
    r['guest_up_ms'] = float(m.group(1)) if m else None
    return r


# ---------------------------------------------------------------- the matrix
BASE = dict(vmm='minivmm', backend='tap', threads='pq', pin='off', engine='uring')


def cfgs_for(M):
    """(workload, cfg, size) jobs. Base: minivmm tap default and QEMU, per queue count."""
    jobs = []
    def add(w, size, **kw):
        c = dict(BASE); c.update(kw)
        jobs.append((w, c, size))
    for w in ('tx', 'rx'):
        for q in M['queues']:
            add(w, 64, queues=q)
            add(w, 64, queues=q, vmm='qemu', engine='-', threads='-')
        for size in M['sizes']:
            if size == 64:
                continue
            for q in M['size_queues']:
                add(w, size, queues=q)
                add(w, size, queues=q, vmm='qemu', engine='-', threads='-')
        if M['variants'] == 'some':
            add(w, 64, queues=1, backend='packet')
            add(w, 64, queues=1, pin='on')
            add(w, 64, queues=1, engine='epoll')
            add(w, 64, queues=2, threads='1')
            if w == 'rx':
                add(w, 64, queues=1, backend='packet', rx='recv')
        elif M['variants'] == 'all':
            for q in M['queues']:
                for backend in ('tap', 'packet'):
                    for threads in (('pq', '1') if q > 1 else ('pq',)):
                        for pin in ('off', 'on'):
                            for engine in ('uring', 'epoll'):
                                c = dict(queues=q, backend=backend, threads=threads, pin=pin, engine=engine)
                                if c != dict(queues=q, backend='tap', threads='pq', pin='off', engine='uring'):
                                    add(w, 64, **c)
                if w == 'rx':
                    add(w, 64, queues=q, backend='packet', rx='recv')
        elif M['variants'] is False and w in ('tx', 'rx'):
            add(w, 64, queues=1, backend='packet')
    for q in M['queues']:
        add('rr', 64, queues=q)
        add('rr', 64, queues=q, vmm='qemu', engine='-', threads='-')
    return jobs


def cfg_key(c):
    return (c['vmm'], c['backend'] + ('/' + c['rx'] if c.get('rx') else ''), c['queues'], c['threads'],
            c['pin'], c['engine'])


def cfg_label(c):
    if c['vmm'] == 'qemu':
        return f"qemu tap {c['queues']}q"
    b = c['backend'] + ('/' + c['rx'] if c.get('rx') else '')
    return f"minivmm {b} {c['queues']}q thr={c['threads']} pin={c['pin']} {c['engine']}"


# ---------------------------------------------------------------- statistics and output
def med(vals):
    v = [x for x in vals if x is not None]
    return (statistics.median(v), min(v), max(v)) if v else (None, None, None)


def fmt(x, digits=None):
    if x is None:
        return '-'
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


COLS = ['rate', 'norm', 'mbit_s', 'vmm_cpu_pct', 'vcpu_cpu_pct', 'io_cpu_pct', 'io_ns_frame', 'wrk_ns_frame',
        'host_cpu_pct', 'vmm_cs_s', 'host_cs_s', 'vmm_cs_frame', 'rss_kb']


def derive(r, size):
    if r.get('rate') is not None and r.get('host_cpu_pct'):
        r['norm'] = r['rate'] / r['host_cpu_pct']
    if r.get('rate') is not None:
        r['mbit_s'] = r['rate'] * size * 8 / 1e6
    if r.get('wrk_cpu_ns') and r.get('wrk_frames'):
        r['wrk_ns_frame'] = r['wrk_cpu_ns'] / r['wrk_frames']


def group(rows):
    g = {}
    for r in rows:
        g.setdefault((r['workload'], cfg_key(r['cfg']), r['size'], r.get('sessions', 0)), []).append(r)
    return g


def agg(rs, col):
    return med([r.get(col) for r in rs])


def host_caveat(h):
    """What the detected host means for the figures."""
    if h['kvm'] == 'PVM' or h['nested']:
        return ('This host is virtualized (%s): absolute numbers are not those of a bare-metal VMX/SVM host; '
                'only ratios measured in this same run mean something.' % h['kvm'])
    return 'Bare-metal %s host: absolute numbers are this machine\'s.' % h['kvm']


def header_md(M, mode, meta):
    return f"""# minivmm network benchmark ({mode} mode)

- Host (detected): {meta['host_line']}; load before the run: {meta['load']}.
- {meta['host_caveat']}
- **Oversubscription:** the test guest busy-polls one vCPU per queue pair. On {NCPU} cores a 2-queue run
  already keeps both cores busy with vCPUs, and a 4-queue run puts 4 spinning vCPUs plus the VMM's I/O
  threads plus the host peer on {NCPU} cores, so 2q/4q rows measure scheduling contention, not scaling.
- minivmm {meta['minivmm']} vs {meta['qemu']} (`-M microvm`, `virtio-net-device`, userspace virtio-net,
  vhost=off, `mq=on` with queues>1) on the same tap+bridge, measured in the same run, interleaved.
- Every figure is the median of {M['runs']} runs with [min–max]; each run measures a {M['window']} s
  steady-state window after {M['warm']} s of warm-up.
- **norm = rate per host CPU-percent spent**: the row's rate (frames/s or transactions/s) divided by the
  whole-host CPU busy percentage over the same window (from /proc/stat deltas; 100 = one core, max {NCPU * 100}).
  Because the guest busy-polls, host CPU includes the spinning vCPUs; `io ns/frame` isolates the VMM's own work.
"""


COLS_DOC = """Columns of the detail tables: `rate` (tx: frames/s the VMM handed to the host kernel, from the
tap's / veth's counters; rx: frames/s delivered to the guest = guest net-sink count / sender time;
rr: transactions/s from netpeer echo-check), `norm` (rate per whole-host CPU %), `Mbit/s` (rate × frame
size), `VMM CPU%` (user+sys of the VMM process from /proc/<pid>/stat, vCPUs included),
`I/O CPU%` (VMM threads other than vCPUs — minivmm's net workers/ctrl/main, QEMU's main loop — from
/proc/<pid>/task/*/sched), `io ns/frame` (that I/O CPU per frame; rr: per frame each way),
`wrk ns/frame` (minivmm workers' cpu_ns from --stats=json over the whole run ÷ frames they moved),
`host CPU%` (/proc/stat), `VMM cs/s` (voluntary+involuntary switches of all VMM threads,
/proc/<pid>/task/*/status), `host cs/s` (/proc/stat ctxt), `cs/frame` (VMM switches per frame),
`RSS` (VmHWM, kB), then guest-side counters.
"""


def seed_table(rows, workload, title, ratecol, sizes, sessions, queues, vmms):
    g = group(rows)
    out = [f'### {title}', '']
    hdr = '| VMM | size | sessions | ' + ' | '.join(f'{q}q {ratecol} | {q}q norm' for q in queues) + ' |'
    out += [hdr, '|' + '---|' * (3 + 2 * len(queues))]
    for vmm in vmms:
        for size in sizes:
            for s in sessions:
                cells = []
                any_ = False
                for q in queues:
                    k = (workload, (vmm, 'tap', q, 'pq' if vmm == 'minivmm' else '-', 'off',
                                    'uring' if vmm == 'minivmm' else '-'), size, s)
                    rs = g.get(k, [])
                    any_ |= bool(rs)
                    cells += [fmr(agg(rs, 'rate')), fmt(agg(rs, 'norm')[0])]
                if any_:
                    sess = s if workload == 'rr' else 'q flows'
                    out.append(f'| {vmm} | {size} | {sess} | ' + ' | '.join(cells) + ' |')
    # ratio rows, same run
    for size in sizes:
        for s in sessions:
            cells = []
            ok = False
            for q in queues:
                a = g.get((workload, ('minivmm', 'tap', q, 'pq', 'off', 'uring'), size, s), [])
                b = g.get((workload, ('qemu', 'tap', q, '-', 'off', '-'), size, s), [])
                ra, rb = agg(a, 'rate')[0], agg(b, 'rate')[0]
                na, nb = agg(a, 'norm')[0], agg(b, 'norm')[0]
                if ra and rb:
                    ok = True
                cells += [f'×{ra/rb:.2f}' if ra and rb else '-', f'×{na/nb:.2f}' if na and nb else '-']
            if ok:
                sess = s if workload == 'rr' else 'q flows'
                out.append(f'| minivmm/qemu | {size} | {sess} | ' + ' | '.join(cells) + ' |')
    return out + ['']


def detail_table(rows, workload, extra):
    g = group(rows)
    heads = ['config', 'size', 'sess', 'rate', 'norm', 'Mbit/s', 'VMM CPU%', 'vCPU CPU%', 'I/O CPU%',
             'io ns/frame', 'wrk ns/frame', 'host CPU%', 'VMM cs/s', 'host cs/s', 'cs/frame', 'RSS kB'] + \
            [e[0] for e in extra] + ['n']
    out = ['| ' + ' | '.join(heads) + ' |', '|' + '---|' * len(heads)]
    keys = sorted((k for k in g if k[0] == workload),
                  key=lambda k: (k[2], k[3], k[1][0] != 'minivmm', k[1][2], k[1]))
    for k in keys:
        rs = g[k]
        c = rs[0]['cfg']
        cells = [cfg_label(c), str(k[2]), str(k[3] or '-'), fmr(agg(rs, 'rate'))]
        cells += [fmt(agg(rs, col)[0]) for col in COLS[1:]]
        cells += [fmt(agg(rs, e[1])[0]) for e in extra]
        cells.append(str(len(rs)))
        out.append('| ' + ' | '.join(cells) + ' |')
    return out + ['']


def targets(rows, boots):
    g = group(rows)
    def get(w, key, size=64, s=0, col='rate'):
        return agg(g.get((w, key, size, s), []), col)[0]
    mv = ('minivmm', 'tap', 1, 'pq', 'off', 'uring')
    qm = ('qemu', 'tap', 1, '-', 'off', '-')
    pk = ('minivmm', 'packet', 1, 'pq', 'off', 'uring')
    res = []
    def line(name, value, goal, ok, unit, how_missed):
        if value is None:
            res.append((name, '-', goal, 'not measured', ''))
        else:
            res.append((name, f'{value:.3g}{unit}', goal, 'met' if ok else 'MISSED', '' if ok else how_missed))
    v = get('tx', mv)
    line('guest TX 64 B, 1 queue, tap', v and v / 1e6, '≥ 0.55 Mpps', v and v >= 0.55e6, ' Mpps',
         v and f'short by {0.55 - v/1e6:.3f} Mpps ({100*(1 - v/0.55e6):.0f}%)')
    v = get('rx', mv)
    line('guest RX 64 B, 1 queue, tap', v and v / 1e6, '≥ 0.8 Mpps', v and v >= 0.8e6, ' Mpps',
         v and f'short by {0.8 - v/1e6:.3f} Mpps ({100*(1 - v/0.8e6):.0f}%)')
    for w in ('tx', 'rx'):
        a, b = get(w, mv, col='io_ns_frame'), get(w, qm, col='io_ns_frame')
        r = a / b if a and b else None
        line(f'VMM I/O CPU per frame vs QEMU ({w} 64 B 1q)', r, '≤ 0.5×', r is not None and r <= 0.5, '×',
             r and f'{r/0.5:.2f}× the allowed ratio ({fmt(a)} vs {fmt(b)} ns/frame)')
    for w in ('tx', 'rx'):
        a, b = get(w, mv, col='vmm_cs_s'), get(w, qm, col='vmm_cs_s')
        r = a / b if a and b else None
        line(f'VMM context switches/s vs QEMU ({w} 64 B 1q)', r, '≤ 0.1×', r is not None and r <= 0.1, '×',
             r and f'{r/0.1:.1f}× the allowed ratio ({fmt(a)} vs {fmt(b)} /s)')
    a, b = get('rx', pk, col='io_ns_frame'), get('rx', mv, col='io_ns_frame')
    r = a / b if a and b else None
    line('packet (ring) RX I/O CPU per frame vs tap (64 B 1q)', r, '≤ 0.1×', r is not None and r <= 0.1, '×',
         r and f'{r/0.1:.1f}× the allowed ratio ({fmt(a)} vs {fmt(b)} ns/frame)')
    bm = med([r['rate'] for r in boots if r['vmm'] == 'minivmm' and r.get('rc') == 0])[0]
    bq = med([r['rate'] for r in boots if r['vmm'] == 'qemu' and r.get('rc') == 0])[0]
    line('VMM start → test guest exit (test=hello, median)', bm, '≤ 10 ms', bm is not None and bm <= 10, ' ms',
         bm and f'over by {bm - 10:.1f} ms')
    res.append(('  QEMU, same measurement', f'{bq:.3g} ms' if bq else '-', '(comparison)',
                f'minivmm/qemu ×{bm/bq:.3f}' if bm and bq else '', ''))
    hw = [r.get('rss_kb') for r in rows if r['cfg']['vmm'] == 'minivmm' and r.get('rss_kb')]
    hq = [r.get('rss_kb') for r in rows if r['cfg']['vmm'] == 'qemu' and r.get('rss_kb')]
    v = get('tx', mv, col='rss_kb')
    line('minivmm resident memory (VmHWM, tx 64 B 1q, median)', v and v / 1024, '≤ 4 MB', v and v <= 4096, ' MB',
         v and f'over by {(v - 4096)/1024:.2f} MB')
    if hw:
        res.append(('  max VmHWM over all minivmm runs / QEMU median', f'{max(hw)/1024:.2f} MB',
                    '(info)', f'QEMU {statistics.median(hq)/1024:.1f} MB' if hq else '', ''))
    out = ['### Targets (printed, never enforced)', '', '| target | measured | goal | status | by how much |',
           '|---|---|---|---|---|']
    out += ['| ' + ' | '.join(x) + ' |' for x in res]
    return out + ['']


def plots(rows, outdir, M):
    """gnuplot PNGs: pps vs queues, norm vs queues, rate vs frame size, rr tps vs sessions."""
    g = group(rows)
    def series(w, vmm, col, size=64, s=0):
        key = lambda q: (vmm, 'tap', q, 'pq' if vmm == 'minivmm' else '-', 'off', 'uring' if vmm == 'minivmm' else '-')
        return [(q, agg(g.get((w, key(q), size, s), []), col)) for q in M['queues']]
    dat = os.path.join(outdir, 'plot.dat')
    blocks = []
    def block(name, pts):
        lines = [f'# {name}'] + [f'{x} {m} {lo} {hi}' for x, (m, lo, hi) in pts if m is not None]
        if len(lines) == 1:
            lines.append('0 0 0 0')
        blocks.append(name)
        return '\n'.join(lines)
    txt = []
    for w in ('tx', 'rx'):
        for vmm in ('minivmm', 'qemu'):
            txt.append(block(f'{w}-{vmm}-rate', [(q, tuple(v / 1e6 if v else v for v in t))
                                                 for q, t in series(w, vmm, 'rate')]))
            txt.append(block(f'{w}-{vmm}-norm', series(w, vmm, 'norm')))
            pts = []
            for size in M['sizes']:
                t = agg(g.get((w, (vmm, 'tap', 1, 'pq' if vmm == 'minivmm' else '-', 'off',
                                   'uring' if vmm == 'minivmm' else '-'), size, 0), []), 'mbit_s')
                pts.append((size, t))
            txt.append(block(f'{w}-{vmm}-size', pts))
    for vmm in ('minivmm', 'qemu'):
        for q in M['queues']:
            pts = []
            for s in M['sessions']:
                key = (vmm, 'tap', q, 'pq' if vmm == 'minivmm' else '-', 'off', 'uring' if vmm == 'minivmm' else '-')
                pts.append((s, agg(g.get(('rr', key, 64, s), []), 'rate')))
            txt.append(block(f'rr-{vmm}-{q}q', pts))
    with open(dat, 'w') as f:
        f.write('\n\n\n'.join(txt) + '\n')
    idx = {n: i for i, n in enumerate(blocks)}
    def plot(fn, title, xl, yl, items, logx=False):
        s = [f"set output '{os.path.join(outdir, fn)}'", f"set title '{title}'", f"set xlabel '{xl}'",
             f"set ylabel '{yl}'", 'set key top left', 'set grid', 'set yrange [0:*]']
        s.append('set logscale x 2' if logx else 'unset logscale x')
        s.append('plot ' + ', '.join(f"'{dat}' index {idx[n]} using 1:2:3:4 with yerrorlines title '{t}'"
                                     for n, t in items))
        return '\n'.join(s)
    gp = ['set terminal pngcairo size 800,500' if has_cairo() else 'set terminal png size 800,500']
    gp.append("set xtics ('1' 1, '2' 2, '4' 4)")
    gp.append(plot('scaling.png', 'UDP 64 B frames/s by queue pairs (median, min-max)', 'queue pairs', 'Mpps',
                   [(f'{w}-{v}-rate', f'{v} {"guest TX" if w == "tx" else "guest RX"}')
                    for w in ('tx', 'rx') for v in ('minivmm', 'qemu')]))
    gp.append(plot('norm.png', 'norm = frames/s per host CPU % (64 B)', 'queue pairs', 'pps per CPU %',
                   [(f'{w}-{v}-norm', f'{v} {w}') for w in ('tx', 'rx') for v in ('minivmm', 'qemu')]))
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
        p = subprocess.run(['gnuplot', gpf], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if p.returncode:
            log('gnuplot failed:', p.stdout[-500:])
    except FileNotFoundError:
        log('gnuplot not installed (Debian: gnuplot-nox): no PNGs')


_cairo = None
def has_cairo():
    global _cairo
    if _cairo is None:
        p = subprocess.run(['gnuplot', '-e', 'set terminal'], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True) if os.path.exists('/usr/bin/gnuplot') else None
        _cairo = bool(p and 'pngcairo' in p.stdout)
    return _cairo


def write_csv(rows, boots, path):
    flat = []
    for r in rows:
        d = {k: v for k, v in r.items() if k != 'cfg'}
        d.update({f'cfg_{k}': v for k, v in r['cfg'].items()})
        flat.append(d)
    for b in boots:
        flat.append(dict(b, workload='boot', size=0, cfg_vmm=b['vmm']))
    keys = ['workload', 'rep', 'cfg_vmm', 'cfg_backend', 'cfg_rx', 'cfg_queues', 'cfg_threads', 'cfg_pin',
            'cfg_engine', 'size', 'sessions'] + COLS
    for d in flat:
        for k in d:
            if k not in keys:
                keys.append(k)
    with open(path, 'w', newline='') as f:
        w = csv.DictWriter(f, fieldnames=keys, extrasaction='ignore')
        w.writeheader()
        for d in flat:
            w.writerow({k: (f'{v:.6g}' if isinstance(v, float) else v) for k, v in d.items()})


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--mode', choices=MODES, default='quick')
    ap.add_argument('--out', required=True)
    ap.add_argument('--runs', type=int)
    ap.add_argument('--no-qemu', action='store_true')
    a = ap.parse_args()
    M = dict(MODES[a.mode])
    if a.runs:
        M['runs'] = a.runs
    os.makedirs(a.out, exist_ok=True)
    tmpd = os.path.join(a.out, 'logs')
    os.makedirs(tmpd, exist_ok=True)
    host = hostinfo.describe()
    meta = dict(host=host['node'], kernel=host['kernel'], load=read('/proc/loadavg').strip(),
                host_line=hostinfo.host_line(host), host_caveat=host_caveat(host),
                minivmm=subprocess.run([os.path.join(ROOT, 'build/minivmm'), '--version'], stdout=subprocess.PIPE,
                                       text=True).stdout.strip(),
                qemu=subprocess.run(['qemu-system-x86_64', '--version'], stdout=subprocess.PIPE,
                                    text=True).stdout.splitlines()[0])
    jobs = cfgs_for(M)
    if a.no_qemu:
        jobs = [j for j in jobs if j[1]['vmm'] != 'qemu']
    rows, boots = [], []
    t_start = time.monotonic()
    for rep in range(M['runs']):
        for i, (w, cfg, size) in enumerate(jobs):
            tag = f'{w}-{i}-r{rep}'
            tmp = os.path.join(tmpd, tag)
            log(f'[{time.monotonic() - t_start:6.1f}s] run {rep + 1}/{M["runs"]} {w} {cfg_label(cfg)} size {size}')
            try:
                if w == 'tx':
                    res = [run_tx(cfg, size, M, tmp)]
                elif w == 'rx':
                    res = [run_rx(cfg, size, M, tmp)]
                else:
                    res = run_rr(cfg, size, M['sessions'], M, tmp)
            except Exception as e:          # a failed run is reported, never fatal
                log(f'  failed: {e}')
                rows.append(dict(workload=w, cfg=cfg, size=size, rep=rep, sessions=0, error=str(e)[:200]))
                continue
            for r in res:
                r.setdefault('sessions', 0)
                r.update(workload=w, cfg=cfg, size=size, rep=rep)
                derive(r, size)
                rows.append(r)
        for vmm in ('minivmm',) + (() if a.no_qemu else ('qemu',)):
            for k in range(max(1, M['boots'] // M['runs'])):
                b = run_boot(vmm, os.path.join(tmpd, f'boot-{vmm}-{rep}-{k}'))
                b.update(vmm=vmm, rep=rep)
                boots.append(b)
    log(f'[{time.monotonic() - t_start:6.1f}s] done, writing results')

    md = [header_md(M, a.mode, meta)]
    md += targets(rows, boots)
    Q = M['queues']
    vm = ['minivmm'] + ([] if a.no_qemu else ['qemu'])
    md += seed_table(rows, 'tx', 'Guest → host UDP (guest net-gen, host netpeer count), tap+bridge: frames/s',
                     'pps', M['sizes'], [0], Q, vm)
    md += seed_table(rows, 'rx', 'Host → guest UDP (host netpeer send, guest net-sink), tap+bridge: '
                     'frames/s delivered', 'pps', M['sizes'], [0], Q, vm)
    md += seed_table(rows, 'rr', 'Request/response UDP 64 B (netpeer echo-check --window N), tap+bridge: '
                     'transactions/s', 'trans/s', [64], M['sessions'], Q, vm)
    md += ['Latency: netpeer gives no percentiles; the detail table shows the mean latency computed as '
           'sessions / transactions-per-second (Little\'s law), not measured per transaction.', '']
    md += ['## Detail: every configuration, every column (medians; rate with [min–max])', '', COLS_DOC]
    md += ['### Guest → host (tx)', '']
    md += detail_table(rows, 'tx', [('guest pps', 'guest_pps'), ('peer got %', 'delivered_pct')])
    md += ['### Host → guest (rx)', '']
    md += detail_table(rows, 'rx', [('offered pps', 'offered_pps'), ('loss %', 'loss_pct'),
                                    ('guest lost', 'guest_lost'), ('guest bad', 'guest_bad')])
    md += ['### Request/response (rr)', '']
    md += detail_table(rows, 'rr', [('mean lat µs (computed)', 'mean_lat_us'), ('lost', 'rr_lost'),
                                    ('guest drops', 'guest_drops')])
    md += ['### Start-up: VMM start → test guest exit (test=hello, no network device)', '',
           '| VMM | wall ms (median [min–max]) | guest up ms (minivmm\'s own report) | n |', '|---|---|---|---|']
    for vmm in vm:
        bs = [b for b in boots if b['vmm'] == vmm and b.get('rc') == 0]
        md.append(f"| {vmm} | {fmr(med([b['rate'] for b in bs]))} | "
                  f"{fmt(med([b.get('guest_up_ms') for b in bs])[0])} | {len(bs)} |")
    md += ['', '### Linux guest TCP (iperf3 in a nested Linux guest)', '',
           'Measured separately by `bench/linux/run.sh` (part of `make bench`): a stock Linux kernel '
           'boots impractically slowly on a PVM host, so it runs nested in a QEMU TCG outer guest, '
           'minivmm and QEMU side by side. See docs/benchmarks.md, "Linux guest TCP".', '']
    errs = [r for r in rows if r.get('error')]
    if errs:
        md += [f'Failed runs: {len(errs)} (see runs.csv, column error)', '']
    text = '\n'.join(md)
    with open(os.path.join(a.out, 'results.md'), 'w') as f:
        f.write(text)
    write_csv(rows, boots, os.path.join(a.out, 'runs.csv'))
    plots(rows, a.out, M)
    print(text)
    log(f'results in {a.out}/ (results.md, runs.csv, *.png); {time.monotonic() - t_start:.0f} s')


if __name__ == '__main__':
    main()
