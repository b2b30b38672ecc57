# SPDX-License-Identifier: Apache-2.0
"""The VMs under test (minivmm or QEMU booting the test guest), where their
threads go, and the host-side helpers that talk to them."""
import json
import os
import re
import signal
import subprocess
import time

import hostinfo
from common import BRIDGE, MAC, TAP, VETH_VM, guest_ip, minivmm_of, read, tool


def placement(queues, workers):
    """vCPU and worker CPUs from the host's online CPUs (hostinfo.online_cpus):
    vCPU i on the i-th CPU of the pool, worker j on the (queues + j)-th, both
    wrapping. On hosts with more than 2 CPUs the last CPU is kept out of the
    pool for the host peer (netpeer, the blaster; see peer_cpu). On 2 CPUs:
    vCPU 0 on CPU 0, worker 0 on CPU 1, as before."""
    cpus = hostinfo.online_cpus()
    pool = cpus[:-1] if len(cpus) > 2 else cpus
    vcpus = [pool[i % len(pool)] for i in range(queues)]
    wcpus = [pool[(queues + j) % len(pool)] for j in range(workers)]
    return vcpus, wcpus


def peer_cpu():
    """Where the host-side load generator runs when pinned: the last online CPU."""
    return hostinfo.online_cpus()[-1]


def nr_workers(cfg):
    t = cfg['threads']
    return cfg['queues'] if t == 'pq' else (None if t == 'auto' else int(t))


def net_spec(cfg):
    """minivmm's --net value for a benchmark configuration."""
    q = cfg['queues']
    be = {'tap': f'tap={TAP}', 'packet': f'packet={VETH_VM}', 'xdp': f'xdp={VETH_VM}'}[cfg['backend']]
    net = f"{be},queues={q},mac={MAC},engine={cfg['engine']}"
    net += ',threads=' + {'pq': 'per-queue'}.get(cfg['threads'], cfg['threads'])
    if cfg.get('rx'):
        net += f",rx={cfg['rx']}"
    if cfg.get('poll'):
        net += f",poll-us={cfg['poll']}"
    for kv in cfg.get('extra_net', ()):     # more of --net's keys (a rate limit, ...)
        net += ',' + kv
    if cfg['pin'] == 'on' and nr_workers(cfg):
        net += ',cpus=' + ','.join(map(str, placement(q, nr_workers(cfg))[1]))
    return net


class VM:
    def __init__(self, cfg, cmdline, out):
        self.cfg, self.out = cfg, out
        q = cfg['queues']
        tg = tool('testguest/testguest.elf')
        if cfg['backend'] != 'tap':
            cmdline += ' ip=10.0.1.2 peer=10.0.1.1'
        if cfg['vmm'] == 'minivmm':
            cpus = str(q)
            if cfg['pin'] == 'on':
                cpus += ',pin=' + ','.join(map(str, placement(q, 0)[0]))
            argv = [minivmm_of(cfg), '--kernel', tg, '--mem', '64M', '--cpus', cpus,
                    '--stats=json', '--cmdline', cmdline]
            if cfg.get('net', True):
                argv[-2:-2] = ['--net', net_spec(cfg)]
            argv[-2:-2] = cfg.get('extra', [])   # more flags of minivmm's own (--irqchip=kernel)
        else:
            argv = ['qemu-system-x86_64', '-M', 'microvm,x-option-roms=off,rtc=off,acpi=off',
                    '-name', 'bench,debug-threads=on', '-enable-kvm', '-cpu', 'host,-arch-capabilities',
                    '-m', '64', '-smp', str(q), '-nodefaults', '-no-user-config', '-nographic',
                    '-serial', 'stdio', '-device', 'isa-debug-exit,iobase=0x501,iosize=2',
                    '-device', 'i8042', '-no-reboot', '-global', 'virtio-mmio.force-legacy=false']
            if cfg.get('net', True):
                argv += ['-netdev', f'tap,id=n0,ifname={TAP},script=no,downscript=no,vhost=off,queues={q}',
                         '-device', f'virtio-net-device,netdev=n0,mac={MAC}' + (',mq=on' if q > 1 else '')]
            argv += ['-kernel', tg, '-append', cmdline]
        self.argv = argv
        subprocess.run(['ip', 'neigh', 'flush', 'all'], stderr=subprocess.DEVNULL)
        # The guest's console (stdout) and minivmm's own lines and statistics,
        # on SIGUSR1 and at exit (stderr), in two files: through one, a statistics line
        # written while the guest is half-way through a console line (its
        # output is flushed in pieces) would land inside that line.
        self.fh = open(out, 'w')
        self.fh_err = open(out + '.err', 'w')
        self.t0 = time.monotonic()
        self.p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=self.fh, stderr=self.fh_err)
        self.pid = self.p.pid

    def attach(self, timeout=10):
        """Put the tap into the bridge once the VMM has created it."""
        if self.cfg['backend'] != 'tap':
            return True
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if os.path.isdir(f'/sys/class/net/{TAP}'):
                subprocess.run(['ip', 'link', 'set', TAP, 'master', BRIDGE, 'up'], stderr=subprocess.DEVNULL)
                return True
            if self.p.poll() is not None:
                return False
            time.sleep(0.01)
        return False

    def text(self):
        """The console, then minivmm's lines (each file whole, not interleaved)."""
        console = read(self.out)
        if console and not console.endswith('\n'):
            console += '\n'
        return console + read(self.out + '.err')

    def wait_line(self, pat, timeout=15):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if re.search(pat, self.text(), re.M):
                return True
            if self.p.poll() is not None:
                return bool(re.search(pat, self.text(), re.M))
            time.sleep(0.01)
        return False

    def ready(self, test):
        """Boot to '<test> ready'; on failure raise with the VMM's last words."""
        if not self.attach() or not self.wait_line(rf'{test} ready'):
            rc = self.p.poll()
            why = '' if rc is None else f' (the VMM exited with status {rc})'
            raise RuntimeError(f'guest not ready{why}: ' + ' | '.join(self.text().strip().splitlines()[-3:]))

    def stats_now(self, timeout=None):
        """minivmm's statistics right now (SIGUSR1 prints one JSON line), with
        the time they were asked for in '_t'; None for QEMU or once minivmm
        has exited. A minivmm that does not answer in time (2 s; 10 s under
        emulated KVM, where a busy vCPU thread can hold the answer) fails
        the run."""
        if self.cfg['vmm'] != 'minivmm' or self.p.poll() is not None:
            return None
        if timeout is None:
            timeout = 10.0 if os.environ.get('MINIVMM_EMULATED_KVM') else 2.0
        before = len(self._stats_lines())
        t = time.monotonic()
        os.kill(self.pid, signal.SIGUSR1)
        end = t + timeout
        while time.monotonic() < end:
            lines = self._stats_lines()
            if len(lines) > before:
                js = json.loads(lines[-1])
                js['_t'] = t
                return js
            time.sleep(0.005)
        raise RuntimeError(f'minivmm printed no statistics within {timeout:g} s of SIGUSR1')

    def _stats_lines(self):
        # From minivmm's own file, complete lines only: text() puts that
        # file after the console, whose last line may be unfinished, and a
        # line still being written is not a snapshot yet.
        err = read(self.out + '.err')
        err = err[:err.rfind('\n') + 1]
        return [l for l in err.splitlines() if l.startswith('{"net":')]

    def wait(self, timeout):
        try:
            self.p.wait(timeout)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
        self.fh.close()
        self.fh_err.close()
        return self.p.returncode

    def kill(self):
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait()
        if not self.fh.closed:
            self.fh.close()
        if not self.fh_err.closed:
            self.fh_err.close()

    def exit_json(self):
        lines = self._stats_lines()
        try:
            return json.loads(lines[-1]) if lines else None
        except ValueError:
            return None


def netpeer(*args):
    return [tool('tools/netpeer')] + [str(a) for a in args]


def stop_guest(backend, port):
    subprocess.run(netpeer('stop', '--dst', guest_ip(backend), '--port', port, '--repeat', 3),
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def stop_guest_and_wait(vm, backend, port, timeout):
    """Stop the guest's test and wait for minivmm (or QEMU) to exit: the stop
    datagrams are sent again every half second while it runs, since they
    can be lost behind a full RX queue the guest is still working through
    (a slow guest: nested, or under emulated KVM). Returns the exit status."""
    end = time.monotonic() + timeout
    while vm.p.poll() is None and time.monotonic() < end:
        stop_guest(backend, port)
        try:
            vm.p.wait(0.5)
        except subprocess.TimeoutExpired:
            pass
    return vm.wait(max(0.1, end - time.monotonic()))


def resolve_guest(backend):
    """One ping: the guest's MAC is resolved (and learnt by the bridge) before traffic."""
    subprocess.run(['ping', '-c', '1', '-W', '1', guest_ip(backend)], stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)


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


def parse_json_out(out):
    """The last JSON object a tool printed (netpeer --json, rawnet)."""
    for line in reversed((out or '').splitlines()):
        line = line.strip()
        if line.startswith('{'):
            try:
                return json.loads(line)
            except ValueError:
                continue
    if out and '{' in out:
        try:
            return json.loads(out[out.index('{'):])
        except ValueError:
            pass
    return {}
