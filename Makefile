# SPDX-License-Identifier: GPL-2.0
# tdispatch: build the module, tools and selftests; run the VM tests.
#
#   make                 module (against KDIR), tools/ and selftests/
#   make KDIR=/path      build the module against another kernel tree
#   make check           install deps, lint, run every test in QEMU
#   make check KERNELS=debug   the same on one kernel (6.1, 6.12, debug)
#   make check-loaded    make check three times beside stress-ng --cpu 1 (RUNS=, LOAD=)
#   make bench           run the benchmarks (module/bench/) in the VM
#   make bench BENCH_KERNEL=debug   the same on the debug kernel
#   make bench BENCH_ARGS="reps=1"  with module parameters for every benchmark
#   make fuzz            run the ioctl fuzzer alone in a VM (KERNEL=6.12 SEED= CALLS=)
#   make demo            boot the VM with the module and show it working
#   make vm              boot the VM with the module and give a shell
#   make lint            checkpatch --strict, kernel-doc, sparse
#   make install         install the module for the running kernel

# The running kernel's build tree when there is one, else the newest
# Debian headers installed.
KDIR ?= $(firstword $(wildcard /lib/modules/$(shell uname -r)/build) \
	$(lastword $(shell ls -d /usr/src/linux-headers-*-amd64 2>/dev/null | sort -V)))
KSRC = $(shell scripts/src-tree.sh)
KERNELS ?= 6.1 6.12 debug
VM_KERNEL ?= 6.12
BENCH_KERNEL ?= 6.12
KERNEL ?= 6.12

all: module tools selftests

module:
	@test -n "$(KDIR)" || { echo "no kernel headers found; run scripts/deps.sh or set KDIR" >&2; exit 1; }
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules

tools:
	$(MAKE) -C tools

selftests:
	$(MAKE) -C selftests KSFT_DIR=$(KSRC)/tools/testing/selftests

install: module
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules_install
	install -D -m 0644 scripts/60-tdispatch.rules /etc/udev/rules.d/60-tdispatch.rules
	$(MAKE) -C tools install

check:
	KERNELS="$(KERNELS)" scripts/check.sh

check-loaded:
	KERNELS="$(KERNELS)" RUNS="$(RUNS)" LOAD="$(LOAD)" scripts/check-loaded.sh

lint:
	scripts/deps.sh
	scripts/lint.sh

bench:
	scripts/deps.sh
	BENCH_KERNEL="$(BENCH_KERNEL)" BENCH_ARGS="$(BENCH_ARGS)" scripts/bench.sh

fuzz:
	KERNEL="$(KERNEL)" SEED="$(SEED)" CALLS="$(CALLS)" scripts/fuzz.sh

demo:
	scripts/deps.sh
	scripts/vm.sh demo $(VM_KERNEL)

vm:
	scripts/deps.sh
	scripts/vm.sh shell $(VM_KERNEL)

clean:
	-$(MAKE) -C $(KDIR) M=$(CURDIR) clean
	$(MAKE) -C tools clean
	$(MAKE) -C selftests clean
	rm -rf build

.PHONY: all module tools selftests install check check-loaded lint bench fuzz demo vm clean
