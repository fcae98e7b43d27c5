/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A file's shared slots (uslots.c): a map the file's mmap() shares (the
 * summary of the bitmap, the bitmap of marked slots, the slots), and the
 * kernel's own count of each slot's writes as it last read them, and the
 * slots' tasks that uslots.c makes (KICK) and reads (for lease.c's TAKE).
 */
#ifndef _TDISPATCH_USLOTS_H
#define _TDISPATCH_USLOTS_H

#include <linux/errno.h>
#include <linux/types.h>

struct vm_area_struct;
struct tdispatch_slot;
struct page;

struct td_uslots {
	void *map;			/* vmap() of ->pages */
	struct page **pages;
	unsigned int nr_pages;
	u64 *summary;
	u64 *bitmap;
	struct tdispatch_slot *slot;
	u32 *seen;
	u32 nr;
	size_t bitmap_off;
	size_t slots_off;
	size_t map_len;
};

#ifdef CONFIG_64BIT
struct td_uslots *td_uslots_new(u32 nr);
void td_uslots_free(struct td_uslots *s);
int td_uslots_mmap(struct td_uslots *s, struct vm_area_struct *vma);
u64 td_uslots_grab(u64 *word);
void td_uslots_mark(u64 *word, u64 bits);
void td_uslots_mark_slot(struct td_uslots *s, u32 i);
u64 td_uslots_id(struct td_uslots *s, u32 i);
u32 td_uslots_peek(struct td_uslots *s, u32 i, u8 *buf, u32 *seq);
bool td_uslots_commit(struct td_uslots *s, u32 i, u32 seq, u32 *writes);
u32 td_uslots_unqueue(struct td_uslots *s, u32 i);
#else
/* No shared slots (SLOTS refuses): their words are changed with 64-bit atomics. */
static inline struct td_uslots *td_uslots_new(u32 nr) { return NULL; }
static inline void td_uslots_free(struct td_uslots *s) { }
static inline int td_uslots_mmap(struct td_uslots *s, struct vm_area_struct *vma)
{
	return -ENXIO;
}

static inline u64 td_uslots_grab(u64 *word) { return 0; }
static inline void td_uslots_mark(u64 *word, u64 bits) { }
static inline void td_uslots_mark_slot(struct td_uslots *s, u32 i) { }
static inline u64 td_uslots_id(struct td_uslots *s, u32 i) { return 0; }
static inline u32 td_uslots_peek(struct td_uslots *s, u32 i, u8 *buf, u32 *seq)
{
	*seq = 0;
	return 0;
}

static inline bool td_uslots_commit(struct td_uslots *s, u32 i, u32 seq, u32 *writes)
{
	*writes = 0;
	return false;
}

static inline u32 td_uslots_unqueue(struct td_uslots *s, u32 i) { return 0; }
#endif

#endif /* _TDISPATCH_USLOTS_H */
