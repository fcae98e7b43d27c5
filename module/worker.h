/* SPDX-License-Identifier: GPL-2.0 */
/* A worker's work (worker.c): an express run, or the pending set's way. */
#ifndef _TDISPATCH_WORKER_H
#define _TDISPATCH_WORKER_H

struct work_struct;

void td_batch_work(struct work_struct *work);

#endif /* _TDISPATCH_WORKER_H */
