#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Print the path of the extracted linux-source tree (extracting it once).
set -eu
. "$(dirname "$0")/lib.sh"
td_src_tree
