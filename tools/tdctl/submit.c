// SPDX-License-Identifier: GPL-2.0
/*
 * tdctl submit: tasks from the command line or standard input, in
 * vectors, or written into the file's shared slots (--slots).
 */
#include "tdctl.h"

/* Tasks gathered for one TDISPATCH_IOC_SUBMIT call (at most its limit). */
struct submission {
	int fd;
	__u64 deadline_ns;
	__u64 not_before_ns;	/* a delay with TDISPATCH_SUBMIT_RELATIVE */
	__u64 max_attempts;	/* the tasks' own; 0: the dispatcher's */
	__u32 task_flags;	/* TDISPATCH_TASK_WATCH with --watch, _MERGE with --merge */
	__u64 watch_key;
	__u32 flags;
	const char *unit;	/* what pos[] counts: "task" or "line" */
	unsigned int n;
	struct tdispatch_submit_task t[TDISPATCH_SUBMIT_MAX];
	unsigned long pos[TDISPATCH_SUBMIT_MAX];	/* argument pair or line */
	char *owned[TDISPATCH_SUBMIT_MAX];		/* freed after the call */
	unsigned long accepted, rejected;
	/* --slots: task ID goes to slot ID, a KICK per vector's worth if owed. */
	struct tdl_slots slots;
	bool use_slots, owed;
	unsigned int since_kick;
	unsigned long written, queued;
};

static void submit_reset(struct submission *s)
{
	unsigned int i;

	for (i = 0; i < s->n; i++)
		free(s->owned[i]);
	s->n = 0;
}

static void report_task(const struct submission *s, unsigned int i)
{
	int err = -s->t[i].status;

	if (err == EINVAL)
		fail("submit: %s %lu, id %llu: payload must be 1 to %u bytes",
		     s->unit, s->pos[i], ull(s->t[i].id), TDISPATCH_PAYLOAD_MAX);
	else if (err == ENOSPC && s->not_before_ns && !target)
		fail("submit: %s %lu, id %llu: %s (the dispatcher holds its --max-delayed\n"
		     "       delayed tasks, none if created with --max-delayed 0, or 16 MiB of\n"
		     "       payloads already)", s->unit, s->pos[i], ull(s->t[i].id),
		     strerror(err));
	else if (err == ENOSPC && s->not_before_ns)
		fail("submit: %s %lu, id %llu: %s (the dispatcher holds as many delayed\n"
		     "       tasks as its driver allows, or none at all)", s->unit, s->pos[i],
		     ull(s->t[i].id), strerror(err));
	else
		fail("submit: %s %lu, id %llu: %s%s", s->unit, s->pos[i], ull(s->t[i].id),
		     strerror(err), errno_hint(err));
}

/* One SUBMIT call for the tasks gathered. */
static int submit_flush(struct submission *s)
{
	struct tdl *t;
	unsigned int i;
	int ret;

	if (!s->n)
		return 0;
	t = td_lib(s->fd, "submit");
	ret = t ? tdl_submit(t, s->t, s->n, s->flags) : -1;
	if (ret >= 0) {
		for (i = 0; i < s->n; i++)
			if (s->t[i].status)
				report_task(s, i);
		s->accepted += ret;
		s->rejected += s->n - ret;
	} else if (t) {
		fail("submit: %s%s", strerror(-ret), errno_hint(-ret));
	}
	submit_reset(s);
	return ret < 0;
}

/* KICK for the slots written since the last one, if one is owed. */
static int slots_kick(struct submission *s)
{
	int ret = 0;

	if (s->owed)
		ret = tdl_kick(td_lib(s->fd, "submit"));
	s->owed = false;
	s->since_kick = 0;
	if (ret < 0)
		return fail("submit: kick: %s%s", strerror(-ret), errno_hint(-ret));
	s->queued += ret;
	return 0;
}

/* Task @id into slot @id: no system call but a KICK per vector's worth. */
static int slots_add(struct submission *s, unsigned long pos, __u64 id, const char *payload)
{
	size_t len = strlen(payload);
	int ret;

	if (id >= s->slots.nr || len > TDISPATCH_SLOT_PAYLOAD_MAX) {
		fail("submit: %s %lu: --slots %u takes ids below %u, payloads of at most %u bytes",
		     s->unit, pos, s->slots.nr, s->slots.nr, TDISPATCH_SLOT_PAYLOAD_MAX);
		s->rejected++;
		return 0;
	}
	ret = tdl_slot_write(&s->slots, id, id, payload, len);
	if (ret < 0)
		return fail("submit: %s %lu: slot %llu: %s", s->unit, pos, ull(id), strerror(-ret));
	s->written++;
	s->owed |= ret;
	if (++s->since_kick < TDISPATCH_SUBMIT_MAX)
		return 0;
	return slots_kick(s);
}

static int submit_add(struct submission *s, unsigned long pos, const char *id,
		      const char *payload, char *owned)
{
	struct tdispatch_submit_task *t = &s->t[s->n];
	int ret;

	if (parse_u64(id, &t->id)) {
		fail("submit: %s %lu: '%s' is not a task id", s->unit, pos, id);
		s->rejected++;
		free(owned);
		return 0;
	}
	if (s->use_slots) {
		ret = slots_add(s, pos, t->id, payload);
		free(owned);
		return ret;
	}
	t->payload = (uintptr_t)payload;
	t->payload_len = strlen(payload);
	t->status = 0;
	t->deadline_ns = s->deadline_ns;
	t->not_before_ns = s->not_before_ns;
	t->max_attempts = s->max_attempts;
	t->flags = s->task_flags;
	t->watch_key = s->watch_key;
	s->pos[s->n] = pos;
	s->owned[s->n] = owned;
	if (++s->n < TDISPATCH_SUBMIT_MAX)
		return 0;
	return submit_flush(s);
}

/* "ID PAYLOAD" lines: the payload is the rest of the line after blanks. */
static int submit_lines(struct submission *s, FILE *in)
{
	unsigned long line = 0;
	char *buf = NULL, *p;
	size_t size = 0;
	ssize_t len;

	while ((len = getline(&buf, &size, in)) >= 0) {
		line++;
		if (len && buf[len - 1] == '\n')
			buf[--len] = '\0';
		if (!len)
			continue;
		p = buf + strcspn(buf, " \t");
		if (*p)
			*p++ = '\0';
		p += strspn(p, " \t");
		if (submit_add(s, line, buf, p, buf))
			return 1;
		buf = NULL;
		size = 0;
	}
	free(buf);
	if (ferror(in))
		return fail("submit: reading stdin: %s", strerror(errno));
	return 0;
}

static int submit_args(struct submission *s, int argc, char **argv)
{
	int i;

	for (i = 0; i + 1 < argc; i += 2)
		if (submit_add(s, i / 2 + 1, argv[i], argv[i + 1], NULL))
			return 1;
	return 0;
}

int cmd_submit(int argc, char **argv)
{
	/* Not given: UINT64_MAX is more than --delay-ms takes; --at-ns 0 is "now". */
	__u64 deadline_ms = 0, delay_ms = UINT64_MAX, at_ns = 0, max_attempts = 0, key = 0;
	const char *watch = NULL;
	bool merge = false;
	__u64 slots = 0;
	const struct opt opts[] = {
		NUM_OPT("deadline-ms", &deadline_ms, 0, MS_MAX),
		NUM_OPT("delay-ms", &delay_ms, 0, MS_MAX),
		NUM_OPT("at-ns", &at_ns, 0, UINT64_MAX),
		NUM_OPT("max-attempts", &max_attempts, 0, 65535),
		STR_OPT("watch", &watch),
		FLAG_OPT("merge", &merge),
		NUM_OPT("slots", &slots, TDISPATCH_SLOTS_MIN, TDISPATCH_SLOTS_MAX),
		NAMED_OPT,
		END_OPT,
	};
	int first = parse_opts(argc, argv, opts);
	bool from_stdin = argc - first == 1 && !strcmp(argv[first], "-");
	struct submission *s;
	int ret;

	if (!from_stdin && (first == argc || (argc - first) % 2))
		usage_exit(argv[0]);
	if (delay_ms != UINT64_MAX && at_ns) {
		fail("submit: --delay-ms and --at-ns both say when the tasks may start; give one");
		usage_exit(argv[0]);
	}
	if (watch && (parse_u64(watch, &key) || (delay_ms == UINT64_MAX && !at_ns))) {
		fail("submit: --watch KEY: a number, for delayed tasks (--delay-ms, --at-ns)");
		usage_exit(argv[0]);
	}
	if (merge && (watch || deadline_ms || max_attempts || delay_ms != UINT64_MAX || at_ns)) {
		fail("submit: --merge takes no deadline, delay, attempts or key");
		usage_exit(argv[0]);
	}
	if (slots && (merge || watch || deadline_ms || max_attempts || delay_ms != UINT64_MAX ||
		      at_ns || slots % TDISPATCH_SLOTS_MIN)) {
		fail("submit: --slots N (a multiple of %u) takes no deadline, delay, attempts,\n"
		     "       key or --merge", TDISPATCH_SLOTS_MIN);
		usage_exit(argv[0]);
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return fail("submit: %s", strerror(errno));
	s->fd = dispatcher_fd(TDISPATCH_ATTACH_SUBMIT, 0);
	if (s->fd < 0) {
		free(s);
		return 1;
	}
	if (delay_ms != UINT64_MAX) {
		s->not_before_ns = delay_ms * NSEC_PER_MSEC;
		s->flags = TDISPATCH_SUBMIT_RELATIVE;
	} else {
		s->not_before_ns = at_ns;
	}
	if (s->not_before_ns &&
	    need_feature(s->fd, TDISPATCH_FEAT_DELAYED, "delayed tasks (--delay-ms, --at-ns)")) {
		free(s);
		return 1;
	}
	if ((max_attempts && need_feature(s->fd, TDISPATCH_FEAT_ATTEMPTS, "--max-attempts")) ||
	    (watch && need_feature(s->fd, TDISPATCH_FEAT_WATCH, "--watch"))) {
		free(s);
		return 1;
	}
	if (merge && need_feature(s->fd, TDISPATCH_FEAT_MERGE, "--merge")) {
		free(s);
		return 1;
	}
	if (slots) {
		ret = need_feature(s->fd, TDISPATCH_FEAT_SLOTS, "--slots");
		if (!ret) {
			ret = tdl_slots_map(td_lib(s->fd, "submit"), &s->slots, slots);
			if (ret)
				fail("submit: --slots %llu: %s%s", ull(slots), strerror(-ret),
				     errno_hint(-ret));
		}
		if (ret) {
			free(s);
			return 1;
		}
		s->use_slots = true;
	}
	s->max_attempts = max_attempts;
	if (merge)
		s->task_flags = TDISPATCH_TASK_MERGE;
	if (watch) {
		s->task_flags = TDISPATCH_TASK_WATCH;
		s->watch_key = key;
	}
	if (deadline_ms)
		s->deadline_ns = now_ns() + deadline_ms * NSEC_PER_MSEC;
	s->unit = from_stdin ? "line" : "task";
	if (from_stdin)
		ret = submit_lines(s, stdin);
	else
		ret = submit_args(s, argc - first, argv + first);
	if (!ret)
		ret = s->use_slots ? slots_kick(s) : submit_flush(s);
	submit_reset(s);
	if (s->use_slots) {
		tdl_slots_unmap(&s->slots);
		printf("written %lu, queued %lu, rejected %lu\n", s->written, s->queued,
		       s->rejected);
	} else {
		printf("accepted %lu, rejected %lu\n", s->accepted, s->rejected);
	}
	if (!ret && s->rejected)
		ret = 1;
	free(s);
	return ret;
}
