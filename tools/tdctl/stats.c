// SPDX-License-Identifier: GPL-2.0
/*
 * tdctl stats and tdctl watch: the counters, once or as they change.
 */
#include "tdctl.h"

/*
 * The counters of struct tdispatch_stats_user, in the order shown; those
 * beyond the size the kernel reports are not.
 */
struct counter {
	const char *name;
	size_t off;
	bool gauge;		/* a level, not a running total */
};

#define COUNTER(f, g)	{ #f, offsetof(struct tdispatch_stats_user, f), g }

static const struct counter counters[] = {
	COUNTER(accepted, false),
	COUNTER(rejected, false),
	COUNTER(queued, true),
	COUNTER(delayed, true),
	COUNTER(pending, true),
	COUNTER(in_flight, true),
	COUNTER(done, false),
	COUNTER(failed, false),
	COUNTER(overridden, false),
	COUNTER(expired, false),
	COUNTER(dropped, false),
	COUNTER(cancelled, false),
	COUNTER(batches, false),
	COUNTER(retries, false),
	COUNTER(holdoffs, false),
	COUNTER(redelivered, false),
	COUNTER(rejected_calls, false),
	COUNTER(events_lost, false),
	COUNTER(periodic_runs, false),
	COUNTER(exhausted, false),
	COUNTER(expedited, false),
	COUNTER(key_expedites, false),
	COUNTER(throttled_ns, false),
	COUNTER(rate, true),
	COUNTER(burst, true),
	COUNTER(slot_writes, false),
};

static __u64 counter_value(const struct tdispatch_stats_user *s, const struct counter *c)
{
	return *(const __u64 *)((const char *)s + c->off);
}

/* Whether the kernel filled in this counter: it reports the size it knows. */
static bool counter_known(const struct tdispatch_stats_user *s, const struct counter *c)
{
	return c->off + sizeof(__u64) <= s->size;
}

static void print_stats_json(const struct tdispatch_stats_user *s)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(counters); i++)
		if (counter_known(s, &counters[i]))
			printf("%s\"%s\":%llu", i ? "," : "{", counters[i].name,
			       ull(counter_value(s, &counters[i])));
	printf("}\n");
}

static void print_stats_text(const struct tdispatch_stats_user *s)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(counters); i++)
		if (counter_known(s, &counters[i]))
			printf("%-15s %llu\n", counters[i].name,
			       ull(counter_value(s, &counters[i])));
}

int cmd_stats(int argc, char **argv)
{
	bool json = false;
	const struct opt opts[] = {
		FLAG_OPT("json", &json),
		NAMED_OPT,
		END_OPT,
	};
	struct tdispatch_stats_user s;
	int fd;

	parse_opts_only(argc, argv, opts);
	fd = dispatcher_fd(0, 0);
	if (fd < 0 || get_stats(fd, &s))
		return 1;
	if (json)
		print_stats_json(&s);
	else
		print_stats_text(&s);
	return 0;
}

/* A full screen, redrawn in place: each counter and its rate. */
static void watch_screen(const struct tdispatch_stats_user *s,
			 const struct tdispatch_stats_user *prev, __u64 interval_ms)
{
	__u64 v, was;
	size_t i;

	printf("\033[H\033[J");
	if (target)
		printf("tdispatch %s, every %llu ms (Ctrl-C stops)\n\n", target, ull(interval_ms));
	else
		printf("tdispatch on %s=%s, every %llu ms (Ctrl-C stops)\n\n",
		       FD_ENV, getenv(FD_ENV), ull(interval_ms));
	printf("%-15s %14s %12s\n", "counter", "value", "per second");
	for (i = 0; i < ARRAY_SIZE(counters); i++) {
		if (!counter_known(s, &counters[i]))
			continue;
		v = counter_value(s, &counters[i]);
		was = counter_value(prev, &counters[i]);
		printf("%-15s %14llu", counters[i].name, ull(v));
		if (!counters[i].gauge)
			printf(" %12.1f", (v - was) * 1000.0 / interval_ms);
		printf("\n");
	}
}

/* One line per sample, for logs and pipes. */
static void watch_line(const struct tdispatch_stats_user *s, __u64 elapsed_ms)
{
	size_t i;

	printf("%llu.%03llu", ull(elapsed_ms / 1000), ull(elapsed_ms % 1000));
	for (i = 0; i < ARRAY_SIZE(counters); i++)
		if (counter_known(s, &counters[i]))
			printf(" %s=%llu", counters[i].name, ull(counter_value(s, &counters[i])));
	printf("\n");
}

int cmd_watch(int argc, char **argv)
{
	__u64 interval_ms = 1000, count = 0, n, start = now_ns();
	const struct opt opts[] = {
		NUM_OPT("interval-ms", &interval_ms, 1, MS_MAX),
		NUM_OPT("count", &count, 0, UINT64_MAX),
		NAMED_OPT,
		END_OPT,
	};
	struct tdispatch_stats_user s, prev;
	bool tty = isatty(STDOUT_FILENO);
	int fd;

	parse_opts_only(argc, argv, opts);
	fd = dispatcher_fd(0, 0);
	if (fd < 0 || get_stats(fd, &prev))
		return 1;
	for (n = 0; !count || n < count; n++) {
		if (n)
			sleep_ms(interval_ms);
		if (get_stats(fd, &s))
			return 1;
		if (tty)
			watch_screen(&s, &prev, interval_ms);
		else
			watch_line(&s, (now_ns() - start) / NSEC_PER_MSEC);
		fflush(stdout);
		prev = s;
	}
	return 0;
}
