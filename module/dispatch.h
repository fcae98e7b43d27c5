/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The acceptor and the workers (dispatch.c): batches cut, processed,
 * retried and reaped.
 */
#ifndef _TDISPATCH_DISPATCH_H
#define _TDISPATCH_DISPATCH_H

#include <linux/ktime.h>
#include <linux/list.h>
#include <linux/tdispatch.h>
#include <linux/types.h>
#include <linux/workqueue.h>

struct tdispatch;
struct td_vec;

/*
 * What td_end_batch() makes of a batch that td_batch_redeliver() marked,
 * or that td_batch_finish() is given for a lease whose holder went away:
 * back to the head of the line, no hold-off.  Never a value ->process()
 * may return: that one is out of range.
 */
#define TD_RESULT_REDELIVER	TDISPATCH_NR_RESULTS

/*
 * What ->process() of a dispatcher with ->holds_batches (the char
 * device's) returns when it keeps the batch, lent out, for
 * td_batch_finish() to end later: its worker stays busy meanwhile.  Out of
 * range too, and taken as a bad result from any other ->process().
 */
#define TD_RESULT_HELD		(TDISPATCH_NR_RESULTS + 1)

struct td_worker;

int td_acceptor_fn(void *arg);
int td_process_batch(struct tdispatch *d, struct td_worker *w, bool *bad);
void td_express_adopt(struct tdispatch *d, struct td_worker *w);
bool td_end_batch(struct tdispatch *d, struct td_worker *w, int res, bool bad, bool again);
void td_unlock_drained(struct tdispatch *d, struct list_head *reap);
bool td_run_batch(struct tdispatch *d, struct td_worker *w, bool again);
void td_run_batches(struct td_worker *w);
void td_reap(struct tdispatch *d, struct list_head *reap);
void td_throttle_end(struct tdispatch *d, ktime_t now);
void td_batch_redeliver(struct tdispatch_batch *b);
void td_batch_finish(struct tdispatch_batch *b, int res);
unsigned int td_batch_worker(const struct tdispatch_batch *b);
bool td_idle(struct tdispatch *d);
bool td_worker_fill(struct tdispatch *d, struct td_worker *w);

#endif /* _TDISPATCH_DISPATCH_H */
