// SPDX-License-Identifier: GPL-2.0
/*
 * Supervised periodic tasks, as Eureka's TimedSupervisorTask: the state of
 * one registration, whose runs the engine submits to the dispatcher.
 *
 * A run that does not end within the timeout, or ends with CONGESTION or
 * TRANSIENT, doubles the interval up to period * bound; a SUCCESS resets
 * it to the period.  The next run falls due one interval after the last
 * one ended or timed out.  A run is never started while the previous one
 * still goes: that turn is skipped.
 *
 * Like the pending set, nothing here locks or reads a clock.
 */
#include <kunit/visibility.h>
#include <linux/bug.h>
#include <linux/overflow.h>

#include "periodic.h"

/* @t + @ns, saturating at KTIME_MAX rather than wrapping; @t >= 0. */
static ktime_t td_periodic_after(ktime_t t, u64 ns)
{
	if (ns >= (u64)(KTIME_MAX - t))
		return KTIME_MAX;
	return ktime_add_ns(t, ns);
}

/* Capped before it is doubled, so that it cannot overflow. */
static void td_periodic_back_off(struct td_periodic *pr)
{
	if (pr->interval_ns > pr->max_interval_ns / 2)
		pr->interval_ns = pr->max_interval_ns;
	else
		pr->interval_ns *= 2;
}

/**
 * td_periodic_valid() - whether a registration's parameters can be used
 * @period_ns: the interval after a success
 * @timeout_ns: how long a run may go before it counts as timed out
 * @bound: the interval backs off to at most @period_ns * @bound
 *
 * Return: true if @period_ns, @timeout_ns and @bound are non-zero and the
 * longest interval fits in a ktime_t.
 */
bool td_periodic_valid(u64 period_ns, u64 timeout_ns, unsigned int bound)
{
	u64 max;

	if (!period_ns || !timeout_ns || !bound)
		return false;
	return !check_mul_overflow(period_ns, (u64)bound, &max) && max <= KTIME_MAX;
}
EXPORT_SYMBOL_IF_KUNIT(td_periodic_valid);

/**
 * td_periodic_init() - set up a registration whose first run is due at once
 * @pr: the registration
 * @id: the task id its runs are submitted with
 * @period_ns: the interval after a success
 * @timeout_ns: how long a run may go before it counts as timed out
 * @bound: the interval backs off to at most @period_ns * @bound
 * @payload: the payload its runs are submitted with
 * @now: the current time, when the first run falls due
 *
 * The parameters must have passed td_periodic_valid().
 */
void td_periodic_init(struct td_periodic *pr, u64 id, u64 period_ns,
		      u64 timeout_ns, unsigned int bound, void *payload,
		      ktime_t now)
{
	*pr = (struct td_periodic) {
		.id = id,
		.payload = payload,
		.period_ns = period_ns,
		.timeout_ns = timeout_ns,
		.max_interval_ns = period_ns * bound,
		.interval_ns = period_ns,
		.next = now,
	};
	INIT_LIST_HEAD(&pr->node);
}
EXPORT_SYMBOL_IF_KUNIT(td_periodic_init);

/* A running run whose timeout has come counts as timed out, once. */
static void td_periodic_check_timeout(struct td_periodic *pr, ktime_t now)
{
	if (pr->running && !pr->timed_out && !ktime_before(now, pr->run_deadline)) {
		pr->timeouts++;
		pr->timed_out = true;
		td_periodic_back_off(pr);
		pr->next = td_periodic_after(pr->run_deadline, pr->interval_ns);
	}
}

/**
 * td_periodic_tick() - what a registration needs done at @now
 * @pr: the registration
 * @now: the current time
 *
 * First a running run whose timeout has come is counted as timed out: the
 * interval backs off and the next run falls due one interval after the
 * timeout.  Then, if the next run is due: while the last one still goes,
 * this turn is skipped and the next falls due one interval on; otherwise
 * a run starts.
 *
 * Return: %TD_PERIODIC_RUN if the caller must submit a run now, else
 * %TD_PERIODIC_NONE.
 */
enum td_periodic_action td_periodic_tick(struct td_periodic *pr, ktime_t now)
{
	td_periodic_check_timeout(pr, now);
	if (ktime_before(now, pr->next))
		return TD_PERIODIC_NONE;
	if (pr->running) {
		pr->skipped++;
		pr->next = td_periodic_after(now, pr->interval_ns);
		return TD_PERIODIC_NONE;
	}
	pr->runs++;
	pr->running = true;
	pr->timed_out = false;
	pr->run_deadline = td_periodic_after(now, pr->timeout_ns);
	pr->next = KTIME_MAX;
	return TD_PERIODIC_RUN;
}
EXPORT_SYMBOL_IF_KUNIT(td_periodic_tick);

/**
 * td_periodic_ended() - the current run of a registration has ended
 * @pr: the registration
 * @result: the &enum tdispatch_result its batch returned, or -1 if it
 *	ended without being processed (overridden, dropped, expired,
 *	cancelled)
 * @now: the current time
 *
 * A run that ends after its timeout counts as timed out, whether or not
 * td_periodic_tick() saw the timeout come, and changes nothing more.
 * Otherwise SUCCESS resets the interval to the period, CONGESTION and
 * TRANSIENT double it, and PERMANENT or -1 leave it; the next run falls
 * due one interval from @now.
 */
void td_periodic_ended(struct td_periodic *pr, int result, ktime_t now)
{
	/* Each run ends exactly once, and only a started one. */
	if (WARN_ON_ONCE(!pr->running))
		return;
	td_periodic_check_timeout(pr, now);
	pr->running = false;
	if (pr->timed_out)
		return;
	switch (result) {
	case TDISPATCH_RESULT_SUCCESS:
		pr->successes++;
		pr->interval_ns = pr->period_ns;
		break;
	case TDISPATCH_RESULT_CONGESTION:
	case TDISPATCH_RESULT_TRANSIENT:
		pr->failures++;
		td_periodic_back_off(pr);
		break;
	default:
		pr->failures++;
		break;
	}
	pr->next = td_periodic_after(now, pr->interval_ns);
}
EXPORT_SYMBOL_IF_KUNIT(td_periodic_ended);

/**
 * td_periodic_when() - when td_periodic_tick() next has something to do
 * @pr: the registration
 *
 * Return: the running run's timeout if it has not timed out yet, else
 * when the next run falls due.
 */
ktime_t td_periodic_when(const struct td_periodic *pr)
{
	if (pr->running && !pr->timed_out)
		return pr->run_deadline;
	return pr->next;
}
EXPORT_SYMBOL_IF_KUNIT(td_periodic_when);
