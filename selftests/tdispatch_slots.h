/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A writer of shared slots, spelt out as the UAPI header describes it, so
 * that the tests hold the kernel to the header, not to a library.  After
 * tdispatch_helpers.h.
 */
#ifndef TDISPATCH_SLOTS_H
#define TDISPATCH_SLOTS_H

#include <string.h>
#include <sys/mman.h>

struct td_map {
	struct tdispatch_slots a;
	void *map;
	__u64 *summary;
	__u64 *bitmap;
	struct tdispatch_slot *slot;
};

/* SLOTS: 0 or -errno. */
static int td_slots(int fd, struct tdispatch_slots *a, __u32 nr)
{
	*a = (struct tdispatch_slots) { .size = sizeof(*a), .nr = nr };
	return ioctl(fd, TDISPATCH_IOC_SLOTS, a) ? -errno : 0;
}

static void td_map(struct __test_metadata *_metadata, int fd, struct td_map *m, __u32 nr)
{
	int ret = td_slots(fd, &m->a, nr);

	ASSERT_EQ(0, ret) TH_LOG("slots: %s", strerror(-ret));
	m->map = mmap(NULL, m->a.map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, m->map) TH_LOG("mmap: %s", strerror(errno));
	m->summary = m->map;
	m->bitmap = (__u64 *)((char *)m->map + m->a.bitmap_off);
	m->slot = (struct tdispatch_slot *)((char *)m->map + m->a.slots_off);
}

/* As the UAPI header says: 1 if a KICK is owed. */
static int td_write(struct td_map *m, __u32 i, __u64 id, const void *p, __u32 len)
{
	struct tdispatch_slot *s = &m->slot[i];
	__u32 seq = __atomic_load_n(&s->seq, __ATOMIC_RELAXED);

	while ((seq & 1) || !__atomic_compare_exchange_n(&s->seq, &seq, seq + 1, 0,
							 __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		seq = __atomic_load_n(&s->seq, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	s->id = id;
	s->len = len;
	memcpy(s->payload, p, len);
	__atomic_store_n(&s->seq, seq + 2, __ATOMIC_RELEASE);
	if (__atomic_exchange_n(&s->queued, 1, __ATOMIC_SEQ_CST))
		return 0;
	if (!__atomic_fetch_or(&m->bitmap[i / 64], 1ULL << (i % 64), __ATOMIC_SEQ_CST))
		__atomic_fetch_or(&m->summary[i / 4096], 1ULL << (i / 64 % 64), __ATOMIC_SEQ_CST);
	return 1;
}

/* Slot @i gets version @ver of id @id. */
static int td_write_pl(struct td_map *m, __u32 i, __u64 id, __u64 ver)
{
	struct td_pl pl = { .id = id, .ver = ver };

	return td_write(m, i, id, &pl, sizeof(pl));
}

static int td_kick(int fd)
{
	int ret = ioctl(fd, TDISPATCH_IOC_KICK);

	return ret < 0 ? -errno : ret;
}

#endif /* TDISPATCH_SLOTS_H */
