#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The soak's accounting for one run (tests/soak/soak.sh; docs/soak.md).

Reads what the run left in its directory: the guest's and minivmm's output
(vm.out: the net-duplex lines and the --stats=json line), netpeer's send and
count reports (send.out, count.out), the host interfaces' counters
(links.json: ip -s -j link), their qdiscs (qdisc.json: tc -s -j qdisc) and
the namespace's IP/UDP counters (snmp: /proc/net/snmp). Every frame offered
in either direction must be delivered or dropped at a named place outside
the VMM; every hop's counters must agree exactly. Prints a table, writes one
line per failure to DIR/failures and exits 1 if there is any.
"""
import argparse
import json
import os
import re
import sys

# The UDP/IP counters that say a frame was damaged, not just dropped.
CORRUPT_SNMP = [("Udp", "InCsumErrors"), ("Ip", "InHdrErrors")]


def kv_file(path):
    """netpeer's key=value report."""
    d = {}
    try:
        for line in open(path):
            k, sep, v = line.rstrip("\n").partition("=")
            if sep:
                d[k] = v
    except OSError:
        pass
    return d


def num(d, k):
    try:
        return int(d.get(k, ""))
    except ValueError:
        return None


def snmp_file(path):
    out = {}
    try:
        lines = open(path).read().splitlines()
    except OSError:
        return out
    for a, b in zip(lines[::2], lines[1::2]):
        keys, vals = a.split(), b.split()
        if keys and vals and keys[0] == vals[0]:
            out[keys[0].rstrip(":")] = {k: int(v) for k, v in zip(keys[1:], vals[1:])}
    return out


def fields(line, start):
    """'name value name value ...' after the first `start` words."""
    w = line.split()[start:]
    return {w[i]: int(w[i + 1]) for i in range(0, len(w) - 1, 2) if w[i + 1].isdigit()}


class Run:
    def __init__(self, args):
        self.a = args
        self.dir = args.run
        self.failures = []
        self.vm = open(os.path.join(self.dir, "vm.out"), errors="replace").read()
        self.send = kv_file(os.path.join(self.dir, "send.out"))
        self.count = kv_file(os.path.join(self.dir, "count.out"))
        self.snmp = snmp_file(os.path.join(self.dir, "snmp"))
        self.links = self.load_json("links.json", [])
        self.qdiscs = self.load_json("qdisc.json", [])

    def load_json(self, name, default):
        try:
            return json.load(open(os.path.join(self.dir, name)))
        except (OSError, ValueError):
            return default

    def fail(self, what):
        self.failures.append(what)

    # ---- inputs -------------------------------------------------------

    def parse_guest(self):
        # minivmm's own lines may land inside a guest line (the UART writes
        # byte by byte); take them out first.
        text = re.sub(r"(?<=[^\n])(minivmm: [^\n]*\n)", "", self.vm)
        self.gq = {}
        self.gflows = []
        self.gdone = None
        self.badsum_lines = []
        for line in text.splitlines():
            m = re.match(r"^testguest: q(\d+) rx \d+ lost ", line)
            if m:
                self.gq[int(m.group(1))] = fields(line, 2)
                continue
            m = re.match(r"^testguest: flow (\d+) q(\d+) rx (\d+) next (\d+)$", line)
            if m:
                self.gflows.append(tuple(int(x) for x in m.groups()))
                continue
            if line.startswith("testguest: net-duplex done "):
                self.gdone = fields(line, 3)
            elif re.match(r"^testguest: q\d+ badsum ", line):
                self.badsum_lines.append(line[len("testguest: "):])
        jl = [l for l in self.vm.splitlines() if l.startswith('{"net"')]
        self.stats = None
        if jl:
            try:
                self.stats = json.loads(jl[-1])["net"][0]
            except (ValueError, KeyError, IndexError):
                pass

    def link(self, name):
        for l in self.links:
            if l.get("ifname") == name:
                s = l.get("stats64", {})
                return s.get("rx", {}), s.get("tx", {})
        self.fail("no counters for host interface %s" % name)
        return {}, {}

    def qdisc_root(self):
        """Packets the host egress device's root qdisc (qdisc.json) passed
        on and dropped; (None, 0, kind) for noqueue."""
        for q in self.qdiscs:
            if q.get("root"):
                if q.get("kind") == "noqueue":
                    return None, 0, "noqueue"
                return q.get("packets", 0), q.get("drops", 0), q.get("kind")
        return None, 0, "noqueue"

    def s(self, group, key):
        return self.snmp.get(group, {}).get(key, 0)

    # ---- checks --------------------------------------------------------

    def check_run(self):
        a = self.a
        if a.vm_rc != 0:
            self.fail("minivmm exited with status %d (0 expected: the guest resets at the end); last lines: %s"
                      % (a.vm_rc, " | ".join(self.vm.strip().splitlines()[-4:])[:400]))
        m = re.search(r"^.*(AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer|runtime error:).*$",
                      self.vm, re.M)
        if m:
            self.fail("sanitizer report: %s" % m.group(0)[:300])
        if not re.search(r"^testguest: ctrl mq %d -> OK$" % a.queues, self.vm, re.M):
            self.fail("the guest did not get %d queue pairs (no 'ctrl mq %d -> OK')" % (a.queues, a.queues))
        for line in self.vm.splitlines():
            if re.match(r"^minivmm: net0: ", line) and not re.search(r"queue pairs?, MAC [0-9a-f:]{17}$", line):
                self.fail("minivmm complained: %s" % line[:300])
        for line in re.findall(r"^testguest: .*(?:stalled|only \d+ of \d+|no ARP reply).*$", self.vm, re.M):
            self.fail("guest: %s" % line)
        if self.stats is None:
            self.fail("no --stats=json line from minivmm")
        if self.gdone is None:
            self.fail("no 'net-duplex done' line from the guest")
        if sorted(self.gq) != list(range(a.queues)):
            self.fail("guest queue lines for %s, expected q0..q%d" % (sorted(self.gq), a.queues - 1))
        if self.send.get("result") != "ok":
            self.fail("netpeer send: %s" % " ".join("%s=%s" % kv for kv in self.send.items() if not kv[0].startswith("flow"))[:300])
        if "received" not in self.count:
            self.fail("netpeer count produced no report")
        return self.stats is not None and self.gdone is not None and bool(self.gq)

    def queue_stats(self):
        qs = {e["queue"]: e for e in self.stats["queues"]}
        total = {}
        for e in qs.values():
            for k, v in e.items():
                if isinstance(v, int) and not isinstance(v, bool):
                    total[k] = total.get(k, 0) + v
        return qs, total

    def account(self):
        a = self.a
        qs, t = self.queue_stats()
        g = self.gdone
        sent = num(self.send, "sent") or 0
        got = num(self.count, "received") or 0
        snmp_rcvbuf = self.s("Udp", "RcvbufErrors")
        udp_inerr = self.s("Udp", "InErrors")
        ip_drop = self.s("Ip", "InDiscards") + self.s("Ip", "InAddrErrors")
        vmm_rx_drops = t.get("rx_dropped", 0) + t.get("rx_filtered", 0) + t.get("rx_errors", 0)
        vmm_tx_drops = t.get("tx_errors", 0) + t.get("tx_dropped", 0)
        hops = []      # (what, left, right): must be equal
        h2g_out = []   # (place, frames) dropped outside the VMM, host -> guest
        g2h_out = []
        notes = []

        if a.backend == "tap":
            dev = a.host_if
            rx, tx = self.link(dev)
            qpk, qdrops, qkind = self.qdisc_root()
            h2g_out += [("%s qdisc (%s) drops" % (dev, qkind), qdrops),
                        ("%s tx_dropped (tap queue full: the VMM did not read)" % dev, tx.get("dropped", 0))]
            g2h_out += [("%s rx_dropped" % dev, rx.get("dropped", 0)),
                        ("Udp InErrors (RcvbufErrors %d: socket buffer full)" % snmp_rcvbuf, udp_inerr),
                        ("Ip InDiscards+InAddrErrors", ip_drop)]
            if qpk is not None:
                hops.append(("%s: frames its qdisc passed on = tap frames read by the VMM + tap drops" % dev,
                             qpk, tx.get("packets", 0) + tx.get("dropped", 0)))
            hops.append(("%s tx_packets (frames the VMM read) = rx_frames + rx_dropped + rx_filtered" % dev,
                         tx.get("packets", 0), t["rx_frames"] + t["rx_dropped"] + t["rx_filtered"]))
            hops.append(("VMM tx_frames = %s rx_packets + rx_dropped" % dev,
                         t["tx_frames"], rx.get("packets", 0) + rx.get("dropped", 0)))
            if self.s("Udp", "SndbufErrors"):
                notes.append("Udp SndbufErrors %d: the host sender's frames dropped by the qdisc or the tap, "
                             "already counted there" % self.s("Udp", "SndbufErrors"))
        else:
            g_if, h_if = a.guest_if, a.host_if   # v0 (minivmm's), v1 (the host's)
            grx, gtx = self.link(g_if)
            hrx, htx = self.link(h_if)
            qpk, qdrops, qkind = self.qdisc_root()
            h2g_out += [("%s qdisc (%s) drops" % (h_if, qkind), qdrops),
                        ("%s tx_dropped (veth: %s's backlog full)" % (h_if, g_if), htx.get("dropped", 0)),
                        ("backend_drops (packet ring full: the VMM did not take)", t.get("backend_drops", 0))]
            g2h_out += [("%s tx_dropped (veth: %s's backlog full)" % (g_if, h_if), gtx.get("dropped", 0)),
                        ("Udp InErrors (RcvbufErrors %d: socket buffer full)" % snmp_rcvbuf, udp_inerr),
                        ("Ip InDiscards+InAddrErrors", ip_drop)]
            hops.append(("%s rx_packets = %s tx_packets (veth)" % (g_if, h_if),
                         grx.get("packets", 0), htx.get("packets", 0)))
            hops.append(("%s rx_packets (to the packet sockets) = rx_frames + rx_dropped + rx_filtered + backend_drops" % g_if,
                         grx.get("packets", 0),
                         t["rx_frames"] + t["rx_dropped"] + t["rx_filtered"] + t["backend_drops"]))
            hops.append(("VMM tx_frames = %s tx_packets + tx_dropped" % g_if,
                         t["tx_frames"], gtx.get("packets", 0) + gtx.get("dropped", 0)))
            hops.append(("%s tx_packets = %s rx_packets (veth)" % (g_if, h_if),
                         gtx.get("packets", 0), hrx.get("packets", 0)))
            if grx.get("dropped", 0) or hrx.get("dropped", 0):
                notes.append("%s rx_dropped %d, %s rx_dropped %d: the veth drops above, seen at the receiving end"
                             % (g_if, grx.get("dropped", 0), h_if, hrx.get("dropped", 0)))
            if self.s("Udp", "SndbufErrors"):
                notes.append("Udp SndbufErrors %d: the host sender's frames the veth dropped, counted above"
                             % self.s("Udp", "SndbufErrors"))

        # Guest <-> VMM, per queue: every frame the VMM put in a used ring
        # the guest saw, every frame the guest queued the VMM took.
        for q in range(a.queues):
            e, gq = qs.get(q), self.gq.get(q)
            if not e or not gq:
                continue
            hops.append(("q%d: VMM rx_frames = guest frames + rxerr" % q,
                         e["rx_frames"], gq["frames"] + gq["rxerr"]))
            hops.append(("q%d: guest txframes = VMM tx_frames + tx_errors + tx_dropped" % q,
                         gq["txframes"], e["tx_frames"] + e["tx_errors"] + e["tx_dropped"]))

        # End to end, test datagrams only.
        h2g_rx = sum(r for _, _, r, _ in self.gflows) if self.gflows else g["rx"]
        if self.gflows and h2g_rx != g["rx"]:
            self.fail("guest flow lines add up to %d datagrams, its queue lines to %d" % (h2g_rx, g["rx"]))
        flows_sent = {f: num(self.send, "flow%d_sent" % f) or 0 for f in range(a.flows)}
        if sum(flows_sent.values()) != sent:
            self.fail("netpeer send: flows add up to %d, sent=%d" % (sum(flows_sent.values()), sent))
        # What the host sent to each queue: the flows the guest saw there
        # (a flow stays on one queue; `moved` says when one did not).
        h2g_sent_q = {}
        for f, q, _, _ in self.gflows:
            h2g_sent_q[q] = h2g_sent_q.get(q, 0) + flows_sent.get(f, 0)
        # The packet backend counts its drops per queue: when nothing was
        # dropped before the sockets, each queue balances on its own.
        if a.backend == "packet" and not g["moved"] and h2g_out[0][1] + h2g_out[1][1] == 0:
            for q in range(a.queues):
                e, gq = qs.get(q), self.gq.get(q)
                if e and gq:
                    hops.append(("q%d: host datagrams to its flows = guest rx + backend_drops + VMM rx drops" % q,
                                 h2g_sent_q.get(q, 0), gq["rx"] + e["backend_drops"] + e["rx_dropped"]
                                 + e["rx_filtered"]))
        h2g_outside = sum(n for _, n in h2g_out)
        g2h_outside = sum(n for _, n in g2h_out)
        h2g_unacc = sent - h2g_rx - h2g_outside - vmm_rx_drops
        g2h_unacc = g["tx"] - got - g2h_outside - vmm_tx_drops
        secs = max(a.secs, 1)

        # ---- table ----
        print("== soak %s: %s %s, engine=%s, queues=%d, %d s, frames %s B, %d host flows%s"
              % (a.name, a.backend, a.guest_if if a.backend == "packet" else a.host_if, a.engine,
                 a.queues, a.secs, a.sizes, a.flows, " [%s]" % a.label if a.label else ""))
        print("  %-14s %11s %11s %12s %11s %12s %10s" % ("direction", "offered", "delivered", "outside VMM",
                                                         "inside VMM", "unaccounted", "kpps"))
        print("  %-14s %11d %11d %12d %11d %12d %10.1f" % ("host -> guest", sent, h2g_rx, h2g_outside,
                                                           vmm_rx_drops, h2g_unacc, h2g_rx / secs / 1e3))
        print("  %-14s %11d %11d %12d %11d %12d %10.1f" % ("guest -> host", g["tx"], got, g2h_outside,
                                                           vmm_tx_drops, g2h_unacc, got / secs / 1e3))
        print("  dropped outside, host -> guest: " + ", ".join("%s %d" % p for p in h2g_out))
        print("  dropped outside, guest -> host: " + ", ".join("%s %d" % p for p in g2h_out))
        print("  inside the VMM: " + " ".join("%s %d" % (k, t.get(k, 0)) for k in
                                             ("rx_dropped", "rx_filtered", "rx_errors", "tx_errors", "tx_dropped")))
        print("  order and integrity: guest reorders %d moved %d bad %d badsum %d corrupt %d partial %d; "
              "host reordered %s duplicates %s corrupt %s bad %s; Udp InCsumErrors %d, Ip InHdrErrors %d"
              % (g["reorders"], g["moved"], g["bad"], g["badsum"], g["corrupt"],
                 sum(x.get("partial", 0) for x in self.gq.values()),
                 self.count.get("reordered"), self.count.get("duplicates"), self.count.get("corrupt"),
                 self.count.get("bad"), self.s("Udp", "InCsumErrors"), self.s("Ip", "InHdrErrors")))
        for what, l, r in hops:
            print("  hop %s: %d %s %d" % (what, l, "=" if l == r else "!=", r))
        for n in notes:
            print("  note: " + n)
        print("  %-5s %10s %10s %10s %10s %10s %10s %10s %13s %13s %6s" % (
            "queue", "h2g sent", "h2g rx", "h2g lost", "g2h tx", "g2h recvd", "rx_frames", "tx_frames",
            "rx_no_buffer", "backend_drops", "flows"))
        for q in range(a.queues):
            e, gq = qs.get(q, {}), self.gq.get(q, {})
            print("  q%-4d %10d %10d %10d %10d %10s %10d %10d %13d %13d %6d" % (
                q, h2g_sent_q.get(q, 0), gq.get("rx", 0), gq.get("lost", 0), gq.get("tx", 0),
                self.count.get("flow%d_received" % q, "-"), e.get("rx_frames", 0), e.get("tx_frames", 0),
                e.get("rx_no_buffer", 0), e.get("backend_drops", 0), gq.get("flows", 0)))
        for line in self.badsum_lines:
            print("  guest: " + line)

        # ---- verdicts ----
        if h2g_unacc:
            self.fail("host -> guest: %d frames unaccounted for (offered %d, delivered %d, dropped outside %d, inside %d)"
                      % (h2g_unacc, sent, h2g_rx, h2g_outside, vmm_rx_drops))
        if g2h_unacc:
            self.fail("guest -> host: %d frames unaccounted for (offered %d, delivered %d, dropped outside %d, inside %d)"
                      % (g2h_unacc, g["tx"], got, g2h_outside, vmm_tx_drops))
        for k in ("rx_dropped", "rx_filtered", "rx_errors", "tx_errors", "tx_dropped"):
            if t.get(k, 0):
                self.fail("the VMM dropped frames: %s %d (%s)" % (
                    k, t[k], ", ".join("q%d %d" % (q, e[k]) for q, e in sorted(qs.items()) if e[k])))
        for what, l, r in hops:
            if l != r:
                self.fail("hop does not balance: %s: %d != %d (%+d)" % (what, l, r, l - r))
        for k in ("badsum", "corrupt", "bad"):
            if g[k]:
                self.fail("host -> guest: guest saw %d datagrams with %s%s" % (
                    g[k], {"badsum": "a wrong UDP checksum", "corrupt": "a damaged payload",
                           "bad": "no valid header"}[k],
                    " (first: %s)" % self.badsum_lines[0] if k == "badsum" and self.badsum_lines else ""))
        partial = sum(x.get("partial", 0) for x in self.gq.values())
        if partial:
            self.fail("host -> guest: %d frames flagged NEEDS_CSUM to a guest without GUEST_CSUM" % partial)
        if g["reorders"]:
            self.fail("host -> guest: %d datagrams behind their flow's sequence (reordered or duplicated)" % g["reorders"])
        if g["moved"]:
            self.fail("host -> guest: %d flows arrived on more than one queue (host steering moved them)" % g["moved"])
        for k, what in (("reordered", "reordered"), ("duplicates", "duplicated"), ("corrupt", "damaged"),
                        ("bad", "malformed")):
            if num(self.count, k):
                self.fail("guest -> host: %s datagrams %s" % (self.count[k], what))
        for grp, k in CORRUPT_SNMP:
            if self.s(grp, k):
                self.fail("guest -> host: %s %s %d (frames damaged on the way)" % (grp, k, self.s(grp, k)))
        if self.s("Udp", "NoPorts"):
            self.fail("guest -> host: Udp NoPorts %d (the counter was not listening: harness problem)"
                      % self.s("Udp", "NoPorts"))
        for q in range(a.queues):
            gq = self.gq.get(q, {})
            if not gq.get("rx"):
                self.fail("q%d carried no host -> guest datagrams" % q)
            if not gq.get("tx") or not num(self.count, "flow%d_received" % q):
                self.fail("q%d carried no guest -> host datagrams (guest tx %s, host received %s)"
                          % (q, gq.get("tx"), self.count.get("flow%d_received" % q)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--run", required=True, help="the run's directory")
    ap.add_argument("--name", required=True)
    ap.add_argument("--label", default="")
    ap.add_argument("--backend", choices=("tap", "packet"), required=True)
    ap.add_argument("--engine", required=True)
    ap.add_argument("--queues", type=int, required=True)
    ap.add_argument("--secs", type=int, required=True)
    ap.add_argument("--sizes", required=True)
    ap.add_argument("--flows", type=int, required=True)
    ap.add_argument("--host-if", required=True)
    ap.add_argument("--guest-if", default="")
    ap.add_argument("--vm-rc", type=int, required=True)
    a = ap.parse_args()
    r = Run(a)
    r.parse_guest()
    if r.check_run():
        try:
            r.account()
        except (KeyError, TypeError) as e:
            r.fail("cannot account: missing counter %s" % e)
    tag = "%s%s" % (a.name, " [%s]" % a.label if a.label else "")
    with open(os.path.join(a.run, "failures"), "w") as f:
        for what in r.failures:
            f.write("FAIL soak %s: %s\n" % (tag, what))
    print("  result: %s" % ("PASS" if not r.failures else "FAIL (%d)" % len(r.failures)))
    for what in r.failures:
        print("  FAIL: " + what)
    return 1 if r.failures else 0


if __name__ == "__main__":
    sys.exit(main())
