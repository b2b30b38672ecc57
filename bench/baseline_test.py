#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Unit check of bench/baseline.py with synthetic rows (no VM, no root): the
regression rule both ways, a refused row, twins and their order, and the exit
status of `bench/baseline.py OUT` (run by `make bench-smoke`)."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import baseline  # noqa: E402
from common import BASE, QEMU, cfg_label  # noqa: E402


def rows(build, rates, ns=None, **kw):
    cfg = dict(BASE, queues=1, rate=0, build=build)
    out = []
    for i, r in enumerate(rates):
        out.append(dict(workload='rxb', cfg=cfg, label=cfg_label(cfg), size=64, sessions=0, rep=i, rate=r,
                        wrk_ns_frame_win=(ns or [100] * len(rates))[i], busy=False, **kw))
    return out


def groups(head, base):
    g = {}
    for r in head + base:
        g.setdefault((r['workload'], r['label'], r['size'], r['sessions']), []).append(r)
    return g


class Compare(unittest.TestCase):
    def test_rate_below_baseline_min_regresses(self):
        c = baseline.compare(rows('head', [90, 95, 99]), rows('base', [100, 101, 104]))
        self.assertEqual(c['status'], 'regressed')
        self.assertIn('rate median', c['why'])
        self.assertAlmostEqual(c['metrics']['rate'][2], 95 / 101)

    def test_rate_within_baseline_range_is_ok(self):
        c = baseline.compare(rows('head', [99, 100, 120]), rows('base', [98, 103, 104]))
        self.assertEqual(c['status'], 'ok')

    def test_cost_above_baseline_max_regresses(self):
        c = baseline.compare(rows('head', [100] * 3, [150, 160, 170]), rows('base', [100] * 3, [100, 110, 120]))
        self.assertEqual(c['status'], 'regressed')
        self.assertIn('wrk_ns_frame_win median', c['why'])

    def test_busy_runs_do_not_count(self):
        head = rows('head', [50, 100, 100])
        head[0]['busy'] = True
        self.assertEqual(baseline.compare(head, rows('base', [99, 100, 101]))['status'], 'ok')

    def test_refused_row_cannot_run(self):
        base = [dict(r, error='guest not ready (the VMM exited with status 2): minivmm: unknown backend xdp')
                for r in rows('base', [None])]
        c = baseline.compare(rows('head', [100]), base)
        self.assertEqual(c['status'], 'cannot')
        self.assertIn(baseline.CANNOT, c['why'])

    def test_head_failing_every_run_regresses(self):
        head = [dict(r, error='guest not ready (the VMM exited with status 6): boom') for r in rows('head', [None])]
        self.assertEqual(baseline.compare(head, rows('base', [100]))['status'], 'regressed')

    def test_comparisons_pair_head_with_twin(self):
        cmp = baseline.comparisons(groups(rows('head', [1, 1, 1]), rows('base', [2, 2, 2])))
        self.assertEqual(len(cmp), 1)
        self.assertNotIn('[baseline]', cmp[0][1])
        self.assertEqual(cmp[0][4]['status'], 'regressed')


class Jobs(unittest.TestCase):
    def test_twins_and_order(self):
        jobs = [('ceil', dict(vmm='host', mode='tap-write'), 64), ('tx', dict(BASE, queues=1), 64),
                ('tx', dict(QEMU, queues=1), 64), ('tx', dict(BASE, queues=2), 64)]
        every = baseline.with_twins(jobs, only_regress_rows=False)
        self.assertEqual([c.get('build') for _, c, _ in every], [None, None, 'base', None, None, 'base'])
        smoke = baseline.with_twins(jobs, only_regress_rows=True)      # 2 queues is not a bench-regress row
        self.assertEqual([c.get('build') for _, c, _ in smoke], [None, None, 'base', None, None])
        odd = baseline.round_order(every, 1)
        self.assertEqual([c.get('build') for _, c, _ in odd], [None, 'base', None, None, 'base', None])
        self.assertEqual(baseline.round_order(every, 2), every)

    def test_regress_rows(self):
        labels = [cfg_label(c) for _, c, _ in baseline.regress_jobs(BASE, True)]
        self.assertEqual(len(labels), 6)
        self.assertTrue(any('guest=halt' in l for l in labels))
        self.assertEqual(len(baseline.regress_jobs(BASE, False)), 4)


class Verdict(unittest.TestCase):
    def run_verdict(self, mode, emulated, status):
        meta = dict(mode=mode, emulated=emulated, baseline=dict(
            rev='16e9799', hash='16e9799' + '0' * 33, short='16e9799', version='minivmm 16e9799',
            rows=[dict(workload='rxb', label='minivmm tap 1q', size=64, status=status, why='rate median 1 < 2',
                       ratio_rate=0.5)]))
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, 'meta.json'), 'w') as f:
                json.dump(meta, f)
            p = subprocess.run([sys.executable, os.path.join(HERE, 'baseline.py'), d], stdout=subprocess.PIPE,
                               text=True)
        return p.returncode, p.stdout

    def test_regression_fails_the_run(self):
        rc, out = self.run_verdict('regress', False, 'regressed')
        self.assertEqual(rc, 1)
        self.assertIn('regression against 16e9799: rxb minivmm tap 1q', out)

    def test_no_regression_passes(self):
        self.assertEqual(self.run_verdict('regress', False, 'ok')[0], 0)

    def test_emulated_never_fails(self):
        rc, out = self.run_verdict('regress', True, 'regressed')
        self.assertEqual(rc, 0)
        self.assertIn('no figure is a measurement', out)

    def test_smoke_never_fails(self):
        self.assertEqual(self.run_verdict('smoke', False, 'regressed')[0], 0)


if __name__ == '__main__':
    unittest.main()
