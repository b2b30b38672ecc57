# SPDX-License-Identifier: Apache-2.0
"""The host's own ceilings (build/tools/rawnet, bench/rawnet.c) and the raw
blaster, run in the same benchmark run as the VMM rows, interleaved with them.

A ceiling is a plain process doing what a VMM backend does, as fast as one core
allows, on the same device: writing 64-byte frames into the tap (tap-write),
reading them while the blaster feeds it (tap-read), the same on the veth with
AF_PACKET (packet-write, packet-read plain and TPACKET_V3 ring) and with a plain
AF_XDP socket in copy mode (xdp-tx, xdp-rx). Every VMM rate is then also shown
as a fraction of the matching ceiling (CEILING_OF)."""
import select
import subprocess
import time

import hostinfo
from common import BRIDGE, MAC, PORT, TAP, VETH_HOST, VETH_VM, guest_ip, host_ip, mac_of, tool
from sample import iface_counters
from vm import netpeer, parse_json_out, peer_cpu

CEILING_MODES = ['tap-write', 'tap-read', 'packet-write', 'packet-read', 'packet-read-ring', 'xdp-tx', 'xdp-rx']


def ceiling_of(workload, cfg):
    """The ceiling mode a VMM row is compared with, or None."""
    be = cfg['backend']
    if workload == 'tx':
        return {'tap': 'tap-write', 'packet': 'packet-write', 'xdp': 'xdp-tx'}.get(be)
    if workload in ('rx', 'rxb'):
        if be == 'packet':
            return 'packet-read' if cfg.get('rx') == 'recv' else 'packet-read-ring'
        return {'tap': 'tap-read', 'xdp': 'xdp-rx'}.get(be)
    return None


def rawnet(*args):
    return [tool('tools/rawnet')] + [str(a) for a in args]


def blaster_dev(backend):
    """Where the blaster injects frames for a guest: into the bridge (which
    forwards them to the tap), or the host end of the veth."""
    return BRIDGE if backend == 'tap' else VETH_HOST


def offered(c0, c1, dev):
    """Frames put on the wire by the blaster between two counter samples: the
    device's tx_packets plus what it dropped (a veth drops when its peer's
    backlog is full; a bridge counts every frame it forwards)."""
    if dev not in c0 or dev not in c1:
        return None
    return sum(c1[dev][k] - c0[dev][k] for k in ('tx_packets', 'tx_dropped'))


class Blaster:
    """rawnet blast: 64-byte (or `size`) UDP frames with valid checksums and
    net-sink's sequence format, `flows` flows, paced to `rate` (0: as fast as
    it goes), for `secs`, towards the guest (or a ceiling reader)."""

    def __init__(self, backend, secs, size=64, flows=4, rate=0, cpu=None, ring=False):
        self.dev = blaster_dev(backend)
        argv = rawnet('blast', '--dev', self.dev, '--dst-mac', MAC, '--src-ip', host_ip(backend),
                      '--dst-ip', guest_ip(backend), '--dport', PORT, '--flows', flows, '--size', size,
                      '--secs', f'{secs:.3f}')
        if rate:
            argv += ['--rate', str(rate)]
        if cpu is not None:
            argv += ['--cpu', str(cpu)]
        if ring:
            argv.append('--ring')
        self.c0 = iface_counters()
        self.p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def wait(self, timeout=60):
        try:
            out, err = self.p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.p.kill()
            out, err = self.p.communicate()
        c1 = iface_counters()
        j = parse_json_out(out)
        if not j.get('frames'):
            raise RuntimeError(f'blaster on {self.dev} failed: {err.strip()[-200:]}')
        j['offered'] = offered(self.c0, c1, self.dev)
        j['counters'] = (self.c0, c1)
        return j


def _reader(argv, timeout=10):
    """Start a rawnet reader and wait for its ready line (stderr)."""
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    end, said = time.monotonic() + timeout, []
    while time.monotonic() < end:
        r, _, _ = select.select([p.stderr], [], [], 0.1)
        if r:
            line = p.stderr.readline()
            if line.rstrip().endswith(': ready'):
                return p
            if not line:
                break
            said.append(line.strip())
        if p.poll() is not None:
            break
    p.kill()
    p.communicate()
    raise RuntimeError(f'{argv[1]} did not start: {" / ".join(said)[-300:]}')


def _finish(p, timeout):
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.terminate()
        out, err = p.communicate(timeout=5)
    j = parse_json_out(out)
    if 'pps' not in j:
        raise RuntimeError(f'rawnet failed: {err.strip()[-300:]}')
    return j


def _cpus():
    """Ceiling process and its peer (blaster or counting receiver) on different
    CPUs where there are two; the peer takes the last one, as for VMM rows."""
    cpus = hostinfo.online_cpus()
    return (cpus[0], peer_cpu()) if len(cpus) > 1 else (cpus[0], None)


def xdp_cleanup():
    """A killed AF_XDP process can leave its program on vm0: take it off so the
    next row (minivmm's xdp backend, the packet backend) starts clean."""
    for mode in ('xdpgeneric', 'xdpdrv'):
        subprocess.run(['ip', 'link', 'set', 'dev', VETH_VM, mode, 'off'], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)


def run_ceiling(mode, size, M, tmp):
    """One ceiling run; the row's rate is the ceiling process's own pps."""
    secs = M['warm'] + M['window']
    me, peer = _cpus()
    pin = ['--cpu', me]
    if mode.endswith('write') or mode == 'xdp-tx':
        be = 'tap' if mode.startswith('tap') else 'packet'
        cnt = subprocess.Popen(netpeer('count', '--port', PORT, '--idle-ms', 400, '--timeout-ms', 60000,
                                       '--json'), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        time.sleep(0.05)
        if be == 'tap':
            dev_args = ['--dev', TAP, '--bridge', BRIDGE, '--dst-mac', mac_of(BRIDGE)]
        else:
            dev_args = ['--dev', VETH_VM, '--dst-mac', mac_of(VETH_HOST)]
        p = subprocess.Popen(rawnet(mode, *dev_args, '--src-mac', MAC, '--src-ip', guest_ip(be), '--dst-ip',
                                    host_ip(be), '--dport', PORT, '--size', size, '--flows', 4,
                                    '--secs', f'{secs:.3f}', *pin),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            j = _finish(p, secs + 30)
        finally:
            if mode == 'xdp-tx':
                xdp_cleanup()
            try:
                out, _ = cnt.communicate(timeout=10)
            except subprocess.TimeoutExpired:
                cnt.kill()
                out, _ = cnt.communicate()
        pj = parse_json_out(out)
        return dict(rate=j['pps'], cpu_ns_frame=j['cpu_ns_frame'], frames=j['frames'], errors=j['errors'],
                    peer_rx=pj.get('received'), elapsed_s=j['elapsed_s'])
    # readers: the blaster feeds them as fast as it can
    be = 'tap' if mode == 'tap-read' else 'packet'
    if mode == 'tap-read':
        argv = rawnet('tap-read', '--dev', TAP, '--bridge', BRIDGE)
    elif mode == 'xdp-rx':
        argv = rawnet('xdp-rx', '--dev', VETH_VM)
    else:
        argv = rawnet('packet-read', '--dev', VETH_VM) + (['--ring'] if mode == 'packet-read-ring' else [])
    argv += ['--idle-ms', 300, '--secs', f'{secs + 20:.0f}', *pin]
    argv = [str(a) for a in argv]
    p = _reader(argv)
    try:
        bl = Blaster(be, secs, size=size, flows=4, cpu=peer)
        bj = bl.wait(secs + 30)
        j = _finish(p, 30)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        if mode == 'xdp-rx':
            xdp_cleanup()
    if bj.get('offered') and j['frames'] < 0.01 * bj['offered']:
        # e.g. an XDP program that did not take effect: no ceiling, not a tiny one
        raise RuntimeError(f"{mode} got {j['frames']} of the {bj['offered']} frames offered")
    off_pps = bj['offered'] / bj['elapsed_s'] if bj.get('offered') and bj.get('elapsed_s') else None
    return dict(rate=j['pps'], cpu_ns_frame=j['cpu_ns_frame'], frames=j['frames'], drops=j['drops'],
                offered_pps=off_pps, blaster_pps=bj['pps'], elapsed_s=j['elapsed_s'],
                delivered_pct=100.0 * j['frames'] / bj['offered'] if bj.get('offered') else None,
                # a reader that kept up with the blaster shows the blaster's limit, not its own
                blaster_bound=int(bool(bj.get('offered')) and j['frames'] >= 0.98 * bj['offered']))
