/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * tdispatch: a coalescing work dispatcher, userspace interface.
 *
 * One mechanism versions it, as openat2() and clone3() do: every ioctl
 * argument begins with a __u32 size field that the caller sets to sizeof()
 * of the struct it was compiled with.  Structs only ever grow at the end;
 * the kernel takes any size from the struct's size in version 1.0 up
 * (smaller is EINVAL), requires that bytes it does not know about are zero
 * (E2BIG otherwise, as copy_struct_from_user()), and writes back no more
 * than the caller's size.  The ioctl numbers carry no size, as VFIO's do:
 * the size field is the argument's only version.  %TDISPATCH_IOC_VERSION
 * says which features the running kernel has, one bit a feature: 1.0 has
 * bits 0 to 9, and 10 (shared slots) on 64-bit kernels; calls, flags and
 * fields that come later each add a bit.  The layout is the same for
 * 32- and 64-bit userspace, so no compat ioctl is needed.
 */
#ifndef _UAPI_LINUX_TDISPATCH_H
#define _UAPI_LINUX_TDISPATCH_H

#include <linux/const.h>
#include <linux/ioctl.h>
#include <linux/types.h>

/**
 * enum tdispatch_result - how a batch, or a task in it, was processed: what
 *	a driver's ->process() returns, and what %TDISPATCH_IOC_COMPLETE says
 * @TDISPATCH_RESULT_SUCCESS: every task in the batch is done.
 * @TDISPATCH_RESULT_CONGESTION: the consumer is overloaded; the batch goes
 *	back to the head of the line and the acceptor holds off for the
 *	congestion delay.
 * @TDISPATCH_RESULT_TRANSIENT: a failure that may pass (a timeout, a link
 *	down); the batch goes back to the head of the line and the acceptor
 *	holds off for the transient delay.
 * @TDISPATCH_RESULT_PERMANENT: the batch can never succeed; its tasks end
 *	failed.
 * @TDISPATCH_NR_RESULTS: number of results; not a result, and it grows
 *	when a result is added.
 */
enum tdispatch_result {
	TDISPATCH_RESULT_SUCCESS,
	TDISPATCH_RESULT_CONGESTION,
	TDISPATCH_RESULT_TRANSIENT,
	TDISPATCH_RESULT_PERMANENT,
	TDISPATCH_NR_RESULTS
};

/**
 * enum tdispatch_outcome - how an accepted task ended
 * @TDISPATCH_OUTCOME_DONE: processed in a batch that ended
 *	%TDISPATCH_RESULT_SUCCESS.
 * @TDISPATCH_OUTCOME_FAILED: processed in a batch that ended
 *	%TDISPATCH_RESULT_PERMANENT.
 * @TDISPATCH_OUTCOME_OVERRIDDEN: replaced by a newer task with the same id
 *	(an in-kernel item's submission: merged into the item waiting).
 * @TDISPATCH_OUTCOME_EXPIRED: its deadline passed before a worker took it.
 * @TDISPATCH_OUTCOME_DROPPED: dropped because the pending set was full.
 * @TDISPATCH_OUTCOME_CANCELLED: cancelled, or discarded when its
 *	dispatcher went away.
 * @TDISPATCH_OUTCOME_EXHAUSTED: came back from its last allowed attempt
 *	with %TDISPATCH_RESULT_CONGESTION or %TDISPATCH_RESULT_TRANSIENT, or
 *	was redelivered then; a failure of its own kind, also counted as
 *	failed.
 * @TDISPATCH_NR_OUTCOMES: number of outcomes; not an outcome, and it
 *	grows when an outcome is added.
 *
 * Every task a dispatcher accepted ends in exactly one of these: a
 * driver's ->release() is told which, and an outcome event carries it.
 */
enum tdispatch_outcome {
	TDISPATCH_OUTCOME_DONE,
	TDISPATCH_OUTCOME_FAILED,
	TDISPATCH_OUTCOME_OVERRIDDEN,
	TDISPATCH_OUTCOME_EXPIRED,
	TDISPATCH_OUTCOME_DROPPED,
	TDISPATCH_OUTCOME_CANCELLED,
	TDISPATCH_OUTCOME_EXHAUSTED,
	TDISPATCH_NR_OUTCOMES
};

#define TDISPATCH_DEV_NAME		"tdispatch"
#define TDISPATCH_IOC_MAGIC		0xD7

/**
 * struct tdispatch_version - what this kernel's tdispatch provides
 * @size: in: sizeof(struct tdispatch_version) as the caller knows it;
 *	out: the number of bytes the kernel wrote, the smaller of the
 *	caller's and the kernel's size.
 * @pad: out: zero
 * @features: out: bitmap of %TDISPATCH_FEAT_* the module supports; bits
 *	that a caller does not know must be ignored.
 * @module_version: out: the module's version, NUL-terminated, as modinfo
 *	and /sys/module/tdispatch/version show it (the package's version)
 *
 * Argument of %TDISPATCH_IOC_VERSION.
 */
struct tdispatch_version {
	__u32 size;
	__u32 pad;
	__u64 features;
	char module_version[16];
};

/* Features, one bit each; a caller must ignore bits it does not know. */
#define TDISPATCH_FEAT_USER		_BITULL(0)	/* CREATE..STATS, read, poll */
#define TDISPATCH_FEAT_NAMED		_BITULL(1)	/* LIST, ATTACH */
#define TDISPATCH_FEAT_DELAYED		_BITULL(2)	/* not_before_ns, max_delayed */
#define TDISPATCH_FEAT_PERIODIC		_BITULL(3)	/* PERIODIC_ADD, _DEL, _STATS */
#define TDISPATCH_FEAT_RESULTS		_BITULL(4)	/* per-task results in COMPLETE */
#define TDISPATCH_FEAT_ATTEMPTS		_BITULL(5)	/* max_attempts, OUTCOME_EXHAUSTED */
#define TDISPATCH_FEAT_EXPEDITE		_BITULL(6)	/* EXPEDITE */
#define TDISPATCH_FEAT_WATCH		_BITULL(7)	/* watch keys, EXPEDITE_KEY */
#define TDISPATCH_FEAT_RATE		_BITULL(8)	/* rate, burst, SET_RATE */
#define TDISPATCH_FEAT_MERGE		_BITULL(9)	/* TDISPATCH_TASK_MERGE */
#define TDISPATCH_FEAT_SLOTS		_BITULL(10)	/* SLOTS, KICK, mmap(); 64-bit */

/*
 * Dispatchers owned by a file.  TDISPATCH_IOC_CREATE makes one, owned by
 * the open file description that created it: every process that shares
 * that file (fork, dup, SCM_RIGHTS) may submit to it and work on it, and
 * it is destroyed, its tasks cancelled, when the last reference to the
 * file goes.
 */

#define TDISPATCH_NAME_LEN		24
#define TDISPATCH_PAYLOAD_MAX		4096	/* bytes per task */
#define TDISPATCH_SUBMIT_MAX		1024	/* tasks per submit call */
#define TDISPATCH_LEASE_MAX_NS		(3600ULL * 1000000000ULL)

/* struct tdispatch_create.flags */
#define TDISPATCH_CREATE_EVENTS		_BITUL(0)	/* queue outcome events */

/**
 * struct tdispatch_create - create a dispatcher owned by this file
 * @size: sizeof(struct tdispatch_create)
 * @flags: %TDISPATCH_CREATE_EVENTS, or 0
 * @name: NUL-terminated, shown in tracepoints and the kthread's name
 * @max_buffer: most pending tasks (1 to 65536)
 * @max_batch: most tasks per batch (1 to 1024, at most @max_buffer)
 * @workers: most batches leased at once (1 to 64)
 * @max_input: most undrained submissions per CPU (1 to 65536)
 * @max_delay_ns: cut a batch once its oldest task waited this long (at
 *	most 30 s)
 * @congestion_delay_ns: hold-off after CONGESTION (capped at 30 s)
 * @transient_delay_ns: hold-off after TRANSIENT (capped at 30 s)
 * @lease_ns: a batch not completed this long after it was taken goes back
 *	to the head of the line, counted as redelivered (1 ms to 1 hour)
 * @event_queue: most queued events with %TDISPATCH_CREATE_EVENTS (1 to
 *	65536); 0 otherwise
 * @max_delayed: most tasks waiting for their not-before time (0 to
 *	1048576); a submission beyond gets ENOSPC.  0: no delayed tasks.
 * @max_attempts: most times a task is leased (0 to 65535): one whose last
 *	attempt ends CONGESTION or TRANSIENT, or is redelivered, ends
 *	%TDISPATCH_OUTCOME_EXHAUSTED.  0: no limit but the task's deadline.
 *	A task may carry its own (&tdispatch_submit_task.max_attempts).
 * @rate: most tasks a second handed to workers; 0: no limit.  Up to @burst
 *	tasks may go at once, and due tasks wait in the pending set until
 *	the limit lets them go.  %TDISPATCH_IOC_SET_RATE changes it later.
 * @burst: the most tasks the limit lets go at once (0 to 65536); 0:
 *	@max_batch
 * @pad: must be zero
 */
struct tdispatch_create {
	__u32 size;
	__u32 flags;
	char name[TDISPATCH_NAME_LEN];
	__u32 max_buffer;
	__u32 max_batch;
	__u32 workers;
	__u32 max_input;
	__u64 max_delay_ns;
	__u64 congestion_delay_ns;
	__u64 transient_delay_ns;
	__u64 lease_ns;
	__u32 event_queue;
	__u32 max_delayed;
	__u32 max_attempts;
	__u32 rate;
	__u32 burst;
	__u32 pad;
};

/**
 * struct tdispatch_submit_task - one task to submit
 * @id: the key; a newer task with the same id replaces this one
 * @payload: user pointer to the payload bytes
 * @payload_len: 1 to %TDISPATCH_PAYLOAD_MAX
 * @status: out: 0 if accepted, else a negative errno for this task
 * @deadline_ns: CLOCK_MONOTONIC time after which the task expires; 0: none
 * @not_before_ns: CLOCK_MONOTONIC time before which it does not enter the
 *	pending set (with %TDISPATCH_SUBMIT_RELATIVE: a delay from now); 0:
 *	at once.
 * @max_attempts: this task's own &tdispatch_create.max_attempts (1 to
 *	65535), or 0 for the dispatcher's.
 * @flags: one of %TDISPATCH_TASK_WATCH and %TDISPATCH_TASK_MERGE, or 0
 * @watch_key: with %TDISPATCH_TASK_WATCH, a delayed task watches this
 *	key: %TDISPATCH_IOC_EXPEDITE_KEY of it lets the task in early;
 *	ignored otherwise
 *
 * The vector's elements are &tdispatch_submit.task_size bytes apart.
 *
 * With %TDISPATCH_TASK_MERGE (%TDISPATCH_FEAT_MERGE): if a task of the
 * same id that an earlier merge submitted still waits, and no TAKE has
 * copied its payload yet, this payload and its length replace that
 * task's where it waits.  Nothing is allocated or queued; the submission
 * counts as accepted and overridden at once, and has no outcome event of
 * its own: the task it merged into keeps its submitted time and carries
 * the newest payload to its one outcome.  Otherwise the task is submitted
 * as usual, and later merges of its id replace its payload.  Only on a
 * file's own dispatcher, with a payload of at most
 * %TDISPATCH_MERGE_PAYLOAD_MAX bytes and no @deadline_ns, @not_before_ns
 * or @max_attempts (EINVAL).
 */
struct tdispatch_submit_task {
	__u64 id;
	__u64 payload;
	__u32 payload_len;
	__s32 status;
	__u64 deadline_ns;
	__u64 not_before_ns;
	__u32 max_attempts;
	__u32 flags;
	__u64 watch_key;
};

/* struct tdispatch_submit_task.flags */
#define TDISPATCH_TASK_WATCH		_BITUL(0)
#define TDISPATCH_TASK_MERGE		_BITUL(1)	/* see struct tdispatch_submit_task */

/* The most payload bytes of a task submitted with TDISPATCH_TASK_MERGE */
#define TDISPATCH_MERGE_PAYLOAD_MAX	64

/* struct tdispatch_submit.flags */
#define TDISPATCH_SUBMIT_RELATIVE	_BITUL(0)	/* not_before_ns is a delay */

/**
 * struct tdispatch_submit - submit a vector of tasks
 * @size: sizeof(struct tdispatch_submit)
 * @flags: %TDISPATCH_SUBMIT_RELATIVE, or 0
 * @tasks: user pointer to @count struct tdispatch_submit_task, @task_size
 *	bytes apart
 * @count: 1 to %TDISPATCH_SUBMIT_MAX
 * @accepted: out: how many were accepted; see each task's @status
 * @task_size: sizeof(struct tdispatch_submit_task) as the caller knows
 *	it: the distance between the vector's elements, which grow as the
 *	ioctl arguments do (from their 1.0 size to a page; bytes beyond
 *	those the kernel knows must be zero)
 * @pad: must be zero
 */
struct tdispatch_submit {
	__u32 size;
	__u32 flags;
	__u64 tasks;
	__u32 count;
	__u32 accepted;
	__u32 task_size;
	__u32 pad;
};

/**
 * struct tdispatch_lease_task - one task of a taken batch
 * @id: the task's id
 * @attempts: retries so far, at most 65535
 * @payload_len: bytes of payload
 * @payload_off: where its payload starts in &tdispatch_take.buf
 * @submitted_ns: CLOCK_MONOTONIC time it was submitted
 */
struct tdispatch_lease_task {
	__u64 id;
	__u32 attempts;
	__u32 payload_len;
	__u64 payload_off;
	__u64 submitted_ns;
};

/* struct tdispatch_take.flags */
#define TDISPATCH_TAKE_NONBLOCK		_BITUL(0)

/**
 * struct tdispatch_take - lease the next batch
 * @size: sizeof(struct tdispatch_take)
 * @flags: %TDISPATCH_TAKE_NONBLOCK (or O_NONBLOCK on the file): fail with
 *	EAGAIN rather than wait
 * @timeout_ns: most time to wait for a batch; 0: no limit
 * @tasks: user pointer to @max_tasks struct tdispatch_lease_task
 * @buf: user pointer to @buf_len bytes for the payloads
 * @max_tasks: room in @tasks; at least the dispatcher's max_batch
 * @buf_len: room in @buf; at least max_batch * %TDISPATCH_PAYLOAD_MAX is
 *	always enough
 * @batch: out: the lease, for %TDISPATCH_IOC_COMPLETE
 * @nr: out: tasks in the batch
 * @pad: must be zero
 */
struct tdispatch_take {
	__u32 size;
	__u32 flags;
	__u64 timeout_ns;
	__u64 tasks;
	__u64 buf;
	__u32 max_tasks;
	__u32 buf_len;
	__u64 batch;
	__u32 nr;
	__u32 pad;
};

/**
 * struct tdispatch_task_result - one task's own result in a COMPLETE
 * @id: the task's id, one of the leased batch's
 * @result: %TDISPATCH_RESULT_*
 * @pad: must be zero
 */
struct tdispatch_task_result {
	__u64 id;
	__u32 result;
	__u32 pad;
};

/**
 * struct tdispatch_complete - end a leased batch
 * @size: sizeof(struct tdispatch_complete)
 * @flags: must be zero
 * @batch: the lease &tdispatch_take.batch returned
 * @result: %TDISPATCH_RESULT_*, for every task @results does not name
 * @pad: must be zero
 * @results: user pointer to @nr_results struct tdispatch_task_result: the
 *	tasks that ended otherwise than @result.  Only the tasks that end
 *	CONGESTION or TRANSIENT go back to the head of the line; SUCCESS ones
 *	are done and PERMANENT ones failed at once.  An id not in the batch,
 *	an id named twice or a bad result is EINVAL, and the lease stays.
 * @nr_results: 0 to the batch's number of tasks
 * @pad2: must be zero
 */
struct tdispatch_complete {
	__u32 size;
	__u32 flags;
	__u64 batch;
	__u32 result;
	__u32 pad;
	__u64 results;
	__u32 nr_results;
	__u32 pad2;
};

/**
 * struct tdispatch_rate - the argument of %TDISPATCH_IOC_SET_RATE
 * @size: sizeof(struct tdispatch_rate)
 * @flags: must be zero
 * @rate: as &tdispatch_create.rate
 * @burst: as &tdispatch_create.burst
 */
struct tdispatch_rate {
	__u32 size;
	__u32 flags;
	__u32 rate;
	__u32 burst;
};

/**
 * struct tdispatch_id - the argument of %TDISPATCH_IOC_CANCEL,
 *	%TDISPATCH_IOC_EXPEDITE, %TDISPATCH_IOC_EXPEDITE_KEY and
 *	%TDISPATCH_IOC_PERIODIC_DEL
 * @size: sizeof(struct tdispatch_id)
 * @flags: must be zero
 * @id: the task id; for %TDISPATCH_IOC_EXPEDITE_KEY, the watch key
 */
struct tdispatch_id {
	__u32 size;
	__u32 flags;
	__u64 id;
};

/* struct tdispatch_query.state */
#define TDISPATCH_STATE_ABSENT		0	/* not pending, not in flight */
#define TDISPATCH_STATE_PENDING		1	/* waiting for a batch */
#define TDISPATCH_STATE_IN_FLIGHT	2	/* in a batch being worked on */
#define TDISPATCH_STATE_DELAYED		3	/* waiting for its not-before time */

/**
 * struct tdispatch_query - where the task of an id is
 * @size: sizeof(struct tdispatch_query)
 * @flags: must be zero
 * @id: the task id
 * @state: out: %TDISPATCH_STATE_*: in flight, else pending, else delayed
 * @attempts: out: retries so far of the pending or in-flight task (at
 *	most 65535)
 * @waiting: out: 1 if a newer task of @id waits behind the in-flight one
 * @delayed: in: must be zero; out: 1 if a task of @id waits for its
 *	not-before time (whatever @state says)
 */
struct tdispatch_query {
	__u32 size;
	__u32 flags;
	__u64 id;
	__u32 state;
	__u32 attempts;
	__u32 waiting;
	__u32 delayed;
};

/**
 * struct tdispatch_stats_user - the counters of this file's dispatcher
 * @size: sizeof(struct tdispatch_stats_user)
 * @flags: must be zero
 * @accepted: tasks accepted
 * @rejected: tasks refused at submission (full, no memory, bad payload)
 * @queued: accepted, not yet drained into the pending set
 * @pending: waiting for a batch
 * @in_flight: in batches waiting to be taken or leased
 * @done: ended done (SUCCESS)
 * @failed: ended failed (PERMANENT), or ran out of attempts (see @exhausted)
 * @overridden: replaced by a newer task with the same id
 * @expired: past their deadline before a worker took them
 * @dropped: dropped because the pending set was full
 * @cancelled: cancelled, or discarded when the dispatcher went away
 * @batches: batches handed out
 * @retries: tasks put back after CONGESTION, TRANSIENT or a redelivery
 * @holdoffs: times the shaper held a due batch back
 * @redelivered: batches whose lease expired or whose holder closed the file
 * @rejected_calls: calls on this file that failed with an error
 * @events_lost: outcome events dropped because the event queue was full
 * @delayed: waiting for their not-before time
 * @periodic_runs: runs of periodic tasks submitted (counted in @accepted)
 * @exhausted: of @failed, the tasks that ran out of attempts
 * @expedited: delayed tasks %TDISPATCH_IOC_EXPEDITE or
 *	%TDISPATCH_IOC_EXPEDITE_KEY let in before their time
 * @key_expedites: %TDISPATCH_IOC_EXPEDITE_KEY calls that let a task in
 * @throttled_ns: time due batches waited for the rate limit
 * @rate: the rate limit now (tasks a second; 0: none)
 * @burst: the rate limit's burst now
 * @slot_writes: writes to this file's shared slots, as the slots' @seq
 *	counts tell (the writer's word, not checked): those each TAKE that
 *	read a slot, or each slot task that ended unread, stood for.  Not in
 *	@accepted or @overridden, which count the slots' tasks (made by
 *	%TDISPATCH_IOC_KICK, or by the kernel for a write during a TAKE) as
 *	they count every other task.
 *
 * At every snapshot: accepted = queued + delayed + pending + in_flight +
 * done + failed + overridden + expired + dropped + cancelled.
 */
struct tdispatch_stats_user {
	__u32 size;
	__u32 flags;
	__u64 accepted;
	__u64 rejected;
	__u64 queued;
	__u64 pending;
	__u64 in_flight;
	__u64 done;
	__u64 failed;
	__u64 overridden;
	__u64 expired;
	__u64 dropped;
	__u64 cancelled;
	__u64 batches;
	__u64 retries;
	__u64 holdoffs;
	__u64 redelivered;
	__u64 rejected_calls;
	__u64 events_lost;
	__u64 delayed;
	__u64 periodic_runs;
	__u64 exhausted;
	__u64 expedited;
	__u64 key_expedites;
	__u64 throttled_ns;
	__u64 rate;
	__u64 burst;
	__u64 slot_writes;
};

/*
 * Supervised periodic tasks of a dispatcher owned by this file: every
 * interval a run (a task with the registration's id and payload) is
 * submitted.  A run that has not ended within timeout_ns, or that ends
 * with CONGESTION or TRANSIENT, doubles the interval, up to period_ns *
 * max_backoff; a SUCCESS resets it to period_ns.  The next run falls due
 * one interval after the previous ended or timed out; a run still going
 * then is not started twice, that is counted as skipped.  Runs are not
 * retried: the next run is the retry.
 */

/**
 * struct tdispatch_periodic_add - register a periodic task
 * @size: sizeof(struct tdispatch_periodic_add)
 * @flags: must be zero
 * @id: the task id of its runs; one registration per id
 * @period_ns: the base interval, 1 ms to 1 day; the first run is due at once
 * @timeout_ns: a run not ended this long after it was submitted has timed
 *	out (1 ms to 1 day)
 * @max_backoff: the interval grows to at most @period_ns times this (1 to
 *	1024)
 * @payload_len: 1 to %TDISPATCH_PAYLOAD_MAX
 * @payload: user pointer to the payload every run carries
 */
struct tdispatch_periodic_add {
	__u32 size;
	__u32 flags;
	__u64 id;
	__u64 period_ns;
	__u64 timeout_ns;
	__u32 max_backoff;
	__u32 payload_len;
	__u64 payload;
};

/**
 * struct tdispatch_periodic_stats_user - the counters of one periodic task
 * @size: sizeof(struct tdispatch_periodic_stats_user)
 * @flags: must be zero
 * @id: in: the registration's id
 * @runs: out: runs submitted
 * @successes: out: runs that ended with SUCCESS
 * @timeouts: out: runs that had not ended within the timeout
 * @failures: out: runs that ended otherwise (CONGESTION, TRANSIENT,
 *	PERMANENT, or without being processed)
 * @skipped: out: due times passed over because a run was still going
 * @interval_ns: out: the current interval
 */
struct tdispatch_periodic_stats_user {
	__u32 size;
	__u32 flags;
	__u64 id;
	__u64 runs;
	__u64 successes;
	__u64 timeouts;
	__u64 failures;
	__u64 skipped;
	__u64 interval_ns;
};

/* struct tdispatch_event.type */
#define TDISPATCH_EVENT_OUTCOME		1	/* a task ended */
#define TDISPATCH_EVENT_LOST		2	/* @lost events were dropped here */

/**
 * struct tdispatch_event - one record read() returns
 * @seq: sequence number, from 1, counting lost events too
 * @type: %TDISPATCH_EVENT_OUTCOME or %TDISPATCH_EVENT_LOST
 * @outcome: %TDISPATCH_OUTCOME_*
 * @id: the task's id
 * @latency_ns: from submission to outcome
 * @attempts: retries the task had
 * @pad: zero
 * @lost: for %TDISPATCH_EVENT_LOST, how many events were dropped
 */
struct tdispatch_event {
	__u64 seq;
	__u32 type;
	__u32 outcome;
	__u64 id;
	__u64 latency_ns;
	__u32 attempts;
	__u32 pad;
	__u64 lost;
};

/*
 * Named dispatchers: those a driver created and published under a name.
 * %TDISPATCH_IOC_LIST shows them; %TDISPATCH_IOC_ATTACH connects this file
 * to one, checked against the credentials of the file's opener and the
 * owner, group and mode the driver published: read permission to attach,
 * write permission to submit and cancel.  An attached file can then use
 * SUBMIT (with %TDISPATCH_ATTACH_SUBMIT), CANCEL (likewise), QUERY, STATS,
 * read() and poll(); the driver's own workers process the batches.  When
 * the driver withdraws the dispatcher, calls on the file fail with ENODEV.
 */

/* struct tdispatch_entry.flags */
#define TDISPATCH_ENTRY_SUBMIT		_BITUL(0)	/* the driver takes user tasks */
#define TDISPATCH_ENTRY_MAY_READ	_BITUL(1)	/* this file's opener may attach */
#define TDISPATCH_ENTRY_MAY_WRITE	_BITUL(2)	/* ... and submit, if SUBMIT */

/**
 * struct tdispatch_entry - one named dispatcher, as %TDISPATCH_IOC_LIST
 *	shows it
 * @name: its name, NUL-terminated
 * @uid: its owner, in the caller's user namespace
 * @gid: its group, in the caller's user namespace
 * @mode: permission bits, as a file's: read to attach, write to submit
 * @flags: %TDISPATCH_ENTRY_*
 */
struct tdispatch_entry {
	char name[TDISPATCH_NAME_LEN];
	__u32 uid;
	__u32 gid;
	__u32 mode;
	__u32 flags;
};

/**
 * struct tdispatch_list - list the named dispatchers
 * @size: sizeof(struct tdispatch_list)
 * @flags: must be zero
 * @entries: user pointer to @max_entries struct tdispatch_entry
 * @max_entries: room in @entries; 0 to only count
 * @count: out: how many there are; entries beyond @max_entries are not
 *	written
 */
struct tdispatch_list {
	__u32 size;
	__u32 flags;
	__u64 entries;
	__u32 max_entries;
	__u32 count;
};

/* struct tdispatch_attach.flags */
#define TDISPATCH_ATTACH_SUBMIT		_BITUL(0)	/* needs write permission */
#define TDISPATCH_ATTACH_EVENTS		_BITUL(1)	/* queue outcome events */

/**
 * struct tdispatch_attach - attach this file to a named dispatcher
 * @size: sizeof(struct tdispatch_attach)
 * @flags: %TDISPATCH_ATTACH_*
 * @name: NUL-terminated name, as %TDISPATCH_IOC_LIST shows it
 * @event_queue: most queued events with %TDISPATCH_ATTACH_EVENTS (1 to
 *	65536); 0 otherwise
 * @pad: must be zero
 */
struct tdispatch_attach {
	__u32 size;
	__u32 flags;
	char name[TDISPATCH_NAME_LEN];
	__u32 event_queue;
	__u32 pad;
};

/*
 * Shared slots: tasks written into memory the file shares with the kernel,
 * with no system call per task.  TDISPATCH_IOC_SLOTS sets them up once on
 * a file's own dispatcher; mmap() of the file at offset 0 maps them.
 */

/* The most payload bytes of a slot */
#define TDISPATCH_SLOT_PAYLOAD_MAX	40

/* The fewest and most slots, and what their number is a multiple of */
#define TDISPATCH_SLOTS_MIN		64
#define TDISPATCH_SLOTS_MAX		65536

/**
 * struct tdispatch_slot - one task's place in the shared slots
 * @id: the task id, read when %TDISPATCH_IOC_KICK queues the slot; a slot
 *	keeps its id while it is queued
 * @seq: a sequence count of the slot's writes: odd while one is under
 *	way, and 2 higher after each.  The kernel reads @len and @payload
 *	while @seq is even and the same before and after; after a few tries
 *	it hands the task out with no payload (length 0), as the write under
 *	way then queues a task of its own.  Writers of one slot exclude each
 *	other by moving @seq from even to odd with a compare-and-swap.
 * @queued: 1 while a task of the slot waits for %TDISPATCH_IOC_TAKE to read
 *	it.  A writer sets it with an atomic exchange (at least a release,
 *	after its store of @seq) after its write; if it was 0, the writer
 *	marks the slot (see struct tdispatch_slots) and owes a
 *	%TDISPATCH_IOC_KICK.  The kernel clears it when a TAKE that copied the
 *	slot out succeeds, and then looks at @seq again: a write after the
 *	copy that found @queued still 1 gets a task from the kernel itself
 *	(if the dispatcher refuses it, the kernel marks the slot and KICKs
 *	later on its own).  None is lost, and a TAKE that fails (ENOSPC,
 *	EFAULT) reads nothing.  A writer preempted between its @seq and its
 *	exchange for the whole of a TAKE can have its payload handed out
 *	twice.
 * @len: bytes of @payload, at most %TDISPATCH_SLOT_PAYLOAD_MAX (more is
 *	read as that many)
 * @pad: unused, left as the writer leaves it
 * @payload: the task's payload
 *
 * Writes to a slot while its task waits replace the payload where it is:
 * nothing is allocated, queued or woken.  The kernel counts them by @seq
 * when a TAKE reads the slot, or when a task of the slot ends unread
 * (cancelled, overridden, expired, dropped), in the file's @slot_writes
 * (struct tdispatch_stats_user): @seq is the writer's word, so they are
 * not counted as accepted tasks; the task KICK made is.  A task that ends
 * unread has unqueued its slot before its outcome event can be read (its
 * outcome is counted in the stats a little earlier).  An id written
 * through a slot is best submitted no other way: a newer task of its id
 * from elsewhere replaces the slot's task with the writes it stands for,
 * even those that land while the acceptor replaces it.
 */
struct tdispatch_slot {
	__u64 id;
	__u32 seq;
	__u32 queued;
	__u32 len;
	__u32 pad;
	__u8 payload[TDISPATCH_SLOT_PAYLOAD_MAX];
};

/**
 * struct tdispatch_slots - the argument of %TDISPATCH_IOC_SLOTS
 * @size: sizeof(struct tdispatch_slots)
 * @flags: must be zero
 * @nr: the number of slots: a multiple of %TDISPATCH_SLOTS_MIN, at most
 *	%TDISPATCH_SLOTS_MAX
 * @pad: must be zero
 * @map_len: out: the bytes to mmap() at offset 0
 * @bitmap_off: out: where in the mapping the bitmap of marked slots starts:
 *	@nr bits in __u64 words, slot i bit i % 64 of word i / 64.  The
 *	mapping starts with its summary, a bit for each word of the bitmap
 *	(word w is bit w % 64 of summary word w / 64).
 * @slots_off: out: where in the mapping the @nr struct tdispatch_slot
 *	start
 *
 * A writer that finds its slot's @queued was 0 marks the slot's bit with
 * an atomic OR and, if that word had no bit set before, the word's bit in
 * the summary, also with an atomic OR; %TDISPATCH_IOC_KICK clears each
 * summary word before the words it names.
 *
 * Once a file: the same @nr again gives the same slots (for another
 * process sharing the file to map), another @nr EEXIST; ENXIO without a
 * dispatcher, EOPNOTSUPP on an attached one, EINVAL for a bad @nr, flag or
 * padding, ENOMEM at the memory cgroup's limit, EOPNOTSUPP on a 32-bit
 * kernel.  The slots, like everything the file holds, are charged to the
 * memory cgroup of the process that opened the file (as it was at open()),
 * whichever process calls SLOTS.  %TDISPATCH_IOC_KICK queues a task for
 * each marked slot, in the order of the bitmap, and returns how many; if
 * the dispatcher refuses one (its input full, for one), that slot and
 * those after it stay marked, and the call fails with the refusal's errno:
 * their writers owe no KICK any more, so the caller kicks again
 * later.  TAKE copies a slot task's payload out of its slot, as it is then.
 */
struct tdispatch_slots {
	__u32 size;
	__u32 flags;
	__u32 nr;
	__u32 pad;
	__u64 map_len;
	__u64 bitmap_off;
	__u64 slots_off;
};

/*
 * The calls.  Each takes a pointer to its struct (KICK none) and returns 0
 * or, where said, a count; on failure -1 with errno.  Besides the errors
 * listed with each, every call with an argument fails with EFAULT (the
 * argument, or memory it points to, is not the caller's), EINVAL (a size
 * below the struct's 1.0 size, an unknown flag, padding not zero, a value
 * out of range) and E2BIG (a size above a page, or bytes beyond the
 * kernel's struct that are not zero).  "Own" is a dispatcher this file
 * created, "attached" a named one it attached to; a call that needs
 * either fails with ENXIO on a file with neither, and one on an attached
 * dispatcher its driver withdrew with ENODEV.  An unknown number is
 * ENOTTY.  Documentation/tdispatch.rst has every case.
 */

/* struct tdispatch_version; any file.  No other error. */
#define TDISPATCH_IOC_VERSION		_IO(TDISPATCH_IOC_MAGIC, 0x00)
/*
 * struct tdispatch_create; a file with neither.  EEXIST: it has one;
 * EMFILE, ENFILE, EBUSY: a limit on dispatchers or event readers; ENOMEM;
 * EINTR: a fatal signal while the acceptor starts.
 */
#define TDISPATCH_IOC_CREATE		_IO(TDISPATCH_IOC_MAGIC, 0x01)
/*
 * struct tdispatch_submit; own, or attached with %TDISPATCH_ATTACH_SUBMIT
 * (EBADF without).  Each task's errno is in its status: ENOSPC (bytes held,
 * max_delayed), ENOBUFS (this CPU's input full), ENOMEM, EFAULT, EINVAL.
 */
#define TDISPATCH_IOC_SUBMIT		_IO(TDISPATCH_IOC_MAGIC, 0x02)
/*
 * struct tdispatch_take; own (EOPNOTSUPP attached).  EAGAIN: none ready
 * and non-blocking; ETIMEDOUT; EINTR; ENOSPC: the batch does not fit.
 */
#define TDISPATCH_IOC_TAKE		_IO(TDISPATCH_IOC_MAGIC, 0x03)
/*
 * struct tdispatch_complete; own (EOPNOTSUPP attached).  ENOENT: no such
 * lease (never taken, completed, redelivered); ENOMEM.
 */
#define TDISPATCH_IOC_COMPLETE		_IO(TDISPATCH_IOC_MAGIC, 0x04)
/*
 * struct tdispatch_id; own, or attached with %TDISPATCH_ATTACH_SUBMIT
 * (EBADF without).  ENOENT: no task of the id waits; EBUSY: only in flight.
 */
#define TDISPATCH_IOC_CANCEL		_IO(TDISPATCH_IOC_MAGIC, 0x05)
/*
 * struct tdispatch_query; own or attached.  An unknown id is ABSENT, and
 * so is the id of a driver's item (an item is found by its address only).
 */
#define TDISPATCH_IOC_QUERY		_IO(TDISPATCH_IOC_MAGIC, 0x06)
/* struct tdispatch_stats_user; own or attached. */
#define TDISPATCH_IOC_STATS		_IO(TDISPATCH_IOC_MAGIC, 0x07)
/* struct tdispatch_list; any file.  Returns 0; ENOMEM. */
#define TDISPATCH_IOC_LIST		_IO(TDISPATCH_IOC_MAGIC, 0x08)
/*
 * struct tdispatch_attach; a file with neither.  EEXIST: it has one;
 * ENOENT: no such name; EACCES: the mode; EOPNOTSUPP: the driver takes no
 * tasks from users; EMFILE, EBUSY: a limit on event readers; ENOMEM.
 */
#define TDISPATCH_IOC_ATTACH		_IO(TDISPATCH_IOC_MAGIC, 0x09)
/*
 * struct tdispatch_periodic_add; own (EOPNOTSUPP attached).  EEXIST: the
 * id is registered; ENOSPC: 1024 registrations, or the bytes held; ENOMEM.
 */
#define TDISPATCH_IOC_PERIODIC_ADD	_IO(TDISPATCH_IOC_MAGIC, 0x0a)
/* struct tdispatch_id; own (EOPNOTSUPP attached).  ENOENT: not registered. */
#define TDISPATCH_IOC_PERIODIC_DEL	_IO(TDISPATCH_IOC_MAGIC, 0x0b)
/*
 * struct tdispatch_periodic_stats_user; own (EOPNOTSUPP attached).
 * ENOENT: not registered.
 */
#define TDISPATCH_IOC_PERIODIC_STATS	_IO(TDISPATCH_IOC_MAGIC, 0x0c)
/*
 * struct tdispatch_id; own, or attached with %TDISPATCH_ATTACH_SUBMIT
 * (EBADF without).  ENOENT: no task of the id is delayed.
 */
#define TDISPATCH_IOC_EXPEDITE		_IO(TDISPATCH_IOC_MAGIC, 0x0d)
/* struct tdispatch_rate; own (EOPNOTSUPP attached: the driver's). */
#define TDISPATCH_IOC_SET_RATE		_IO(TDISPATCH_IOC_MAGIC, 0x0e)
/*
 * struct tdispatch_id, its id the watch key; own, or attached with
 * %TDISPATCH_ATTACH_SUBMIT (EBADF without).  Returns how many delayed
 * tasks it let in (fewer after a fatal signal); ENOENT: none watches it.
 */
#define TDISPATCH_IOC_EXPEDITE_KEY	_IO(TDISPATCH_IOC_MAGIC, 0x0f)
/*
 * struct tdispatch_slots; own (EOPNOTSUPP attached, and on a 32-bit
 * kernel).  EEXIST: set up with another nr; ENOMEM.
 */
#define TDISPATCH_IOC_SLOTS		_IO(TDISPATCH_IOC_MAGIC, 0x10)
/*
 * No argument; own (EOPNOTSUPP attached).  Returns how many marked slots
 * it queued as tasks: see struct tdispatch_slots.  ENXIO: no slots; a
 * refused task's errno (ENOBUFS, ENOSPC, ENOMEM); EINTR: a fatal signal.
 */
#define TDISPATCH_IOC_KICK		_IO(TDISPATCH_IOC_MAGIC, 0x11)

#endif /* _UAPI_LINUX_TDISPATCH_H */
