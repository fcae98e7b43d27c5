// SPDX-License-Identifier: GPL-2.0
/*
 * Dispatchers owned by a /dev/tdispatch file: every bad input, with its
 * errno and its count in rejected_calls; threads and processes racing
 * each other and the last close.  The success paths are in
 * tdispatch_user_test.c.
 */
#include "kselftest_harness.h"
#include "tdispatch_helpers.h"
#include "tdispatch_user.h"

/* Bad input */

/* The argument of any ioctl, with room to make it larger than a page. */
union td_arg {
	struct tdispatch_create create;
	struct tdispatch_submit submit;
	struct tdispatch_take take;
	struct tdispatch_complete complete;
	struct tdispatch_id id;
	struct tdispatch_query query;
	struct tdispatch_stats_user stats;
	unsigned char raw[2 * PAGE];
};

/* What the valid arguments of the ioctl tables point into. */
struct td_ioc_ctx {
	int fd;
	__u64 next_id;
	struct tdispatch_submit_task ut;
	struct td_pl pl;
	struct td_taken take;
};

/*
 * The ioctl tables run on a dispatcher that cuts batches of IOC_BATCH: the
 * preparations that want a batch submit that many, and the one or two
 * tasks the others leave pending never make one by themselves.
 */
#define IOC_BATCH	8

static void ioc_submit_fresh(struct __test_metadata *_metadata, struct td_ioc_ctx *x,
			     unsigned int n)
{
	__u64 ids[TD_NR];
	unsigned int i;

	for (i = 0; i < n; i++)
		ids[i] = ++x->next_id;
	td_submit(_metadata, x->fd, ids, n, 0);
}

static void prep_create(struct __test_metadata *_metadata, struct td_ioc_ctx *x,
			union td_arg *a)
{
	td_cfg(&a->create, IOC_BATCH, 0);
}

static void prep_submit(struct __test_metadata *_metadata, struct td_ioc_ctx *x,
			union td_arg *a)
{
	td_task(&x->ut, &x->pl, ++x->next_id, 0);
	a->submit = (struct tdispatch_submit) {
		.size = sizeof(a->submit),
		.tasks = uptr(&x->ut),
		.count = 1,
		.task_size = sizeof(x->ut),
	};
}

static void prep_take(struct __test_metadata *_metadata, struct td_ioc_ctx *x, union td_arg *a)
{
	ioc_submit_fresh(_metadata, x, IOC_BATCH);
	td_take_arg(&x->take, 0, WAIT_NS);
	a->take = x->take.tk;
}

static void prep_complete(struct __test_metadata *_metadata, struct td_ioc_ctx *x,
			  union td_arg *a)
{
	int ret;

	ioc_submit_fresh(_metadata, x, IOC_BATCH);
	ret = td_take(x->fd, &x->take, 0, WAIT_NS);
	ASSERT_EQ(0, ret) TH_LOG("take: %s", strerror(-ret));
	a->complete = (struct tdispatch_complete) {
		.size = sizeof(a->complete),
		.batch = x->take.tk.batch,
		.result = TDISPATCH_RESULT_SUCCESS,
	};
}

static void prep_cancel(struct __test_metadata *_metadata, struct td_ioc_ctx *x,
			union td_arg *a)
{
	ioc_submit_fresh(_metadata, x, 1);
	a->id = (struct tdispatch_id) { .size = sizeof(a->id), .id = x->next_id };
}

static void prep_query(struct __test_metadata *_metadata, struct td_ioc_ctx *x, union td_arg *a)
{
	a->query = (struct tdispatch_query) { .size = sizeof(a->query), .id = 1 };
}

static void prep_stats(struct __test_metadata *_metadata, struct td_ioc_ctx *x, union td_arg *a)
{
	a->stats.size = sizeof(a->stats);
}

static const struct td_ioc {
	const char *name;
	unsigned long cmd;
	__u32 size;		/* sizeof the struct in this header, its 1.0 size */
	__u32 pad_off;		/* a pad that must be zero; 0: none */
	int valid_err;		/* what a valid call gets: CREATE has its dispatcher */
	bool out_only;		/* a read-only copy is read fine, only written back */
	void (*prep)(struct __test_metadata *_metadata, struct td_ioc_ctx *x, union td_arg *a);
} td_iocs[] = {
	{ "CREATE", TDISPATCH_IOC_CREATE,
	  sizeof(struct tdispatch_create),
	  offsetof(struct tdispatch_create, pad), EEXIST, false, prep_create },
	{ "SUBMIT", TDISPATCH_IOC_SUBMIT,
	  sizeof(struct tdispatch_submit), 0, 0, false, prep_submit },
	{ "TAKE", TDISPATCH_IOC_TAKE,
	  sizeof(struct tdispatch_take),
	  offsetof(struct tdispatch_take, pad), 0, false, prep_take },
	{ "COMPLETE", TDISPATCH_IOC_COMPLETE,
	  sizeof(struct tdispatch_complete),
	  offsetof(struct tdispatch_complete, pad), 0, false, prep_complete },
	{ "CANCEL", TDISPATCH_IOC_CANCEL,
	  sizeof(struct tdispatch_id), 0, 0, false, prep_cancel },
	{ "QUERY", TDISPATCH_IOC_QUERY,
	  sizeof(struct tdispatch_query),
	  offsetof(struct tdispatch_query, delayed), 0, true, prep_query },
	{ "STATS", TDISPATCH_IOC_STATS,
	  sizeof(struct tdispatch_stats_user), 0, 0, true, prep_stats },
};

/* @c on @arg with the field at @off set to @val must fail with @err, counted. */
static void ioc_reject(struct __test_metadata *_metadata, int fd, const struct td_ioc *c,
		       const union td_arg *arg, size_t off, size_t len, __u64 val, int err,
		       const char *what)
{
	union td_arg a = *arg;
	char msg[96];

	set_field(&a, off, len, val);
	snprintf(msg, sizeof(msg), "%s: %s", c->name, what);
	EXPECT_REJECTED(fd, err, msg, ioctl(fd, c->cmd, &a));
}

/* Run @check on a valid argument of every ioctl, on a fresh dispatcher. */
static void ioc_each(struct __test_metadata *_metadata, int fd,
		     void (*check)(struct __test_metadata *_metadata, int fd,
				   const struct td_ioc *c, union td_arg *a))
{
	struct td_ioc_ctx *x = calloc(1, sizeof(*x));
	union td_arg *a = malloc(sizeof(*a));
	unsigned int i;

	ASSERT_TRUE(x && a);
	x->fd = fd;
	td_setup(_metadata, fd, IOC_BATCH, 0);
	for (i = 0; i < ARRAY_SIZE(td_iocs); i++) {
		memset(a, 0, sizeof(*a));
		td_iocs[i].prep(_metadata, x, a);
		check(_metadata, fd, &td_iocs[i], a);
	}
	free(x);
	free(a);
}

static void check_size(struct __test_metadata *_metadata, int fd, const struct td_ioc *c,
		       union td_arg *a)
{
	union td_arg *tail = malloc(sizeof(*tail));
	__u32 big = c->size + 8;
	__u64 before;
	long ret;

	ASSERT_NE(NULL, tail);
	ioc_reject(_metadata, fd, c, a, 0, 4, 0, EINVAL, "size 0");
	ioc_reject(_metadata, fd, c, a, 0, 4, c->size - 1, EINVAL, "size one short");
	ioc_reject(_metadata, fd, c, a, 0, 4, PAGE + 8, E2BIG, "size beyond a page");
	*tail = *a;
	tail->raw[big - 1] = 0x5a;
	ioc_reject(_metadata, fd, c, tail, 0, 4, big, E2BIG, "non-zero byte past the struct");
	free(tail);
	/* Larger with zeros past the end: as good as the struct alone. */
	set_field(a, 0, 4, big);
	if (c->valid_err) {
		ioc_reject(_metadata, fd, c, a, 0, 4, big, c->valid_err, "valid, larger");
		return;
	}
	before = td_rejected_calls(_metadata, fd);
	ret = ioctl(fd, c->cmd, a);
	EXPECT_EQ(0, ret) TH_LOG("%s with size %u: %s", c->name, big, strerror(errno));
	EXPECT_EQ(before, td_rejected_calls(_metadata, fd)) TH_LOG("%s", c->name);
}

TEST_F(user, every_ioctl_checks_the_struct_size)
{
	ioc_each(_metadata, self->fd, check_size);
}

static void check_flags_and_pad(struct __test_metadata *_metadata, int fd,
				const struct td_ioc *c, union td_arg *a)
{
	ioc_reject(_metadata, fd, c, a, 4, 4, 1U << 31, EINVAL, "unknown flag");
	if (c->pad_off)
		ioc_reject(_metadata, fd, c, a, c->pad_off, 4, 1, EINVAL, "non-zero pad");
}

TEST_F(user, every_ioctl_rejects_unknown_flags_and_pad)
{
	ioc_each(_metadata, self->fd, check_flags_and_pad);
}

static void check_fault(struct __test_metadata *_metadata, int fd, const struct td_ioc *c,
			union td_arg *a)
{
	char *edge = td_edge(_metadata);
	char msg[64];
	__u32 *hdr;

	snprintf(msg, sizeof(msg), "%s: NULL", c->name);
	EXPECT_REJECTED(fd, EFAULT, msg, ioctl(fd, c->cmd, NULL));
	snprintf(msg, sizeof(msg), "%s: unmapped", c->name);
	EXPECT_REJECTED(fd, EFAULT, msg, ioctl(fd, c->cmd, edge + PAGE));
	/* The size and flags are readable, the rest is not. */
	hdr = (__u32 *)(edge + PAGE - 2 * sizeof(*hdr));
	hdr[0] = c->size;
	hdr[1] = 0;
	snprintf(msg, sizeof(msg), "%s: runs into an unmapped page", c->name);
	EXPECT_REJECTED(fd, EFAULT, msg, ioctl(fd, c->cmd, hdr));
	if (c->out_only) {
		memcpy(edge, a, c->size);
		ASSERT_EQ(0, mprotect(edge, PAGE, PROT_READ));
		snprintf(msg, sizeof(msg), "%s: read-only", c->name);
		EXPECT_REJECTED(fd, EFAULT, msg, ioctl(fd, c->cmd, edge));
	}
	munmap(edge, 2 * PAGE);
}

TEST_F(user, every_ioctl_faults_on_a_bad_struct_pointer)
{
	ioc_each(_metadata, self->fd, check_fault);
}

TEST_F(user, no_dispatcher_is_enxio)
{
	struct tdispatch_stats_user st;
	union td_arg a;
	unsigned int i, fails = 0;
	long ret;

	for (i = 0; i < ARRAY_SIZE(td_iocs); i++) {
		const struct td_ioc *c = &td_iocs[i];

		if (c->cmd == TDISPATCH_IOC_CREATE)
			continue;
		memset(&a, 0, sizeof(a));
		a.stats.size = c->size;
		ret = ioctl(self->fd, c->cmd, &a);
		td_expect_errno(_metadata, ret, errno, ENXIO, c->name);
		fails++;
	}
	ret = read(self->fd, a.raw, sizeof(struct tdispatch_event));
	td_expect_errno(_metadata, ret, errno, ENXIO, "read");
	fails++;
	EXPECT_EQ(0, td_poll(self->fd, POLL_ALL, 0));
	/* Counted on the file all along. */
	td_setup(_metadata, self->fd, 2, 16);
	td_stats(_metadata, self->fd, &st);
	EXPECT_EQ(fails, st.rejected_calls);
}

TEST_F(user, unknown_ioctls_are_enotty)
{
	static const unsigned long cmds[] = {
		_IO(TDISPATCH_IOC_MAGIC, 0x12),			/* past the last */
		_IOWR(TDISPATCH_IOC_MAGIC, 0x07, __u64),	/* STATS with a size */
		_IOR(TDISPATCH_IOC_MAGIC, 0x02, struct tdispatch_submit),
		TCGETS,
	};
	struct tdispatch_stats_user st;
	union td_arg a;
	unsigned int i;
	char msg[48];
	long ret;

	memset(&a, 0, sizeof(a));
	a.stats.size = sizeof(a.stats);
	for (i = 0; i < ARRAY_SIZE(cmds); i++) {
		snprintf(msg, sizeof(msg), "cmd %#lx, no dispatcher", cmds[i]);
		ret = ioctl(self->fd, cmds[i], &a);
		td_expect_errno(_metadata, ret, errno, ENOTTY, msg);
	}
	td_setup(_metadata, self->fd, 2, 16);
	td_stats(_metadata, self->fd, &st);
	EXPECT_EQ(ARRAY_SIZE(cmds), st.rejected_calls);
	for (i = 0; i < ARRAY_SIZE(cmds); i++) {
		snprintf(msg, sizeof(msg), "cmd %#lx", cmds[i]);
		EXPECT_REJECTED(self->fd, ENOTTY, msg, ioctl(self->fd, cmds[i], &a));
	}
}

TEST_F(user, create_larger_struct_then_again_is_eexist)
{
	struct tdispatch_stats_user st;
	union td_arg a;

	memset(&a, 0, sizeof(a));
	td_cfg(&a.create, 2, 16);
	a.create.size = sizeof(a.create) + 8;
	ASSERT_EQ(0, ioctl(self->fd, TDISPATCH_IOC_CREATE, &a)) TH_LOG("%s", strerror(errno));
	/* Another, even a valid one, is refused, and the first stays as it was. */
	td_cfg(&a.create, 1, 0);
	EXPECT_REJECTED(self->fd, EEXIST, "second CREATE",
			ioctl(self->fd, TDISPATCH_IOC_CREATE, &a.create));
	SUBMIT_IDS(self->fd, 1);
	td_cancel_ok(_metadata, self->fd, 1);
	EXPECT_OUTCOMES(self->fd, { 1, CANCELLED, 0 });
	EXPECT_ENDS(self->fd, &st, [CANCELLED] = 1);
	EXPECT_EQ(1, st.rejected_calls);
}

#define CFG_U32(field, v, e)	FIELD_CASE(struct tdispatch_create, field, 4, v, e)
#define CFG_U64(field, v, e)	FIELD_CASE(struct tdispatch_create, field, 8, v, e)

/* Changes to a valid config (max_batch 4, max_buffer 4096, 16 events). */
static const struct td_field_case td_cfg_cases[] = {
	CFG_U32(max_buffer, 0, EINVAL),
	CFG_U32(max_buffer, 65537, EINVAL),
	CFG_U32(max_buffer, 65536, 0),
	CFG_U32(max_buffer, 3, EINVAL),	/* below max_batch */
	CFG_U32(max_buffer, 4, 0),
	CFG_U32(max_batch, 0, EINVAL),
	CFG_U32(max_batch, 1025, EINVAL),
	CFG_U32(max_batch, 1024, 0),
	CFG_U32(workers, 0, EINVAL),
	CFG_U32(workers, 65, EINVAL),
	CFG_U32(workers, 64, 0),
	CFG_U32(max_input, 0, EINVAL),
	CFG_U32(max_input, 65537, EINVAL),
	CFG_U32(max_input, 65536, 0),
	CFG_U64(max_delay_ns, 30 * SEC + 1, EINVAL),
	CFG_U64(max_delay_ns, 0, 0),
	CFG_U64(congestion_delay_ns, ~0ULL, 0),	/* capped, not refused */
	CFG_U64(lease_ns, 0, EINVAL),
	CFG_U64(lease_ns, MSEC - 1, EINVAL),
	CFG_U64(lease_ns, MSEC, 0),
	CFG_U64(lease_ns, TDISPATCH_LEASE_MAX_NS + 1, EINVAL),
	CFG_U64(lease_ns, TDISPATCH_LEASE_MAX_NS, 0),
	CFG_U32(flags, 0, EINVAL),			/* event_queue without the flag */
	CFG_U32(flags, TDISPATCH_CREATE_EVENTS | 2, EINVAL),
	CFG_U32(event_queue, 0, EINVAL),		/* the flag without event_queue */
	CFG_U32(event_queue, 65537, EINVAL),
	CFG_U32(event_queue, 65536, 0),
	CFG_U32(pad, 1, EINVAL),
	FIELD_CASE(struct tdispatch_create, name, TDISPATCH_NAME_LEN, 'n', EINVAL), /* no NUL */
};

TEST_F(user, create_checks_the_config)
{
	struct tdispatch_stats_user st;
	struct tdispatch_create c;
	unsigned int i;
	long ret;
	int fd;

	for (i = 0; i < ARRAY_SIZE(td_cfg_cases); i++) {
		const struct td_field_case *k = &td_cfg_cases[i];

		fd = open(TD_DEV_PATH, O_RDWR | O_CLOEXEC);
		ASSERT_LE(0, fd);
		td_cfg(&c, 4, 16);
		c.max_buffer = 4096;
		set_field(&c, k->off, k->len, k->val);
		ret = ioctl(fd, TDISPATCH_IOC_CREATE, &c);
		if (k->err) {
			td_expect_errno(_metadata, ret, errno, k->err, k->what);
			/* The file is still free for a dispatcher. */
			td_setup(_metadata, fd, 4, 16);
		} else {
			EXPECT_EQ(0, ret) TH_LOG("%s: %s", k->what, strerror(errno));
		}
		td_stats(_metadata, fd, &st);
		EXPECT_EQ(!!k->err, st.rejected_calls) TH_LOG("%s", k->what);
		close(fd);
	}
}

TEST_F(user, submit_count_limits)
{
	struct tdispatch_submit_task *ut = calloc(TDISPATCH_SUBMIT_MAX + 1, sizeof(*ut));
	struct td_pl *pl = calloc(TDISPATCH_SUBMIT_MAX + 1, sizeof(*pl));
	struct tdispatch_stats_user st;
	unsigned int i;

	ASSERT_TRUE(ut && pl);
	td_setup(_metadata, self->fd, 4, 0);
	for (i = 0; i <= TDISPATCH_SUBMIT_MAX; i++)
		td_task(&ut[i], &pl[i], i, 0);
	EXPECT_REJECTED(self->fd, EINVAL, "count 0", td_submit_vec(self->fd, ut, 0));
	EXPECT_REJECTED(self->fd, EINVAL, "count above TDISPATCH_SUBMIT_MAX",
			td_submit_vec(self->fd, ut, TDISPATCH_SUBMIT_MAX + 1));
	td_stats(_metadata, self->fd, &st);
	EXPECT_EQ(0, st.accepted);
	EXPECT_EQ(TDISPATCH_SUBMIT_MAX, td_submit_vec(self->fd, ut, TDISPATCH_SUBMIT_MAX));
	td_stats(_metadata, self->fd, &st);
	EXPECT_EQ(TDISPATCH_SUBMIT_MAX, st.accepted);
	free(ut);
	free(pl);
}

TEST_F(user, submit_bad_vector_faults_after_the_good_head)
{
	struct tdispatch_stats_user st;
	char *edge = td_edge(_metadata);
	struct tdispatch_submit_task *ut;
	struct td_pl pl[2];

	td_setup(_metadata, self->fd, TD_NR, 16);
	EXPECT_REJECTED(self->fd, EFAULT, "tasks NULL", td_submit_vec(self->fd, NULL, 1));
	EXPECT_REJECTED(self->fd, EFAULT, "tasks unmapped",
			td_submit_vec(self->fd, (void *)(edge + PAGE), 1));
	/* Two tasks at the end of a page, the third would be past it. */
	ut = (struct tdispatch_submit_task *)(edge + PAGE) - 2;
	td_task(&ut[0], &pl[0], 1, 0);
	td_task(&ut[1], &pl[1], 2, 0);
	EXPECT_REJECTED(self->fd, EFAULT, "third task unmapped", td_submit_vec(self->fd, ut, 3));
	EXPECT_EQ(0, ut[0].status);
	EXPECT_EQ(0, ut[1].status);
	td_stats(_metadata, self->fd, &st);
	EXPECT_EQ(2, st.accepted) TH_LOG("the tasks before the bad one stay accepted");
	td_query(_metadata, self->fd, 2, TDISPATCH_STATE_PENDING, 0, 0);
	munmap(edge, 2 * PAGE);
}

#define TAKE_U32(field, v, e)	FIELD_CASE(struct tdispatch_take, field, 4, v, e)
#define TAKE_U64(field, v, e)	FIELD_CASE(struct tdispatch_take, field, 8, v, e)

/* Changes to a TAKE with room for the batch of four 16-byte payloads. */
static const struct td_field_case td_take_cases[] = {
	TAKE_U32(max_tasks, 0, EINVAL),
	TAKE_U32(max_tasks, 3, ENOSPC),
	TAKE_U32(buf_len, 4 * sizeof(struct td_pl) - 1, ENOSPC),
	TAKE_U32(buf_len, 0, ENOSPC),
	TAKE_U64(tasks, 0, EFAULT),
	TAKE_U64(buf, 0, EFAULT),
};

TEST_F(user, take_without_room_leaves_the_batch)
{
	struct tdispatch_stats_user st;
	struct td_taken b;
	unsigned int i;
	__u64 lease;
	void *ro;

	td_setup(_metadata, self->fd, 4, 16);
	SUBMIT_IDS(self->fd, 1, 2, 3, 4);
	for (i = 0; i < ARRAY_SIZE(td_take_cases); i++) {
		const struct td_field_case *k = &td_take_cases[i];

		td_take_arg(&b, 0, WAIT_NS);
		set_field(&b.tk, k->off, k->len, k->val);
		EXPECT_REJECTED(self->fd, k->err, k->what,
				ioctl(self->fd, TDISPATCH_IOC_TAKE, &b.tk));
	}
	/* A caller that cannot be told its lease id does not get the lease. */
	ro = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, ro);
	td_take_arg(&b, 0, WAIT_NS);
	memcpy(ro, &b.tk, sizeof(b.tk));
	ASSERT_EQ(0, mprotect(ro, 4096, PROT_READ));
	EXPECT_REJECTED(self->fd, EFAULT, "read-only take struct",
			ioctl(self->fd, TDISPATCH_IOC_TAKE, ro));
	ASSERT_EQ(0, munmap(ro, 4096));
	/* Still there, as it was: not redelivered, not retried. */
	lease = TAKE_IDS(self->fd, &b, 0, 1, 2, 3, 4);
	td_finish(_metadata, self->fd, lease, TDISPATCH_RESULT_SUCCESS);
	EXPECT_OUTCOMES(self->fd, { 1, DONE, 0 }, { 2, DONE, 0 }, { 3, DONE, 0 }, { 4, DONE, 0 });
	EXPECT_ENDS(self->fd, &st, [DONE] = 4);
	EXPECT_EQ(1, st.batches);
	EXPECT_EQ(0, st.redelivered);
}

TEST_F(user, complete_errors)
{
	struct tdispatch_stats_user st;
	struct td_taken b;
	__u64 lease;

	lease = td_take_pair(_metadata, self->fd, NULL, &b);
	EXPECT_REJECTED(self->fd, ENOENT, "a lease never handed out",
			td_complete(self->fd, lease + 1000, TDISPATCH_RESULT_SUCCESS));
	EXPECT_REJECTED(self->fd, EINVAL, "result 4",
			td_complete(self->fd, lease, TDISPATCH_RESULT_PERMANENT + 1));
	EXPECT_REJECTED(self->fd, EINVAL, "result ~0", td_complete(self->fd, lease, ~0U));
	/* The refused results left the lease alone. */
	td_finish(_metadata, self->fd, lease, TDISPATCH_RESULT_SUCCESS);
	EXPECT_REJECTED(self->fd, ENOENT, "complete twice",
			td_complete(self->fd, lease, TDISPATCH_RESULT_SUCCESS));
	EXPECT_OUTCOMES(self->fd, { 1, DONE, 0 }, { 2, DONE, 0 });
	EXPECT_ENDS(self->fd, &st, [DONE] = 2);
	EXPECT_EQ(4, st.rejected_calls);
}

TEST_F(user, read_needs_room_for_a_whole_event)
{
	struct tdispatch_stats_user st;
	char *edge = td_edge(_metadata);
	struct tdispatch_event ev[2];
	ssize_t n;

	td_setup(_metadata, self->fd, TD_NR, 16);
	SUBMIT_IDS(self->fd, 1, 2);
	td_cancel_ok(_metadata, self->fd, 1);
	td_cancel_ok(_metadata, self->fd, 2);
	EXPECT_REJECTED(self->fd, EINVAL, "read 47 bytes", read(self->fd, ev, sizeof(ev[0]) - 1));
	EXPECT_REJECTED(self->fd, EINVAL, "read 1 byte", read(self->fd, ev, 1));
	EXPECT_REJECTED(self->fd, EFAULT, "read into an unmapped page",
			read(self->fd, edge + PAGE, sizeof(ev[0])));
	munmap(edge, 2 * PAGE);
	/* Nothing was taken by the failed reads; room for one and a half: one. */
	n = read(self->fd, ev, sizeof(ev[0]) * 3 / 2);
	ASSERT_EQ(sizeof(ev[0]), n) TH_LOG("%s", strerror(errno));
	td_check_seq(_metadata, &ev[0]);
	EXPECT_EQ(1, ev[0].id);
	EXPECT_OUTCOMES(self->fd, { 2, CANCELLED, 0 });
	EXPECT_ENDS(self->fd, &st, [CANCELLED] = 2);
}

/*
 * The bound counts what a task holds: its payload and the kernel's own
 * bytes for it (a few hundred at most), so a full dispatcher holds a
 * little less than BYTES_MAX / TDISPATCH_PAYLOAD_MAX of the largest.
 */
TEST_F(user, payload_bytes_are_bounded)
{
	const unsigned int most = BYTES_MAX / TDISPATCH_PAYLOAD_MAX, per = TDISPATCH_SUBMIT_MAX;
	const unsigned int least = BYTES_MAX / (TDISPATCH_PAYLOAD_MAX + 512);
	struct tdispatch_submit_task *ut = calloc(per, sizeof(*ut));
	struct tdispatch_stats_user st;
	struct tdispatch_create c;
	unsigned int id = 0, i, full = 0;
	__u64 before;
	int n;

	ASSERT_NE(NULL, ut);
	/* One worker: all but one batch stays pending, cancellable. */
	td_cfg(&c, 8, 0);
	c.max_buffer = 2 * most;
	c.max_input = 65536;
	c.workers = 1;
	td_create(_metadata, self->fd, &c);
	before = td_rejected_calls(_metadata, self->fd);
	do {
		for (i = 0; i < per; i++)
			ut[i] = (struct tdispatch_submit_task) {
				.id = id++,
				.payload = uptr(td_big),
				.payload_len = TDISPATCH_PAYLOAD_MAX,
			};
		n = td_submit_vec(self->fd, ut, per);
		ASSERT_LE(0, n);
		full += n;
	} while (n == (int)per);
	EXPECT_EQ(-ENOSPC, ut[n].status);
	EXPECT_GE(most, full);
	EXPECT_LE(least, full);
	/* A cancelled task gives its bytes back before CANCEL returns. */
	ASSERT_EQ(0, td_cancel(self->fd, full - 1));
	ut[0] = (struct tdispatch_submit_task) {
		.id = id++, .payload = uptr(td_big), .payload_len = TDISPATCH_PAYLOAD_MAX,
	};
	EXPECT_EQ(1, td_submit_vec(self->fd, ut, 1));
	EXPECT_EQ(0, ut[0].status);
	ut[0].id = id++;
	EXPECT_EQ(0, td_submit_vec(self->fd, ut, 1));
	EXPECT_EQ(-ENOSPC, ut[0].status);
	td_stats(_metadata, self->fd, &st);
	EXPECT_EQ(full + 1, st.accepted);
	EXPECT_EQ(1, st.cancelled);
	EXPECT_EQ(before, st.rejected_calls) TH_LOG("the calls themselves did not fail");
	/* uapi: rejected counts tasks refused at submission, full ones too. */
	EXPECT_EQ(per - n + 1, st.rejected) TH_LOG("tasks refused with ENOSPC");
	free(ut);
}

/* Races */

#define RACE_IDS	64
#define RACE_THREADS	3
#define RACE_PROCS	4
#define RACE_ROUNDS	200
#define RACE_VEC	8

/* Shared by the threads, or by the processes through a shared mapping. */
struct race {
	int fd;
	int wfd[RACE_THREADS];	/* each worker thread's own descriptor */
	int stop;		/* errors from here on are the close's doing */
	int err;		/* the first unexpected errno */
	int err_line;
	unsigned int accepted[RACE_IDS];
};

struct race_thread {
	struct race *r;
	unsigned int n;
	pthread_t tid;
};

static void race_fail(struct race *r, int line, int err)
{
	int none = 0;

	if (__atomic_compare_exchange_n(&r->err, &none, err, false, __ATOMIC_SEQ_CST,
					__ATOMIC_SEQ_CST))
		r->err_line = line;
}

static bool race_stopped(struct race *r)
{
	return __atomic_load_n(&r->stop, __ATOMIC_SEQ_CST);
}

/* Submit RACE_VEC tasks over RACE_IDS ids; count each one accepted. */
static void race_submit(struct race *r, int fd, unsigned int *seed, __u64 round)
{
	struct tdispatch_submit_task ut[RACE_VEC];
	struct td_pl pl[RACE_VEC];
	unsigned int i;
	int ret;

	for (i = 0; i < RACE_VEC; i++) {
		*seed = *seed * 1103515245 + 12345;
		td_task(&ut[i], &pl[i], (*seed >> 16) % RACE_IDS, round);
	}
	ret = td_submit_vec(fd, ut, RACE_VEC);
	if (ret < 0) {
		race_fail(r, __LINE__, -ret);
		return;
	}
	for (i = 0; i < RACE_VEC; i++) {
		if (ut[i].status)
			race_fail(r, __LINE__, -ut[i].status);
		else
			__atomic_add_fetch(&r->accepted[ut[i].id], 1, __ATOMIC_SEQ_CST);
	}
}

/* Take a batch, check it and complete it with the @k-th result: 0 or -errno. */
static int race_work(struct race *r, int fd, __u32 flags, __u64 timeout_ns, unsigned int k)
{
	static const __u32 results[] = {
		TDISPATCH_RESULT_SUCCESS, TDISPATCH_RESULT_SUCCESS, TDISPATCH_RESULT_TRANSIENT,
		TDISPATCH_RESULT_SUCCESS, TDISPATCH_RESULT_SUCCESS, TDISPATCH_RESULT_CONGESTION,
		TDISPATCH_RESULT_SUCCESS, TDISPATCH_RESULT_PERMANENT,
	};
	struct td_taken b;
	unsigned int i;
	int ret;

	ret = td_take(fd, &b, flags, timeout_ns);
	if (ret)
		return ret;
	for (i = 0; i < b.tk.nr; i++)
		if (b.t[i].payload_len != sizeof(struct td_pl) || td_payload(&b, i).id != b.t[i].id)
			race_fail(r, __LINE__, EBADMSG);
	ret = td_complete(fd, b.tk.batch, results[k % ARRAY_SIZE(results)]);
	/* Once closing began, the lease may be gone with the file or the closer. */
	if (ret && !(race_stopped(r) && (ret == -ENOENT || ret == -EBADF)))
		race_fail(r, __LINE__, -ret);
	return 0;
}

/* Dispatchers that cut batches by age too, with room for every event. */
static void race_cfg(struct tdispatch_create *c, const char *name)
{
	td_cfg(c, 16, 65536);
	snprintf(c->name, sizeof(c->name), "%s", name);
	c->max_buffer = 4096;
	c->max_input = 65536;
	c->max_delay_ns = MSEC;
	c->congestion_delay_ns = MSEC;
	c->transient_delay_ns = MSEC;
}

/*
 * Read an outcome event for every task that was accepted: exactly as many
 * per id as were accepted, and as many per outcome as the counters say.
 */
static void race_check(struct __test_metadata *_metadata, int fd, const struct race *r)
{
	unsigned int got[RACE_IDS] = { 0 }, i, k;
	struct tdispatch_event ev[TD_NR];
	struct tdispatch_stats_user st;
	struct td_ends ends = { { 0 } };
	__u64 total = 0, n = 0;

	ASSERT_EQ(0, r->err) TH_LOG("line %d: %s", r->err_line, strerror(r->err));
	for (i = 0; i < RACE_IDS; i++)
		total += r->accepted[i];
	while (n < total) {
		if (!td_poll(fd, POLLIN, WAIT_MS))
			TH_LOG("%llu of %llu outcome events read", n, total);
		k = td_read_records(_metadata, fd, ev, total - n < TD_NR ? total - n : TD_NR);
		for (i = 0; i < k; i++) {
			ASSERT_EQ(TDISPATCH_EVENT_OUTCOME, ev[i].type) TH_LOG("events were lost");
			ASSERT_GT(RACE_IDS, ev[i].id);
			ASSERT_GT(NR_ENDS, ev[i].outcome);
			got[ev[i].id]++;
			ends.n[ev[i].outcome]++;
			n++;
		}
	}
	for (i = 0; i < RACE_IDS; i++)
		td_expect_item(_metadata, r->accepted[i], got[i], "outcome events of id", i);
	td_expect_ends(_metadata, fd, &st, &ends);
	EXPECT_EQ(total, st.accepted);
	EXPECT_LT(0, st.done);
	EXPECT_EQ(0, st.events_lost);
}

static void *race_submitter(void *arg)
{
	struct race_thread *t = arg;
	unsigned int seed = t->n + 1, round;

	for (round = 0; round < RACE_ROUNDS; round++)
		race_submit(t->r, t->r->fd, &seed, round);
	return NULL;
}

/*
 * Work until a TAKE fails, which it may only after the stop: EBADF once the
 * descriptor is closed, EINTR when the signal ends a TAKE that still holds
 * the file.
 */
static void *race_worker(void *arg)
{
	struct race_thread *t = arg;
	unsigned int k;
	int ret;

	for (k = t->n; ; k++) {
		ret = race_work(t->r, t->r->wfd[t->n], 0, 0, k);
		if (!ret)
			continue;
		if (!race_stopped(t->r) || (ret != -EBADF && ret != -EINTR))
			race_fail(t->r, __LINE__, -ret);
		return NULL;
	}
}

/* A pidfd of the acceptor kthread of the dispatcher called @name. */
static int td_acceptor_pidfd(struct __test_metadata *_metadata, const char *name)
{
	char want[32], comm[32], path[300];
	struct dirent *de;
	int pidfd = -1, fd;
	ssize_t n;
	DIR *d;

	snprintf(want, sizeof(want), "tdispatch/%s\n", name);
	d = opendir("/proc");
	ASSERT_NE(NULL, d);
	for (de = readdir(d); de && pidfd < 0; de = readdir(d)) {
		snprintf(path, sizeof(path), "/proc/%s/comm", de->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		n = read(fd, comm, sizeof(comm) - 1);
		close(fd);
		comm[n > 0 ? n : 0] = 0;
		if (!strcmp(comm, want))
			pidfd = syscall(__NR_pidfd_open, atoi(de->d_name), 0);
	}
	closedir(d);
	ASSERT_LE(0, pidfd) TH_LOG("no acceptor kthread %s", want);
	return pidfd;
}

static void race_on_signal(int sig)
{
}

TEST_F_TIMEOUT(user, threads_race_and_the_last_close_ends_a_blocked_take, 120)
{
	/* No SA_RESTART: the signal ends a TAKE blocked on a closed file. */
	struct sigaction sa = { .sa_handler = race_on_signal };
	struct race_thread sub[RACE_THREADS], wrk[RACE_THREADS];
	struct race r = { .fd = self->fd };
	struct tdispatch_create c;
	struct tdispatch_stats_user st;
	struct pollfd acceptor = { .events = POLLIN };
	unsigned int i, seed = 99;

	race_cfg(&c, "thr");
	td_create(_metadata, self->fd, &c);
	acceptor.fd = td_acceptor_pidfd(_metadata, "thr");
	ASSERT_EQ(0, sigaction(SIGUSR1, &sa, NULL));
	for (i = 0; i < RACE_THREADS; i++) {
		r.wfd[i] = dup(self->fd);
		ASSERT_LE(0, r.wfd[i]);
		wrk[i] = (struct race_thread) { .r = &r, .n = i };
		ASSERT_EQ(0, pthread_create(&wrk[i].tid, NULL, race_worker, &wrk[i]));
		sub[i] = (struct race_thread) { .r = &r, .n = i };
		ASSERT_EQ(0, pthread_create(&sub[i].tid, NULL, race_submitter, &sub[i]));
	}
	for (i = 0; i < RACE_THREADS; i++)
		pthread_join(sub[i].tid, NULL);
	race_check(_metadata, self->fd, &r);
	td_stats(_metadata, self->fd, &st);
	EXPECT_EQ(0, st.rejected_calls);

	/* Leave work pending and in flight, then close while workers block. */
	for (i = 0; i < 4; i++)
		race_submit(&r, self->fd, &seed, RACE_ROUNDS + i);
	EXPECT_EQ(0, poll(&acceptor, 1, 0)) TH_LOG("the acceptor ended before the close");
	__atomic_store_n(&r.stop, 1, __ATOMIC_SEQ_CST);
	close(self->fd);
	self->fd = -1;
	for (i = 0; i < RACE_THREADS; i++)
		close(r.wfd[i]);
	for (i = 0; i < RACE_THREADS; i++)
		pthread_kill(wrk[i].tid, SIGUSR1);
	for (i = 0; i < RACE_THREADS; i++)
		pthread_join(wrk[i].tid, NULL);
	/* The last reference went with the last TAKE: the dispatcher is gone. */
	EXPECT_EQ(1, poll(&acceptor, 1, WAIT_MS)) TH_LOG("the acceptor outlived the file");
	EXPECT_EQ(0, r.err) TH_LOG("line %d: %s", r.err_line, strerror(r.err));
	close(acceptor.fd);
}

/* A child: submit and work, report when all is submitted, work until the stop. */
static int race_child(struct race *r, int fd, int ready, unsigned int n)
{
	unsigned int seed = 1000 + n, round;
	char one = 1;
	int ret;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	for (round = 0; round < RACE_ROUNDS / 2; round++) {
		race_submit(r, fd, &seed, round);
		ret = race_work(r, fd, TDISPATCH_TAKE_NONBLOCK, 0, round + n);
		if (ret && ret != -EAGAIN)
			race_fail(r, __LINE__, -ret);
	}
	if (write(ready, &one, 1) != 1)
		race_fail(r, __LINE__, errno);
	for (; !race_stopped(r); round++) {
		ret = race_work(r, fd, 0, 50 * MSEC, round + n);
		if (ret && ret != -ETIMEDOUT)
			race_fail(r, __LINE__, -ret);
	}
	return 0;
}

TEST_F_TIMEOUT(user, processes_share_a_dispatcher, 120)
{
	struct race *r = mmap(NULL, sizeof(*r), PROT_READ | PROT_WRITE,
			      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	struct tdispatch_create c;
	pid_t pid[RACE_PROCS];
	unsigned int i, ready = 0;
	char buf[RACE_PROCS];
	int p[2], status;
	ssize_t n;

	ASSERT_NE(MAP_FAILED, r);
	race_cfg(&c, "proc");
	td_create(_metadata, self->fd, &c);
	ASSERT_EQ(0, pipe(p));
	for (i = 0; i < RACE_PROCS; i++) {
		pid[i] = fork();
		ASSERT_LE(0, pid[i]);
		if (!pid[i]) {
			close(p[0]);
			_exit(race_child(r, self->fd, p[1], i));
		}
	}
	close(p[1]);
	/* Once every child submitted all it will, the total is known. */
	while (ready < RACE_PROCS) {
		n = read(p[0], buf, sizeof(buf));
		if (n <= 0)
			break;
		ready += n;
	}
	EXPECT_EQ(RACE_PROCS, ready);
	race_check(_metadata, self->fd, r);
	__atomic_store_n(&r->stop, 1, __ATOMIC_SEQ_CST);
	for (i = 0; i < RACE_PROCS; i++) {
		ASSERT_EQ(pid[i], waitpid(pid[i], &status, 0));
		EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status)) TH_LOG("child %u", i);
	}
	EXPECT_EQ(0, r->err) TH_LOG("line %d: %s", r->err_line, strerror(r->err));
	/* Takes that timed out or found nothing are not bad calls. */
	EXPECT_EQ(0, td_rejected_calls(_metadata, self->fd));
	close(p[0]);
	munmap(r, sizeof(*r));
}

TEST_HARNESS_MAIN
