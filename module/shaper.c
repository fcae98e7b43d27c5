// SPDX-License-Identifier: GPL-2.0
/*
 * The traffic shaper: after a CONGESTION or TRANSIENT result the acceptor
 * holds off new batches for the configured delay, counted from the last
 * such result.  Congestion is looked at first, as in Eureka's TrafficShaper.
 */
#include "internal.h"

void td_shaper_init(struct td_shaper *s, u64 congestion_delay_ns,
		    u64 transient_delay_ns)
{
	*s = (struct td_shaper) {
		.congestion_delay_ns = min(congestion_delay_ns, TDISPATCH_MAX_DELAY_NS),
		.transient_delay_ns = min(transient_delay_ns, TDISPATCH_MAX_DELAY_NS),
	};
}

void td_shaper_record(struct td_shaper *s, enum tdispatch_result result,
		      ktime_t now)
{
	/* 0 means "none"; a clock reading of exactly 0 is taken as 1 ns. */
	if (!now)
		now = 1;
	if (result == TDISPATCH_CONGESTION)
		s->last_congestion = now;
	else if (result == TDISPATCH_TRANSIENT)
		s->last_transient = now;
}

static u64 td_shaper_left(ktime_t *last, u64 delay, ktime_t now)
{
	s64 waited;

	if (!*last)
		return 0;
	waited = ktime_to_ns(ktime_sub(now, *last));
	if (waited >= 0 && waited < delay)
		return delay - waited;
	*last = 0;
	return 0;
}

/**
 * td_shaper_holdoff() - how much longer the acceptor must hold off
 * @s: the shaper
 * @now: the current time
 *
 * Return: nanoseconds to wait before the next batch, 0 to go now.
 */
u64 td_shaper_holdoff(struct td_shaper *s, ktime_t now)
{
	u64 left = td_shaper_left(&s->last_congestion, s->congestion_delay_ns, now);

	if (left)
		return left;
	return td_shaper_left(&s->last_transient, s->transient_delay_ns, now);
}
