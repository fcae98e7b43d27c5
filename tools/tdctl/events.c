// SPDX-License-Identifier: GPL-2.0
/*
 * tdctl events: the outcome events a dispatcher queued.
 */
#include "tdctl.h"

static void print_event_json(const struct tdispatch_event *e, const char *outcome)
{
	printf("{\"seq\":%llu,", ull(e->seq));
	if (e->type == TDISPATCH_EVENT_LOST) {
		printf("\"type\":\"lost\",\"lost\":%llu}\n", ull(e->lost));
		return;
	}
	printf("\"type\":\"outcome\",\"outcome\":\"%s\",\"id\":%llu,", outcome, ull(e->id));
	printf("\"latency_ns\":%llu,\"attempts\":%u}\n", ull(e->latency_ns), e->attempts);
}

static void print_event(const struct tdispatch_event *e, bool json)
{
	const char *outcome = name_of(outcome_names, ARRAY_SIZE(outcome_names), e->outcome);

	if (json)
		print_event_json(e, outcome);
	else if (e->type == TDISPATCH_EVENT_LOST)
		printf("#%llu-#%llu lost: %llu event%s dropped, the event queue was full\n",
		       ull(e->seq - e->lost + 1), ull(e->seq), ull(e->lost), plural(e->lost));
	else
		printf("#%llu %s id %llu after %.3f ms, %u %s\n", ull(e->seq), outcome,
		       ull(e->id), e->latency_ns / 1e6, e->attempts, retries(e->attempts));
}

static void on_alarm(int sig)
{
	(void)sig;
}

/*
 * read() that, unless @wait, fails with EINTR if no event comes within a
 * few ms: O_NONBLOCK cannot be used, as the file's flags are shared with
 * every process that uses it, and read() has no flag of its own.  The
 * timer repeats, so it also ends a read entered after it first fired.
 */
static ssize_t read_events(int fd, struct tdispatch_event *ev, size_t n, bool wait)
{
	struct itimerval on = { .it_interval.tv_usec = 5000, .it_value.tv_usec = 5000 };
	struct itimerval off = { .it_value.tv_usec = 0 };
	ssize_t ret;
	int err;

	if (wait)
		return read(fd, ev, n * sizeof(*ev));
	setitimer(ITIMER_REAL, &on, NULL);
	ret = read(fd, ev, n * sizeof(*ev));
	err = errno;
	setitimer(ITIMER_REAL, &off, NULL);
	errno = err;
	return ret;
}

int cmd_events(int argc, char **argv)
{
	bool json = false, follow = false;
	__u64 count = 0, queue = NAMED_QUEUE, shown = 0;
	const struct opt opts[] = {
		FLAG_OPT("json", &json),
		FLAG_OPT("follow", &follow),
		NUM_OPT("count", &count, 0, UINT64_MAX),
		NUM_OPT("queue", &queue, 1, 65536),
		NAMED_OPT,
		END_OPT,
	};
	struct sigaction sa = { .sa_handler = on_alarm };	/* no SA_RESTART */
	struct tdispatch_event ev[EVENTS_PER_READ];
	size_t room;
	ssize_t n, i;
	int fd;

	parse_opts_only(argc, argv, opts);
	fd = dispatcher_fd(TDISPATCH_ATTACH_EVENTS, queue);
	if (fd < 0 || sigaction(SIGALRM, &sa, NULL))
		return 1;
	/* A new attachment has heard nothing yet: wait for what comes. */
	if (target)
		follow = true;
	do {
		room = ARRAY_SIZE(ev);
		if (count && count - shown < room)
			room = count - shown;
		n = read_events(fd, ev, room, follow);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == ENXIO)
			return fail("events: this dispatcher queues no events (%s)",
				    "create it with --events N");
		if (n < 0 && errno == ENODEV && target)
			return fail("events: the driver withdrew %s", target);
		if (n < 0)
			return fail("events: %s%s", strerror(errno), errno_hint(errno));
		for (i = 0; i < n / (ssize_t)sizeof(ev[0]); i++)
			print_event(&ev[i], json);
		shown += n / sizeof(ev[0]);
		fflush(stdout);
	} while ((follow || n > 0) && (!count || shown < count));
	return 0;
}
