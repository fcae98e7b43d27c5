#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Generate tdispatch's in-tree series for linux-source-6.12 (make patches).

usage: patches.py SRC OUT

SRC is the extracted linux-source tree, OUT the folder for the patches.
Everything comes from this tree, so nothing is kept twice by hand:

  module/*.[ch]                 lib/tdispatch/ (the objects as Kbuild lists
                                them, the engine's and the device's apart)
  module/Kconfig                lib/tdispatch/Kconfig
  module/kunit/                 lib/tdispatch/tests/
  module/include/linux/         include/linux/tdispatch.h
  uapi/linux/                   include/uapi/linux/tdispatch.h
  selftests/                    tools/testing/selftests/tdispatch/ (its
                                Makefile less the out-of-tree part)
  Documentation/core-api/,      the same paths in the tree
  Documentation/userspace-api/
  scripts/series/linkwatch.*    the second patch: the link watch's
                                conversion, a diff against SRC

The kernel files the series changes (lib/Kconfig, lib/Makefile,
MAINTAINERS, indexes) are taken from SRC.  No patch touches what another
adds, or lines near another's hunks, so each applies to SRC by itself as
well as after the ones before it (git apply --check of each, or of all).
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MAINT_TITLE = 'TDISPATCH COALESCING WORK DISPATCHER'
# The series' author and maintainer, whoever runs this.
MAINTAINER = ('Seed fed6b7a8 maintainers',
              'maintainers@users.noreply.a-seed-fed6b7a8.example')
CHANGED = ['MAINTAINERS', 'lib/Kconfig', 'lib/Makefile',
           'Documentation/core-api/index.rst',
           'Documentation/userspace-api/index.rst',
           'Documentation/userspace-api/ioctl/ioctl-number.rst',
           'tools/testing/selftests/Makefile']
# The link watch's conversion: a diff against SRC, and its message
# (subject, blank line, body), applied as the series' second patch.
CONVERSION = os.path.join(TOP, 'scripts', 'series', 'linkwatch')
CONVERTED = ['include/linux/netdevice.h', 'net/Kconfig', 'net/core/dev.c',
             'net/core/dev.h', 'net/core/link_watch.c']


def read(path):
    with open(path, encoding='utf-8') as f:
        return f.read()


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, 'w', encoding='utf-8') as f:
        f.write(text)


def git(tree, *args, **kw):
    return subprocess.run(['git', '-C', tree] + list(args), check=True,
                          stdout=subprocess.PIPE, text=True, **kw).stdout


def kbuild_objects():
    """The engine's objects, the device's and the KUnit tests', from Kbuild."""
    kb = read(os.path.join(TOP, 'Kbuild')).replace('\\\n', ' ')

    def names(pattern):
        m = re.search(pattern, kb)
        if not m:
            sys.exit('patches.py: Kbuild has no ' + pattern)
        return [os.path.basename(o)[:-2] for o in m.group(1).split()]
    return (names(r'\ntdispatch-y := (.*)'),
            names(r'\ntdispatch-\$\(CONFIG_TDISPATCH_USER\) \+= (.*)'),
            names(r'\nobj-m \+= (module/kunit/.*)'))


def local_includes(path):
    return re.findall(r'^#include "([a-z_]+\.h)"', read(path), re.M)


def header_closure(cfiles):
    """The module headers that @cfiles include, directly or not."""
    seen, todo = set(), list(cfiles)
    while todo:
        f = todo.pop()
        for h in local_includes(os.path.join(TOP, 'module', f)):
            if h not in seen:
                seen.add(h)
                todo.append(h)
    return seen


def unifdef(text, symbol):
    """Keep the #ifdef @symbol branch, which linux-source-6.12 has."""
    out, state = [], None
    for line in text.split('\n'):
        if line == '#ifdef ' + symbol:
            state = 'keep'
            continue
        if state and line == '#else':
            state = 'drop'
            continue
        if state and line == '#endif':
            state = None
            continue
        if state != 'drop':
            out.append(line)
    return '\n'.join(out)


def lib_source(name):
    text = read(os.path.join(TOP, 'module', name))
    return unifdef(text, 'TD_HAVE_VM_FLAGS_MOD')


def version():
    return read(os.path.join(TOP, 'VERSION')).strip()


def lib_makefile(engine, user):
    def objs(names):
        line, lines = '', []
        for n in names:
            word = n + '.o'
            if len(line) + len(word) + 1 > 64:
                lines.append(line)
                line = ''
            line += (' ' if line else '') + word
        lines.append(line)
        return ' \\\n\t'.join(lines)
    text = ('# SPDX-License-Identifier: GPL-2.0\n'
            '\n'
            'obj-$(CONFIG_TDISPATCH) += tdispatch.o\n'
            'tdispatch-y := ' + objs(engine) + '\n')
    text += 'tdispatch-$(CONFIG_TDISPATCH_USER) += ' + objs(user) + '\n'
    text += ('\n'
             '# What TDISPATCH_IOC_VERSION reports as module_version.\n'
             "ccflags-y += -DTDISPATCH_MODULE_VERSION='\"%s\"'\n"
             'CFLAGS_trace.o := -I$(src)\n'
             '\n'
             'obj-$(CONFIG_TDISPATCH_KUNIT_TEST) += tests/\n' % version())
    return text


def kconfig(options):
    """The entries of module/Kconfig named in @options."""
    text = read(os.path.join(TOP, 'module', 'Kconfig'))
    entries = re.split(r'\n(?=config )', text)[1:]
    keep = [e for e in entries if e.split()[1] in options]
    return '\n'.join(e.rstrip('\n') + '\n' for e in keep)


def selftests_makefile():
    """The kselftest Makefile as lib.mk wants it, from selftests/Makefile."""
    mk = read(os.path.join(TOP, 'selftests', 'Makefile')).replace('\\\n', ' ')

    def var(name):
        m = re.search(r'\n%s [:+]?= (.*)' % name, mk)
        return ' '.join(m.group(1).split())
    return ('# SPDX-License-Identifier: GPL-2.0\n'
            'TEST_GEN_PROGS := %s\n'
            'TEST_GEN_PROGS_EXTENDED := %s\n'
            '\n'
            'CFLAGS += -Wall -O2 -I.. $(KHDR_INCLUDES)\n'
            'LDLIBS += -lpthread\n'
            'LOCAL_HDRS += %s\n'
            '\n'
            'include ../lib.mk\n' % (var('TEST_GEN_PROGS'),
                                    var('TEST_GEN_PROGS_EXTENDED'),
                                    var('LOCAL_HDRS')))


def maintainers_add(tree, files):
    """Add F: lines to the entry, making it first if it is not there."""
    path = os.path.join(tree, 'MAINTAINERS')
    lines = read(path).split('\n')
    name, email = MAINTAINER
    if MAINT_TITLE not in lines:
        start = lines.index('3C59X NETWORK DRIVER')
        at = next(i for i in range(start, len(lines))
                  if lines[i] and lines[i - 1] == '' and
                  lines[i].upper() > MAINT_TITLE and re.match(r'[A-Z]:\t', lines[i + 1]))
        lines[at:at] = [MAINT_TITLE, 'M:\t%s <%s>' % (name, email),
                        'L:\tlinux-kernel@vger.kernel.org', 'S:\tMaintained', '']
    at = lines.index(MAINT_TITLE) + 1
    end = lines.index('', at)
    fields = lines[at:end]
    fields += ['F:\t' + f for f in files]
    fields = ([f for f in fields if not f.startswith('F:')] +
              sorted(f for f in fields if f.startswith('F:')))
    lines[at:end] = fields
    write(path, '\n'.join(lines))


def insert_after(tree, rel, anchor, new):
    path = os.path.join(tree, rel)
    text = read(path)
    if anchor not in text:
        sys.exit('patches.py: %s has no line %r' % (rel, anchor))
    write(path, text.replace(anchor, anchor + new, 1))


def commit(tree, subject, body):
    name, email = MAINTAINER
    msg = '%s\n\n%s\nSigned-off-by: %s <%s>\n' % (subject, body.strip() + '\n',
                                                  name, email)
    git(tree, 'add', '-A')
    git(tree, '-c', 'user.name=' + name, '-c', 'user.email=' + email,
        'commit', '-q', '-F', '-', input=msg)


def copy_module(tree, names, dest='lib/tdispatch'):
    for n in sorted(names):
        write(os.path.join(tree, dest, n), lib_source(n))


ENGINE_MSG = '''
Code that learns of work keyed by an id (a network device, a peer, an
inode) often learns of it faster than it should act on it.  The kernel
has the pattern in several places, each written for itself: a pending bit
and one list in net/core/link_watch.c, claim-then-raise in irq_work, a
work_struct per object whose pending bit coalesces.  What each user then
writes again is the rest: batches, several workers without two on one
object, a bound, retries with back-off, a rate limit, and an account of
what became of every report.

tdispatch is that pattern as a facility.  Submission is an llist_add() on
the submitting CPU's input list; an object can embed its task (struct
tdispatch_item), and submitting that allocates nothing and never sleeps,
from any context.  The input is drained, each CPU's in its arrival
order, into a pending set keyed by id, where a newer task replaces the
older; batches of at most max_batch tasks go to the workers of a
workqueue when full or when the oldest has waited max_delay_ns, never
two with the same id in flight.
->process() ends a batch in success, congestion, a transient or a
permanent error; retries go back to the head of the line and the
dispatcher holds off.  Tasks can carry a deadline or a not-before time
(a timing wheel holds those), periodic tasks are supervised, and every
accepted task ends in exactly one counted outcome, which ->release()
reports, with

  accepted = queued + delayed + pending + in_flight + done + failed
             + overridden + expired + dropped + cancelled

at every snapshot.  debugfs shows each dispatcher's state and
tracepoints its events.

The code is lib/tdispatch/, one file per concern; the API is
include/linux/tdispatch.h, and the outcome and result values, which
userspace sees too, are in include/uapi/linux/tdispatch.h.  The next
patch converts net/core/link_watch.c to it.  Out of tree it is tested on
stock 6.1, 6.12 and PREEMPT_RT 6.12 kernels and on a 6.12 with lockdep,
KASAN, UBSAN, kmemleak and fault injection.
'''

USER_MSG = '''
Let processes use tdispatch through a misc device (CONFIG_TDISPATCH_USER).
A file may create its own dispatcher, whose batches are leased to the
file and taken with TDISPATCH_IOC_TAKE and ended with
TDISPATCH_IOC_COMPLETE by any thread sharing it, or attach to a dispatcher
a driver published with tdispatch_publish(), under the owner, group and
mode the driver gave.  read() returns every task's outcome and poll()
reports events and ready batches.  Shared slots (TDISPATCH_IOC_SLOTS and
mmap()) let producers that write far more often than a consumer acts
replace a waiting task's payload without a system call.

Every argument starts with its size, the ABI's only version, as in
openat2() and clone3(): the ioctl numbers carry none, and
TDISPATCH_IOC_VERSION reports features one bit each.  What a file can
make the kernel hold is bounded by per-user and per-user-namespace
limits that are module parameters, and charged to its memory cgroup.

The ioctl magic 0xD7 is unused so far.
'''

TESTS_MSG = '''
The tests come along: KUnit tests of the logic that needs no threads
(TDISPATCH_KUNIT_TEST: the pending set, delayed tasks and the timing
wheel, the id hash, the shaper and the rate limit, periodic intervals;
the functions they call are exported into EXPORTED_FOR_KUNIT_TESTING
when KUnit is built), and kselftests of everything userspace can do
with /dev/tdispatch and every way to get it wrong (bad sizes, flags and
pointers, races between close and submit, expiring leases, limits, the
memory cgroup's limit, fault injection, shared slots), with a random
ioctl fuzzer that the runner builds but does not run.  The tests of
dispatchers that a driver publishes skip unless one does.

Documentation/core-api/tdispatch.rst explains the model, the contexts
and the accounting and pulls the API's kernel-doc;
Documentation/userspace-api/tdispatch.rst describes the device.
'''


def generate(src, out):
    engine, user, kunit = kbuild_objects()
    headers = header_closure(n + '.c' for n in engine + user)
    work = tempfile.mkdtemp(prefix='td-patches.')
    try:
        tree = os.path.join(work, 'linux')
        os.makedirs(tree)
        git(tree, 'init', '-q')
        for rel in CHANGED + CONVERTED:
            write(os.path.join(tree, rel), read(os.path.join(src, rel)))
        commit(tree, 'linux-source-6.12', 'The files the series changes.')
        base = git(tree, 'rev-parse', 'HEAD').strip()
        sdir = os.path.join(TOP, 'selftests')
        sdest = 'tools/testing/selftests/tdispatch'
        docs = ['Documentation/%s/tdispatch.rst' % d for d in ('core-api', 'userspace-api')]

        # 1: tdispatch, its tests and documents, and MAINTAINERS.  One
        # patch: checkpatch asks every patch that adds files to touch
        # MAINTAINERS, and a second patch touching its entry would need
        # the first to apply.
        copy_module(tree, [n + '.c' for n in engine + user] + sorted(headers))
        write(os.path.join(tree, 'include/linux/tdispatch.h'),
              read(os.path.join(TOP, 'module/include/linux/tdispatch.h')))
        write(os.path.join(tree, 'include/uapi/linux/tdispatch.h'),
              read(os.path.join(TOP, 'uapi/linux/tdispatch.h')))
        write(os.path.join(tree, 'lib/tdispatch/Kconfig'),
              '# SPDX-License-Identifier: GPL-2.0-only\n\n' +
              kconfig({'TDISPATCH', 'TDISPATCH_USER', 'TDISPATCH_KUNIT_TEST'}))
        write(os.path.join(tree, 'lib/tdispatch/Makefile'), lib_makefile(engine, user))
        insert_after(tree, 'lib/Kconfig', 'source "lib/fonts/Kconfig"\n',
                     '\nsource "lib/tdispatch/Kconfig"\n')
        insert_after(tree, 'lib/Makefile', 'obj-$(CONFIG_DIMLIB) += dim/\n',
                     'obj-$(CONFIG_TDISPATCH) += tdispatch/\n')
        insert_after(tree, 'Documentation/userspace-api/ioctl/ioctl-number.rst',
                     '0xCF  02     fs/smb/client/cifs_ioctl.h\n',
                     '0xD7  00-1F  %-57s %s\n' % ('uapi/linux/tdispatch.h',
                                                'tdispatch coalescing work dispatcher'))

        kdir = os.path.join(TOP, 'module', 'kunit')
        for f in sorted(os.listdir(kdir)):
            if f.endswith('_kunit.c') or f.endswith('_kunit.h'):
                write(os.path.join(tree, 'lib/tdispatch/tests', f),
                      read(os.path.join(kdir, f)))
        write(os.path.join(tree, 'lib/tdispatch/tests/Makefile'),
              '# SPDX-License-Identifier: GPL-2.0\n\n' +
              ''.join('obj-$(CONFIG_TDISPATCH_KUNIT_TEST) += %s.o\n' % k for k in kunit))

        for f in sorted(os.listdir(sdir)):
            if f.endswith('.c') or f.endswith('.h') or f in ('config', 'settings'):
                write(os.path.join(tree, sdest, f), read(os.path.join(sdir, f)))
        mk = selftests_makefile()
        write(os.path.join(tree, sdest, 'Makefile'), mk)
        write(os.path.join(tree, sdest, '.gitignore'),
              '# SPDX-License-Identifier: GPL-2.0-only\n' +
              ''.join(p + '\n' for p in sorted(set(
                  re.findall(r'\b(tdispatch_\w+)\b', mk.split('CFLAGS')[0])))))
        insert_after(tree, 'tools/testing/selftests/Makefile',
                     'TARGETS += tc-testing\n', 'TARGETS += tdispatch\n')

        for rel in docs:
            write(os.path.join(tree, rel), read(os.path.join(TOP, rel)))
        insert_after(tree, 'Documentation/core-api/index.rst', '   padata\n',
                     '   tdispatch\n')
        insert_after(tree, 'Documentation/userspace-api/index.rst',
                     '   dma-buf-alloc-exchange\n', '   tdispatch\n')
        maintainers_add(tree, ['include/linux/tdispatch.h', 'include/uapi/linux/tdispatch.h',
                               'lib/tdispatch/', sdest + '/'] + docs)
        commit(tree, 'lib: add tdispatch, a coalescing work dispatcher',
               ENGINE_MSG + USER_MSG + TESTS_MSG)

        # 2: its first user.
        git(tree, 'apply', CONVERSION + '.diff')
        subject, body = read(CONVERSION + '.msg').split('\n\n', 1)
        commit(tree, subject, body)

        if os.path.isdir(out):
            shutil.rmtree(out)
        os.makedirs(out)
        git(tree, 'format-patch', '-q', '--no-signature', '--zero-commit',
            '-o', out, base + '..HEAD')
    finally:
        shutil.rmtree(work)


if __name__ == '__main__':
    if len(sys.argv) != 3:
        sys.exit(__doc__.split('\n\n')[1])
    generate(sys.argv[1], sys.argv[2])
