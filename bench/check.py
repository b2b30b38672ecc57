#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Check that a bench output directory is complete and well-formed (used by
`bench/run.sh --smoke`, i.e. `make test`). Checks shape, never speed: the
tables, the per-row gate columns, the ceiling and blaster columns, the rows a
smoke run must have produced (a failed required row fails the check with the
row's error, e.g. minivmm refusing `--net xdp=`), the HEAD ÷ baseline section
of a run with --baseline, and the targets block."""
import csv
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hostinfo  # noqa: E402
from report import TARGETS  # noqa: E402


def fail(msg):
    print(f'bench check: FAIL: {msg}', file=sys.stderr)
    sys.exit(1)


def tables_of(lines):
    """Well-formed markdown tables: header, separator, rows with the same number of cells."""
    tables, i = 0, 0
    while i < len(lines):
        if lines[i].startswith('|') and i + 1 < len(lines) and lines[i + 1].startswith('|---'):
            n = lines[i].count('|')
            if lines[i + 1].count('|') != n:
                fail(f'table separator width differs at line {i + 2}')
            j = i + 2
            while j < len(lines) and lines[j].startswith('|'):
                if lines[j].count('|') != n:
                    fail(f'row at line {j + 1} has {lines[j].count("|")} bars, header {n}')
                j += 1
            if j == i + 2:
                fail(f'table at line {i + 1} has no rows')
            tables += 1
            i = j
        else:
            i += 1
    return tables


def check_targets(md):
    """The targets block is the last section and states every target of the issue."""
    heads = [m.start() for m in re.finditer(r'^## ', md, re.M)]
    t = md.find('\n## Targets')
    if t < 0 or not heads or heads[-1] != t + 1:
        fail('results.md does not end with its "## Targets" section')
    block = md[t:]
    rows = {}
    for line in block.splitlines():
        cells = [c.strip() for c in line.strip().strip('|').split('|')]
        if len(cells) == 4 and cells[0] in TARGETS:
            rows[cells[0]] = cells
    for name in TARGETS:
        if name not in rows:
            fail(f'targets block lacks "{name}"')
        st = rows[name][3]
        if not re.match(r'^(met|missed by \d+(\.\d+)? %|missed \(.*\)|not measured \(.+\))$', st):
            fail(f'target "{name}" has status "{st}" (want met / missed by X % / not measured (why))')
        if st.startswith(('met', 'missed')) and rows[name][1] in ('', '-'):
            fail(f'target "{name}" is {st} without a measured value')
    return rows


def num(r, col, allow_empty=False):
    v = r.get(col, '')
    if v == '' and allow_empty:
        return None
    try:
        return float(v)
    except ValueError:
        fail(f'runs.csv: non-numeric {col} "{v}" in row {r.get("workload")} {r.get("label")}')


REQUIRED_SMOKE = [
    # (what, predicate on a CSV row)
    ('a host ceiling row', lambda r: r['workload'] == 'ceil'),
    ('minivmm tap TX', lambda r: r['workload'] == 'tx' and r['cfg_vmm'] == 'minivmm' and r['cfg_backend'] == 'tap'),
    ('minivmm tap RX from the blaster',
     lambda r: r['workload'] == 'rxb' and r['cfg_vmm'] == 'minivmm' and r['cfg_backend'] == 'tap'),
    ('minivmm packet TX', lambda r: r['workload'] == 'tx' and r['cfg_backend'] == 'packet'),
    ('minivmm packet RX from the blaster', lambda r: r['workload'] == 'rxb' and r['cfg_backend'] == 'packet'),
    ('request/response', lambda r: r['workload'] == 'rr'),
    ('idle networked VM', lambda r: r['workload'] == 'idle' and r['cfg_vmm'] == 'minivmm'),
]
REQUIRED_XDP = [
    ('minivmm xdp TX', lambda r: r['workload'] == 'tx' and r['cfg_backend'] == 'xdp'),
    ('minivmm xdp RX from the blaster', lambda r: r['workload'] == 'rxb' and r['cfg_backend'] == 'xdp'),
]


def check_baseline(md, rows, meta):
    """With --baseline: the section is there, every twinned row has a verdict,
    and the baseline's rows ran (or were refused and say so) beside HEAD's."""
    b = meta['baseline']
    if '## HEAD ÷ baseline' not in md or '| HEAD ÷ baseline |' not in md:
        fail('results.md lacks the "HEAD ÷ baseline" section of a run with --baseline')
    base = [r for r in rows if r.get('cfg_build') == 'base']
    if not base:
        fail('runs.csv has no baseline row (cfg_build=base)')
    cmp = b.get('rows', [])
    if not cmp:
        fail('meta.json: no row compared with the baseline')
    for c in cmp:
        if c['status'] not in ('ok', 'regressed', 'cannot', 'none'):
            fail(f'baseline comparison of {c["label"]}: status "{c["status"]}"')
    if meta['mode'] == 'smoke' and not any(c['ratio_rate'] for c in cmp):
        fail('no row has a HEAD ÷ baseline ratio: ' + '; '.join(f'{c["label"]}: {c["why"]}' for c in cmp))
    return len(cmp)


def main(d):
    md_path, csv_path, meta_path = (os.path.join(d, f) for f in ('results.md', 'runs.csv', 'meta.json'))
    for p in (md_path, csv_path, meta_path):
        if not os.path.isfile(p) or os.path.getsize(p) == 0:
            fail(f'{p} missing or empty')
    md = open(md_path).read()
    meta = json.load(open(meta_path))
    # The host line must describe the host the check runs on (the smoke run
    # checks its own output right away), as detected, not a fixed sentence.
    want = hostinfo.host_line()
    if f'- Host (detected): {want};' not in md:
        got = [l for l in md.splitlines() if l.startswith('- Host')]
        fail(f'results.md does not describe this host as detected ("{want}"); it says: {got[:1]}')
    for needle in ('norm = rate per host CPU-percent spent', '### Host ceilings', '### Guest → host',
                   '### Host → guest', '### Request/response', 'Measured separately by `bench/linux/run.sh`',
                   '### Idle networked VM', '## Targets'):
        if needle not in md:
            fail(f'results.md lacks "{needle}"')
    gate_line = 'Quiet gate: OFF' if not meta['gate'] else 'Quiet gate:** before each row'
    if gate_line not in md:
        fail(f'results.md does not state the quiet gate ("{gate_line}")')
    tables = tables_of(md.splitlines())
    if tables < 8:
        fail(f'only {tables} tables in results.md')
    rows = list(csv.DictReader(open(csv_path)))
    if not rows:
        fail('runs.csv has no rows')
    nbase = check_baseline(md, rows, meta) if meta.get('baseline') else 0
    head = [r for r in rows if r.get('cfg_build') != 'base']     # what a required row must be
    for col in ('workload', 'label', 'cfg_vmm', 'cfg_queues', 'size', 'rate', 'norm', 'ceil_frac', 'vmm_cpu_pct',
                'host_cpu_pct', 'vmm_cs_s', 'host_cs_s', 'busy', 'load1', 'own_load', 'busy_pct', 'gate_wait_s'):
        if col not in rows[0]:
            fail(f'runs.csv lacks column {col}')
    busy = 0
    for r in rows:
        num(r, 'load1'), num(r, 'busy_pct'), num(r, 'gate_wait_s')
        if r['busy'] not in ('0', '1'):
            fail(f'runs.csv: busy must be 0 or 1, not "{r["busy"]}"')
        busy += r['busy'] == '1'
        if r.get('error'):
            continue
        if r['workload'] not in ('idle',):
            num(r, 'rate')
        if r['workload'] == 'rxb':
            for col in ('offered_pps', 'delivered_pct', 'reorders', 'guest_lost', 'kernel_drops'):
                num(r, col, allow_empty=col == 'kernel_drops')
            if r['cfg_vmm'] == 'minivmm':
                num(r, 'vmm_drops_run'), num(r, 'wrk_ns_frame_win')
    if busy and '†' not in md:
        fail(f'{busy} busy runs in runs.csv but no † marker in results.md')
    if not meta['gate'] and busy:
        fail('the gate was off but rows are marked busy')
    if meta.get('only'):
        print(f'bench check: a subset (--only {meta["only"]}): which rows exist is not checked')
    elif meta['mode'] == 'smoke':
        for what, pred in REQUIRED_SMOKE + (REQUIRED_XDP if meta['xdp'] else []):
            mine = [r for r in head if pred(r)]
            if not mine:
                fail(f'no {what} row in runs.csv')
            if all(r.get('error') for r in mine):
                fail(f'{what}: every run failed: {mine[0]["error"]}')
    else:
        for w in ('ceil', 'tx', 'rx', 'rxb', 'rr', 'idle'):
            if not any(r['workload'] == w and not r.get('error') for r in head):
                fail(f'no successful {w} run in runs.csv')
    t = check_targets(md)
    met = sum(1 for v in t.values() if v[3] == 'met')
    print(f'bench check: ok ({tables} tables, {len(rows)} CSV rows, {busy} busy, gate '
          f'{"on" if meta["gate"] else "off"}, xdp rows {"on" if meta["xdp"] else "off"}, '
          f'{met}/{len(t)} targets met' + (f', {nbase} rows compared with the baseline' if nbase else '') + ')')


if __name__ == '__main__':
    main(sys.argv[1] if len(sys.argv) > 1 else 'bench/out/smoke')
