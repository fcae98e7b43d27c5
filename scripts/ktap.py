#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Judge one test VM run: count KTAP results and scan the kernel log.

usage: ktap.py [--expect-planted] NAME LOGDIR

LOGDIR holds results.log (ttyS1, TD-* markers around KTAP) and console.log
(the kernel's console).  Prints a summary line and the offending lines and
writes LOGDIR/counts ("passed failed skipped").  Exit status 0 when the run
is clean; with --expect-planted, 0 only when the scanner caught both the
planted WARN and the planted leak (and nothing failed to load).
"""
import re
import sys

RESULT = re.compile(r'^(\s*)(not ok|ok)\s+(\d+)\b\s*(.*)$')
PLAN = re.compile(r'^(\s*)1\.\.(\d+)')
TIMESTAMP = re.compile(r'^\[\s*\d+\.\d+\]\s?')

# What a kernel report looks like, by kind.  Every one fails the run.
REPORTS = [
    ('warn', re.compile(r'WARNING: |-{12}\[ cut here \]-{12}')),
    ('bug', re.compile(r'\bBUG: |kernel BUG at|Kernel panic|general protection fault')),
    ('oops', re.compile(r'\bOops\b|Unable to handle kernel')),
    ('lockdep', re.compile(r'possible (recursive|circular) locking|inconsistent lock state|'
                           r'suspicious RCU usage|lock held when returning')),
    ('kasan', re.compile(r'KASAN:')),
    ('ubsan', re.compile(r'UBSAN:')),
    ('kmemleak', re.compile(r'kmemleak: \d+ new suspected memory leaks|unreferenced object 0x')),
    ('hung', re.compile(r'INFO: task .* blocked for more than|rcu: INFO: |detected stalls? on CPU')),
    ('debugobjects', re.compile(r'ODEBUG: ')),
    ('calltrace', re.compile(r'Call Trace:')),
    ('netdev-leak', re.compile(r'waiting for \S+ to become free')),
]


def leaf_results(lines):
    """Yield (status, name, directive) for every leaf KTAP result.

    A result line is a parent when the result before it is nested deeper;
    every other result is a test case of its own.
    """
    prev_indent = None
    top_plan = None
    top_seen = 0
    for line in lines:
        m = PLAN.match(line)
        if m and len(m.group(1)) == 0 and top_plan is None:
            top_plan = int(m.group(2))
        m = RESULT.match(line)
        if not m:
            continue
        indent = len(m.group(1).expandtabs())
        if indent == 0:
            top_seen += 1
        rest = m.group(4)
        name, _, directive = rest.partition('#')
        if prev_indent is None or prev_indent <= indent:
            yield m.group(2), name.strip(), directive.strip()
        prev_indent = indent
    if top_plan is not None and top_seen < top_plan:
        for i in range(top_seen, top_plan):
            yield 'not ok', f'(missing result {i + 1} of {top_plan})', ''
    if top_plan is None and top_seen == 0:
        yield 'not ok', '(no KTAP output)', ''


def parse_results(text):
    sections, steps, problems = [], [], []
    cur = None
    started = done = False
    for line in text.splitlines():
        line = line.rstrip('\r')
        if line.startswith('TD-VM-START'):
            started = True
        elif line.startswith('TD-VM-DONE'):
            done = True
        elif line.startswith(('TD-KSFT-BEGIN', 'TD-KUNIT-BEGIN')):
            cur = {'name': line.split(None, 1)[1], 'lines': []}
        elif line.startswith(('TD-KSFT-END', 'TD-KUNIT-END')):
            if cur is not None:
                m = re.search(r'rc=(\d+)', line)
                cur['rc'] = int(m.group(1)) if m else -1
                m = re.search(r'up=([0-9.]+)', line)
                if m:
                    cur['up'] = float(m.group(1))
                sections.append(cur)
            cur = None
        elif line.startswith('TD-STEP'):
            m = re.match(r'TD-STEP (\S+) rc=(\d+)', line)
            if m:
                steps.append((m.group(1), int(m.group(2))))
        elif line == 'TD-KMEMLEAK-BEGIN':
            cur = {'name': 'kmemleak', 'lines': [], 'kmemleak': True}
        elif line == 'TD-KMEMLEAK-END':
            if cur is not None:
                problems += [('kmemleak', l) for l in cur['lines'] if 'unreferenced object' in l]
            cur = None
        elif cur is not None:
            cur['lines'].append(line)
    if cur is not None and not cur.get('kmemleak'):
        cur['rc'] = -1
        sections.append(cur)
    return sections, steps, problems, started, done


def slowest(sections, n=3):
    """The @n longest sections, each timed from the end of the one before
    (the insmod between them included; the first from boot)."""
    times, last = [], None
    for sec in sections:
        if 'up' in sec:
            name = sec['name'] if last is not None else 'boot+' + sec['name']
            times.append((name, sec['up'] - (last or 0.0)))
            last = sec['up']
    return sorted(times, key=lambda x: -x[1])[:n]


def scan_console(text):
    found = []
    for line in text.splitlines():
        line = TIMESTAMP.sub('', line.rstrip('\r'))
        for kind, pat in REPORTS:
            if pat.search(line):
                found.append((kind, line))
                break
    return found


def read(path):
    try:
        with open(path, errors='replace') as f:
            return f.read()
    except OSError:
        return ''


def main(argv):
    planted = '--expect-planted' in argv
    args = [a for a in argv[1:] if not a.startswith('--')]
    name, logdir = args
    sections, steps, problems, started, done = parse_results(read(f'{logdir}/results.log'))
    reports = scan_console(read(f'{logdir}/console.log')) + problems
    passed = failed = skipped = 0
    failures = []
    for sec in sections:
        for status, case, directive in leaf_results(sec['lines']):
            if directive.upper().startswith('SKIP'):
                skipped += 1
            elif status == 'ok':
                passed += 1
            else:
                failed += 1
                failures.append(f"{sec['name']}: {case}")
        if sec.get('rc', 0) != 0:
            failures.append(f"{sec['name']}: exit status {sec['rc']}")
    bad_steps = [f'{s} rc={rc}' for s, rc in steps if rc != 0]
    with open(f'{logdir}/counts', 'w') as f:
        f.write(f'{passed} {failed} {skipped}\n')

    if planted:
        kinds = {k for k, _ in reports}
        ok = done and not bad_steps and 'warn' in kinds and 'kmemleak' in kinds
        verdict = 'caught' if ok else 'MISSED'
        print(f'{name}: planted WARN {"caught" if "warn" in kinds else "MISSED"}, '
              f'planted leak {"caught" if "kmemleak" in kinds else "MISSED"}'
              f'{"" if done else ", VM did not finish"}'
              f'{"" if not bad_steps else ", failed steps: " + ", ".join(bad_steps)}'
              f' -> harness self-test {"passed" if ok else "FAILED"} ({verdict})')
        return 0 if ok else 1

    issues = []
    if not started or not done:
        issues.append('VM did not finish')
    issues += [f'step {s}' for s in bad_steps]
    issues += [f'test {f}' for f in failures]
    if reports:
        issues.append(f'{len(reports)} kernel report line(s): '
                      + ', '.join(sorted({k for k, _ in reports})))
    state = 'ok' if not issues and not failed else 'FAIL'
    print(f'{name}: {state}: {passed} passed, {failed} failed, {skipped} skipped')
    for i in issues:
        print(f'  {name}: {i}')
    for kind, line in reports[:40]:
        print(f'  {name}: [{kind}] {line}')
    slow = slowest(sections)
    if slow:
        print(f'  {name}: slowest: ' + ', '.join(f'{n} {t:.0f}s' for n, t in slow))
    return 0 if state == 'ok' else 1


if __name__ == '__main__':
    sys.exit(main(sys.argv))
