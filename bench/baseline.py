#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Comparing with the baseline (bench/run.sh --baseline REV, make bench-regress).

Every minivmm row of a run gets a twin that runs the baseline revision's
minivmm (cfg build='base', label suffix ' [baseline]') with the same guest
(this tree's test guest), tap and options, right before or after it: HEAD
first in odd rounds, the baseline first in even ones, so drift hits both.
A row the baseline's minivmm refuses (exit status 2, e.g. a backend or an
option it lacks) is tried once and then reported as "baseline cannot run
this row".

A row regresses when HEAD's median rate is below the baseline's minimum
rate, or HEAD's median worker CPU per frame above the baseline's maximum
(quiet runs only), or when HEAD failed every run the baseline passed.

`python3 bench/baseline.py OUT` states the verdict of a finished run from
OUT/meta.json: exit status 1 when a row regressed, except in the smoke (one
run is no sample) and under emulated KVM (no figure is a measurement).
"""
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import BASE, cfg_label, fmt, med  # noqa: E402

# make bench-regress's rows: tap TX, tap RX with the spinning and the
# sleeping guest, packet RX (TPACKET_V3 ring), AF_XDP TX and RX; 1 pair, 64 B.
REGRESS_ROWS = [
    ('tx', dict(backend='tap')),
    ('rxb', dict(backend='tap', rate=0)),
    ('rxb', dict(backend='tap', rate=0, guest='halt')),
    ('rxb', dict(backend='packet', rate=0)),
    ('tx', dict(backend='xdp')),
    ('rxb', dict(backend='xdp', rate=0)),
]
# (column, higher is better) compared per row
METRICS = [('rate', True), ('wrk_ns_frame_win', False)]
CANNOT = 'baseline cannot run this row'


def regress_jobs(base, xdp):
    """The (workload, cfg, size) jobs of make bench-regress, HEAD's only."""
    jobs = []
    for w, kw in REGRESS_ROWS:
        if kw['backend'] == 'xdp' and not xdp:
            continue
        jobs.append((w, dict(base, queues=1, **kw), 64))
    return jobs


def in_regress_set(w, cfg):
    return (w, cfg_label(cfg)) in {(rw, cfg_label(c)) for rw, c, _ in regress_jobs(BASE, True)}


def with_twins(jobs, only_regress_rows):
    """jobs with a baseline twin after every minivmm row (or, for the smoke,
    after the rows of make bench-regress it has)."""
    out = []
    for w, cfg, size in jobs:
        out.append((w, cfg, size))
        if cfg['vmm'] == 'minivmm' and w != 'ceil' and (not only_regress_rows or in_regress_set(w, cfg)):
            out.append((w, dict(cfg, build='base'), size))
    return out


def round_order(jobs, rep):
    """The jobs of round rep: each HEAD row and its twin swap places every other round."""
    if rep % 2 == 0:
        return list(jobs)
    out, i = [], 0
    while i < len(jobs):
        if i + 1 < len(jobs) and jobs[i + 1][1].get('build') == 'base':
            out += [jobs[i + 1], jobs[i]]
            i += 2
        else:
            out.append(jobs[i])
            i += 1
    return out


def refused(err):
    """The baseline's minivmm refused the row's command line (status 2: bad usage or input)."""
    return bool(re.search(r'exited with status 2\b', err or ''))


def _good(rs, col):
    return [r[col] for r in rs if not r.get('error') and not r.get('busy') and r.get(col) is not None]


def compare_metric(head, base, higher):
    """(ratio HEAD ÷ baseline of the medians, regressed) for one column's values
    over the quiet runs; (None, False) without values on both sides."""
    if not head or not base:
        return None, False
    hm, bm = med(head)[0], med(base)[0]
    ratio = hm / bm if bm else None
    return ratio, (hm < min(base)) if higher else (hm > max(base))


def compare(head_rs, base_rs):
    """One row's comparison: dict(status, metrics={col: (HEAD median, baseline median, ratio, regressed)},
    why), status 'ok', 'regressed', 'cannot' (the baseline refused the row) or 'none' (nothing to compare)."""
    metrics, bad = {}, []
    for col, higher in METRICS:
        h, b = _good(head_rs, col), _good(base_rs, col)
        ratio, reg = compare_metric(h, b, higher)
        metrics[col] = (med(h)[0], med(b)[0], ratio, reg)
        if reg:
            bad.append(f'{col} median {fmt(med(h)[0])} {"<" if higher else ">"} baseline '
                       f'{"min" if higher else "max"} {fmt(min(b) if higher else max(b))}')
    errs = [r for r in base_rs if r.get('error')]
    if base_rs and len(errs) == len(base_rs) and any(refused(r['error']) for r in errs):
        msg = next(r['error'] for r in errs if refused(r['error'])).split(': ', 1)[-1]
        msg = msg.split(' ([')[0].split(' (see ')[0][:100]           # its reason, not the grammar it quotes
        return dict(status='cannot', metrics=metrics, why=f'{CANNOT} ({msg})')
    ok_h = [r for r in head_rs if not r.get('error') and not r.get('busy')]
    ok_b = [r for r in base_rs if not r.get('error') and not r.get('busy')]
    if head_rs and not [r for r in head_rs if not r.get('error')] and ok_b:
        return dict(status='regressed', metrics=metrics,
                    why='HEAD failed every run, the baseline did not: ' + (head_rs[0]['error'] or '')[:120])
    if not ok_h or not ok_b:
        side = 'HEAD' if not ok_h else 'the baseline'
        return dict(status='none', metrics=metrics, why=f'no quiet successful run of {side}')
    if all(m[2] is None for m in metrics.values()):
        return dict(status='none', metrics=metrics, why='no rate or CPU per frame on both sides')
    return dict(status='regressed' if bad else 'ok', metrics=metrics, why='; '.join(bad))


def comparisons(groups):
    """[(workload, head label, size, sessions, compare())] for every row that has a baseline twin."""
    out = []
    for (w, label, size, sess), base_rs in sorted(groups.items(), key=lambda kv: kv[0][1]):
        if not base_rs or base_rs[0]['cfg'].get('build') != 'base':
            continue
        head_label = cfg_label(dict(base_rs[0]['cfg'], build='head'))
        out.append((w, head_label, size, sess, compare(groups.get((w, head_label, size, sess), []), base_rs)))
    return out


def _ratio(x):
    return '-' if x is None else f'×{x:.2f}'


def section_md(cmp, meta):
    """The report's section: one line per compared row with its HEAD ÷ baseline columns."""
    b = meta['baseline']
    lines = [f"## HEAD ÷ baseline ({b['short']}, `bench/run.sh --baseline`)", '',
             f"The baseline's minivmm ({b['version']}, built from "
             f"{b['rev'] if b['rev'] == b['hash'] else b['rev'] + ' = ' + b['hash']}) ran every row "
             "below in the same rounds as HEAD's, alternating which went first, with the same guest, tap and "
             "options. `HEAD ÷ baseline` is the ratio of the medians over the quiet runs; "
             "**▼ regression** marks a row whose HEAD median rate is below the baseline's minimum, or whose "
             "HEAD median worker CPU per frame is above the baseline's maximum.", '']
    if meta.get('emulated'):
        lines += ['**Under emulated KVM: no figure is a measurement; the marks below are not verdicts and '
                  'never fail the run.**', '']
    elif meta['mode'] == 'smoke':
        lines += ['The smoke runs each row once: the marks below are not verdicts and never fail the run.', '']
    rows = []
    for w, label, size, sess, c in cmp:
        m = c['metrics']
        r, n = m.get('rate', (None,) * 4), m.get('wrk_ns_frame_win', (None,) * 4)
        mark = {'regressed': '▼ regression' + (f": {c['why']}" if c['why'] else ''), 'ok': 'ok',
                'cannot': c['why'], 'none': f"no comparison ({c['why']})"}[c['status']]
        rows.append([w, label, size, fmt(r[0]), fmt(r[1]), _ratio(r[2]), fmt(n[0]), fmt(n[1]), _ratio(n[2]),
                     mark.replace('|', '/')])
    heads = ['workload', 'row', 'size', 'HEAD rate', 'baseline rate', 'HEAD ÷ baseline', 'HEAD wrk ns/frame',
             'baseline wrk ns/frame', 'HEAD ÷ baseline (ns/frame)', 'verdict']
    out = ['| ' + ' | '.join(heads) + ' |', '|' + '---|' * len(heads)]
    out += ['| ' + ' | '.join(str(x) for x in l) + ' |' for l in rows]
    if not rows:
        out.append('| (no rows) |' + ' |' * (len(heads) - 1))
    return lines + out + ['']


def summary(cmp):
    """For meta.json: one dict per compared row."""
    return [dict(workload=w, label=label, size=size, status=c['status'], why=c['why'],
                 ratio_rate=c['metrics'].get('rate', (None,) * 4)[2]) for w, label, size, _, c in cmp]


def verdict(meta):
    """(exit status, lines): 1 when a row regressed in a run whose figures count."""
    b = meta.get('baseline')
    if not b:
        return 0, ['bench: no baseline in this run']
    rows = b.get('rows', [])
    reg = [r for r in rows if r['status'] == 'regressed']
    cannot = [r for r in rows if r['status'] == 'cannot']
    lines = [f"bench: regression against {b['short']}: {r['workload']} {r['label']}: {r['why']}" for r in reg]
    counts = (f"{len(rows)} rows compared with {b['short']}, {len(reg)} regressed, "
              f"{len(cannot)} the baseline cannot run")
    if meta.get('emulated'):
        return 0, lines + [f'bench: {counts}; under emulated KVM no figure is a measurement, so none fails the run']
    if meta['mode'] == 'smoke':
        return 0, lines + [f'bench: {counts}; the smoke runs each row once, so none fails the run']
    if reg:
        return 1, lines + [f'bench: FAIL: {counts}']
    return 0, [f'bench: no regression: {counts}']


def main(argv):
    if len(argv) != 2:
        print('usage: bench/baseline.py OUTDIR', file=sys.stderr)
        return 2
    try:
        with open(os.path.join(argv[1], 'meta.json')) as f:
            meta = json.load(f)
    except (OSError, ValueError) as e:
        print(f'bench: {argv[1]}/meta.json: {e}', file=sys.stderr)
        return 2
    rc, lines = verdict(meta)
    for line in lines:
        print(line)
    return rc


if __name__ == '__main__':
    sys.exit(main(sys.argv))
