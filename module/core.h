/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A dispatcher's life (core.c), as the files of /dev/tdispatch use it
 * beside the exported API.
 */
#ifndef _TDISPATCH_CORE_H
#define _TDISPATCH_CORE_H

#include <linux/gfp.h>
#include <linux/tdispatch.h>
#include <linux/types.h>

struct tdispatch *td_create(const struct tdispatch_config *cfg,
			    const struct tdispatch_ops *ops, void *priv, gfp_t gfp);
void td_stop_batches(struct tdispatch *d);

/* How far a tdispatch_expedite_key() has got: see td_expedite_key_chunk(). */
struct td_key_expedite {
	unsigned int limit;	/* tasks delayed when it began */
	int total;		/* let in so far */
};

bool td_expedite_key_chunk(struct tdispatch *d, u64 key, struct td_key_expedite *kr);

#endif /* _TDISPATCH_CORE_H */
