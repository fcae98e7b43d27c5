/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * tdispatch: a coalescing work dispatcher, userspace interface.
 *
 * Every ioctl argument begins with a __u32 size field that the caller sets
 * to sizeof() of the struct it was compiled with.  Structs only ever grow
 * at the end; the kernel accepts any size from the first published one up,
 * requires that bytes it does not know about are zero, and reports what it
 * filled in.  The layout is the same for 32- and 64-bit userspace, so no
 * compat ioctl is needed.
 */
#ifndef _UAPI_LINUX_TDISPATCH_H
#define _UAPI_LINUX_TDISPATCH_H

#include <linux/const.h>
#include <linux/ioctl.h>
#include <linux/types.h>

/* Bumped on incompatible changes only; additions are feature bits. */
#define TDISPATCH_ABI_VERSION		1

#define TDISPATCH_DEV_NAME		"tdispatch"
#define TDISPATCH_IOC_MAGIC		0xD7

/**
 * struct tdispatch_version - what this kernel's tdispatch provides
 * @size: in: sizeof(struct tdispatch_version) as the caller knows it, at
 *	least %TDISPATCH_VERSION_SIZE_VER0; out: the number of bytes the
 *	kernel wrote, the smaller of the caller's and the kernel's size.
 * @abi_version: out: %TDISPATCH_ABI_VERSION of the running module.
 * @features: out: bitmap of %TDISPATCH_FEAT_* the module supports; bits
 *	that a caller does not know must be ignored.
 * @module_version: out: the module's release, NUL-terminated, as modinfo
 *	and /sys/module/tdispatch/version show it (the package's version)
 *
 * Argument of %TDISPATCH_IOC_VERSION.
 */
struct tdispatch_version {
	__u32 size;
	__u32 abi_version;
	__u64 features;
	char module_version[16];
};

#define TDISPATCH_VERSION_SIZE_VER0	16
#define TDISPATCH_VERSION_SIZE_VER1	32	/* adds module_version */

/* Optional features; a caller must ignore bits it does not know. */
#define TDISPATCH_FEAT_USER		_BITULL(0)	/* CREATE..STATS, read, poll */
#define TDISPATCH_FEAT_NAMED		_BITULL(1)	/* LIST, ATTACH */
#define TDISPATCH_FEAT_DELAYED		_BITULL(2)	/* not_before_ns, max_delayed */
#define TDISPATCH_FEAT_PERIODIC		_BITULL(3)	/* PERIODIC_ADD, _DEL, _STATS */
/* per-task results, max_attempts, RELEASE, watch keys, rate limits */
#define TDISPATCH_FEAT_LIFECYCLE	_BITULL(4)
#define TDISPATCH_FEAT_MERGE		_BITULL(5)	/* TDISPATCH_UTASK_MERGE */
#define TDISPATCH_FEAT_SLOTS		_BITULL(6)	/* SLOTS, KICK, mmap() */
#define TDISPATCH_FEAT_ALL		(TDISPATCH_FEAT_USER | TDISPATCH_FEAT_NAMED | \
					 TDISPATCH_FEAT_DELAYED | TDISPATCH_FEAT_PERIODIC | \
					 TDISPATCH_FEAT_LIFECYCLE | TDISPATCH_FEAT_MERGE | \
					 TDISPATCH_FEAT_SLOTS)

/* Report the ABI version and feature bitmap.  Errors: EFAULT, EINVAL. */
#define TDISPATCH_IOC_VERSION	_IOWR(TDISPATCH_IOC_MAGIC, 0x00, struct tdispatch_version)

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
 * @max_delay_ns: release a batch once its oldest task waited this long
 * @congestion_delay_ns: hold-off after CONGESTION (capped at 30 s)
 * @transient_delay_ns: hold-off after TRANSIENT (capped at 30 s)
 * @lease_ns: a batch not completed this long after it was taken goes back
 *	to the head of the line, counted as redelivered (1 ms to 1 hour)
 * @event_queue: most queued events with %TDISPATCH_CREATE_EVENTS (1 to
 *	65536); 0 otherwise
 * @pad: must be zero
 * @max_delayed: most tasks waiting for their not-before time (0 to
 *	1048576); a submission beyond gets ENOSPC.  0 (and callers of the
 *	first version of this struct): no delayed tasks.
 * @pad2: must be zero
 * @max_attempts: most times a task is leased (0 to 65535): one whose last
 *	attempt ends CONGESTION or TRANSIENT, or is redelivered, ends
 *	%TDISPATCH_OUTCOME_EXHAUSTED.  0: no limit but the task's deadline.
 *	A task may carry its own (&tdispatch_utask.max_attempts).
 * @rate: most tasks a second handed to workers (a token bucket); 0: no
 *	limit.  Due tasks wait in the pending set while it is empty.
 *	%TDISPATCH_IOC_SET_RATE changes it later.
 * @burst: the bucket's size in tasks (0 to 65536); 0: @max_batch
 * @pad3: must be zero
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
	__u32 pad;
	__u32 max_delayed;
	__u32 pad2;
	__u32 max_attempts;
	__u32 rate;
	__u32 burst;
	__u32 pad3;
};

#define TDISPATCH_CREATE_SIZE_VER0	88
#define TDISPATCH_CREATE_SIZE_VER1	96	/* adds max_delayed */
#define TDISPATCH_CREATE_SIZE_VER2	112	/* adds max_attempts, rate, burst */

/**
 * struct tdispatch_utask - one task to submit
 * @id: the key; a newer task with the same id replaces this one
 * @payload: user pointer to the payload bytes
 * @payload_len: 1 to %TDISPATCH_PAYLOAD_MAX
 * @status: out: 0 if accepted, else a negative errno for this task
 * @deadline_ns: CLOCK_MONOTONIC time after which the task expires; 0: none
 * @not_before_ns: CLOCK_MONOTONIC time before which it does not enter the
 *	pending set (with %TDISPATCH_SUBMIT_RELATIVE: a delay from now); 0:
 *	at once.  Only with &tdispatch_submit.task_size of at least
 *	%TDISPATCH_UTASK_SIZE_VER1.
 * @max_attempts: this task's own &tdispatch_create.max_attempts (1 to
 *	65535), or 0 for the dispatcher's.  This and the fields after it
 *	only with &tdispatch_submit.task_size of at least
 *	%TDISPATCH_UTASK_SIZE_VER2.
 * @flags: one of %TDISPATCH_UTASK_WATCH and %TDISPATCH_UTASK_MERGE, or 0
 * @watch_key: with %TDISPATCH_UTASK_WATCH, a delayed task watches this
 *	key: %TDISPATCH_IOC_RELEASE_KEY of it lets the task in early;
 *	ignored otherwise
 *
 * The vector's elements are &tdispatch_submit.task_size bytes apart.
 *
 * With %TDISPATCH_UTASK_MERGE (&tdispatch_submit.task_size at least
 * %TDISPATCH_UTASK_SIZE_VER2, %TDISPATCH_FEAT_MERGE): if a task of the
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
struct tdispatch_utask {
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

/* struct tdispatch_utask.flags */
#define TDISPATCH_UTASK_WATCH		_BITUL(0)
#define TDISPATCH_UTASK_MERGE		_BITUL(1)	/* see struct tdispatch_utask */

/* The most payload bytes of a task submitted with TDISPATCH_UTASK_MERGE */
#define TDISPATCH_MERGE_PAYLOAD_MAX	64

#define TDISPATCH_UTASK_SIZE_VER0	32
#define TDISPATCH_UTASK_SIZE_VER1	40	/* adds not_before_ns */
#define TDISPATCH_UTASK_SIZE_VER2	56	/* adds max_attempts, flags, watch_key */

/* struct tdispatch_submit.flags */
#define TDISPATCH_SUBMIT_RELATIVE	_BITUL(0)	/* not_before_ns is a delay */

/**
 * struct tdispatch_submit - submit a vector of tasks
 * @size: sizeof(struct tdispatch_submit)
 * @flags: %TDISPATCH_SUBMIT_RELATIVE, or 0
 * @tasks: user pointer to @count struct tdispatch_utask
 * @count: 1 to %TDISPATCH_SUBMIT_MAX
 * @accepted: out: how many were accepted; see each task's @status
 * @task_size: the distance between the vector's elements, at least
 *	%TDISPATCH_UTASK_SIZE_VER0 and at most a page, bytes beyond those the
 *	kernel knows must be zero; 0 means the size of struct
 *	tdispatch_utask that goes with this version of the struct,
 *	%TDISPATCH_UTASK_SIZE_VER2.  Callers of the second version (@size
 *	%TDISPATCH_SUBMIT_SIZE_VER1) have %TDISPATCH_UTASK_SIZE_VER1, those
 *	of the first (%TDISPATCH_SUBMIT_SIZE_VER0) %TDISPATCH_UTASK_SIZE_VER0.
 * @pad: must be zero
 * @pad2: must be zero.  It makes this version of the struct, by which the
 *	kernel knows that the caller's elements are the larger
 *	struct tdispatch_utask.
 */
struct tdispatch_submit {
	__u32 size;
	__u32 flags;
	__u64 tasks;
	__u32 count;
	__u32 accepted;
	__u32 task_size;
	__u32 pad;
	__u64 pad2;
};

#define TDISPATCH_SUBMIT_SIZE_VER0	24
#define TDISPATCH_SUBMIT_SIZE_VER1	32	/* adds task_size */
#define TDISPATCH_SUBMIT_SIZE_VER2	40	/* task_size 0 is the VER2 utask */

/**
 * struct tdispatch_ltask - one task of a taken batch
 * @id: the task's id
 * @attempts: retries so far, at most 65535
 * @payload_len: bytes of payload
 * @payload_off: where its payload starts in &tdispatch_take.buf
 * @submitted_ns: CLOCK_MONOTONIC time it was submitted
 */
struct tdispatch_ltask {
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
 * @tasks: user pointer to @max_tasks struct tdispatch_ltask
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

#define TDISPATCH_TAKE_SIZE_VER0	56

/* Results, as in the kernel's enum tdispatch_result. */
#define TDISPATCH_RESULT_SUCCESS	0
#define TDISPATCH_RESULT_CONGESTION	1
#define TDISPATCH_RESULT_TRANSIENT	2
#define TDISPATCH_RESULT_PERMANENT	3

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

#define TDISPATCH_COMPLETE_SIZE_VER0	24
#define TDISPATCH_COMPLETE_SIZE_VER1	40	/* adds results, nr_results */

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

#define TDISPATCH_RATE_SIZE_VER0	16

/**
 * struct tdispatch_id - the argument of %TDISPATCH_IOC_CANCEL, %TDISPATCH_IOC_RELEASE
 * @size: sizeof(struct tdispatch_id)
 * @flags: must be zero
 * @id: the task id; for %TDISPATCH_IOC_RELEASE_KEY, the watch key
 */
struct tdispatch_id {
	__u32 size;
	__u32 flags;
	__u64 id;
};

#define TDISPATCH_ID_SIZE_VER0		16

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

#define TDISPATCH_QUERY_SIZE_VER0	32

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
 * @released: delayed tasks %TDISPATCH_IOC_RELEASE or
 *	%TDISPATCH_IOC_RELEASE_KEY let in before their time
 * @key_releases: %TDISPATCH_IOC_RELEASE_KEY calls that let a task in
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
	__u64 released;
	__u64 key_releases;
	__u64 throttled_ns;
	__u64 rate;
	__u64 burst;
	__u64 slot_writes;
};

#define TDISPATCH_STATS_SIZE_VER0	144
#define TDISPATCH_STATS_SIZE_VER1	160	/* adds delayed, periodic_runs */
#define TDISPATCH_STATS_SIZE_VER2	208	/* adds exhausted .. burst */
#define TDISPATCH_STATS_SIZE_VER3	216	/* adds slot_writes */

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

#define TDISPATCH_PERIODIC_ADD_SIZE_VER0	48

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

#define TDISPATCH_PERIODIC_STATS_SIZE_VER0	64

/* struct tdispatch_event.type */
#define TDISPATCH_EVENT_OUTCOME		1	/* a task ended */
#define TDISPATCH_EVENT_LOST		2	/* @lost events were dropped here */

/* struct tdispatch_event.outcome, as in the kernel's enum tdispatch_outcome */
#define TDISPATCH_OUTCOME_DONE		0
#define TDISPATCH_OUTCOME_FAILED	1
#define TDISPATCH_OUTCOME_OVERRIDDEN	2
#define TDISPATCH_OUTCOME_EXPIRED	3
#define TDISPATCH_OUTCOME_DROPPED	4
#define TDISPATCH_OUTCOME_CANCELLED	5
#define TDISPATCH_OUTCOME_EXHAUSTED	6	/* also counted as failed */

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

#define TDISPATCH_LIST_SIZE_VER0	24

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

#define TDISPATCH_ATTACH_SIZE_VER0	40

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
 * not counted as accepted tasks; the task KICK made is.  An id written
 * through a slot is best
 * submitted no other way: a newer task of its id from elsewhere replaces
 * the slot's task with the writes it stands for, even those that land
 * while the acceptor replaces it.
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
 * Once a file: the same @nr again gives the same slots (for another process
 * sharing the file to map), another @nr EEXIST; ENXIO without a dispatcher
 * of its own,
 * EINVAL for a bad @nr, flag or padding, ENOMEM at the memory cgroup's
 * limit, EOPNOTSUPP on a 32-bit kernel.  The slots, like everything the
 * file holds, are charged to the memory cgroup of the process that opened
 * the file (as it was at open()), whichever process calls SLOTS.
 * %TDISPATCH_IOC_KICK queues a task for each marked slot, in the order of
 * the bitmap, and returns how many; if the dispatcher refuses one (its
 * input full, for one), that slot and those after it stay marked, and the
 * call fails with the refusal's errno: their writers owe no KICK any more,
 * so the caller kicks again later.  TAKE copies a slot task's payload out
 * of its slot, as it is then.
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

#define TDISPATCH_SLOTS_SIZE_VER0	40

#define TDISPATCH_IOC_CREATE	_IOW(TDISPATCH_IOC_MAGIC, 0x01, struct tdispatch_create)
#define TDISPATCH_IOC_SUBMIT	_IOWR(TDISPATCH_IOC_MAGIC, 0x02, struct tdispatch_submit)
#define TDISPATCH_IOC_TAKE	_IOWR(TDISPATCH_IOC_MAGIC, 0x03, struct tdispatch_take)
#define TDISPATCH_IOC_COMPLETE	_IOW(TDISPATCH_IOC_MAGIC, 0x04, struct tdispatch_complete)
#define TDISPATCH_IOC_CANCEL	_IOW(TDISPATCH_IOC_MAGIC, 0x05, struct tdispatch_id)
#define TDISPATCH_IOC_QUERY	_IOWR(TDISPATCH_IOC_MAGIC, 0x06, struct tdispatch_query)
#define TDISPATCH_IOC_STATS	_IOWR(TDISPATCH_IOC_MAGIC, 0x07, struct tdispatch_stats_user)
#define TDISPATCH_IOC_LIST	_IOWR(TDISPATCH_IOC_MAGIC, 0x08, struct tdispatch_list)
#define TDISPATCH_IOC_ATTACH	_IOW(TDISPATCH_IOC_MAGIC, 0x09, struct tdispatch_attach)
#define TDISPATCH_IOC_PERIODIC_ADD	\
	_IOW(TDISPATCH_IOC_MAGIC, 0x0a, struct tdispatch_periodic_add)
#define TDISPATCH_IOC_PERIODIC_DEL	_IOW(TDISPATCH_IOC_MAGIC, 0x0b, struct tdispatch_id)
#define TDISPATCH_IOC_PERIODIC_STATS	\
	_IOWR(TDISPATCH_IOC_MAGIC, 0x0c, struct tdispatch_periodic_stats_user)
#define TDISPATCH_IOC_RELEASE	_IOW(TDISPATCH_IOC_MAGIC, 0x0d, struct tdispatch_id)
#define TDISPATCH_IOC_SET_RATE	_IOW(TDISPATCH_IOC_MAGIC, 0x0e, struct tdispatch_rate)
/* Returns how many delayed tasks watching the key (the id field) it let in. */
#define TDISPATCH_IOC_RELEASE_KEY	_IOW(TDISPATCH_IOC_MAGIC, 0x0f, struct tdispatch_id)
#define TDISPATCH_IOC_SLOTS	_IOWR(TDISPATCH_IOC_MAGIC, 0x10, struct tdispatch_slots)
/* Returns how many marked slots it queued as tasks: see struct tdispatch_slots. */
#define TDISPATCH_IOC_KICK	_IO(TDISPATCH_IOC_MAGIC, 0x11)

#endif /* _UAPI_LINUX_TDISPATCH_H */
