#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# usage: vm.sh demo|shell [KERNEL]
# Boot a VM (stock 6.12 unless told 6.1 or debug) with the module loaded,
# then run the demo or give a shell on this terminal.
set -eu
. "$(dirname "$0")/lib.sh"

mode=$1 k=${2:-6.12}
td_kernel "$k"
out=$TD_BUILD/$mode-$k
td_build_user "$out/user"
cp "$TD_TOP/scripts/demo.sh" "$out/user/demo.sh"
td_build_modules "$td_kdir" "$out"
"$TD_TOP/scripts/mkinitramfs.sh" "$out/initrd.gz" "$out/mod" "$out/user"
[ "$mode" = shell ] && td_log "booting $k; Ctrl-A X leaves QEMU"
exec "$TD_TOP/scripts/vm-run.sh" "$td_kimg" "$out/initrd.gz" "$mode"
