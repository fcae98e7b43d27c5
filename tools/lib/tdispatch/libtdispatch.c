// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * libtdispatch: see libtdispatch.h.  Everything here is one ioctl, read or
 * open away from the UAPI; what it adds is the size fields, the splitting
 * of long vectors and the buffers a worker needs.
 */
#include <errno.h>
#include <sched.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "libtdispatch.h"

#define TDL_DEV		"/dev/" TDISPATCH_DEV_NAME
/* Tries for a slot another writer holds, yielding every 64, before -EAGAIN. */
#define TDL_SLOT_SPINS	1048576U

static uint64_t tdl_ptr(const void *p)
{
	return (uint64_t)(uintptr_t)p;
}

static int tdl_ioctl(struct tdl *t, unsigned long req, void *arg)
{
	int ret = ioctl(t->fd, req, arg);

	return ret < 0 ? -errno : ret;
}

int tdl_open(struct tdl *t, int flags)
{
	int fd = open(TDL_DEV, O_RDWR | O_CLOEXEC | flags);
	int ret;

	if (fd < 0) {
		memset(t, 0, sizeof(*t));
		t->fd = -1;
		return -errno;
	}
	ret = tdl_adopt(t, fd);
	if (ret < 0)
		close(fd);
	return ret;
}

int tdl_adopt(struct tdl *t, int fd)
{
	struct tdispatch_version v = { .size = sizeof(v) };
	int ret;

	memset(t, 0, sizeof(*t));
	t->fd = fd;
	ret = tdl_ioctl(t, TDISPATCH_IOC_VERSION, &v);
	if (ret < 0) {
		t->fd = -1;
		return ret;
	}
	t->features = v.features;
	memcpy(t->module_version, v.module_version, sizeof(t->module_version) - 1);
	return 0;
}

void tdl_close(struct tdl *t)
{
	if (t->fd >= 0)
		close(t->fd);
	t->fd = -1;
}

void tdl_config_init(struct tdl_config *c, const char *name)
{
	*c = (struct tdl_config) {
		.name = name,
		.events = 1,
		.event_queue = 1024,
		.max_buffer = 1024,
		.max_batch = 16,
		.workers = 4,
		.max_input = 4096,
		.max_delay_ns = 1000000,
		.congestion_delay_ns = 10000000,
		.transient_delay_ns = 10000000,
		.lease_ns = 30000000000ULL,
		.max_delayed = 1024,
	};
}

int tdl_create(struct tdl *t, const struct tdl_config *c)
{
	struct tdispatch_create a = {
		.size = sizeof(a),
		.flags = c->events ? TDISPATCH_CREATE_EVENTS : 0,
		.max_buffer = c->max_buffer,
		.max_batch = c->max_batch,
		.workers = c->workers,
		.max_input = c->max_input,
		.max_delay_ns = c->max_delay_ns,
		.congestion_delay_ns = c->congestion_delay_ns,
		.transient_delay_ns = c->transient_delay_ns,
		.lease_ns = c->lease_ns,
		.event_queue = c->events ? c->event_queue : 0,
		.max_delayed = c->max_delayed,
		.max_attempts = c->max_attempts,
		.rate = c->rate,
		.burst = c->burst,
	};
	int ret;

	if (!c->name || strlen(c->name) >= sizeof(a.name))
		return -EINVAL;
	memcpy(a.name, c->name, strlen(c->name));
	ret = tdl_ioctl(t, TDISPATCH_IOC_CREATE, &a);
	if (ret < 0)
		return ret;
	t->max_batch = c->max_batch;
	return 0;
}

int tdl_attach(struct tdl *t, const char *name, uint32_t flags, uint32_t event_queue)
{
	struct tdispatch_attach a = {
		.size = sizeof(a),
		.flags = flags,
		.event_queue = event_queue,
	};

	if (!name || strlen(name) >= sizeof(a.name))
		return -EINVAL;
	memcpy(a.name, name, strlen(name));
	return tdl_ioctl(t, TDISPATCH_IOC_ATTACH, &a);
}

int tdl_list(struct tdl *t, struct tdispatch_entry *entries, uint32_t max)
{
	struct tdispatch_list l = {
		.size = sizeof(l),
		.entries = tdl_ptr(entries),
		.max_entries = max,
	};
	int ret = tdl_ioctl(t, TDISPATCH_IOC_LIST, &l);

	return ret < 0 ? ret : (int)l.count;
}

struct tdispatch_submit_task tdl_task(uint64_t id, const void *payload, uint32_t len)
{
	return (struct tdispatch_submit_task) {
		.id = id,
		.payload = tdl_ptr(payload),
		.payload_len = len,
	};
}

int tdl_submit(struct tdl *t, struct tdispatch_submit_task *tasks, size_t count, uint32_t flags)
{
	size_t done = 0, i;
	int accepted = 0;

	/* What no call reached keeps this status. */
	for (i = 0; i < count; i++)
		tasks[i].status = -ECANCELED;
	while (done < count) {
		uint32_t n = count - done > TDISPATCH_SUBMIT_MAX ?
			     TDISPATCH_SUBMIT_MAX : (uint32_t)(count - done);
		struct tdispatch_submit s = {
			.size = sizeof(s),
			.flags = flags,
			.tasks = tdl_ptr(tasks + done),
			.count = n,
			.task_size = sizeof(*tasks),
		};
		int ret = tdl_ioctl(t, TDISPATCH_IOC_SUBMIT, &s);

		/* The statuses say what went in before it failed. */
		if (ret < 0)
			return ret;
		accepted += s.accepted;
		done += n;
	}
	return accepted;
}

int tdl_submit_one(struct tdl *t, uint64_t id, const void *payload, uint32_t len)
{
	struct tdispatch_submit_task ut = tdl_task(id, payload, len);
	int ret = tdl_submit(t, &ut, 1, 0);

	if (ret < 0)
		return ret;
	return ut.status;
}

int tdl_slots_map(struct tdl *t, struct tdl_slots *s, uint32_t nr)
{
	struct tdispatch_slots a = { .size = sizeof(a), .nr = nr };
	int ret;

	if (!(t->features & TDISPATCH_FEAT_SLOTS))
		return -EOPNOTSUPP;
	ret = tdl_ioctl(t, TDISPATCH_IOC_SLOTS, &a);
	if (ret < 0)
		return ret;
	s->map = mmap(NULL, a.map_len, PROT_READ | PROT_WRITE, MAP_SHARED, t->fd, 0);
	if (s->map == MAP_FAILED)
		return -errno;
	s->map_len = a.map_len;
	s->summary = s->map;
	s->bitmap = (uint64_t *)((char *)s->map + a.bitmap_off);
	s->slot = (struct tdispatch_slot *)((char *)s->map + a.slots_off);
	s->nr = nr;
	return 0;
}

void tdl_slots_unmap(struct tdl_slots *s)
{
	munmap(s->map, s->map_len);
	s->map = NULL;
}

int tdl_slot_write(struct tdl_slots *s, uint32_t i, uint64_t id, const void *payload,
		   uint32_t len)
{
	struct tdispatch_slot *sl;
	uint32_t seq, spins;

	if (i >= s->nr || len > TDISPATCH_SLOT_PAYLOAD_MAX)
		return -EINVAL;
	sl = &s->slot[i];
	/* Writers exclude each other: the count goes from even to odd. */
	seq = __atomic_load_n(&sl->seq, __ATOMIC_RELAXED);
	for (spins = 0; ; spins++) {
		if (!(seq & 1) && __atomic_compare_exchange_n(&sl->seq, &seq, seq + 1, 0,
							      __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			break;
		/* One that stopped half way (it died) holds the slot for good. */
		if (spins == TDL_SLOT_SPINS)
			return -EAGAIN;
		if (spins % 64 == 63)
			sched_yield();
		seq = __atomic_load_n(&sl->seq, __ATOMIC_RELAXED);
	}
	/* The odd count is seen before the payload changes. */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	sl->id = id;
	sl->len = len;
	memcpy(sl->payload, payload, len);
	__atomic_store_n(&sl->seq, seq + 2, __ATOMIC_RELEASE);
	/* A full barrier: the kernel clears ->queued before it reads. */
	if (__atomic_exchange_n(&sl->queued, 1, __ATOMIC_SEQ_CST))
		return 0;
	if (!__atomic_fetch_or(&s->bitmap[i / 64], 1ULL << (i % 64), __ATOMIC_SEQ_CST))
		__atomic_fetch_or(&s->summary[i / 4096], 1ULL << (i / 64 % 64), __ATOMIC_SEQ_CST);
	return 1;
}

int tdl_kick(struct tdl *t)
{
	return tdl_ioctl(t, TDISPATCH_IOC_KICK, NULL);
}

static int tdl_id_call(struct tdl *t, unsigned long req, uint64_t id)
{
	struct tdispatch_id a = { .size = sizeof(a), .id = id };

	return tdl_ioctl(t, req, &a);
}

int tdl_cancel(struct tdl *t, uint64_t id)
{
	return tdl_id_call(t, TDISPATCH_IOC_CANCEL, id);
}

int tdl_expedite(struct tdl *t, uint64_t id)
{
	return tdl_id_call(t, TDISPATCH_IOC_EXPEDITE, id);
}

int tdl_expedite_key(struct tdl *t, uint64_t key)
{
	return tdl_id_call(t, TDISPATCH_IOC_EXPEDITE_KEY, key);
}

int tdl_set_rate(struct tdl *t, uint32_t rate, uint32_t burst)
{
	struct tdispatch_rate r = { .size = sizeof(r), .rate = rate, .burst = burst };

	return tdl_ioctl(t, TDISPATCH_IOC_SET_RATE, &r);
}

int tdl_query(struct tdl *t, uint64_t id, struct tdispatch_query *q)
{
	*q = (struct tdispatch_query) { .size = sizeof(*q), .id = id };
	return tdl_ioctl(t, TDISPATCH_IOC_QUERY, q);
}

int tdl_stats(struct tdl *t, struct tdispatch_stats_user *st)
{
	memset(st, 0, sizeof(*st));
	st->size = sizeof(*st);
	return tdl_ioctl(t, TDISPATCH_IOC_STATS, st);
}

int tdl_read_events(struct tdl *t, struct tdispatch_event *ev, size_t max)
{
	ssize_t n;

	if (!max)
		return -EINVAL;
	n = read(t->fd, ev, max * sizeof(*ev));
	if (n < 0)
		return -errno;
	return (int)(n / sizeof(*ev));
}

int tdl_worker_init(struct tdl_worker *w, struct tdl *t)
{
	memset(w, 0, sizeof(*w));
	if (!t->max_batch)
		return -EINVAL;
	w->t = t;
	w->max_tasks = t->max_batch;
	w->buf_len = t->max_batch * TDISPATCH_PAYLOAD_MAX;
	w->batch.tasks = calloc(w->max_tasks, sizeof(*w->batch.tasks));
	w->batch.results = calloc(w->max_tasks, sizeof(*w->batch.results));
	w->batch.buf = malloc(w->buf_len);
	if (!w->batch.tasks || !w->batch.results || !w->batch.buf) {
		tdl_worker_free(w);
		return -ENOMEM;
	}
	return 0;
}

void tdl_worker_free(struct tdl_worker *w)
{
	free(w->batch.tasks);
	free(w->batch.results);
	free(w->batch.buf);
	memset(&w->batch, 0, sizeof(w->batch));
}

int tdl_take(struct tdl_worker *w, uint64_t timeout_ns, uint32_t flags)
{
	struct tdl_batch *b = &w->batch;
	struct tdispatch_take tk = {
		.size = sizeof(tk),
		.flags = flags,
		.timeout_ns = timeout_ns,
		.tasks = tdl_ptr(b->tasks),
		.buf = tdl_ptr(b->buf),
		.max_tasks = w->max_tasks,
		.buf_len = w->buf_len,
	};
	int ret;

	b->nr = 0;
	b->nr_results = 0;
	/* A worker whose tdl_worker_init() failed has nothing to take into. */
	if (!w->t || !w->max_tasks)
		return -EBADF;
	ret = tdl_ioctl(w->t, TDISPATCH_IOC_TAKE, &tk);
	if (ret < 0)
		return ret;
	b->lease = tk.batch;
	b->nr = tk.nr;
	return 0;
}

const void *tdl_payload(const struct tdl_batch *b, uint32_t i, uint32_t *len)
{
	if (len)
		*len = b->tasks[i].payload_len;
	return b->buf + b->tasks[i].payload_off;
}

void tdl_set_result(struct tdl_batch *b, uint32_t i, uint32_t result)
{
	uint32_t r;

	if (i >= b->nr)
		return;
	/* A second verdict for a task replaces its first. */
	for (r = 0; r < b->nr_results; r++)
		if (b->results[r].id == b->tasks[i].id)
			break;
	b->results[r] = (struct tdispatch_task_result) {
		.id = b->tasks[i].id,
		.result = result,
	};
	if (r == b->nr_results)
		b->nr_results++;
}

int tdl_complete(struct tdl_worker *w, uint32_t result)
{
	struct tdl_batch *b = &w->batch;
	struct tdispatch_complete c = {
		.size = sizeof(c),
		.batch = b->lease,
		.result = result,
		.results = tdl_ptr(b->results),
		.nr_results = b->nr_results,
	};
	int ret;

	if (!w->t)
		return -EBADF;
	ret = tdl_ioctl(w->t, TDISPATCH_IOC_COMPLETE, &c);
	/* Still ours after another error: the caller may complete it again. */
	if (!ret || ret == -ENOENT) {
		b->nr = 0;
		b->nr_results = 0;
	}
	return ret;
}

long tdl_worker_run(struct tdl_worker *w, uint32_t (*fn)(struct tdl_batch *b, void *arg),
		    void *arg, unsigned long max_batches, uint64_t timeout_ns)
{
	unsigned long done = 0;
	uint32_t result;
	int ret;

	while (!max_batches || done < max_batches) {
		ret = tdl_take(w, timeout_ns, 0);
		if (ret == -ETIMEDOUT)
			break;
		/* A signal or a non-blocking file: stop, saying how far it got. */
		if (ret == -EINTR || ret == -EAGAIN)
			return done ? (long)done : ret;
		if (ret < 0)
			return ret;
		result = fn(&w->batch, arg);
		if (result > TDISPATCH_RESULT_PERMANENT)
			result = TDISPATCH_RESULT_PERMANENT;
		ret = tdl_complete(w, result);
		/* A lease that expired meanwhile went back: not ours to count. */
		if (ret == -ENOENT)
			continue;
		if (ret < 0)
			return ret;
		done++;
	}
	return (long)done;
}
