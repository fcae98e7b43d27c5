#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Runs inside the VM (tdmode=demo), after tdispatch.ko is loaded.
echo
echo "=== tdispatch demo on Linux $(uname -r), $(grep -c ^processor /proc/cpuinfo) CPUs ==="
echo "--- the module and its device"
grep '^tdispatch ' /proc/modules
ls -l /dev/tdispatch
tdctl version
echo
echo "--- the engine: producers on every CPU post 20000 readings each for 16"
echo "    sensors; a slow, sometimes congested consumer sees only the newest"
echo "    reading per sensor, in batches of up to 8"
dmesg -c >/dev/null
insmod "$DEMO_MODULES/demo/tdispatch_demo.ko"
rmmod tdispatch_demo
dmesg | sed -n 's/.*tdispatch_demo: /  /p'
echo
echo "accepted = done + coalesced + dropped + expired + failed + cancelled"
echo "(+ queued + pending + in_flight while running): nothing is lost."
echo "=== end of demo ==="
