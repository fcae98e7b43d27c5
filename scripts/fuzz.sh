#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# make fuzz: boot a VM that runs tdispatch_fuzz alone, longer or with a
# given seed, and judge its log as make check does (any kernel report, a
# failed rmmod or a leak fails it).
#   KERNEL=6.12     which kernel (6.1, 6.12 or debug)
#   SEED=n CALLS=n  the fuzzer's seed (default: the time) and calls
#   VM_TIMEOUT=3600 seconds before the VM counts as hung
set -eu
. "$(dirname "$0")/lib.sh"

k=${KERNEL:-6.12}
tmo=${VM_TIMEOUT:-3600}
"$TD_TOP/scripts/deps.sh"
td_kernel "$k"
out=$TD_BUILD/fuzz-$k
user=$TD_BUILD/user
td_build_user "$user"
td_build_modules "$td_kdir" "$out"
args="-n ${CALLS:-1000000}"
[ -n "${SEED:-}" ] && args="$args -s $SEED"
mkdir -p "$out/extra"
printf '%s\n' "$args" >"$out/extra/fuzz-args"
"$TD_TOP/scripts/mkinitramfs.sh" "$out/initrd.gz" "$out/mod" "$user" "$out/extra"
td_log "fuzz $k: $args"
"$TD_TOP/scripts/vm-run.sh" "$td_kimg" "$out/initrd.gz" fuzz "$out/log" "$tmo" || true
sed -n '/^TD-KSFT-BEGIN/,/^TD-KSFT-END/p' "$out/log/results.log" | tr -d '\r'
echo "  $k: VM ran $(cat "$out/log/seconds")s; console log $out/log/console.log"
"$TD_TOP/scripts/ktap.py" "fuzz-$k" "$out/log"
