#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The soak's accounting (account.py) against recorded runs (data/): a clean
tap run passes; the same run with one counter changed, as a VMM that lost,
dropped, reordered or damaged a frame would change it, fails with the line
that says so; the recorded packet-ring run fails on its bad checksums.
Run: python3 tests/soak/account_test.py (no VM, no root)."""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ACCOUNT = os.path.join(HERE, "account.py")
RUNS = {
    "tap-uring-q2": ["--backend", "tap", "--engine", "uring", "--queues", "2", "--secs", "10",
                     "--host-if", "t0", "--guest-if", "t0"],
    "packet-uring-q2": ["--backend", "packet", "--engine", "uring", "--queues", "2", "--secs", "30",
                        "--host-if", "v1", "--guest-if", "v0"],
}


class Accounting(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="soak-account-test.")

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def run_account(self, name, edit=None, vm_rc=0):
        d = os.path.join(tempfile.mkdtemp(dir=self.tmp), name)
        shutil.copytree(os.path.join(HERE, "data", name), d)
        if edit:
            fname, old, new = edit
            p = os.path.join(d, fname)
            text = open(p).read()
            changed = re.sub(old, new, text, count=1)
            self.assertTrue(text != changed, "the edit %r changed nothing in %s" % (old, fname))
            open(p, "w").write(changed)
        r = subprocess.run([sys.executable, ACCOUNT, "--run", d, "--name", name, "--sizes", "60-1514",
                            "--flows", "64", "--vm-rc", str(vm_rc)] + RUNS[name],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        return r.returncode, open(os.path.join(d, "failures")).read(), r.stdout

    def assertFails(self, name, edit, *expect, vm_rc=0):
        rc, failures, out = self.run_account(name, edit, vm_rc)
        self.assertEqual(rc, 1, out)
        for e in expect:
            self.assertIn(e, failures, out)

    def test_clean_tap_run_passes_with_every_hop_balanced(self):
        rc, failures, out = self.run_account("tap-uring-q2")
        self.assertEqual((rc, failures), (0, ""), out)
        self.assertIn("  result: PASS", out)
        self.assertNotIn("!=", out)
        # Loss outside the VMM is accounted for, not a failure.
        self.assertIn("t0 tx_dropped (tap queue full: the VMM did not read) 344019", out)
        self.assertIn("RcvbufErrors 44766", out)

    def test_datagrams_missing_from_a_flow_are_unaccounted(self):
        self.assertFails("tap-uring-q2", ("vm.out", r"(testguest: flow \d+ q0 rx )(\d+)",
                                          lambda m: m.group(1) + str(int(m.group(2)) - 5)),
                         "host -> guest: 5 frames unaccounted for")

    def test_frames_the_vmm_counted_but_the_guest_never_saw_unbalance_a_hop(self):
        self.assertFails("tap-uring-q2", ("vm.out", r'"rx_frames":(\d+)',
                                          lambda m: '"rx_frames":%d' % (int(m.group(1)) + 2)),
                         "hop does not balance: q0: VMM rx_frames = guest frames + rxerr",
                         "hop does not balance: t0 tx_packets (frames the VMM read)")

    def test_a_frame_the_guest_queued_but_the_vmm_did_not_send_fails(self):
        self.assertFails("tap-uring-q2", ("vm.out", r"(txframes )(\d+)",
                                          lambda m: m.group(1) + str(int(m.group(2)) + 1)),
                         "hop does not balance: q0: guest txframes = VMM tx_frames")

    def test_a_vmm_rx_drop_fails_even_when_everything_balances(self):
        self.assertFails("tap-uring-q2", ("vm.out", r'"rx_dropped":0', '"rx_dropped":3'),
                         "the VMM dropped frames: rx_dropped 3 (q0 3)")

    def test_a_vmm_tx_error_fails(self):
        self.assertFails("tap-uring-q2", ("vm.out", r'"tx_errors":0', '"tx_errors":1'),
                         "the VMM dropped frames: tx_errors 1")

    def test_a_tap_drop_counter_that_does_not_add_up_fails(self):
        self.assertFails("tap-uring-q2", ("links.json", r'"dropped":344019', '"dropped":344018'),
                         "host -> guest: 1 frames unaccounted for",
                         "hop does not balance: t0: frames its qdisc passed on")

    def test_host_side_reordering_and_damage_fail(self):
        self.assertFails("tap-uring-q2", ("count.out", r"reordered=0", "reordered=2"),
                         "guest -> host: 2 datagrams reordered")
        self.assertFails("tap-uring-q2", ("count.out", r"corrupt=0", "corrupt=1"),
                         "guest -> host: 1 datagrams damaged")

    def test_guest_side_reordering_and_bad_checksums_fail(self):
        self.assertFails("tap-uring-q2", ("vm.out", r"(net-duplex done rx \d+ lost \d+ reorders )0", r"\g<1>4"),
                         "host -> guest: 4 datagrams behind their flow's sequence")

    def test_udp_checksum_errors_on_the_host_fail(self):
        self.assertFails("tap-uring-q2", ("snmp", r"(Udp: \d+ \d+ )(\d+)( \d+ \d+ \d+ )0",
                                          lambda m: m.group(1) + str(int(m.group(2)) + 1) + m.group(3) + "1"),
                         "Udp InCsumErrors 1")

    def test_a_failed_vm_fails(self):
        self.assertFails("tap-uring-q2", None, "minivmm exited with status 75", vm_rc=75)

    def test_recorded_packet_ring_run_fails_on_its_bad_checksums_only(self):
        rc, failures, out = self.run_account("packet-uring-q2")
        self.assertEqual(rc, 1, out)
        self.assertEqual(failures.count("\n"), 1, failures)
        self.assertIn("guest saw 2330 datagrams with a wrong UDP checksum", failures)
        self.assertIn("csum-start 0 csum-offset 0", failures)
        # Everything else balances, per queue too.
        self.assertNotIn("!=", out)
        self.assertIn("hop q0: host datagrams to its flows = guest rx + backend_drops + VMM rx drops: "
                      "669376 = 669376", out)


if __name__ == "__main__":
    unittest.main()
