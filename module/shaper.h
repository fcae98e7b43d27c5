/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The shaper's hold-off after a failure and the rate limit's tokens
 * (shaper.c): pure state, the caller locks and passes the time.
 */
#ifndef _TDISPATCH_SHAPER_H
#define _TDISPATCH_SHAPER_H

#include <linux/ktime.h>
#include <linux/tdispatch.h>
#include <linux/types.h>

/* The traffic shaper: how long the acceptor holds off after a failure. */
struct td_shaper {
	u64 congestion_delay_ns;
	u64 transient_delay_ns;
	ktime_t last_congestion;	/* 0: none in effect */
	ktime_t last_transient;
};

void td_shaper_init(struct td_shaper *s, u64 congestion_delay_ns,
		    u64 transient_delay_ns);
void td_shaper_record(struct td_shaper *s, enum tdispatch_result result,
		      ktime_t now);
u64 td_shaper_holdoff(struct td_shaper *s, ktime_t now);

/* The rate limit's tokens, in shaper.c; pure state like the shaper. */
struct td_rate {
	u32 rate;			/* tasks a second; 0: no limit */
	u32 burst;			/* most tokens, in tasks */
	u64 tokens;			/* in billionths of a task */
	ktime_t last;			/* when it was last filled */
};

void td_rate_set(struct td_rate *b, u32 rate, u32 burst, ktime_t now);
unsigned int td_rate_allow(struct td_rate *b, ktime_t now, unsigned int want,
			   unsigned int need, ktime_t *when);
void td_rate_take(struct td_rate *b, unsigned int n);

#endif /* _TDISPATCH_SHAPER_H */
