#!/usr/bin/env python3
"""Check that a bench output directory is complete and well-formed (used by
`bench/run.sh --smoke`, i.e. `make test`). Checks shape, never speed."""
import csv, os, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hostinfo  # noqa: E402

def fail(msg):
    print(f'bench check: FAIL: {msg}', file=sys.stderr)
    sys.exit(1)

def main(d):
    md_path, csv_path = os.path.join(d, 'results.md'), os.path.join(d, 'runs.csv')
    for p in (md_path, csv_path):
        if not os.path.isfile(p) or os.path.getsize(p) == 0:
            fail(f'{p} missing or empty')
    md = open(md_path).read()
    # The host line must describe the host the check runs on (the smoke run
    # checks its own output right away), as detected, not a fixed sentence.
    want = hostinfo.host_line()
    if f'- Host (detected): {want};' not in md:
        got = [l for l in md.splitlines() if l.startswith('- Host')]
        fail(f'results.md does not describe this host as detected ("{want}"); it says: {got[:1]}')
    for needle in ('norm = rate per host CPU-percent spent', '### Targets', '### Guest → host',
                   '### Host → guest', '### Request/response', 'Measured separately by `bench/linux/run.sh`'):
        if needle not in md:
            fail(f'results.md lacks "{needle}"')
    # every markdown table: header, separator, rows with the same number of cells
    lines = md.splitlines()
    tables = 0
    i = 0
    while i < len(lines):
        if lines[i].startswith('|') and i + 1 < len(lines) and lines[i + 1].startswith('|---'):
            n = lines[i].count('|')
            if lines[i + 1].count('|') != n:
                fail(f'table separator width differs at line {i + 2}')
            j = i + 2
            rows = 0
            while j < len(lines) and lines[j].startswith('|'):
                if lines[j].count('|') != n:
                    fail(f'row at line {j + 1} has {lines[j].count("|")} bars, header {n}')
                rows += 1
                j += 1
            if rows == 0:
                fail(f'table at line {i + 1} has no rows')
            tables += 1
            i = j
        else:
            i += 1
    if tables < 6:
        fail(f'only {tables} tables in results.md')
    rows = list(csv.DictReader(open(csv_path)))
    if not rows:
        fail('runs.csv has no rows')
    for col in ('workload', 'cfg_vmm', 'cfg_queues', 'size', 'rate', 'norm', 'vmm_cpu_pct', 'host_cpu_pct',
                'vmm_cs_s', 'host_cs_s'):
        if col not in rows[0]:
            fail(f'runs.csv lacks column {col}')
    seen = set()
    for r in rows:
        if r.get('error'):
            continue
        try:
            float(r['rate'])
        except ValueError:
            fail(f'non-numeric rate in runs.csv: {r}')
        if r['workload'] != 'boot' and float(r['rate']) > 0:
            seen.add(r['workload'])
    for w in ('tx', 'rx', 'rr'):
        if w not in seen:
            fail(f'no successful {w} run in runs.csv')
    print(f'bench check: ok ({tables} tables, {len(rows)} CSV rows, workloads {sorted(seen)})')

if __name__ == '__main__':
    main(sys.argv[1] if len(sys.argv) > 1 else 'bench/out/smoke')
