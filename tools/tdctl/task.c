// SPDX-License-Identifier: GPL-2.0
/*
 * Calls on one task or on the whole dispatcher: cancel, expedite, rate,
 * query.
 */
#include "tdctl.h"

/* The single ID operand of cancel and query. */
static __u64 id_operand(int argc, char **argv)
{
	int first = parse_opts(argc, argv, named_opts);
	__u64 id;

	want_operands(argc, argv, first, 1, 1);
	if (parse_u64(argv[first], &id)) {
		fail("%s: '%s' is not a task id (a number, decimal or 0x hex)",
		     argv[0], argv[first]);
		usage_exit(argv[0]);
	}
	return id;
}

int cmd_cancel(int argc, char **argv)
{
	struct tdispatch_id a = { .size = sizeof(a), .id = id_operand(argc, argv) };
	int fd = dispatcher_fd(TDISPATCH_ATTACH_SUBMIT, 0);

	if (fd < 0)
		return 1;
	if (!ioctl(fd, TDISPATCH_IOC_CANCEL, &a)) {
		printf("cancelled task %llu\n", ull(a.id));
		return 0;
	}
	if (errno == ENOENT)
		return fail("cancel: no task with id %llu is pending or delayed", ull(a.id));
	if (errno == EBUSY)
		return fail("cancel: task %llu is in flight; only a pending task can be cancelled",
			    ull(a.id));
	return fail("cancel: %s%s", strerror(errno), errno_hint(errno));
}

int cmd_expedite(int argc, char **argv)
{
	const char *key = NULL;
	const struct opt opts[] = { STR_OPT("key", &key), NAMED_OPT, END_OPT };
	int first = parse_opts(argc, argv, opts);
	struct tdispatch_id a = { .size = sizeof(a) };
	int fd, ret;

	want_operands(argc, argv, first, !key, !key);
	if (parse_u64(key ? key : argv[first], &a.id)) {
		fail("expedite: '%s' is not a number", key ? key : argv[first]);
		usage_exit(argv[0]);
	}
	fd = dispatcher_fd(TDISPATCH_ATTACH_SUBMIT, 0);
	if (fd < 0 || need_feature(fd, key ? TDISPATCH_FEAT_WATCH : TDISPATCH_FEAT_EXPEDITE,
				   "expedite"))
		return 1;
	ret = ioctl(fd, key ? TDISPATCH_IOC_EXPEDITE_KEY : TDISPATCH_IOC_EXPEDITE, &a);
	if (ret >= 0 && key)
		printf("expedited %d delayed task%s watching key %llu\n", ret, plural(ret),
		       ull(a.id));
	else if (ret >= 0)
		printf("expedited delayed task %llu\n", ull(a.id));
	else if (errno == ENOENT && key)
		return fail("expedite: no delayed task watches key %llu", ull(a.id));
	else if (errno == ENOENT)
		return fail("expedite: no task with id %llu is delayed", ull(a.id));
	else
		return fail("expedite: %s%s", strerror(errno), errno_hint(errno));
	return 0;
}

int cmd_rate(int argc, char **argv)
{
	struct tdispatch_rate r = { .size = sizeof(r) };
	int first = parse_opts(argc, argv, named_opts);
	__u64 rate, burst = 0;
	int fd;

	want_operands(argc, argv, first, 1, 2);
	if (parse_u64(argv[first], &rate) || rate > UINT32_MAX ||
	    (first + 1 < argc && (parse_u64(argv[first + 1], &burst) || burst > 65536))) {
		fail("rate: RATE is 0 to %u tasks a second, BURST 0 to 65536", UINT32_MAX);
		usage_exit(argv[0]);
	}
	r.rate = rate;
	r.burst = burst;
	fd = dispatcher_fd(0, 0);
	if (fd < 0 || need_feature(fd, TDISPATCH_FEAT_RATE, "rate limits"))
		return 1;
	if (td_ioctl(fd, TDISPATCH_IOC_SET_RATE, &r, "rate"))
		return 1;
	if (!rate)
		printf("no rate limit\n");
	else if (burst)
		printf("at most %llu tasks a second, in bursts of %llu\n", ull(rate), ull(burst));
	else
		printf("at most %llu tasks a second, in bursts of a batch\n", ull(rate));
	return 0;
}

int cmd_query(int argc, char **argv)
{
	struct tdispatch_query q = { .size = sizeof(q), .id = id_operand(argc, argv) };
	int fd = dispatcher_fd(0, 0);

	if (fd < 0 || td_ioctl(fd, TDISPATCH_IOC_QUERY, &q, "query"))
		return 1;
	printf("task %llu: %s", ull(q.id), name_of(state_names, ARRAY_SIZE(state_names), q.state));
	if (q.state == TDISPATCH_STATE_PENDING || q.state == TDISPATCH_STATE_IN_FLIGHT)
		printf(", %u %s", q.attempts, retries(q.attempts));
	if (q.waiting)
		printf("; a newer task with this id waits behind it");
	if (q.delayed && q.state != TDISPATCH_STATE_DELAYED)
		printf("; a newer task with this id is delayed, waiting for its not-before time");
	printf("\n");
	return 0;
}
