/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * libtdispatch: a small C library over /dev/tdispatch (uapi/linux/tdispatch.h).
 *
 * It opens the device, creates or attaches a dispatcher, submits vectors of
 * tasks, runs a take/complete worker loop with a callback per batch, reads
 * outcome events and counters.  The structs' size fields are handled
 * inside.
 *
 * Every function that can fail returns a negative errno (never sets errno
 * for the caller to read); 0 or a count on success.  A struct tdl is not
 * locked: share one between threads only for calls the kernel itself
 * serialises (submit, stats, events), and give each worker thread its own
 * struct tdl_worker.
 */
#ifndef LIBTDISPATCH_H
#define LIBTDISPATCH_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <linux/tdispatch.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * struct tdl - an open /dev/tdispatch file
 * @fd: the file descriptor; the caller may poll() it
 * @features: the module's %TDISPATCH_FEAT_* bits
 * @max_batch: max_batch of the dispatcher tdl_create() made; 0 before
 * @module_version: the module's version, NUL-terminated
 */
struct tdl {
	int fd;
	uint64_t features;
	uint32_t max_batch;
	char module_version[16];
};

/**
 * tdl_open() - open /dev/tdispatch and ask the module its version
 * @t: filled in
 * @flags: extra open(2) flags, e.g. O_NONBLOCK; O_RDWR and O_CLOEXEC always
 *
 * Return: 0, or -errno (-ENOENT: the module is not loaded).
 */
int tdl_open(struct tdl *t, int flags);

/**
 * tdl_adopt() - take an open /dev/tdispatch file and ask the module its version
 * @t: filled in; tdl_close() closes @fd
 * @fd: a file opened elsewhere, e.g. inherited from the process that
 *	created a dispatcher on it, or attached to a named one
 *
 * @t->max_batch stays 0: set it to the dispatcher's max_batch (1024 is
 * always enough) before tdl_worker_init().
 *
 * Return: 0, or -errno (-ENOTTY: @fd is not /dev/tdispatch); @fd stays
 * open either way.
 */
int tdl_adopt(struct tdl *t, int fd);

/**
 * tdl_close() - close the file; a dispatcher it created goes with it
 * @t: as tdl_open() filled it
 */
void tdl_close(struct tdl *t);

/**
 * struct tdl_config - a new dispatcher, as struct tdispatch_create
 * @name: up to %TDISPATCH_NAME_LEN - 1 bytes, shown in traces
 * @events: queue outcome events (read with tdl_read_events())
 * @event_queue: most queued events, with @events
 * @max_buffer: most pending tasks
 * @max_batch: most tasks per batch
 * @workers: most batches leased at once
 * @max_input: most undrained submissions per CPU
 * @max_delay_ns: a batch goes once its oldest task waited this long
 * @congestion_delay_ns: hold-off after CONGESTION
 * @transient_delay_ns: hold-off after TRANSIENT
 * @lease_ns: a batch not completed this long after it was taken goes back
 * @max_delayed: most tasks waiting for their not-before time
 * @max_attempts: most times a task is leased; 0: no limit
 * @rate: most tasks a second; 0: no limit
 * @burst: the rate limit's burst; 0: @max_batch
 *
 * tdl_config_init() gives every field a working value.
 */
struct tdl_config {
	const char *name;
	int events;
	uint32_t event_queue;
	uint32_t max_buffer;
	uint32_t max_batch;
	uint32_t workers;
	uint32_t max_input;
	uint64_t max_delay_ns;
	uint64_t congestion_delay_ns;
	uint64_t transient_delay_ns;
	uint64_t lease_ns;
	uint32_t max_delayed;
	uint32_t max_attempts;
	uint32_t rate;
	uint32_t burst;
};

/**
 * tdl_config_init() - defaults for a dispatcher named @name
 * @c: filled in: 1024 pending, batches of 16 within 1 ms, 4 workers,
 *	events on (1024), 10 ms hold-offs, 30 s leases, 1024 delayed
 * @name: its name
 */
void tdl_config_init(struct tdl_config *c, const char *name);

/**
 * tdl_create() - create a dispatcher owned by this file
 * @t: an open file with no dispatcher yet
 * @c: its configuration
 *
 * Return: 0, or -errno (-EINVAL: a value out of range, -EEXIST: the file
 * already has one, -EMFILE: the caller's limit of dispatchers).
 */
int tdl_create(struct tdl *t, const struct tdl_config *c);

/**
 * tdl_attach() - attach this file to a driver's named dispatcher
 * @t: an open file with no dispatcher yet
 * @name: as tdl_list() shows it
 * @flags: %TDISPATCH_ATTACH_SUBMIT, %TDISPATCH_ATTACH_EVENTS
 * @event_queue: most queued events with %TDISPATCH_ATTACH_EVENTS, else 0
 *
 * Return: 0, or -errno (-ENOENT: no such name, -EACCES: not permitted).
 */
int tdl_attach(struct tdl *t, const char *name, uint32_t flags, uint32_t event_queue);

/**
 * tdl_list() - the named dispatchers
 * @t: an open file
 * @entries: room for @max entries, or NULL with @max 0 to count them
 * @max: room in @entries
 *
 * Return: how many there are (possibly more than @max), or -errno.
 */
int tdl_list(struct tdl *t, struct tdispatch_entry *entries, uint32_t max);

/**
 * tdl_task() - a task to submit
 * @id: its id: a newer task with the same id replaces it
 * @payload: its bytes, 1 to %TDISPATCH_PAYLOAD_MAX
 * @len: how many
 *
 * Return: a struct tdispatch_submit_task with no deadline, delay or watch key;
 * set those fields directly.
 */
struct tdispatch_submit_task tdl_task(uint64_t id, const void *payload, uint32_t len);

/**
 * tdl_submit() - submit a vector of tasks
 * @t: a file with a dispatcher that takes tasks
 * @tasks: the tasks; each one's status is set (0, or a negative errno;
 *	-ECANCELED for those no call reached)
 * @count: how many, any number (the library splits the calls)
 * @flags: %TDISPATCH_SUBMIT_RELATIVE: not_before_ns is a delay
 *
 * Return: how many were accepted (see each status for the rest), or the
 * -errno of the first call that failed; the statuses still say which tasks
 * went in.
 */
int tdl_submit(struct tdl *t, struct tdispatch_submit_task *tasks, size_t count, uint32_t flags);

/**
 * tdl_submit_one() - submit one task
 * @t: a file with a dispatcher that takes tasks
 * @id: its id
 * @payload: its bytes
 * @len: how many
 *
 * Return: 0, or the task's -errno (-ENOSPC: full, -EINVAL: bad length).
 */
int tdl_submit_one(struct tdl *t, uint64_t id, const void *payload, uint32_t len);

/**
 * struct tdl_slots - a file's shared slots, mapped (tdl_slots_map())
 * @map: the mapping
 * @map_len: its length
 * @summary: a bit for each word of @bitmap with a mark
 * @bitmap: the marks, a bit a slot
 * @slot: the slots
 * @nr: how many
 */
struct tdl_slots {
	void *map;
	size_t map_len;
	uint64_t *summary;
	uint64_t *bitmap;
	struct tdispatch_slot *slot;
	uint32_t nr;
};

/**
 * tdl_slots_map() - set up the file's shared slots and map them
 * @t: a file with its own dispatcher
 * @s: filled in
 * @nr: how many slots, a multiple of %TDISPATCH_SLOTS_MIN up to
 *	%TDISPATCH_SLOTS_MAX
 *
 * The first call on a file makes them; a later one with the same @nr (a
 * process sharing the file) maps the same slots.  Tasks are then written
 * with tdl_slot_write() and queued with tdl_kick(); the worker takes them
 * as any others.
 *
 * Return: 0, or -errno (-EOPNOTSUPP: the module has no shared slots,
 * -EEXIST: the file has slots of another number).
 */
int tdl_slots_map(struct tdl *t, struct tdl_slots *s, uint32_t nr);

/**
 * tdl_slots_unmap() - unmap them (the file keeps its slots)
 * @s: as tdl_slots_map() filled it
 */
void tdl_slots_unmap(struct tdl_slots *s);

/**
 * tdl_slot_write() - write a task into a slot, with no system call
 * @s: the mapped slots
 * @i: the slot, below @s->nr; one slot an id is the usual choice
 * @id: the task id
 * @payload: its bytes
 * @len: how many, at most %TDISPATCH_SLOT_PAYLOAD_MAX
 *
 * If the slot's task still waits, its payload is replaced where it is.
 * Threads may write one slot at once: they exclude each other on its
 * sequence count.
 *
 * Return: 1 if the slot was marked and a tdl_kick() is owed, 0 if its task
 * already waits, -EINVAL for a bad slot or length, -EAGAIN if another
 * writer held the slot for a million tries (one that died half way holds
 * it for good).
 */
int tdl_slot_write(struct tdl_slots *s, uint32_t i, uint64_t id, const void *payload,
		   uint32_t len);

/**
 * tdl_kick() - queue a task for each marked slot
 * @t: the file
 *
 * Return: how many it queued, or -errno if the dispatcher refused one (it
 * and the slots after it stay marked, those before it were queued): kick
 * again later, as no later write owes it.
 */
int tdl_kick(struct tdl *t);

/**
 * tdl_cancel() - cancel the pending and delayed tasks of an id
 * @t: the file
 * @id: the id
 *
 * Return: 0, -EBUSY if @id is only in flight, -ENOENT if unknown.
 */
int tdl_cancel(struct tdl *t, uint64_t id);

/**
 * tdl_expedite() - let the delayed task of an id in now
 * @t: the file
 * @id: the id
 *
 * Return: 0, or -ENOENT if no task of @id is delayed.
 */
int tdl_expedite(struct tdl *t, uint64_t id);

/**
 * tdl_expedite_key() - let in every delayed task that watches a key
 * @t: the file
 * @key: the watch key
 *
 * Return: how many were let in, or -ENOENT if none watches @key.
 */
int tdl_expedite_key(struct tdl *t, uint64_t key);

/**
 * tdl_set_rate() - change the dispatcher's rate limit
 * @t: a file with its own dispatcher
 * @rate: tasks a second, 0 for none
 * @burst: the bucket's size, 0 for max_batch
 *
 * Return: 0 or -errno.
 */
int tdl_set_rate(struct tdl *t, uint32_t rate, uint32_t burst);

/**
 * tdl_query() - where the task of an id is
 * @t: the file
 * @id: the id
 * @q: filled in
 *
 * Return: 0 or -errno.
 */
int tdl_query(struct tdl *t, uint64_t id, struct tdispatch_query *q);

/**
 * tdl_stats() - the dispatcher's counters
 * @t: the file
 * @st: filled in; counters the module does not know stay 0
 *
 * Return: 0 or -errno.
 */
int tdl_stats(struct tdl *t, struct tdispatch_stats_user *st);

/**
 * tdl_read_events() - outcome events queued for this file
 * @t: the file (created or attached with events)
 * @ev: room for @max events
 * @max: at least 1
 *
 * Blocks until one is there unless the file is O_NONBLOCK.
 *
 * Return: how many events were read, or -errno (-EAGAIN: none yet).
 */
int tdl_read_events(struct tdl *t, struct tdispatch_event *ev, size_t max);

/**
 * struct tdl_batch - a leased batch, as tdl_take() fills it
 * @lease: the lease, for the completion
 * @nr: tasks in it
 * @tasks: their ids, attempts and payload places
 * @buf: their payloads (tdl_payload() finds each)
 * @results: per-task verdicts set by tdl_set_result(), sent on completion
 * @nr_results: how many of @results are set
 */
struct tdl_batch {
	uint64_t lease;
	uint32_t nr;
	struct tdispatch_lease_task *tasks;
	uint8_t *buf;
	struct tdispatch_task_result *results;
	uint32_t nr_results;
};

/**
 * struct tdl_worker - what one worker thread needs to take batches
 * @t: the file
 * @batch: the batch it holds, if any
 * @max_tasks: room in @batch
 * @buf_len: bytes in @batch.buf
 */
struct tdl_worker {
	struct tdl *t;
	struct tdl_batch batch;
	uint32_t max_tasks;
	uint32_t buf_len;
};

/**
 * tdl_worker_init() - room for batches of a dispatcher's size
 * @w: the worker
 * @t: a file whose tdl_create() set max_batch
 *
 * Return: 0, -EINVAL if @t has no dispatcher of its own, -ENOMEM.
 */
int tdl_worker_init(struct tdl_worker *w, struct tdl *t);

/**
 * tdl_worker_free() - free what tdl_worker_init() allocated
 * @w: the worker, holding no batch
 */
void tdl_worker_free(struct tdl_worker *w);

/**
 * tdl_take() - lease the next batch
 * @w: the worker
 * @timeout_ns: most time to wait; 0 for no limit
 * @flags: %TDISPATCH_TAKE_NONBLOCK to fail at once when none is ready
 *
 * Return: 0 with @w->batch filled, or -errno (-ETIMEDOUT, -EAGAIN, -EINTR;
 * -EBADF for a worker whose tdl_worker_init() failed).
 */
int tdl_take(struct tdl_worker *w, uint64_t timeout_ns, uint32_t flags);

/**
 * tdl_payload() - the payload of a task of the batch
 * @b: the batch
 * @i: the task, below @b->nr
 * @len: if not NULL, set to its length
 *
 * Return: a pointer into @b->buf, valid until the next tdl_take().
 */
const void *tdl_payload(const struct tdl_batch *b, uint32_t i, uint32_t *len);

/**
 * tdl_set_result() - a task's own verdict, sent with the completion
 * @b: the batch
 * @i: the task, below @b->nr
 * @result: %TDISPATCH_RESULT_*
 *
 * A task given no verdict of its own takes the batch's result.
 */
void tdl_set_result(struct tdl_batch *b, uint32_t i, uint32_t result);

/**
 * tdl_complete() - end the lease of the batch @w holds
 * @w: the worker
 * @result: %TDISPATCH_RESULT_*, for the tasks with no verdict of their own
 *
 * Return: 0, or -errno (-ENOENT: the lease had expired and the batch went
 * back; -EINVAL: a bad result, and the batch is still held).
 */
int tdl_complete(struct tdl_worker *w, uint32_t result);

/**
 * tdl_worker_run() - take, process and complete batches
 * @w: the worker
 * @fn: called for each batch with @arg; it may call tdl_set_result() on
 *	the batch's tasks, and returns the %TDISPATCH_RESULT_* of the others
 * @arg: passed to @fn
 * @max_batches: stop after this many; 0: no limit
 * @timeout_ns: stop when no batch came for this long; 0: no limit
 *
 * A result above %TDISPATCH_RESULT_PERMANENT is taken as PERMANENT.
 *
 * Return: how many batches were completed when it stopped for @max_batches,
 * @timeout_ns, a signal (-EINTR) or a non-blocking file with no batch
 * (-EAGAIN), the last two only if none was; or -errno of a call that
 * failed otherwise.
 */
long tdl_worker_run(struct tdl_worker *w, uint32_t (*fn)(struct tdl_batch *b, void *arg),
		    void *arg, unsigned long max_batches, uint64_t timeout_ns);

#ifdef __cplusplus
}
#endif

#endif /* LIBTDISPATCH_H */
