/* SPDX-License-Identifier: GPL-2.0 */
/* One task's state, for QUERY (stats.c); the counters are exported. */
#ifndef _TDISPATCH_STATS_H
#define _TDISPATCH_STATS_H

#include <linux/types.h>

struct tdispatch;

void td_query(struct tdispatch *d, u64 id, u32 *state, u32 *attempts, u32 *waiting,
	      u32 *delayed);

#endif /* _TDISPATCH_STATS_H */
