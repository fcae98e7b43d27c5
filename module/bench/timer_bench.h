/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the timer benchmark's driver (timer_main.c) and its candidates
 * (timer_structs.c) share.
 */
#ifndef TD_TIMER_BENCH_H
#define TD_TIMER_BENCH_H

#include <linux/mutex.h>
#include <linux/types.h>

/* One candidate structure for delayed tasks. */
struct cand {
	const char *name;
	const char *cache_name;
	unsigned int size;
	unsigned int *fire_max;
	struct kmem_cache *cache;
	void (*init)(void *e);		/* once allocated, if needed */
	void (*insert)(void *e, u64 id, u64 due);
	bool (*cancel)(void *e);	/* true if it was waiting */
	void (*sync)(void *e);		/* nothing runs on it afterwards */
	bool (*wait)(void);		/* until bench_target have fired */
};

#define NR_CANDS	4
#define CAND_WHEEL	2	/* tdispatch's wheel, in td_cands[] */
extern struct cand td_cands[NR_CANDS];
extern unsigned int hrtimer_fire_max;

/* The jiffy and the time that wheel expiries are computed from. */
extern unsigned long td_base_j;
extern u64 td_base_ns;

void td_bench_fired(u64 id, u64 due);
bool td_bench_wait(void);
bool td_pop_wait(struct mutex *lock, u64 (*pop)(u64 now));

/* The wheel candidate's own wheel: emptied, and whether it is. */
void td_wh_reset(void);
bool td_wh_empty(void);

#endif /* TD_TIMER_BENCH_H */
