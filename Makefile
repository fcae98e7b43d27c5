# SPDX-License-Identifier: GPL-2.0
# tdispatch: build the module, tools and selftests; run the VM tests.
#
#   make                 module (against KDIR), tdctl and libtdispatch: kernel
#                        headers and a compiler are all it needs
#   make selftests       the kselftests (kselftest_harness.h from linux-source)
#   make KDIR=/path      build the module against another kernel tree
#   make check           install deps, lint, run every test in QEMU
#   make check KERNELS=debug   the same on one kernel (6.1, 6.12, rt, debug, intree)
#   make check TESTS="tdispatch_slots_test"   only those kselftests and test modules (no fuzz, KUnit)
#   make check-loaded    make check three times beside stress-ng --cpu 1 (RUNS=, LOAD=)
#   make bench           run the benchmarks (module/bench/) in the VM
#   make bench BENCH_KERNEL=rt   the same on another kernel (6.1, rt, debug)
#   make bench BENCH_ARGS="reps=1"  with module parameters for every benchmark
#   make bench BENCH_ONLY=td_timer_bench   only those benchmarks (module names, tdbench)
#   make bench BENCH_BEFORE=<rev>   tdbench against that revision's module, same boot
#   make bench BENCH_ONLY=linkwatch   only the link watch, mainline's against the
#                        converted one (scripts/linkbench.sh; LINKBENCH_BOOTS, _ROUNDS, _STORM)
#   make fuzz            run the ioctl fuzzer alone in a VM (KERNEL=6.12 SEED= CALLS=)
#   make demo            boot the VM with the module and show it working
#   make vm              boot the VM with the module and give a shell
#   make lint            checkpatch --strict, kernel-doc, sparse
#   make dkms-deb        build/tdispatch-dkms_<version>_amd64.deb (DKMS source, tdctl, lib)
#   make lib             libtdispatch (tools/lib/tdispatch/): .a, .so, .pc
#   make install         install the module for the running kernel, tdctl, libtdispatch

# The running kernel's build tree when there is one, else the newest
# Debian headers installed.
KDIR ?= $(firstword $(wildcard /lib/modules/$(shell uname -r)/build) \
	$(lastword $(shell ls -d /usr/src/linux-headers-*-amd64 2>/dev/null | grep -v -- -rt- | sort -V)))
KSRC = $(shell scripts/src-tree.sh)
KERNELS ?= 6.1 6.12 rt debug intree
VM_KERNEL ?= 6.12
BENCH_KERNEL ?= 6.12
KERNEL ?= 6.12

all: module tools lib

module:
	@test -n "$(KDIR)" || { echo "no kernel headers found; run scripts/deps.sh or set KDIR" >&2; exit 1; }
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules

tools:
	$(MAKE) -C tools

# libtdispatch: static, shared and pkg-config (tools/lib/tdispatch/).
lib:
	$(MAKE) -C tools/lib/tdispatch

selftests:
	$(MAKE) -C selftests KSFT_DIR=$(KSRC)/tools/testing/selftests

install: module
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules_install
	install -D -m 0644 scripts/60-tdispatch.rules /etc/udev/rules.d/60-tdispatch.rules
	$(MAKE) -C tools install
	$(MAKE) -C tools/lib/tdispatch install

check:
	KERNELS="$(KERNELS)" TESTS="$(TESTS)" scripts/check.sh

check-loaded:
	KERNELS="$(KERNELS)" RUNS="$(RUNS)" LOAD="$(LOAD)" scripts/check-loaded.sh

# build/tdispatch-dkms_<version>_amd64.deb (see scripts/dkms-deb.sh).
dkms-deb:
	scripts/deps.sh
	scripts/dkms-deb.sh

lint:
	scripts/deps.sh lint
	scripts/lint.sh

# The in-tree series for linux-source-6.12, checked and built (scripts/patches.sh).
patches:
	scripts/deps.sh
	PATCHES_BUILD="$(PATCHES_BUILD)" scripts/patches.sh

# The link watch's rounds (linkwatch) run unless BENCH_ONLY leaves them out.
bench:
	scripts/deps.sh
	rc=0; \
	if [ "$(strip $(BENCH_ONLY))" != linkwatch ]; then \
		BENCH_KERNEL="$(BENCH_KERNEL)" BENCH_ARGS="$(BENCH_ARGS)" \
		BENCH_ONLY="$(filter-out linkwatch,$(BENCH_ONLY))" \
		BENCH_BEFORE="$(BENCH_BEFORE)" BENCH_AB_ROUNDS="$(BENCH_AB_ROUNDS)" \
		BENCH_PERF="$(BENCH_PERF)" scripts/bench.sh || rc=$$?; \
	fi; \
	case " $(BENCH_ONLY) " in \
	"  " | *" linkwatch "*) LINKBENCH_BOOTS="$(LINKBENCH_BOOTS)" \
		LINKBENCH_ROUNDS="$(LINKBENCH_ROUNDS)" LINKBENCH_STORM="$(LINKBENCH_STORM)" \
		scripts/linkbench.sh || rc=$$?;; \
	esac; \
	exit $$rc

fuzz:
	KERNEL="$(KERNEL)" SEED="$(SEED)" CALLS="$(CALLS)" scripts/fuzz.sh

soak:
	SOAK="$(SOAK)" SOAK_RUN="$(SOAK_RUN)" SOAK_SEED="$(SOAK_SEED)" scripts/soak.sh

demo:
	scripts/deps.sh
	scripts/vm.sh demo $(VM_KERNEL)

vm:
	scripts/deps.sh
	scripts/vm.sh shell $(VM_KERNEL)

clean:
	-$(MAKE) -C $(KDIR) M=$(CURDIR) clean
	$(MAKE) -C tools clean
	$(MAKE) -C tools/lib/tdispatch clean
	$(MAKE) -C selftests clean
	rm -rf build

.PHONY: all module tools lib selftests install check check-loaded dkms-deb lint patches bench fuzz soak demo vm clean
