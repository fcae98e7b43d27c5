#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Runs inside the VM (tdmode=demo), after tdispatch.ko is loaded.
echo
echo "=== tdispatch demo on Linux $(uname -r) ==="
echo "--- the module"
grep '^tdispatch ' /proc/modules
ls -l /dev/tdispatch
echo "--- tdctl version"
tdctl version
echo "=== end of demo ==="
