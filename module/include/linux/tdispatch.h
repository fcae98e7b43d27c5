/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tdispatch: a coalescing work dispatcher, in-kernel API.
 *
 * Producers submit tasks keyed by a u64 id from any context; an acceptor
 * kthread keeps only the newest task per id (per item, for a task embedded
 * in the caller's object), bounds and batches them, and
 * kworkers hand each batch to the driver's ->process().  See
 * Documentation/tdispatch.rst.
 *
 * Task ids are u64 because the things drivers key work by (a device or
 * inode number, a peer's address, a hash, a pointer) fit in one, compare
 * in one instruction in the pending set's id hash, and carry no lifetime:
 * the dispatcher never has to pin or copy a key.
 */
#ifndef _LINUX_TDISPATCH_H
#define _LINUX_TDISPATCH_H

#include <linux/atomic.h>
#include <linux/container_of.h>
#include <linux/errno.h>
#include <linux/gfp_types.h>
#include <linux/ktime.h>
#include <linux/list.h>
#include <linux/llist.h>
#include <linux/types.h>
#include <linux/uidgid.h>

#include <uapi/linux/tdispatch.h>

/* Upper bound of every delay in struct tdispatch_config, as in Eureka. */
#define TDISPATCH_MAX_DELAY_NS	(30ULL * NSEC_PER_SEC)

struct tdispatch;

/**
 * enum tdispatch_destroy_mode - what tdispatch_destroy() does with work left
 * @TDISPATCH_DRAIN: keep dispatching until nothing is pending or in flight,
 *	or the timeout passes; cancel what is left then.
 * @TDISPATCH_DISCARD: cancel everything pending at once; wait only for the
 *	batches already in ->process().
 */
enum tdispatch_destroy_mode {
	TDISPATCH_DRAIN,
	TDISPATCH_DISCARD,
};

/**
 * struct tdispatch_task - one unit of work, as ->process() sees it
 * @id: the key; a newer task with the same id replaces this one.  An
 *	item's id only names it (see &struct tdispatch_item).
 * @payload: the submitter's pointer, handed back untouched (or the one a
 *	tdispatch_submit_merge() put in its place).
 * @submitted: when tdispatch_submit() accepted it (CLOCK_MONOTONIC).
 * @attempts: how many times a batch holding it was retried so far; stops
 *	at %TDISPATCH_MAX_ATTEMPTS.
 * @max_attempts: its own limit (see tdispatch_submit_with()), or 0 for the
 *	dispatcher's.
 *
 * Read these through the tdispatch_task_*() helpers; everything else in the
 * struct belongs to the dispatcher.  tdispatch_submit() allocates one;
 * tdispatch_submit_task() takes one in the caller's memory, and an item
 * is one in the caller's object.  A deadline and a not-before time are
 * kept apart, with the tasks that have them (tdispatch_task_deadline(),
 * tdispatch_task_not_before()), so that a task without either is 64 bytes.
 */
struct tdispatch_task {
	u64 id;
	void *payload;
	ktime_t submitted;
	u16 attempts;
	u16 max_attempts;
	/* private: */
	u8 state;
	u8 flags;
	u16 item_state;		/* an item's, changed by submitters: see submit.c */
	ktime_t queued;		/* its place in line */
	/*
	 * A delayed task is off the input list and on no order list; the reap
	 * list uses ->order only once the task has left the delayed set.
	 */
	union {
		struct llist_node input;
		struct list_head order;
	};
	union {
		struct tdispatch_task *hnext;	/* a task's next in its id hash bucket */
		const void *owner;		/* an item's dispatcher, once submitted */
	};
};

/**
 * struct tdispatch_item - a task embedded in the caller's own object
 * @task: what ->process() and ->release() see; set up by
 *	tdispatch_item_init(), the dispatcher's while submitted.
 *
 * As a work_struct is to queue_work(): nothing is allocated when it is
 * submitted, and submitting it again while it waits to be processed is a
 * free no-op, counted as overridden (the one waiting processes the
 * object's latest state).  Submitted while it is being processed, it is
 * processed once more afterwards.  ->release() is called each time it
 * leaves the dispatcher, not for the submissions that merged into it, and
 * may submit it again.  The object must not be freed while the item is
 * submitted; once ->release() is called the dispatcher touches the item
 * no more, unless it was submitted again meanwhile, so ->release() may
 * drop the last reference to the object, as a work function may free its
 * work_struct.  Submitted again once its batch has been accounted for, an
 * item may be processed, and released, before that ->release() returns.
 * container_of() leads from the task to the object.
 *
 * An item is its own coalescing point: it is known by its address, not by
 * its id, which only names it (in ->process(), traces and events).  It
 * neither merges with nor waits for a task or another item that carries
 * the same id, and tdispatch_cancel() and tdispatch_run_id() do not find
 * it; tdispatch_run_item() does.
 */
struct tdispatch_item {
	struct tdispatch_task task;
};

/**
 * tdispatch_item_init() - set up an item before its first submission
 * @it: the item
 * @id: the id it is always submitted with
 * @payload: what ->process() sees as its payload
 *
 * Any context; not while @it is submitted.
 */
static inline void tdispatch_item_init(struct tdispatch_item *it, u64 id, void *payload)
{
	it->task.id = id;
	it->task.payload = payload;
	it->task.item_state = 0;
	it->task.state = 0;
	it->task.owner = NULL;
}

/**
 * tdispatch_task_item() - the item a task is embedded in
 * @t: a task submitted with tdispatch_submit_item()
 *
 * Return: the item; meaningless for a task tdispatch_submit() made.
 */
static inline struct tdispatch_item *tdispatch_task_item(struct tdispatch_task *t)
{
	return container_of(t, struct tdispatch_item, task);
}

/**
 * struct tdispatch_batch - the tasks handed to one ->process() call
 * @nr: number of tasks, 1 to &tdispatch_config.max_batch.
 * @tasks: the tasks, oldest place in line first.
 *
 * Valid only during the ->process() call it is passed to.
 */
struct tdispatch_batch {
	unsigned int nr;
	struct tdispatch_task **tasks;
	/* private: what tdispatch_batch_set_result() gave */
	u8 *results;
	bool marked;
};

/**
 * tdispatch_batch_task() - one task of a batch
 * @b: the batch
 * @i: its index, below @b->nr
 *
 * Walk a batch with ``for (i = 0; i < b->nr; i++)``.
 *
 * Return: the @i-th task, oldest place in line first.
 */
static inline struct tdispatch_task *tdispatch_batch_task(const struct tdispatch_batch *b,
							  unsigned int i)
{
	return b->tasks[i];
}

/**
 * tdispatch_task_id() - the id a task was submitted with
 * @t: the task
 *
 * Return: the id.
 */
static inline u64 tdispatch_task_id(const struct tdispatch_task *t)
{
	return t->id;
}

/**
 * tdispatch_task_payload() - the payload a task was submitted with
 * @t: the task
 *
 * For a task of tdispatch_submit_merge(), the payload of the last merge
 * into it before its batch went to ->process().
 *
 * Return: the payload pointer.
 */
static inline void *tdispatch_task_payload(const struct tdispatch_task *t)
{
	return t->payload;
}

/**
 * tdispatch_task_attempts() - how often the task was retried so far
 * @t: the task
 *
 * Return: 0 on the first ->process() of the task, then one more after each
 * %TDISPATCH_RESULT_CONGESTION or %TDISPATCH_RESULT_TRANSIENT result, up to
 * %TDISPATCH_MAX_ATTEMPTS.
 */
static inline unsigned int tdispatch_task_attempts(const struct tdispatch_task *t)
{
	return t->attempts;
}

/**
 * tdispatch_task_submitted() - when the task was submitted
 * @t: the task
 *
 * Return: the CLOCK_MONOTONIC time at which tdispatch_submit() accepted it.
 */
static inline ktime_t tdispatch_task_submitted(const struct tdispatch_task *t)
{
	return t->submitted;
}

ktime_t tdispatch_task_deadline(const struct tdispatch_task *t);
ktime_t tdispatch_task_not_before(const struct tdispatch_task *t);

/**
 * struct tdispatch_ops - what a dispatcher calls back
 * @process: process one batch and say how it went.  Called from a kworker
 *	of the dispatcher's workqueue (or by a caller of tdispatch_run_now()
 *	tdispatch_run_id() or tdispatch_run_item()), in process context; may
 *	sleep.  Never called concurrently for two batches holding the same
 *	task id, nor the same item.  A return
 *	value outside &enum tdispatch_result is a bug: the batch is treated
 *	as %TDISPATCH_RESULT_PERMANENT, counted in &tdispatch_stats.bad_results,
 *	and one rate-limited line is logged.
 * @release: the dispatcher is done with @t, which ended with @outcome; free
 *	or recycle its payload.  Called exactly once for every accepted task,
 *	in process context with no dispatcher lock held; may sleep and may
 *	submit again.  A task tdispatch_submit() allocated is freed after it
 *	returns; one in the caller's memory (tdispatch_submit_task(), an
 *	item) is the caller's again.  A dispatcher given tasks through both
 *	tdispatch_submit() and tdispatch_submit_task() tells them apart by
 *	their payloads.
 * @lock: optional, with @unlock: a lock of the user's that a worker holds
 *	around each batch it runs, from before ->process() until the batch is
 *	accounted for (its tasks that ended released, those to retry back in
 *	line), as the link watch holds RTNL around a pass.  A worker cuts its
 *	batch only once it holds the lock, so no task waits for it in a batch
 *	already cut.  Code that holds that lock may run batches itself with
 *	tdispatch_run_now(), tdispatch_run_id() and tdispatch_run_item(),
 *	which do not call @lock,
 *	so ->process() always runs under it; not tdispatch_destroy(), which
 *	waits for workers that may wait for the lock.  May sleep.
 * @unlock: releases what @lock took.
 */
struct tdispatch_ops {
	enum tdispatch_result (*process)(struct tdispatch *d, struct tdispatch_batch *b);
	void (*release)(struct tdispatch *d, struct tdispatch_task *t,
			enum tdispatch_outcome outcome);
	void (*lock)(struct tdispatch *d);
	void (*unlock)(struct tdispatch *d);
};

/**
 * struct tdispatch_config - the shape of a dispatcher
 * @name: shown in the kthread's and workqueue's names and in tracepoints;
 *	copied.
 * @max_buffer: most tasks pending at once (not counting those in flight);
 *	when full, the oldest pending task is dropped.  1 to 1048576.
 * @max_batch: most tasks in one batch; 1 is single-item mode.  1 to 4096,
 *	and at most @max_buffer.
 * @max_delay_ns: a batch is cut when it is full or when its oldest
 *	task has waited this long; 0 cuts at once.  At most
 *	%TDISPATCH_MAX_DELAY_NS.
 * @workers: most batches in flight at once, each on its own kworker.
 *	1 to 64.
 * @congestion_delay_ns: hold-off after a %TDISPATCH_RESULT_CONGESTION result;
 *	values above %TDISPATCH_MAX_DELAY_NS are capped.
 * @transient_delay_ns: hold-off after a %TDISPATCH_RESULT_TRANSIENT result;
 *	values above %TDISPATCH_MAX_DELAY_NS are capped.
 * @max_input: most submitted tasks that may wait on one CPU's input list
 *	before the acceptor drains them; submit fails with -ENOBUFS beyond.
 *	1 to 1048576.
 * @max_delayed: most tasks waiting for their not-before time; a delayed
 *	submission beyond fails with -ENOSPC.  0 to 16777216; 0 allows none.
 * @flags: %TDISPATCH_NORMAL_PRIORITY, %TDISPATCH_RATE_BATCHES,
 *	%TDISPATCH_MERGE, any of them or 0.
 * @max_attempts: most times a task is handed to ->process(): one that
 *	comes back from its last attempt with %TDISPATCH_RESULT_CONGESTION or
 *	%TDISPATCH_RESULT_TRANSIENT (its own result or its batch's), or whose batch
 *	is redelivered, ends %TDISPATCH_OUTCOME_EXHAUSTED.  0 to
 *	%TDISPATCH_MAX_ATTEMPTS; 0: no limit, a task is retried until its
 *	deadline.  A task may carry its own limit (tdispatch_submit_with()).
 * @rate: most tasks (batches, with %TDISPATCH_RATE_BATCHES) a second the
 *	acceptor hands to workers, a token bucket
 *	filled as time passes; 0 for no limit.  While it is empty, due tasks
 *	wait in the pending set (still coalescing, still expiring, still
 *	bounded by @max_buffer) and the time due batches wait is counted in
 *	&tdispatch_stats.throttled_ns.  Destroy's drain does not wait for it.
 *	Changed at runtime with tdispatch_set_rate().
 * @burst: the bucket's size, in tasks: most handed out at once after a
 *	quiet spell; 0 for @max_batch; at most 1048576.  With
 *	%TDISPATCH_RATE_BATCHES, @rate and @burst count batches of up to
 *	@max_batch instead (0 for a burst of one batch): @rate 1 and @burst 1
 *	let one batch go a second, as the link watch's passes go.
 *
 * By default the acceptor runs as SCHED_FIFO at the lowest real-time
 * priority (sched_set_fifo_low(), as irq threads and RCU's offload threads
 * do) and batches run on a WQ_HIGHPRI workqueue, so that producers that
 * never sleep cannot hold a batch back; the acceptor's work per wake-up is
 * bounded by what was submitted.
 */
struct tdispatch_config {
	const char *name;
	unsigned int max_buffer;
	unsigned int max_batch;
	u64 max_delay_ns;
	unsigned int workers;
	u64 congestion_delay_ns;
	u64 transient_delay_ns;
	unsigned int max_input;
	unsigned int max_delayed;
	unsigned int flags;
	unsigned int max_attempts;
	unsigned int rate;
	unsigned int burst;
};

/* Most attempts a task may be given: &tdispatch_task.max_attempts is a u16. */
#define TDISPATCH_MAX_ATTEMPTS	65535U

/*
 * Acceptor and workers at normal priority (SCHED_NORMAL, nice 0), as for
 * the dispatchers unprivileged userspace creates.
 */
#define TDISPATCH_NORMAL_PRIORITY	BIT(0)

/* &tdispatch_config.rate and .burst count batches, not tasks. */
#define TDISPATCH_RATE_BATCHES		BIT(1)

/*
 * tdispatch_submit_merge() may replace the payload of the waiting task of
 * its id: the dispatcher keeps a table of those tasks, by id, allocated
 * at create.  Every other submission of a task (not an item, not a
 * periodic run) then takes its id's lock in the table too, to take the
 * id's task out.
 */
#define TDISPATCH_MERGE			BIT(2)

/**
 * struct tdispatch_stats - a consistent snapshot of a dispatcher's counters
 * @accepted: tasks tdispatch_submit() accepted.
 * @rejected: submissions that failed (input full, shutting down, no memory).
 * @queued: accepted tasks still on the per-CPU input lists.
 * @pending: tasks in the pending set, waiting for a batch.
 * @in_flight: tasks in batches that workers hold, and items express runs
 *	have taken and neither batched nor put in line.
 * @done: tasks ended %TDISPATCH_OUTCOME_DONE.
 * @failed: tasks ended %TDISPATCH_OUTCOME_FAILED or %TDISPATCH_OUTCOME_EXHAUSTED.
 * @overridden: tasks ended %TDISPATCH_OUTCOME_OVERRIDDEN.
 * @expired: tasks ended %TDISPATCH_OUTCOME_EXPIRED.
 * @dropped: tasks ended %TDISPATCH_OUTCOME_DROPPED.
 * @cancelled: tasks ended %TDISPATCH_OUTCOME_CANCELLED.
 * @batches: batches handed to ->process().
 * @results: batches by &enum tdispatch_result.
 * @retries: task retries (tasks put back after CONGESTION or TRANSIENT).
 * @holdoffs: times the acceptor held off because of the shaper.
 * @looks: times the acceptor looked at the pending set, each time it was
 *	woken or its own time came.
 * @bad_results: batches whose ->process() returned a value outside
 *	&enum tdispatch_result, a driver bug; each was treated as
 *	%TDISPATCH_RESULT_PERMANENT and is also counted there.
 * @redelivered: batches put back because their holder went away (the
 *	char device's lease expired or its worker closed the file).
 * @wakeups: times a submission woke the acceptor, or, with a max_delay_ns
 *	of 0, queued a worker to drain the input: only the first task on an
 *	empty per-CPU input list does.  With no window and every worker
 *	holding a batch, whose end drains the input, tasks wake no one
 *	until a batch's worth, at most max_input, waits on a CPU, and items
 *	never.  With no window, while the rate
 *	limit holds a due batch back from a free worker, input gathers
 *	instead until the next token: items wake no one (an urgent one
 *	kicks the acceptor, or with &tdispatch_ops.lock queues a worker),
 *	tasks only once a batch's worth, at most max_input, waits on a
 *	CPU.  With a window, input gathers so for max_delay_ns (1 ms at
 *	most) whenever no batch can go.
 * @delayed: tasks waiting for their not-before time.
 * @periodic_runs: runs of periodic tasks submitted; counted in @accepted.
 * @exhausted: of @failed, the tasks that ended %TDISPATCH_OUTCOME_EXHAUSTED.
 * @expedited: delayed tasks tdispatch_expedite() or tdispatch_expedite_key()
 *	let into the pending set before their time.
 * @key_expedites: calls of tdispatch_expedite_key() that let a task in.
 * @throttled_ns: time due batches waited for the rate limit's tokens.
 * @rate: the rate limit now, tasks (or batches) a second; 0 for none.
 * @burst: the rate limit's burst now.
 *
 * At every snapshot: accepted = queued + delayed + pending + in_flight +
 * done + failed + overridden + expired + dropped + cancelled.
 */
struct tdispatch_stats {
	u64 accepted;
	u64 rejected;
	u64 queued;
	u64 pending;
	u64 in_flight;
	u64 done;
	u64 failed;
	u64 overridden;
	u64 expired;
	u64 dropped;
	u64 cancelled;
	u64 batches;
	u64 results[TDISPATCH_NR_RESULTS];
	u64 retries;
	u64 holdoffs;
	u64 looks;
	u64 redelivered;
	u64 bad_results;
	u64 wakeups;
	u64 delayed;
	u64 periodic_runs;
	u64 exhausted;
	u64 expedited;
	u64 key_expedites;
	u64 throttled_ns;
	u64 rate;
	u64 burst;
};

/**
 * struct tdispatch_submit_opts - the optional parts of a submission
 * @deadline: as for tdispatch_submit(); 0 for none.
 * @not_before: as for tdispatch_submit_delayed(); 0 for at once.
 * @max_attempts: this task's own &tdispatch_config.max_attempts, 1 to
 *	%TDISPATCH_MAX_ATTEMPTS; 0 for the dispatcher's.
 * @watch: a delayed task watches @watch_key: tdispatch_expedite_key() of
 *	that key lets it in early.  Ignored for a task due at once.
 * @watch_key: the key, any u64.
 */
struct tdispatch_submit_opts {
	ktime_t deadline;
	ktime_t not_before;
	unsigned int max_attempts;
	bool watch;
	u64 watch_key;
};

/**
 * struct tdispatch_periodic - a supervised periodic task
 * @id: the id of its runs; one registration per id and dispatcher.
 * @payload: what every run carries to ->process(); the dispatcher's
 *	->release() is not called for runs.
 * @period_ns: the base interval, 1 ms to 1 day.  The first run is due at
 *	once.
 * @timeout_ns: a run not ended this long after it was submitted has timed
 *	out; 1 ms to 1 day.
 * @max_backoff: the interval grows to at most @period_ns times this; 1 to
 *	1024.
 * @release: called with @payload once the task is removed and its last run
 *	has ended, in process context; may be NULL.
 *
 * Every interval a run is submitted.  A run that has not ended within
 * @timeout_ns, or whose batch ends with %TDISPATCH_RESULT_CONGESTION or
 * %TDISPATCH_RESULT_TRANSIENT, doubles the interval up to the bound;
 * %TDISPATCH_RESULT_SUCCESS resets it to @period_ns.  The next run falls due one
 * interval after the previous one ended or timed out; a run still going
 * then is not started twice but counted as skipped.  Runs are not
 * retried: the next run is the retry, and a run whose batch is retried
 * ends %TDISPATCH_OUTCOME_FAILED.
 */
struct tdispatch_periodic {
	u64 id;
	void *payload;
	u64 period_ns;
	u64 timeout_ns;
	unsigned int max_backoff;
	void (*release)(struct tdispatch *d, void *payload);
};

/**
 * struct tdispatch_periodic_stats - the counters of a periodic task
 * @runs: runs submitted.
 * @successes: runs that ended with %TDISPATCH_RESULT_SUCCESS in time.
 * @timeouts: runs that had not ended within the timeout.
 * @failures: runs that ended otherwise in time: a batch result other than
 *	success, or no batch at all (overridden, dropped, cancelled).
 * @skipped: due times passed over because a run was still going.
 * @interval_ns: the current interval.
 */
struct tdispatch_periodic_stats {
	u64 runs;
	u64 successes;
	u64 timeouts;
	u64 failures;
	u64 skipped;
	u64 interval_ns;
};

/**
 * struct tdispatch_user_task - a task a user submits to a named dispatcher
 * @id: the id it asks for.
 * @data: its payload bytes, a kernel copy valid during the call.
 * @len: number of bytes, 1 to %TDISPATCH_PAYLOAD_MAX.
 * @deadline: as for tdispatch_submit().
 * @not_before: as for tdispatch_submit_delayed().
 * @max_attempts: as &tdispatch_submit_opts.max_attempts.
 * @watch: as &tdispatch_submit_opts.watch.
 * @watch_key: as &tdispatch_submit_opts.watch_key.
 */
struct tdispatch_user_task {
	u64 id;
	const void *data;
	u32 len;
	ktime_t deadline;
	ktime_t not_before;
	unsigned int max_attempts;
	bool watch;
	u64 watch_key;
};

/**
 * struct tdispatch_publish - who may reach a published dispatcher
 * @uid: its owner.
 * @gid: its group.
 * @mode: permission bits (0 to 0777) for owner, group and others, as a
 *	file's: read permission lets a /dev/tdispatch file attach to it and
 *	read its counters and events; write permission also lets it submit
 *	and cancel.  Checked at attach with the credentials of the file's
 *	opener; there is no override for root other than being the owner.
 * @user_payload: turn a user's task into a payload for ->process(), or
 *	return an ERR_PTR() to refuse it (its errno is the task's status).
 *	Process context; may sleep.  NULL: userspace cannot submit.
 * @user_free: free a payload from @user_payload that tdispatch_submit()
 *	refused.  Required with @user_payload.
 */
struct tdispatch_publish {
	kuid_t uid;
	kgid_t gid;
	umode_t mode;
	void *(*user_payload)(struct tdispatch *d, const struct tdispatch_user_task *ut);
	void (*user_free)(struct tdispatch *d, void *payload);
};

struct tdispatch *tdispatch_create(const struct tdispatch_config *cfg,
				   const struct tdispatch_ops *ops, void *priv);
int tdispatch_submit(struct tdispatch *d, u64 id, void *payload,
		     ktime_t deadline, gfp_t gfp);
int tdispatch_submit_delayed(struct tdispatch *d, u64 id, void *payload,
			     ktime_t not_before, ktime_t deadline, gfp_t gfp);
int tdispatch_submit_with(struct tdispatch *d, u64 id, void *payload,
			  const struct tdispatch_submit_opts *o, gfp_t gfp);
int tdispatch_submit_task(struct tdispatch *d, struct tdispatch_task *t, u64 id,
			  void *payload);
int tdispatch_submit_merge(struct tdispatch *d, u64 id, void *payload, gfp_t gfp,
			   void **old);
int tdispatch_submit_item(struct tdispatch *d, struct tdispatch_item *it);
int tdispatch_submit_item_urgent(struct tdispatch *d, struct tdispatch_item *it);
bool tdispatch_item_make_urgent(struct tdispatch *d, struct tdispatch_item *it);
int tdispatch_batch_set_result(struct tdispatch_batch *b, unsigned int i,
			       enum tdispatch_result res);
int tdispatch_cancel(struct tdispatch *d, u64 id);
int tdispatch_run_now(struct tdispatch *d);
int tdispatch_run_id(struct tdispatch *d, u64 id);
int tdispatch_run_item(struct tdispatch *d, struct tdispatch_item *it);
int tdispatch_expedite(struct tdispatch *d, u64 id);
int tdispatch_expedite_key(struct tdispatch *d, u64 key);
int tdispatch_set_rate(struct tdispatch *d, unsigned int rate, unsigned int burst);
int tdispatch_periodic_add(struct tdispatch *d, const struct tdispatch_periodic *pc);
int tdispatch_periodic_remove(struct tdispatch *d, u64 id);
int tdispatch_periodic_get_stats(struct tdispatch *d, u64 id,
				 struct tdispatch_periodic_stats *st);
void tdispatch_get_stats(struct tdispatch *d, struct tdispatch_stats *st);
void *tdispatch_priv(const struct tdispatch *d);
#if IS_ENABLED(CONFIG_TDISPATCH_USER)
int tdispatch_publish(struct tdispatch *d, const struct tdispatch_publish *pub);
void tdispatch_unpublish(struct tdispatch *d);
#else
/* Without /dev/tdispatch there is nowhere to publish a dispatcher. */
static inline int tdispatch_publish(struct tdispatch *d, const struct tdispatch_publish *pub)
{
	return -EOPNOTSUPP;
}

static inline void tdispatch_unpublish(struct tdispatch *d)
{
}
#endif
int tdispatch_destroy(struct tdispatch *d, enum tdispatch_destroy_mode mode,
		      unsigned long timeout);

#endif /* _LINUX_TDISPATCH_H */
