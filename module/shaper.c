// SPDX-License-Identifier: GPL-2.0
/*
 * The traffic shaper: after a CONGESTION or TRANSIENT result the acceptor
 * holds off new batches for the configured delay, counted from the last
 * such result.  Congestion is looked at first, as in Eureka's TrafficShaper.
 */
#include <kunit/visibility.h>

#include "shaper.h"

void td_shaper_init(struct td_shaper *s, u64 congestion_delay_ns,
		    u64 transient_delay_ns)
{
	*s = (struct td_shaper) {
		.congestion_delay_ns = min(congestion_delay_ns, TDISPATCH_MAX_DELAY_NS),
		.transient_delay_ns = min(transient_delay_ns, TDISPATCH_MAX_DELAY_NS),
	};
}
EXPORT_SYMBOL_IF_KUNIT(td_shaper_init);

void td_shaper_record(struct td_shaper *s, enum tdispatch_result result,
		      ktime_t now)
{
	/* 0 means "none"; a clock reading of exactly 0 is taken as 1 ns. */
	if (!now)
		now = 1;
	if (result == TDISPATCH_RESULT_CONGESTION)
		s->last_congestion = now;
	else if (result == TDISPATCH_RESULT_TRANSIENT)
		s->last_transient = now;
}
EXPORT_SYMBOL_IF_KUNIT(td_shaper_record);

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
EXPORT_SYMBOL_IF_KUNIT(td_shaper_holdoff);

/*
 * The rate limit: up to @burst tokens, one a task, refilled at @rate tasks
 * a second, counted in billionths of a task so that it fills every
 * nanosecond.  It paces a healthy consumer, where the shaper above only
 * reacts to failures.
 */
#define TD_TOKEN	NSEC_PER_SEC

static void td_rate_refill(struct td_rate *b, ktime_t now)
{
	u64 cap = (u64)b->burst * TD_TOKEN;
	s64 elapsed = ktime_to_ns(ktime_sub(now, b->last));

	if (elapsed <= 0)
		return;
	b->last = now;
	/* Compared first: elapsed * rate stays below cap + rate, far from overflow. */
	if ((u64)elapsed > div64_u64(cap - b->tokens, b->rate))
		b->tokens = cap;
	else
		b->tokens += elapsed * b->rate;
}

/*
 * @rate 0: no limit.  A new limit starts full; a changed one keeps what
 * it had earned by @now, up to the new burst.
 */
void td_rate_set(struct td_rate *b, u32 rate, u32 burst, ktime_t now)
{
	u64 cap = (u64)burst * TD_TOKEN;

	if (b->rate)
		td_rate_refill(b, now);
	b->tokens = b->rate ? min(b->tokens, cap) : cap;
	b->rate = rate;
	b->burst = burst;
	b->last = now;
}
EXPORT_SYMBOL_IF_KUNIT(td_rate_set);

/**
 * td_rate_allow() - how many tasks may go now
 * @b: the rate limit
 * @now: the current time
 * @want: most the caller would send
 * @need: fewest worth sending (a whole batch); more than the burst counts
 *	as the burst, less than one as one
 * @when: if none may, set to when @need may
 *
 * Waiting for @need tokens keeps batches whole at the same average rate,
 * where handing out each token as it comes would cut batches of one.
 *
 * Return: 0, or @need to @want; take what was sent with td_rate_take().
 */
unsigned int td_rate_allow(struct td_rate *b, ktime_t now, unsigned int want,
			   unsigned int need, ktime_t *when)
{
	u64 short_of;

	if (!b->rate)
		return want;
	td_rate_refill(b, now);
	need = clamp(need, 1U, b->burst);
	if (b->tokens < (u64)need * TD_TOKEN) {
		short_of = (u64)need * TD_TOKEN - b->tokens;
		*when = ktime_add_ns(now, div64_u64(short_of + b->rate - 1, b->rate));
		return 0;
	}
	return min_t(u64, want, div64_u64(b->tokens, TD_TOKEN));
}
EXPORT_SYMBOL_IF_KUNIT(td_rate_allow);

void td_rate_take(struct td_rate *b, unsigned int n)
{
	if (b->rate)
		b->tokens -= min_t(u64, b->tokens, (u64)n * TD_TOKEN);
}
EXPORT_SYMBOL_IF_KUNIT(td_rate_take);
