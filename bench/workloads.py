# SPDX-License-Identifier: Apache-2.0
"""The measured workloads: one function per row kind, each boots the test
guest under the configured VMM, measures one steady-state window (or a few,
for rr), and returns the row's columns. Columns are documented in
docs/benchmarks.md and report.COLS_DOC."""
import math
import re
import subprocess
import threading
import time

from ceilings import Blaster, xdp_cleanup
from common import PORT, TAP, VETH_HOST, VETH_VM, guest_ip
from sample import ifdelta, snap, vmm_window, window_metrics
from vm import VM, guest_fields, netpeer, parse_json_out, peer_cpu, resolve_guest, stop_guest_and_wait, worker_ns


def _exit_drops(js):
    """Whole-run drop counters from the exit statistics (a baseline's minivmm
    may lack a counter: it counts as 0)."""
    if not js:
        return {}
    qs = js['net'][0]['queues']
    return dict(vmm_drops_run=sum(q.get('rx_dropped', 0) + q.get('rx_filtered', 0) + q.get('tx_dropped', 0) for q in qs),
                backend_drops_run=sum(q.get('backend_drops', 0) for q in qs))


def _finish_vm(vm, cfg):
    if cfg['backend'] == 'xdp':
        xdp_cleanup()


def run_tx(cfg, size, M, tmp):
    """Guest -> host: guest net-gen for a fixed time, host netpeer count."""
    q = cfg['queues']
    secs = max(1, math.ceil(M['warm'] + M['window'] + 0.5))   # the guest sends for whole seconds
    cnt = subprocess.Popen(netpeer('count', '--port', PORT, '--idle-ms', 400, '--timeout-ms', 60000, '--json'),
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    time.sleep(0.05)
    vm = VM(cfg, f'test=net-gen size={size} queues={q} secs={secs} count=0', tmp + '.out')
    r, rc = {}, None
    try:
        vm.ready('net-gen')
        time.sleep(M['warm'])
        dev, key = (TAP, 'rx_packets') if cfg['backend'] == 'tap' else (VETH_VM, 'tx_packets')
        a, s0 = snap(vm.pid), vm.stats_now()
        time.sleep(M['window'])
        b, s1 = snap(vm.pid), vm.stats_now()
        if not b['proc']['threads']:
            raise RuntimeError('the VM ended before the measured window did (host overloaded?)')
        r = window_metrics(a, b, lambda x, y: ifdelta(x, y, dev, key))
        r.update(vmm_window(s0, s1))
        rc = vm.wait(secs + 15)
    finally:
        vm.kill()
        _finish_vm(vm, cfg)
        if rc is None:
            cnt.kill()              # the guest sent nothing: do not wait for the counter's timeout
        try:
            out, _ = cnt.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            cnt.kill()
            out, _ = cnt.communicate()
    pj = parse_json_out(out)
    g = guest_fields(vm.text(), r'net-gen done')
    js = vm.exit_json()
    ns, fr = worker_ns(js)
    r.update(rc=rc, guest_tx=g.get('tx'), guest_pps=g.get('pps'), peer_rx=pj.get('received'),
             peer_gaps=pj.get('gaps'), wrk_cpu_ns=ns, wrk_frames=fr, **_exit_drops(js))
    r['delivered_pct'] = 100.0 * pj['received'] / g['tx'] if g.get('tx') and 'received' in pj else None
    return r


SEND_EST = {}


def run_rx(cfg, size, M, tmp, key):
    """Host -> guest with the UDP sender: netpeer send (sendmmsg on a UDP
    socket) at a high rate, guest net-sink counts. Often limited by the sender."""
    q = cfg['queues']
    rate = M['rate']
    dur = M['warm'] + M['window'] + 0.3
    # The sender is paced to `rate` but is often slower on a busy host: size the count from what it
    # achieved in earlier runs of this config (or any run of this frame size) so a run lasts about `dur`.
    est = SEND_EST.get((key, size)) or SEND_EST.get(size) or min(rate, 500000)
    count = int(min(rate, 1.1 * est) * dur)
    vm = VM(cfg, f'test=net-sink queues={q} secs={math.ceil(dur + 4)}', tmp + '.out')
    try:
        vm.ready('net-sink')
        resolve_guest(cfg['backend'])
        snd = subprocess.Popen(netpeer('send', '--dst', guest_ip(cfg['backend']), '--port', PORT, '--count', count,
                                       '--size', size, '--flows', max(4, 2 * q), '--rate', rate,
                                       '--timeout-ms', 30000, '--json'),
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        time.sleep(M['warm'])
        a, s0 = snap(vm.pid), vm.stats_now()
        end = time.monotonic() + M['window']
        while time.monotonic() < end and snd.poll() is None:   # the window never outlasts the sender
            time.sleep(0.01)
        b, s1 = snap(vm.pid), vm.stats_now()
        out, _ = snd.communicate(timeout=60)
        time.sleep(0.2)
        rc = stop_guest_and_wait(vm, cfg['backend'], PORT, 10)
        sj = parse_json_out(out)
        if sj.get('rate_pps'):
            SEND_EST[(key, size)] = SEND_EST[size] = sj['rate_pps']
        g = guest_fields(vm.text(), r'net-sink done')
        # frames offered to the VMM in the window (for per-frame CPU): the host side's TX counter
        dev = TAP if cfg['backend'] == 'tap' else VETH_HOST
        r = window_metrics(a, b, lambda x, y: ifdelta(x, y, dev, 'tx_packets'))
        r.update(vmm_window(s0, s1))
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
        js = vm.exit_json()
        ns, fr = worker_ns(js)
        r.update(rc=rc, sent=sent, send_pps=sj.get('rate_pps'), guest_rx=rx, guest_lost=g.get('lost'),
                 reorders=g.get('reorders'),
                 guest_bad=(g.get('bad', 0) + g.get('badsum', 0) + g.get('corrupt', 0)) if g else None,
                 wrk_cpu_ns=ns, wrk_frames=fr, **_exit_drops(js))
        return r
    finally:
        vm.kill()
        _finish_vm(vm, cfg)


def run_rxb(cfg, size, M, tmp):
    """Host -> guest driven by the raw AF_PACKET blaster (rawnet blast) at
    cfg['rate'] (None: as fast as it goes), so the guest is offered more than
    it can take. Offered = frames the blaster put on the wire (interface
    counters over the blast); delivered = what the guest's net-sink counted."""
    q = cfg['queues']
    dur = M['warm'] + M['window']
    be = cfg['backend']
    idle = ' idle=halt' if cfg.get('guest') == 'halt' else ''
    vm = VM(cfg, f'test=net-sink queues={q} secs={math.ceil(dur + 8)}{idle}', tmp + '.out')
    try:
        vm.ready('net-sink')
        resolve_guest(be)
        slack = M.get('blast_slack', 0)
        bl = Blaster(be, dur + slack, size=size, flows=max(4, 2 * q), rate=cfg.get('rate') or 0, cpu=peer_cpu())
        time.sleep(M['warm'])
        a, s0 = snap(vm.pid), vm.stats_now()
        if bl.p.poll() is not None:
            raise RuntimeError('the blast ended before the statistics window opened (the first snapshot was late)')
        end = time.monotonic() + M['window']
        while time.monotonic() < end and bl.p.poll() is None:
            time.sleep(0.01)
        b, s1 = snap(vm.pid), vm.stats_now()
        bj = bl.wait(dur + slack + 30)
        time.sleep(0.2)
        rc = stop_guest_and_wait(vm, be, PORT, 10)
        g = guest_fields(vm.text(), r'net-sink done')
        if not g:
            raise RuntimeError('net-sink printed no counters: ' + ' | '.join(vm.text().strip().splitlines()[-2:]))
        w = vmm_window(s0, s1)
        # frames the VMM took in the window: its own count (minivmm), or what QEMU read from the tap
        dev = TAP if be == 'tap' else VETH_VM
        frames_fn = ((lambda x, y: w.get('vmm_rx_frames')) if w else
                     (lambda x, y: ifdelta(x, y, dev, 'tx_packets' if be == 'tap' else 'rx_packets')))
        r = window_metrics(a, b, frames_fn)
        r.pop('rate', None)
        r.update(w)
        c0, c1 = bj['counters']
        el = bj['elapsed_s'] or dur
        off = bj['offered']
        rx = g.get('rx', 0)
        r.update(rc=rc, rate=rx / el, offered_pps=off / el if off else None, blaster_pps=bj['pps'],
                 blaster_sent=bj['frames'], guest_rx=rx, guest_lost=g.get('lost'), reorders=g.get('reorders'),
                 guest_bad=g.get('bad', 0) + g.get('badsum', 0) + g.get('corrupt', 0),
                 delivered_pct=100.0 * rx / off if off else None, rate_asked=cfg.get('rate') or 0)
        # where the rest went: the tap's queue (tap tx_dropped), the veth (vh0 tx_dropped), the VMM
        if be == 'tap':
            r['kernel_drops'] = ifdelta(c0, c1, TAP, 'tx_dropped')
        else:
            r['kernel_drops'] = ifdelta(c0, c1, VETH_HOST, 'tx_dropped')
        js = vm.exit_json()
        ns, fr = worker_ns(js)
        r.update(wrk_cpu_ns=ns, wrk_frames=fr, **_exit_drops(js))
        return r
    finally:
        vm.kill()
        _finish_vm(vm, cfg)


def run_idle(cfg, M, tmp):
    """A networked VM whose guest is idle (net-sink, no traffic) for M['idle']
    seconds: worker CPU % (minivmm's own counters), I/O-thread CPU % (QEMU's
    main loop), resident memory. The test guest's vCPU busy-polls its rings
    whatever the VMM does, so vCPU CPU is reported but is not the VMM's cost."""
    q = cfg['queues']
    vm = VM(cfg, f'test=net-sink queues={q} secs={math.ceil(M["idle"] + 10)}', tmp + '.out')
    try:
        vm.ready('net-sink')
        time.sleep(0.5)
        a, s0 = snap(vm.pid), vm.stats_now()
        time.sleep(M['idle'])
        b, s1 = snap(vm.pid), vm.stats_now()
        rc = stop_guest_and_wait(vm, cfg['backend'], PORT, 10)
        r = window_metrics(a, b, lambda x, y: None)
        r.update(vmm_window(s0, s1))
        r.update(rc=rc)
        return r
    finally:
        vm.kill()
        _finish_vm(vm, cfg)


def run_rr(cfg, size, sessions_list, M, tmp):
    """Request/response: guest net-echo, host netpeer echo-check --window N. One boot, one window per N."""
    q = cfg['queues']
    vm = VM(cfg, f'test=net-echo queues={q} secs=120', tmp + '.out')
    res = []
    try:
        vm.ready('net-echo')
        resolve_guest(cfg['backend'])
        for n in sessions_list:
            count = M['rr_count'] if n > 1 else max(300, M['rr_count'] // 8)
            a, s0 = snap(vm.pid), vm.stats_now()
            p = subprocess.run(netpeer('echo-check', '--dst', guest_ip(cfg['backend']), '--port', PORT,
                                       '--count', count, '--sizes', f'{size}-{size}', '--flows', min(n, 8),
                                       '--window', n, '--allow-loss', '--json'),
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)
            b, s1 = snap(vm.pid), vm.stats_now()
            j = parse_json_out(p.stdout)
            r = window_metrics(a, b, lambda x, y: None)
            r.update(vmm_window(s0, s1))
            el = (j.get('elapsed_ms') or 1) / 1000.0
            r['rate'] = j.get('received', 0) / el
            r['io_ns_frame'] = r['io_cpu_pct'] / 100 * 1e9 / (2 * r['rate']) if r['rate'] else 0.0
            r['vmm_cs_frame'] = r['vmm_cs_s'] / (2 * r['rate']) if r['rate'] else 0.0
            r['mean_lat_us'] = 1e6 * n / r['rate'] if r['rate'] else None   # Little's law
            r.update(sessions=n, rr_sent=j.get('sent'), rr_received=j.get('received'), rr_lost=j.get('lost'),
                     rr_corrupt=j.get('corrupt'), rr_result=j.get('result'))
            res.append(r)
        rc = stop_guest_and_wait(vm, cfg['backend'], PORT, 15)
        g = guest_fields(vm.text(), r'net-echo done')
        ns, fr = worker_ns(vm.exit_json())
        for r in res:
            r.update(rc=rc, guest_rx=g.get('rx'), guest_drops=g.get('drops'), wrk_cpu_ns=ns, wrk_frames=fr)
        return res
    finally:
        vm.kill()
        _finish_vm(vm, cfg)


def run_boot(vmm, tmp):
    """VMM start -> test guest exit, test=hello, no network device."""
    cfg = dict(vmm=vmm.split()[0], backend='tap', queues=1, threads='pq', pin='off', engine='uring', net=False,
               extra=vmm.split()[1:])
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
