/* SPDX-License-Identifier: Apache-2.0 */
/* minivmm guest ABI: every guest-visible constant shared by the VMM and the
 * test guest, and the exit statuses of the minivmm process. Self-contained
 * (no includes) so a freestanding guest can use it.
 *
 * The debug-exit port keeps QEMU's isa-debug-exit semantics (iobase 0x501)
 * for values 0..63: a guest writing v makes the VMM exit with status
 * (v << 1) | 1, so one guest binary behaves the same under minivmm and under
 * QEMU. Larger values would not fit in an exit status or would look like
 * "killed by signal N" (128 + N), so they all give one reserved status,
 * MINIVMM_EXIT_DEBUG_RANGE. */
#ifndef MINIVMM_ABI_H
#define MINIVMM_ABI_H

/* Port I/O */
#define MINIVMM_PORT_COM1        0x3f8   /* 16550A UART, 8 registers */
#define MINIVMM_IRQ_COM1         4
#define MINIVMM_PORT_I8042_DATA  0x60
#define MINIVMM_PORT_I8042_CMD   0x64    /* write 0xfe: pulse reset line */
#define MINIVMM_PORT_DEBUG_EXIT  0x501   /* out v (1, 2 or 4 bytes) -> exit (v << 1) | 1, v <= 63 */
#define MINIVMM_DEBUG_EXIT_MAX   63      /* larger values -> MINIVMM_EXIT_DEBUG_RANGE */
#define MINIVMM_PORT_BOOT_TIMER  0x508   /* out MINIVMM_BOOT_TIMER_UP: "I am up" (clear of QEMU fw_cfg 0x510) */
#define MINIVMM_BOOT_TIMER_UP    123
/* QEMU's ISA pvpanic (docs/specs/pvpanic.rst), one byte: in reads the events
 * minivmm handles (PVPANIC_PANICKED | PVPANIC_CRASH_LOADED of Linux's
 * <misc/pvpanic.h>), out of either stops the VM with MINIVMM_EXIT_GUEST_PANIC.
 * The DSDT describes it (_HID "QEMU0001"). */
#define MINIVMM_PORT_PVPANIC     0x505

/* Exit statuses of the minivmm process, and what minivmm_run() and
 * minivmm_wait() return. Every status fits in 0..255 and means one thing:
 *
 *   status          meaning
 *   0               the guest reset (i8042, reboot=k) or powered off (ACPI S5,
 *                   KVM shutdown event), Ctrl-A x, minivmm_stop()
 *   (v << 1) | 1    the guest wrote v, 0..63, to the debug-exit port: 1, 3, ... 127
 *   2               bad flag, value or file: nothing ran
 *   4               the guest crashed (triple fault, KVM internal error, failed entry)
 *   6               the VMM itself failed while running
 *   8               the guest wrote a value above 63 to the debug-exit port
 *                   ("debug-exit value out of range")
 *   10              the guest panicked: it wrote PVPANIC_PANICKED or
 *                   PVPANIC_CRASH_LOADED to the pvpanic device
 *   12              the guest still ran when its time limit ran out
 *                   (--timeout, minivmm_config.timeout_secs)
 *   128 + N         stopped by signal N: SIGHUP 129, SIGINT 130, SIGQUIT 131,
 *                   SIGTERM 143 (a fatal crash of the VMM itself is the
 *                   shell's 128 + N as well: SIGSEGV 139, SIGABRT 134) */
#define MINIVMM_EXIT_OK          0       /* guest reset (i8042, reboot=k) or poweroff */
#define MINIVMM_EXIT_USAGE       2       /* bad flag, value or file */
#define MINIVMM_EXIT_GUEST_CRASH 4       /* triple fault, internal error, failed entry */
#define MINIVMM_EXIT_HOST_ERROR  6       /* the VMM itself failed while running */
#define MINIVMM_EXIT_DEBUG_RANGE 8       /* debug-exit value above MINIVMM_DEBUG_EXIT_MAX */
#define MINIVMM_EXIT_GUEST_PANIC 10      /* the guest reported a panic through pvpanic */
#define MINIVMM_EXIT_TIMEOUT     12      /* the guest outlived its time limit */
#define MINIVMM_EXIT_SIGNAL_BASE 128     /* + N: stopped by signal N */

/* Local APIC and IOAPIC, at their architectural addresses. */
#define MINIVMM_LAPIC_BASE       0xfee00000UL
#define MINIVMM_IOAPIC_BASE      0xfec00000UL
#define MINIVMM_IOAPIC_SIZE      0x1000UL

/* Device MMIO windows (virtio-mmio, 4 KiB each) start here, in the hole
 * below 4 GiB. Device k has window MINIVMM_MMIO_BASE + k * MINIVMM_MMIO_WINDOW
 * and interrupt line (GSI, ISA IRQ) MINIVMM_VIRTIO_IRQ_BASE + k; minivmm
 * appends "virtio_mmio.device=4K@<base>:<irq>" to the guest cmdline for each. */
#define MINIVMM_MMIO_BASE        0xd0000000UL
#define MINIVMM_MMIO_WINDOW      0x1000UL
#define MINIVMM_VIRTIO_IRQ_BASE  5
#define MINIVMM_VIRTIO_MAX_DEVICES 8
/* The pvpanic device's memory-mapped form (QEMU's "qemu,pvpanic-mmio"
 * binding: a 16-bit register, the event in its low byte), in the window after
 * the last virtio-mmio one; the device tree describes it. Same register as
 * MINIVMM_PORT_PVPANIC. */
#define MINIVMM_PVPANIC_MMIO_BASE (MINIVMM_MMIO_BASE + MINIVMM_VIRTIO_MAX_DEVICES * MINIVMM_MMIO_WINDOW)
#define MINIVMM_PVPANIC_MMIO_SIZE 2UL

/* Test-guest network conventions (shared by the guest and the host-side
 * test tools): a UDP datagram whose payload starts with this text makes an
 * echo/sink guest print its counters and stop. */
#define MINIVMM_NET_STOP_MAGIC   "MINIVMM-STOP"
/* Payload header of every generated or checked UDP test datagram. */
#define MINIVMM_NET_SEQ_MAGIC    0x4d564d51u   /* "QMVM" little-endian */
struct minivmm_net_seq_hdr {          /* little-endian, at UDP payload offset 0 */
	unsigned int magic;           /* MINIVMM_NET_SEQ_MAGIC */
	unsigned short flow;          /* sender's flow (for the guest: queue pair) */
	unsigned short reserved;
	unsigned long long seq;       /* 0, 1, 2, ... per flow */
};

#endif
