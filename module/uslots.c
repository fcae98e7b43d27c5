// SPDX-License-Identifier: GPL-2.0
/*
 * A file's shared slots (struct tdispatch_slot): memory the file maps, in
 * which userspace writes tasks with no system call per task.  A write to a
 * slot whose task still waits replaces the payload where it is; only the
 * first write after the kernel read the slot marks it in the bitmap, and
 * TDISPATCH_IOC_KICK turns the marks into tasks (user.c).  TAKE reads the
 * payload out of the slot, as it is then.
 *
 * Everything here is the user's memory too, written while the kernel
 * reads it: the kernel takes nothing in it on trust.  A length is clamped,
 * a slot still being written after a few tries is read as empty (the
 * write under way queues a task of its own), marks beyond the bitmap name
 * nothing, and the counts of writes, read from ->seq, go only into the
 * file's own counters.
 *
 * Calls nothing of the module's: user.c allocates, submits and counts.
 */
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include <uapi/linux/tdispatch.h>

#include "uslots.h"

/* Charged, and failing at the cgroup's limit rather than calling its OOM killer. */
#define TD_USLOTS_GFP	(GFP_KERNEL_ACCOUNT | __GFP_RETRY_MAYFAIL | __GFP_NOWARN)

static_assert(sizeof(struct tdispatch_slot) == 64);
static_assert(sizeof(struct tdispatch_slots) == TDISPATCH_SLOTS_SIZE_VER0);

/* Reads of a slot that a writer keeps changing, before taking what is there. */
#define TD_USLOT_TRIES		4

/*
 * @nr slots (checked by the caller), in pages charged to the memory cgroup
 * that is active (the opener's: chardev.c makes it so), which at that
 * cgroup's limit fail instead of calling its OOM killer; process context.
 * Pages of their own, mapped into one range with vmap(), because
 * __vmalloc() does not honour __GFP_RETRY_MAYFAIL.  The map starts with
 * the summary (a bit for each word of the bitmap that has a mark, so that
 * KICK does not read every word), then the bitmap and the slots, each on
 * a cache line of its own; the kernel's own counts follow, in pages that
 * are never mapped.
 */
struct td_uslots *td_uslots_new(u32 nr)
{
	struct td_uslots *s = kzalloc(sizeof(*s), TD_USLOTS_GFP);
	u32 words = nr / 64;
	unsigned int i, n;

	if (!s)
		return NULL;
	s->nr = nr;
	s->bitmap_off = ALIGN(DIV_ROUND_UP(words, 64) * sizeof(u64), SMP_CACHE_BYTES);
	s->slots_off = s->bitmap_off + ALIGN(words * sizeof(u64), SMP_CACHE_BYTES);
	s->map_len = PAGE_ALIGN(s->slots_off + (size_t)nr * sizeof(struct tdispatch_slot));
	n = (s->map_len + PAGE_ALIGN(nr * sizeof(*s->seen))) >> PAGE_SHIFT;
	s->pages = kcalloc(n, sizeof(*s->pages), TD_USLOTS_GFP);
	if (!s->pages)
		goto fail;
	for (i = 0; i < n; i++) {
		s->pages[i] = alloc_page(TD_USLOTS_GFP | __GFP_ZERO);
		if (!s->pages[i])
			goto fail;
		s->nr_pages++;
	}
	s->map = vmap(s->pages, s->nr_pages, VM_MAP, PAGE_KERNEL);
	if (!s->map)
		goto fail;
	s->summary = s->map;
	s->bitmap = s->map + s->bitmap_off;
	s->slot = s->map + s->slots_off;
	s->seen = s->map + s->map_len;
	return s;
fail:
	td_uslots_free(s);
	return NULL;
}

/* Mappings hold the file, so none is left when its dispatcher goes. */
void td_uslots_free(struct td_uslots *s)
{
	unsigned int i;

	if (!s)
		return;
	if (s->map)
		vunmap(s->map);
	for (i = 0; i < s->nr_pages; i++)
		__free_page(s->pages[i]);
	kfree(s->pages);
	kfree(s);
}

/* vm_flags_mod() came in 6.3: Kbuild says whether the kernel has it. */
static void td_vma_flags(struct vm_area_struct *vma, vm_flags_t set, vm_flags_t clear)
{
#ifdef TD_HAVE_VM_FLAGS_MOD
	vm_flags_mod(vma, set, clear);
#else
	vma->vm_flags = (vma->vm_flags | set) & ~clear;
#endif
}

/*
 * A page of the map, faulted in (again after MADV_DONTNEED, too), with a
 * reference the mapping holds.
 */
static vm_fault_t td_uslots_fault(struct vm_fault *vmf)
{
	struct td_uslots *s = vmf->vma->vm_private_data;

	if (vmf->pgoff >= s->map_len >> PAGE_SHIFT)
		return VM_FAULT_SIGBUS;
	vmf->page = s->pages[vmf->pgoff];
	get_page(vmf->page);
	return 0;
}

static const struct vm_operations_struct td_uslots_vm_ops = {
	.fault = td_uslots_fault,
};

/*
 * A shared mapping of the whole map or a prefix of it, at offset 0, never
 * grown, dumped or executed.  It holds the file, so @s outlives it.
 */
int td_uslots_mmap(struct td_uslots *s, struct vm_area_struct *vma)
{
	/* A private mapping would copy the pages on write: the kernel would see nothing. */
	if (vma->vm_pgoff || vma_pages(vma) > s->map_len >> PAGE_SHIFT ||
	    !(vma->vm_flags & VM_MAYSHARE) || (vma->vm_flags & VM_EXEC))
		return -EINVAL;
	td_vma_flags(vma, VM_DONTEXPAND | VM_DONTDUMP, VM_MAYEXEC);
	vma->vm_ops = &td_uslots_vm_ops;
	vma->vm_private_data = s;
	return 0;
}

/*
 * The marks of a word of the summary or the bitmap, cleared.  A writer
 * marks its slot's bit, then the summary's bit of that word if the word
 * had no mark: KICK clears a summary word before it grabs the words it
 * names, so a mark is either in a word it grabs or named in the summary
 * again.
 */
u64 td_uslots_grab(u64 *word)
{
	return READ_ONCE(*word) ? xchg(word, 0) : 0;
}

/*
 * Marks @bits of @word again, for a later KICK: one atomic OR.  On x86
 * (LOCK OR) and on arm64 with LSE atomics (STSET) that is one instruction,
 * which a user who keeps writing the word cannot hold up.  On machines
 * with load-linked/store-conditional atomics only (arm64 without LSE,
 * riscv, powerpc) it is a retry loop that such a user can make spin for
 * as long as it keeps the line busy, as any atomic on memory shared with
 * userspace (futexes included) can be made to.
 */
void td_uslots_mark(u64 *word, u64 bits)
{
	atomic64_or(bits, (atomic64_t *)word);
}

u64 td_uslots_id(struct td_uslots *s, u32 i)
{
	return READ_ONCE(s->slot[i].id);
}

/*
 * The writes of slot @i since the kernel last read it, by its sequence
 * count @seq (one under way is not counted).  The count the kernel keeps
 * only moves forward, so that two readers of a slot at once (two tasks of
 * it: a user who changes a slot's id or marks it again by hand makes them,
 * and so does a writer preempted across a whole TAKE) never count a write
 * twice.
 */
static u32 td_uslots_seen(struct td_uslots *s, u32 i, u32 seq)
{
	u32 old = READ_ONCE(s->seen[i]);

	seq &= ~1U;
	do {
		if ((s32)(seq - old) <= 0)
			return 0;
	} while (!try_cmpxchg(&s->seen[i], &old, seq));
	return (seq - old) / 2;
}

/*
 * Slot @i's payload, copied into @buf (%TDISPATCH_SLOT_PAYLOAD_MAX bytes of
 * room) without reading the slot yet: its length, and in *@seq the
 * sequence count it goes with, for td_uslots_commit() once the payload
 * reached the user.  A slot still being written after a few tries (its
 * writer preempted half way, say) gives length 0 and a count that the
 * commit finds changed.
 */
u32 td_uslots_peek(struct td_uslots *s, u32 i, u8 *buf, u32 *seq)
{
	struct tdispatch_slot *sl = &s->slot[i];
	unsigned int tries;
	u32 len;

	for (tries = 0; tries < TD_USLOT_TRIES; tries++) {
		/* Pairs with the writer's release of an even count. */
		*seq = smp_load_acquire(&sl->seq);
		len = min_t(u32, READ_ONCE(sl->len), TDISPATCH_SLOT_PAYLOAD_MAX);
		memcpy(buf, sl->payload, len);
		/* The payload is read before the count is looked at again. */
		smp_rmb();
		if (!(*seq & 1) && READ_ONCE(sl->seq) == *seq)
			return len;
		cpu_relax();
	}
	*seq |= 1;
	return 0;
}

/*
 * Slot @i read, as td_uslots_peek() saw it at @seq: unqueued, with a full
 * barrier, so that a write after this queues a task of its own.  *@writes
 * is how many writes the read stands for.  A write that came after the
 * peek and before the unqueueing found the slot queued and queued nothing,
 * yet the user has the payload from before it: then the slot is queued
 * again, and if no writer did so first, true is returned and the caller
 * owes the slot a task, as a writer that found it unqueued would.
 */
bool td_uslots_commit(struct td_uslots *s, u32 i, u32 seq, u32 *writes)
{
	struct tdispatch_slot *sl = &s->slot[i];

	xchg(&sl->queued, 0);
	*writes = td_uslots_seen(s, i, seq);
	/* Pairs with the writer's release of an even count, as in a peek. */
	if (smp_load_acquire(&sl->seq) == seq)
		return false;
	return !xchg(&sl->queued, 1);
}

/*
 * Marks slot @i for the next KICK, as a writer does: its bit, then its
 * word's bit in the summary.
 */
void td_uslots_mark_slot(struct td_uslots *s, u32 i)
{
	td_uslots_mark(&s->bitmap[i / 64], BIT_ULL(i % 64));
	td_uslots_mark(&s->summary[i / 4096], BIT_ULL(i / 64 % 64));
}

/*
 * A task of slot @i ends unread (overridden, expired, cancelled): the
 * slot is unqueued, so that the next write queues a task again; returns
 * the writes since the last read, which the task that ends stands for.
 */
u32 td_uslots_unqueue(struct td_uslots *s, u32 i)
{
	xchg(&s->slot[i].queued, 0);
	/* Pairs with the writer's release of an even count, as in a read. */
	return td_uslots_seen(s, i, smp_load_acquire(&s->slot[i].seq));
}
