#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Write the seed corpora of the fuzz targets (tests/fuzz/corpus/TARGET/seed-*).

The seeds are committed; this script says where each comes from and
rebuilds them (after a change to a target's input format, say):

    tests/fuzz/seeds.py [--bzimage /boot/vmlinuz-...] [--testguest build/testguest/testguest.elf]

Each seed is a real structure in the target's input format (the formats are
described at the top of each tests/fuzz/*_fuzz.c and in fuzz_common.c): a
valid chain, the virtio init dance, real --net specs, a Debian bzImage's
header, the test guest's ELF headers. Inputs the fuzzer found (reproducers)
live next to them as repro-* and known-* and are not touched here.
"""
import argparse
import glob
import os
import struct
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..')
CORPUS = os.path.join(ROOT, 'tests', 'fuzz', 'corpus')


def u8(*v): return bytes(v)
def u16(v): return struct.pack('<H', v)
def u32(v): return struct.pack('<I', v)
def u64(v): return struct.pack('<Q', v)


def write(target, name, data):
    d = os.path.join(CORPUS, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, 'seed-' + name), 'wb') as f:
        f.write(data)


# ---- rings (virtq, net_tx, net_rx) ------------------------------------------
# guest mode: bit0 region 0 at 1 MiB, bit1 region 1 adjacent, bit2 region 1 present
# queue: b (bits0-3 log2 size, 0x10 EVENT_IDX, 0x20 INDIRECT, 0x40 raw addrs,
#        0x80 raw size), [size], base/16 or desc/avail/used, start index
def ring(mode=0, log2=4, event_idx=False, indirect=False, base=0, start=0):
    b = log2 | (0x10 if event_idx else 0) | (0x20 if indirect else 0)
    return u8(mode, b, base) + u16(start)


# driver ops (fuzz_vq_driver_op)
def desc(i, addr_sel, length, flags, nxt):
    return u8(0, i) + u16(addr_sel) + u16(length) + u8(flags, nxt)


def offer(head):
    return u8(2) + u16(head)


def chain(head, data_sel, lens, writable=0, indirect_table=None):
    """A well-formed chain (op 3): len(lens) segments, the last `writable`
    device-writable; segment lengths 1..256."""
    n = len(lens)
    assert 1 <= n <= 8 and 0 <= writable <= 7
    b = (n - 1) | (writable << 3) | (0x40 if indirect_table is not None else 0)
    out = u8(3, b, head) + u16(data_sel)
    if indirect_table is not None:
        out += u16(indirect_table)
    return out + bytes(l - 1 for l in lens)


def poke(sel, val):
    return u8(5) + u16(sel) + u8(val)


def virtq_seeds():
    POP, PUSH_OLD, PUSH_NEW, PUBLISH, SIGNAL, ENABLE, DISABLE, PENDING, RESET = range(8, 17)
    write('virtq', 'valid-chain',
          ring(log2=3) + chain(0, 0x1000, [12, 100], writable=1) + u8(POP, PENDING) +
          u8(PUSH_OLD) + u32(64) + u8(PUBLISH, SIGNAL, ENABLE, POP, DISABLE))
    write('virtq', 'indirect-event-idx',
          ring(log2=3, event_idx=True, indirect=True) +
          chain(1, 0x1800, [16, 32, 64], writable=2, indirect_table=0x2000) +
          u8(POP, PUSH_NEW) + u32(80) + u8(PUBLISH, SIGNAL, SIGNAL, ENABLE) +
          u8(7) + u16(0) + u8(SIGNAL))
    write('virtq', 'wrap-around-start',
          ring(log2=2, event_idx=True, start=0xfffe) +
          chain(0, 0x1000, [64], writable=1) + chain(1, 0x1100, [64], writable=1) +
          chain(2, 0x1200, [64], writable=1) +
          u8(POP, POP, POP, PUSH_OLD) + u32(1) + u8(PUSH_OLD) + u32(2) + u8(PUSH_OLD) + u32(3) +
          u8(PUBLISH, SIGNAL, ENABLE))
    write('virtq', 'loop-stays-broken',
          ring(log2=3) + desc(0, 0x1000, 16, 1, 0) + offer(0) + u8(POP, POP, PENDING, RESET) +
          chain(0, 0x1000, [8]) + u8(POP))
    write('virtq', 'buffer-across-adjacent-regions',
          ring(mode=6, log2=3) + desc(0, 0x3ff8, 16, 2, 0) + offer(0) + u8(POP, POP))
    write('virtq', 'raw-misaligned-layout',
          u8(0, 0x43) + u64(0x1001) + u64(0x2000) + u64(0x3000) + u16(0) + u8(POP))


def net_tx_seeds():
    TX_ONE, COMPLETE, DRAIN, FLUSH, KICK = range(8, 13)
    write('net_tx', 'one-frame',
          ring() + chain(0, 0x1000, [72]) + u8(TX_ONE, 0, FLUSH))
    write('net_tx', 'split-header-in-flight',
          ring(event_idx=True) + chain(0, 0x1000, [10, 2, 100]) + u8(TX_ONE, 0x80) +
          chain(3, 0x1100, [12, 1, 1, 60]) + chain(7, 0x1200, [200]) + u8(DRAIN, COMPLETE, 0) +
          u8(FLUSH, KICK, TX_ONE, 0))
    write('net_tx', 'bad-chains-returned',
          ring() + chain(0, 0x1000, [12]) + chain(1, 0x1100, [40, 40], writable=1) +
          chain(3, 0x1200, [60]) + u8(DRAIN, FLUSH))
    write('net_tx', 'indirect-errors',
          ring(indirect=True) + chain(0, 0x1000, [12, 20, 30, 40], indirect_table=0x2000) +
          chain(1, 0x1400, [100]) + chain(2, 0x1500, [100]) +
          u8(TX_ONE, 1, TX_ONE, 2, TX_ONE, 3, FLUSH))


def net_rx_seeds():
    PREPARE, COMPLETE, DELIVER, KICKED, FLUSH, RELEASE, DELIVER_FRAME = range(8, 15)

    def frame(length, how=0, data=b''):
        return u16(length) + u8(how, len(data)) + data

    bufs = b''.join(chain(i, 0x1000 + 0x100 * i, [256], writable=1) for i in range(6))
    write('net_rx', 'mrg-prepare-complete',
          ring() + u8(0x01) + bufs + u8(PREPARE, 0, COMPLETE, 0x10) + frame(600) + u8(FLUSH))
    write('net_rx', 'no-mrg-deliver',
          ring(event_idx=True) + u8(0x00) +
          chain(0, 0x1000, [16] + [256] * 7, writable=7) + u8(DELIVER) + frame(1000) + u8(FLUSH))
    write('net_rx', 'small-and-readonly-buffers',
          ring() + u8(0x01) + chain(0, 0x1000, [8], writable=1) + chain(1, 0x1100, [64]) +
          chain(2, 0x1200, [2] * 7 + [1], writable=7) + u8(DELIVER) + frame(13) +
          u8(PREPARE, 1, KICKED, FLUSH))
    dst_multicast = bytes(12) + bytes([0x01, 0x00, 0x5e, 0, 0, 1])
    write('net_rx', 'filtered-multicast',
          ring(indirect=True) + u8(0x01 | 0x02 | (1 << 2)) +
          chain(0, 0x1000, [128, 128], writable=2, indirect_table=0x2000) +
          chain(1, 0x1200, [256], writable=1) +
          u8(DELIVER) + frame(100, data=dst_multicast) + u8(DELIVER) + frame(100) + u8(FLUSH))
    # GSO frames as a packet socket hands them over (after GRO), for a guest
    # without TSO: cut into segments by net/gso.c.
    mac = bytes([2, 0, 0, 0, 0, 1]) + bytes([2, 0, 0, 0, 0, 2])
    def vnet(gso_type, hdr_len, gso_size, csum_start, csum_offset):
        return struct.pack('<BBHHHHH', 1, gso_type, hdr_len, gso_size, csum_start, csum_offset, 0)
    payload = 1000
    ip4 = struct.pack('>BBHHHBBH4s4s', 0x45, 0, 20 + 20 + payload, 1, 0x4000, 64, 6, 0,
                      bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2]))
    tcp = struct.pack('>HHIIBBHHH', 5001, 40000, 1000, 0, 5 << 4, 0x18, 65535, 0, 0)
    tcp4 = vnet(1, 54, 400, 34, 16) + mac + b'\x08\x00' + ip4 + tcp
    ip6 = struct.pack('>IHBB16s16s', 6 << 28, 20 + payload, 6, 64, bytes(15) + b'\x01', bytes(15) + b'\x02')
    tcp6 = vnet(4, 74, 500, 54, 16) + mac + b'\x86\xdd' + ip6 + tcp
    udp = struct.pack('>HHHH', 5353, 5353, 8 + payload, 0)
    ip4u = struct.pack('>BBHHHBBH4s4s', 0x45, 0, 20 + 8 + payload, 1, 0, 64, 17, 0,
                       bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2]))
    uso = vnet(5, 42, 300, 34, 6) + mac + b'\x08\x00' + ip4u + udp
    # The same frames whole for the gso target: a shape byte (scratch size,
    # segments to skip, where emit stops) and the frame.
    fill = bytes((i * 7) & 0xff for i in range(payload))
    write('gso', 'tcp4', u8(0) + tcp4 + fill)
    write('gso', 'tcp6-skip-1', u8(1 << 2) + tcp6 + fill)
    write('gso', 'udp-l4-stop-after-2', u8(0x40 | (1 << 4)) + uso + fill)
    vlan = tcp4[:12] + mac + b'\x81\x00\x00\x05' + b'\x08\x00' + ip4 + tcp
    write('gso', 'tcp4-vlan-small-scratch', u8(1) + vlan + fill)
    write('net_rx', 'gso-tcp4-cut-for-a-guest-without-tso',
          ring() + u8(0x01) + bufs + u8(DELIVER_FRAME) + frame(len(tcp4) + payload, data=tcp4) +
          u8(FLUSH) + bufs + u8(DELIVER_FRAME, FLUSH))
    write('net_rx', 'gso-tcp6-and-udp-l4',
          ring(event_idx=True) + u8(0x01) + bufs + u8(DELIVER_FRAME) + frame(len(tcp6) + payload, data=tcp6) +
          u8(DELIVER_FRAME) + frame(len(uso) + payload, data=uso) + u8(FLUSH))
    write('net_rx', 'gso-tcp4-to-a-guest-with-tso',
          ring() + u8(0x01 | 0x40) + bufs + u8(DELIVER_FRAME) + frame(len(tcp4) + payload, data=tcp4) + u8(FLUSH))
    write('net_rx', 'inflight-reads-release',
          ring(log2=3) + u8(0x01 | 0x20) + bufs + u8(PREPARE, 0, PREPARE, 1, COMPLETE, 0x04,
                                                      COMPLETE, 0x11) + frame(40) +
          u8(RELEASE, FLUSH))


# ---- mmio ----------------------------------------------------------------------
REGS = ['MAGIC', 'VERSION', 'DEVICE_ID', 'VENDOR', 'DEVICE_FEATURES', 'DEVICE_FEATURES_SEL',
        'DRIVER_FEATURES', 'DRIVER_FEATURES_SEL', 'QUEUE_SEL', 'QUEUE_NUM_MAX', 'QUEUE_NUM',
        'QUEUE_READY', 'QUEUE_NOTIFY', 'INTERRUPT_STATUS', 'INTERRUPT_ACK', 'STATUS',
        'DESC_LOW', 'DESC_HIGH', 'AVAIL_LOW', 'AVAIL_HIGH', 'USED_LOW', 'USED_HIGH', 'SHM_SEL',
        'SHM_LEN_LOW', 'SHM_LEN_HIGH', 'SHM_BASE_LOW', 'SHM_BASE_HIGH', 'CONFIG_GENERATION',
        'CONFIG', 'CONFIG4']


def wr(reg, value):
    return u8(0x80, REGS.index(reg)) + u32(value)


def rd(reg, width_idx=0):
    return u8(0x08 | width_idx, REGS.index(reg))


def init_dance(queues, activate=True):
    out = wr('STATUS', 0) + rd('MAGIC') + rd('VERSION') + rd('DEVICE_ID') + rd('VENDOR')
    out += wr('STATUS', 1) + wr('STATUS', 3)
    out += wr('DEVICE_FEATURES_SEL', 0) + rd('DEVICE_FEATURES')
    out += wr('DEVICE_FEATURES_SEL', 1) + rd('DEVICE_FEATURES')
    out += wr('DRIVER_FEATURES_SEL', 1) + wr('DRIVER_FEATURES', 1)
    out += wr('DRIVER_FEATURES_SEL', 0) + wr('DRIVER_FEATURES', 0x21)
    out += wr('STATUS', 0xb) + rd('STATUS')
    for q in range(queues):
        out += wr('QUEUE_SEL', q) + rd('QUEUE_NUM_MAX') + rd('QUEUE_READY') + wr('QUEUE_NUM', 256)
        base = 0x100000 + 0x4000 * q
        out += wr('DESC_LOW', base) + wr('DESC_HIGH', 0) + wr('AVAIL_LOW', base + 0x1000)
        out += wr('AVAIL_HIGH', 0) + wr('USED_LOW', base + 0x2000) + wr('USED_HIGH', 0)
        out += wr('QUEUE_READY', 1)
    if activate:
        out += wr('STATUS', 0xf) + rd('STATUS')
    return out


def mmio_shape(queues, shape=8, features=0x21, config=12, fail_call=None):
    out = u8(queues, shape) + u64(features) + u8(config)
    if fail_call is not None:
        out += u8(fail_call)
    return out


def mmio_seeds():
    cfg_reads = b''.join(u8(0x08 | w, REGS.index('CONFIG')) for w in (1, 2, 0, 3))
    write('mmio', 'init-dance-3-queues',
          mmio_shape(3) + init_dance(3) + cfg_reads + rd('INTERRUPT_STATUS') +
          wr('INTERRUPT_ACK', 3) + rd('CONFIG_GENERATION') + wr('STATUS', 0) + rd('STATUS'))
    write('mmio', 'activate-fails-needs-reset',
          mmio_shape(2, shape=8 | 0x20) + init_dance(2) + rd('INTERRUPT_STATUS') +
          wr('INTERRUPT_ACK', 2) + wr('STATUS', 0))
    write('mmio', 'ioeventfd-registration-fails',
          mmio_shape(4, shape=8 | 0x10, fail_call=3))
    write('mmio', 'worker-events-and-odd-accesses',
          mmio_shape(1) + init_dance(1) + u8(0xc0, 0) + u8(0xc0, 13) + b'ring broken!!' +
          u8(0xc0, 2) + rd('STATUS', 1) + rd('MAGIC', 2) + u8(0x00) + u16(0x72) +
          u8(0x13) + u16(0xffc) + u8(0x40 | 3) + u16(0x100) + u64(0x1122334455667788) +
          wr('QUEUE_NUM', 16) + wr('STATUS', 0x80))


# ---- ioapic --------------------------------------------------------------------
# shape: bits0-3 ID, 0x10 a route update fails (then its 1-based number)
# ops: 0x00-0x7f MMIO (0x40 write, 0x08 known register, 0x10 0x10 below,
#      low 3 bits width), 0x80-0xbf REGSEL+WINDOW (0x01 any index, 0x02 clear
#      the mask bit, 0x04 read), 0xc0-0xff events (low 2 bits: line, EOI exit,
#      line with any pin number, EOI register; 0x04 line up)
def io_prog(index, value, unmask=False):
    return u8(0x80 | (0x02 if unmask else 0), index) + u32(value)


def io_read(index):
    return u8(0x84, index) + u32(0)


def io_line(pin, up):
    return u8(0xc0 | (0x04 if up else 0), pin)


def io_eoi(vector, by_register=False):
    return u8(0xc3 if by_register else 0xc1, vector)


def ioapic_seeds():
    # Linux under --irqchip=split: ID and version read, the UART's pin 4 as
    # an edge interrupt to vector 0x24 on APIC 0, a few edges.
    write('ioapic', 'linux-edge-uart',
          u8(2) + io_read(0x00) + io_read(0x01) + io_prog(0x19, 0) +
          io_prog(0x18, 0x24, unmask=True) + io_line(4, True) + io_line(4, False) +
          io_line(4, True) + io_read(0x18))
    # A level pin (virtio-mmio's) delivered, held off by Remote IRR, EOI'd
    # by the register and by the exit, and the edge/level flip Linux uses to
    # clear Remote IRR on IOAPICs without the EOI register.
    write('ioapic', 'level-eoi-and-flip',
          u8(3) + io_prog(0x21, 0x01000000) + io_prog(0x20, 0xa000 | 0x31, unmask=True) +
          io_line(8, True) + io_eoi(0x31, by_register=True) + io_eoi(0x31) +
          io_prog(0x20, 0x31, unmask=True) + io_prog(0x20, 0xa000 | 0x31, unmask=True) +
          io_line(8, False) + io_read(0x20))
    # A route update refused by KVM, masked/ExtINT entries, odd accesses.
    write('ioapic', 'route-fails-extint-odd-widths',
          u8(0x10 | 5, 2) + io_prog(0x10, 0x20, unmask=True) + io_prog(0x12, 0x721, unmask=True) +
          io_line(0, True) + io_line(1, True) + io_line(30, True) +
          u8(0x01, 0) + u8(0x4b, 1, 0xff) + u8(0x43, 0xff, 0xff) + u16(0x1005) + u8(0x48, 0) + u32(0xff))


# ---- net_ctrl -----------------------------------------------------------------
VIRTIO_NET_F_GUEST_CSUM, VIRTIO_NET_F_GUEST_TSO4, VIRTIO_NET_F_MQ = 1, 7, 22


def ctrl_setup(pairs=1, activated=True, usable=None, features=0, fail_offload=False):
    shape = (pairs - 1) | (0x80 if activated else 0) | (0x40 if fail_offload else 0)
    return u8(shape, (usable or pairs) - 1) + u64(features)


def cmd(cls, c, payload=b'', writable=1, one_byte_segs=False, seg=16):
    shape = writable | (0x10 if one_byte_segs else 0)
    out = u8(0, shape, len(payload), cls, c) + payload
    n = 2 + len(payload)
    if not one_byte_segs:
        out += bytes([seg - 1]) * ((n + seg - 1) // seg)
    return out + bytes([0]) * writable


def filt(mac):
    return u8(1) + bytes(mac)


def net_ctrl_seeds():
    RX, MAC, MQ, OFFLOADS = 0, 1, 4, 5
    write('net_ctrl', 'rx-modes',
          ctrl_setup() + cmd(RX, 0, b'\x00') + cmd(RX, 1, b'\x01') + filt(b'\x01\x00\x5e\x00\x00\x01') +
          filt(b'\xff' * 6) + cmd(RX, 0, b'\x01', writable=0))
    table = u32(1) + bytes([2, 0, 0, 0, 0, 9]) + u32(2) + bytes([1, 0, 0x5e, 0, 0, 1]) + bytes([0x33, 0x33, 0, 0, 0, 1])
    write('net_ctrl', 'mac-address-and-tables',
          ctrl_setup() + cmd(RX, 0, b'\x00') + cmd(MAC, 1, bytes([2, 0x4d, 0, 0, 0, 7]), one_byte_segs=True) +
          filt(bytes([2, 0x4d, 0, 0, 0, 7])) + cmd(MAC, 0, table, seg=5) + filt(bytes([2, 0, 0, 0, 0, 9])) +
          cmd(MAC, 1, bytes([1, 0, 0, 0, 0, 1])))
    write('net_ctrl', 'vq-pairs-set',
          ctrl_setup(pairs=4, usable=3, features=1 << VIRTIO_NET_F_MQ) + cmd(MQ, 0, u16(2)) +
          cmd(MQ, 0, u16(4)) + cmd(MQ, 0, u16(0)) + cmd(MQ, 0, u16(3)) + cmd(MQ, 0, u16(1)))
    write('net_ctrl', 'guest-offloads',
          ctrl_setup(features=(1 << VIRTIO_NET_F_GUEST_CSUM) | (1 << VIRTIO_NET_F_GUEST_TSO4)) +
          cmd(OFFLOADS, 0, u64(1 << VIRTIO_NET_F_GUEST_CSUM)) +
          cmd(OFFLOADS, 0, u64((1 << VIRTIO_NET_F_GUEST_CSUM) | (1 << VIRTIO_NET_F_GUEST_TSO4))) +
          cmd(OFFLOADS, 0, u64(1 << 10)) + cmd(OFFLOADS, 0, u64(0), writable=3))
    write('net_ctrl', 'oversized-command',
          ctrl_setup() + u8(0, 0x80 | 0x0c | 1, 1, RX, 0, 1) + bytes([15]) * 8 + u8(0))


# ---- loaders -------------------------------------------------------------------
# prefix: flags (bits0-1 low RAM 1.06/3/4/8 MiB, bit2 RAM at 4 GiB, bit3 initrd,
#         bits4-5 command line "", usual, 4095 bytes, 4096 bytes; bit6 boot_load),
#         vCPUs, initrd size / 64 (u16), RSDP (u32)
def boot_prefix(low=2, high=False, initrd_64=0, cmdline=1, boot_load=False, cpus=1, rsdp=0):
    flags = low | (4 if high else 0) | (8 if initrd_64 else 0) | (cmdline << 4) | (0x40 if boot_load else 0)
    return u8(flags, cpus) + u16(initrd_64) + u32(rsdp)


def bzimage_seeds(path):
    with open(path, 'rb') as f:
        real = f.read()
    sects = real[0x1f1] or 4
    setup = (sects + 1) * 512
    # A bzImage that fits a small guest: the real setup header, 4 setup
    # sectors, 1 KiB of the real protected-mode kernel, init_size 1 MiB,
    # preferred address 2 MiB.
    hdr = bytearray(real[:5 * 512])
    hdr[0x1f1] = 4
    struct.pack_into('<I', hdr, 0x1f4, 1024 // 16)       # syssize
    struct.pack_into('<Q', hdr, 0x258, 0x200000)         # pref_address
    struct.pack_into('<I', hdr, 0x260, 0x100000)         # init_size
    small = bytes(hdr) + real[setup:setup + 1024]
    write('bzimage', 'debian-small-initrd', boot_prefix(initrd_64=16, cpus=2) + small)
    write('bzimage', 'debian-small-boot-load-high', boot_prefix(high=True, boot_load=True, cpus=4) + small)
    write('bzimage', 'debian-header-truncated', boot_prefix(boot_load=True, initrd_64=0xffff) + real[:1024])
    # The real numbers (init_size ~64 MiB at 16 MiB): more than the guest has.
    big = bytearray(small)
    struct.pack_into('<I', big, 0x260, struct.unpack_from('<I', real, 0x260)[0])
    struct.pack_into('<Q', big, 0x258, struct.unpack_from('<Q', real, 0x258)[0])
    write('bzimage', 'debian-real-sizes', boot_prefix(low=3, cmdline=3) + bytes(big))


def pvh_elf(entry, segs, is64=True, note_in_sections=False):
    """An ET_EXEC ELF: segs = [(paddr, data, memsz)], a Xen PVH entry note."""
    note = u32(4) + u32(4) + u32(18) + b'Xen\0' + u32(entry)
    ehsize, phsize, shsize = (64, 56, 64) if is64 else (52, 32, 40)
    nph = len(segs) + (0 if note_in_sections else 1)
    off = ehsize + nph * phsize
    blobs = []
    for paddr, data, memsz in segs:
        blobs.append((off, paddr, data, memsz))
        off += len(data)
    note_off = off
    off += len(note)
    shoff = off if note_in_sections else 0
    nsh = 2 if note_in_sections else 0
    ident = b'\x7fELF' + bytes([2 if is64 else 1, 1, 1]) + bytes(9)
    machine = 62 if is64 else 3
    if is64:
        eh = ident + struct.pack('<HHIQQQIHHHHHH', 2, machine, 1, entry, ehsize, shoff, 0, ehsize,
                                 phsize, nph, shsize, nsh, 0)
    else:
        eh = ident + struct.pack('<HHIIIIIHHHHHH', 2, machine, 1, entry, ehsize, shoff, 0, ehsize,
                                 phsize, nph, shsize, nsh, 0)
    ph = b''
    for foff, paddr, data, memsz in blobs:
        if is64:
            ph += struct.pack('<IIQQQQQQ', 1, 7, foff, paddr, paddr, len(data), memsz, 0x1000)
        else:
            ph += struct.pack('<IIIIIIII', 1, foff, paddr, paddr, len(data), memsz, 7, 0x1000)
    if not note_in_sections:
        if is64:
            ph += struct.pack('<IIQQQQQQ', 4, 4, note_off, 0, 0, len(note), len(note), 4)
        else:
            ph += struct.pack('<IIIIIIII', 4, note_off, 0, 0, len(note), len(note), 4, 4)
    out = eh + ph + b''.join(d for _, _, d, _ in blobs) + note
    if note_in_sections:
        null = bytes(shsize)
        if is64:
            sh = struct.pack('<IIQQQQIIQQ', 0, 7, 0, 0, note_off, len(note), 0, 0, 4, 0)
        else:
            sh = struct.pack('<IIIIIIIIII', 0, 7, 0, 0, note_off, len(note), 0, 0, 4, 0)
        out += null + sh
    return out


def pvh_seeds(path):
    with open(path, 'rb') as f:
        tg = f.read()
    # The test guest's first bytes of text and data, at its addresses, with
    # its entry point (0x101000 in the real one, read from its note).
    entry = 0x101000
    k = tg.find(b'\x04\x00\x00\x00\x04\x00\x00\x00\x12\x00\x00\x00Xen\x00')
    if k >= 0:
        entry = struct.unpack_from('<I', tg, k + 16)[0]
    text = tg[0x1000:0x1000 + 512]
    data = tg[0xb000:0xb000 + 256]
    segs = [(0x100000, text, 0x2000), (0x200000, data, 0x3000)]
    write('pvh', 'testguest-elf64', boot_prefix(initrd_64=16) + pvh_elf(entry, segs))
    write('pvh', 'testguest-elf32-boot-load', boot_prefix(boot_load=True, cpus=2, cmdline=2) +
          pvh_elf(entry, segs, is64=False))
    write('pvh', 'testguest-note-in-sections', boot_prefix(low=3, initrd_64=64) +
          pvh_elf(entry, segs, note_in_sections=True))
    write('pvh', 'segment-above-4g', boot_prefix(high=True, initrd_64=32) +
          pvh_elf(entry, segs + [(0x100000000, data[:64], 0x1000)]))
    write('pvh', 'testguest-head-truncated', boot_prefix(boot_load=True) + tg[:2048])


# ---- cli ---------------------------------------------------------------------------
def argv(*args):
    return b'\0'.join(a.encode() for a in args)


def cli_seeds():
    write('cli', 'boot', argv('--kernel', '/boot/vmlinuz', '--mem', '256M', '--cpus', '2',
                              '--cmdline', 'console=ttyS0 reboot=k'))
    write('cli', 'two-nets', argv('--kernel', 'k', '--net', 'tap=tap0,queues=4,threads=2,cpus=0,1',
                                  '--net', 'packet=eth0,fanout=cpu,rx=ring,qdisc-bypass=off,mtu=9000,'
                                  'mac=02:00:00:00:00:01'))
    write('cli', 'pinned-serial-file', argv('--kernel', 'k', '--cpus', '4,pin=0-3', '--serial',
                                            'file:/tmp/console.log', '--stats=json', '--acpi=off'))
    write('cli', 'net-first', argv('--net', 'tap,queue-size=1024,engine=epoll,poll-us=50', '--kernel',
                                   'k', '--initrd', 'i', '--mem', '1GiB'))
    write('cli', 'help', argv('--help'))
    write('cli', 'bad-values', argv('--kernel', 'k', '--mem', '12Q', '--net', 'bogus=1'))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    kernels = sorted(glob.glob('/boot/vmlinuz-*'))
    ap.add_argument('--bzimage', default=kernels[-1] if kernels else None)
    ap.add_argument('--testguest', default=os.path.join(ROOT, 'build', 'testguest', 'testguest.elf'))
    a = ap.parse_args()
    if not a.bzimage or not os.path.exists(a.bzimage):
        sys.exit('seeds.py: no bzImage (install linux-image-amd64 or pass --bzimage)')
    if not os.path.exists(a.testguest):
        sys.exit('seeds.py: %s missing (run make)' % a.testguest)
    virtq_seeds()
    net_tx_seeds()
    net_rx_seeds()
    mmio_seeds()
    ioapic_seeds()
    net_ctrl_seeds()
    bzimage_seeds(a.bzimage)
    pvh_seeds(a.testguest)
    cli_seeds()


if __name__ == '__main__':
    main()
