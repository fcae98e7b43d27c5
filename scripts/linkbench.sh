#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# make bench's link watch part: the same paced link storm (tools/linkstorm.c
# -b) on two kernels built alike from linux-source-6.12 with tdispatch
# built in and no debug options, the link watch as mainline has it and
# converted by the series' second patch (scripts/build-kernel.sh
# lw-mainline and lw-tdispatch).  One VM at a time, the kernels in turn,
# LINKBENCH_BOOTS boots of each, LINKBENCH_ROUNDS storms a boot; then one
# BENCH linkwatch line per kernel with the median of each figure over
# every round, and one with tdispatch's over mainline's.
#   LINKBENCH_BOOTS=3 LINKBENCH_ROUNDS=3
#   LINKBENCH_STORM="-n 1000 -w 2 -t 5000 -r 500"   linkstorm's storm:
#                       devices, writers, ms, carrier writes a second
set -eu
. "$(dirname "$0")/lib.sh"

boots=${LINKBENCH_BOOTS:-3}
storm=${LINKBENCH_STORM:--n 1000 -w 2 -t 5000 -r 500}
out=$TD_BUILD/linkbench
kernels="lw-mainline lw-tdispatch"

rm -rf "$out"
mkdir -p "$out/user"
make -s -C "$TD_TOP/tools" OUTPUT="$out/user" LDFLAGS=-static "$out/user/linkstorm" >&2 ||
	td_die "linkstorm did not build"
for k in $kernels; do
	td_kernel "$k"
	mkdir -p "$out/$k/mod" "$out/$k/extra/bin"
	cp "$td_kdir/drivers/net/dummy.ko" "$out/$k/mod/"
	cp "$out/user/linkstorm" "$out/$k/extra/bin/"
	printf '%s -b %s\n' "$storm" "${LINKBENCH_ROUNDS:-3}" >"$out/$k/extra/linkbench.args"
	"$TD_TOP/scripts/mkinitramfs.sh" "$out/$k/initrd.gz" "$out/$k/mod" "$out/$k/mod" \
		"$out/$k/extra"
done

rc=0
for b in $(seq "$boots"); do
	for k in $kernels; do
		td_kernel "$k"
		log=$out/$k/log-$b
		td_log "linkbench: $k, boot $b of $boots"
		VM_TCG=multi "$TD_TOP/scripts/vm-run.sh" "$td_kimg" "$out/$k/initrd.gz" linkbench \
			"$log" 1200 || true
		"$TD_TOP/scripts/ktap.py" "linkbench-$k-$b" "$log" || rc=1
		tr -d '\r' <"$log/results.log" | grep '^# linkbench:' | sed "s/^/# $k: /" | head -n 1
		tr -d '\r' <"$log/results.log" | sed -n "s/^LWROUND /${k#lw-} /p" >>"$out/rounds"
	done
done
[ -s "$out/rounds" ] || td_die "linkbench: no round measured"
sed 's/^/# /' "$out/rounds"

# The medians, per kernel; then tdispatch's over mainline's.
awk '
{
	k = $1
	for (i = 2; i <= NF; i++) {
		split($i, kv, "=")
		if (kv[1] == "round")
			continue
		if (!(kv[1] in seen)) { seen[kv[1]] = 1; keys[++nk] = kv[1] }
		n = ++cnt[k, kv[1]]
		val[k, kv[1], n] = kv[2] + 0
	}
	rounds[k]++
}
function median(k, key,    n, i, j, t, a) {
	n = cnt[k, key]
	for (i = 1; i <= n; i++) a[i] = val[k, key, i]
	for (i = 2; i <= n; i++)
		for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
END {
	split("mainline tdispatch", ks, " ")
	for (x = 1; x <= 2; x++) {
		k = ks[x]
		line = "BENCH linkwatch " k " rounds=" rounds[k]
		for (i = 1; i <= nk; i++) {
			m[k, keys[i]] = median(k, keys[i])
			fmt = " %s=%.2f"
			if (m[k, keys[i]] >= 100 || m[k, keys[i]] == int(m[k, keys[i]]))
				fmt = " %s=%.0f"
			line = line sprintf(fmt, keys[i], m[k, keys[i]])
		}
		print line
	}
	line = "BENCH linkwatch tdispatch/mainline"
	for (i = 1; i <= nk; i++)
		if (m["mainline", keys[i]])
			line = line sprintf(" %s=%.2f", keys[i], m["tdispatch", keys[i]] / m["mainline", keys[i]])
	print line
}' "$out/rounds"
exit $rc
