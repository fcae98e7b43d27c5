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

#include "internal.h"

static_assert(sizeof(struct tdispatch_slot) == 64);
static_assert(sizeof(struct tdispatch_slots) == TDISPATCH_SLOTS_SIZE_VER0);

/* Reads of a slot that a writer keeps changing, before taking what is there. */
#define TD_USLOT_TRIES		4

/*
 * @nr slots (checked by the caller), charged to the caller's memory
 * cgroup; process context.  The map starts with the summary (a bit for
 * each word of the bitmap that has a mark, so that KICK does not read
 * every word), then the bitmap and the slots, each on a cache line of its
 * own.
 */
struct td_uslots *td_uslots_new(u32 nr)
{
	struct td_uslots *s = kzalloc(sizeof(*s), TD_GFP_USER);
	u32 words = nr / 64;

	if (!s)
		return NULL;
	s->nr = nr;
	s->bitmap_off = ALIGN(DIV_ROUND_UP(words, 64) * sizeof(u64), SMP_CACHE_BYTES);
	s->slots_off = s->bitmap_off + ALIGN(words * sizeof(u64), SMP_CACHE_BYTES);
	s->map_len = PAGE_ALIGN(s->slots_off + (size_t)nr * sizeof(struct tdispatch_slot));
	/* __vmalloc() takes no __GFP_RETRY_MAYFAIL. */
	s->map = __vmalloc(s->map_len, GFP_KERNEL_ACCOUNT | __GFP_NOWARN | __GFP_ZERO);
	s->seen = kvcalloc(nr, sizeof(*s->seen), TD_GFP_USER);
	if (!s->map || !s->seen) {
		td_uslots_free(s);
		return NULL;
	}
	s->summary = s->map;
	s->bitmap = s->map + s->bitmap_off;
	s->slot = s->map + s->slots_off;
	return s;
}

/* Mappings hold the file, so none is left when its dispatcher goes. */
void td_uslots_free(struct td_uslots *s)
{
	if (!s)
		return;
	vfree(s->map);
	kvfree(s->seen);
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
 * A page of the map, faulted in (again after MADV_DONTNEED, too): the
 * vmalloc area's own, with a reference the mapping holds, as sound's
 * vmalloc'd buffers are mapped.
 */
static vm_fault_t td_uslots_fault(struct vm_fault *vmf)
{
	struct td_uslots *s = vmf->vma->vm_private_data;

	if (vmf->pgoff >= s->map_len >> PAGE_SHIFT)
		return VM_FAULT_SIGBUS;
	vmf->page = vmalloc_to_page(s->map + (vmf->pgoff << PAGE_SHIFT));
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
 * it, which only a user who changes a slot's id or marks it again by hand
 * makes) never count a write twice.
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
 * Read slot @i's payload into @buf (%TDISPATCH_SLOT_PAYLOAD_MAX bytes of
 * room) and return its length; *@writes is how many writes came since
 * the last read.  It is unqueued first, with a full barrier, so that a
 * write this read may miss sets ->queued again and is queued anew.  A
 * slot still being written after a few tries (its writer preempted half
 * way, say) is read as empty, nothing counted: the write under way has
 * yet to exchange ->queued, finds it 0 and queues a task of its own.
 */
u32 td_uslots_read(struct td_uslots *s, u32 i, u8 *buf, u32 *writes)
{
	struct tdispatch_slot *sl = &s->slot[i];
	unsigned int tries;
	u32 seq, len;

	xchg(&sl->queued, 0);
	for (tries = 0; tries < TD_USLOT_TRIES; tries++) {
		/* Pairs with the writer's release of an even count. */
		seq = smp_load_acquire(&sl->seq);
		len = min_t(u32, READ_ONCE(sl->len), TDISPATCH_SLOT_PAYLOAD_MAX);
		memcpy(buf, sl->payload, len);
		/* The payload is read before the count is looked at again. */
		smp_rmb();
		if (!(seq & 1) && READ_ONCE(sl->seq) == seq) {
			*writes = td_uslots_seen(s, i, seq);
			return len;
		}
		cpu_relax();
	}
	*writes = 0;
	return 0;
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
