// SPDX-License-Identifier: GPL-2.0
/*
 * tdctl periodic: supervised periodic tasks (add, del, stats).
 */
#include "tdctl.h"

/* What a PERIODIC_* call that failed with @err means for task @id. */
static int periodic_failed(const char *sub, __u64 id, int err)
{
	if (err == ENOENT)
		return fail("periodic %s: no periodic task has id %llu", sub, ull(id));
	if (err == EEXIST)
		return fail("periodic %s: id %llu has a periodic task already\n"
			    "       ('tdctl periodic del %llu' removes it)", sub, ull(id), ull(id));
	if (err == ENOSPC)
		return fail("periodic %s: %s (the dispatcher has 1024 periodic tasks, or holds\n"
			    "       16 MiB of payloads already)", sub, strerror(err));
	return fail("periodic %s: %s%s", sub, strerror(err), errno_hint(err));
}

static int periodic_add(int fd, struct tdispatch_periodic_add *a)
{
	if (ioctl(fd, TDISPATCH_IOC_PERIODIC_ADD, a))
		return periodic_failed("add", a->id, errno);
	printf("periodic task %llu: a run every ", ull(a->id));
	print_ms(a->period_ns);
	printf(" ms, timed out after ");
	print_ms(a->timeout_ns);
	printf(" ms");
	if (a->max_backoff > 1) {
		printf(", backing off to every ");
		print_ms(a->period_ns * a->max_backoff);
		printf(" ms");
	}
	printf("\n");
	return 0;
}

static int periodic_del(int fd, __u64 id)
{
	struct tdispatch_id d = { .size = sizeof(d), .id = id };

	if (ioctl(fd, TDISPATCH_IOC_PERIODIC_DEL, &d))
		return periodic_failed("del", id, errno);
	printf("periodic task %llu removed\n", ull(id));
	return 0;
}

static int periodic_stats(int fd, __u64 id, bool json)
{
	struct tdispatch_periodic_stats_user s = { .size = sizeof(s), .id = id };

	if (ioctl(fd, TDISPATCH_IOC_PERIODIC_STATS, &s))
		return periodic_failed("stats", id, errno);
	if (json) {
		printf("{\"id\":%llu,\"runs\":%llu,\"successes\":%llu,\"timeouts\":%llu,",
		       ull(s.id), ull(s.runs), ull(s.successes), ull(s.timeouts));
		printf("\"failures\":%llu,\"skipped\":%llu,\"interval_ms\":", ull(s.failures),
		       ull(s.skipped));
		print_ms(s.interval_ns);
		printf(",\"interval_ns\":%llu}\n", ull(s.interval_ns));
		return 0;
	}
	printf("task %llu: runs %llu, successes %llu, timeouts %llu, failures %llu, ",
	       ull(s.id), ull(s.runs), ull(s.successes), ull(s.timeouts), ull(s.failures));
	printf("skipped %llu, interval ", ull(s.skipped));
	print_ms(s.interval_ns);
	printf(" ms\n");
	return 0;
}

/* "periodic SUB ...": the operands of SUB, with its options among them. */
int cmd_periodic(int argc, char **argv)
{
	__u64 period_ms = 0, timeout_ms = 0, max_backoff = 1, id;
	bool json = false;
	const struct opt add_opts[] = {
		NUM_OPT("period-ms", &period_ms, 1, PERIODIC_MAX_MS),
		NUM_OPT("timeout-ms", &timeout_ms, 1, PERIODIC_MAX_MS),
		NUM_OPT("max-backoff", &max_backoff, 1, PERIODIC_MAX_BACKOFF),
		END_OPT,
	};
	const struct opt stats_opts[] = {
		FLAG_OPT("json", &json),
		END_OPT,
	};
	const char *sub = argc > 1 ? argv[1] : "";
	const struct opt *opts = no_opts;
	struct tdispatch_periodic_add a = { .size = sizeof(a) };
	char **ops;
	int fd, nr, ret;

	if (!strcmp(sub, "add")) {
		opts = add_opts;
	} else if (!strcmp(sub, "stats")) {
		opts = stats_opts;
	} else if (strcmp(sub, "del")) {
		/* --help exits here; anything else is a usage error. */
		parse_opts(argc, argv, no_opts);
		if (*sub)
			fail("periodic: '%s' is not add, del or stats", sub);
		usage_exit(argv[0]);
	}
	ops = calloc(argc, sizeof(*ops));
	if (!ops)
		return fail("periodic: %s", strerror(ENOMEM));
	/* Parsed as if the command were "periodic" without SUB. */
	argv[1] = argv[0];
	nr = parse_opts_among(argc - 1, argv + 1, opts, ops);
	if (nr != (opts == add_opts ? 2 : 1))
		usage_exit(argv[0]);
	if (parse_u64(ops[0], &id)) {
		fail("periodic %s: '%s' is not a task id (a number, decimal or 0x hex)",
		     sub, ops[0]);
		usage_exit(argv[0]);
	}
	if (opts == add_opts) {
		if (!period_ms) {
			fail("periodic add: --period-ms N is needed: how often a run is due");
			usage_exit(argv[0]);
		}
		a.id = id;
		a.period_ns = period_ms * NSEC_PER_MSEC;
		a.timeout_ns = (timeout_ms ? timeout_ms : period_ms) * NSEC_PER_MSEC;
		a.max_backoff = max_backoff;
		a.payload_len = strlen(ops[1]);
		a.payload = (uintptr_t)ops[1];
		if (!a.payload_len || a.payload_len > TDISPATCH_PAYLOAD_MAX) {
			free(ops);
			return fail("periodic add: the payload must be 1 to %u bytes",
				    TDISPATCH_PAYLOAD_MAX);
		}
	}
	fd = env_fd();
	if (fd < 0 || need_feature(fd, TDISPATCH_FEAT_PERIODIC, "periodic tasks"))
		ret = 1;
	else if (opts == add_opts)
		ret = periodic_add(fd, &a);
	else if (opts == stats_opts)
		ret = periodic_stats(fd, id, json);
	else
		ret = periodic_del(fd, id);
	free(ops);
	return ret;
}
