# SPDX-License-Identifier: Apache-2.0
"""Sampling /proc, interface counters and minivmm's own statistics at both ends of
a measured window, and turning two samples into the row's columns."""
import os
import re
import time

from common import BRIDGE, TAP, VETH_HOST, VETH_VM, read

HZ = os.sysconf('SC_CLK_TCK')
NCPU = os.cpu_count()


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
    for dev in (VETH_VM, VETH_HOST, BRIDGE) + tuple(d for d in os.listdir('/sys/class/net') if d.startswith(TAP)):
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


def vmm_window(s0, s1):
    """Columns from two minivmm --stats=json snapshots (SIGUSR1) around a window:
    worker CPU and wake-ups (voluntary switches) per frame, frames each way,
    frames dropped inside the VMM and by the backend's kernel queue."""
    if not s0 or not s1:
        return {}
    n0, n1 = s0['net'][0], s1['net'][0]
    def qsum(n, *keys):
        return sum(q.get(k, 0) for q in n['queues'] for k in keys)
    def wsum(n, key):
        return sum(w.get(key, 0) for w in n['workers'])
    d = lambda *k: qsum(n1, *k) - qsum(n0, *k)
    frames = d('rx_frames', 'tx_frames')
    ns = wsum(n1, 'cpu_ns') - wsum(n0, 'cpu_ns')
    wake = wsum(n1, 'voluntary_switches') - wsum(n0, 'voluntary_switches')
    dt = s1['_t'] - s0['_t']
    return dict(vmm_rx_frames=d('rx_frames'), vmm_tx_frames=d('tx_frames'),
                vmm_drops=d('rx_dropped', 'rx_filtered', 'tx_dropped'),
                backend_drops=d('backend_drops'), rx_no_buffer=d('rx_no_buffer'),
                wrk_cpu_pct=100.0 * ns / 1e9 / dt if dt > 0 else None,
                wrk_ns_frame_win=ns / frames if frames else None,
                wrk_wake_frame=wake / frames if frames else None,
                wrk_wake_s=wake / dt if dt > 0 else None,
                workers=len(n1['workers']))
