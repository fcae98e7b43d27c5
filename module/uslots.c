// SPDX-License-Identifier: GPL-2.0
/*
 * A file's shared slots (struct tdispatch_slot): memory the file maps, in
 * which userspace writes tasks with no system call per task.  A write to a
 * slot whose task still waits replaces the payload where it is; only the
 * first write after the kernel read the slot marks it in the bitmap, and
 * TDISPATCH_IOC_KICK turns the marks into tasks.  TAKE reads the payload
 * out of the slot, as it is then.
 *
 * Everything here is the user's memory too, written while the kernel
 * reads it: the kernel takes nothing in it on trust.  A length is clamped,
 * a slot still being written after a few tries is read as empty (the
 * write under way queues a task of its own), marks beyond the bitmap name
 * nothing, and the counts of writes, read from ->seq, go only into the
 * file's own counters.
 *
 * The memory and its protocol come first and call nothing of the module's;
 * then the ioctls and the slots' tasks, which the file's units make.
 */
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include <uapi/linux/tdispatch.h>

#include "dispatch.h"
#include "file.h"
#include "internal.h"
#include "user.h"
#include "uslots.h"
#include "vec.h"

/* Charged, and failing at the cgroup's limit rather than calling its OOM killer. */
#define TD_USLOTS_GFP	(GFP_KERNEL_ACCOUNT | __GFP_RETRY_MAYFAIL | __GFP_NOWARN)

static_assert(sizeof(struct tdispatch_slot) == 64);

/* Reads of a slot that a writer keeps changing, before taking what is there. */
#define TD_USLOT_TRIES		4

/* The memory and its protocol: 64-bit words that the kernel and the user change atomically. */
#ifdef CONFIG_64BIT
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
#endif /* CONFIG_64BIT */

/*
 * @writes to a slot, by its sequence count, that a read or an ended task
 * stands for.  The count is the user's word, so it is kept apart from the
 * engine's: accepted and overridden count the tasks KICK made.
 */
static void td_slot_count(struct td_user *u, u32 writes)
{
	atomic64_add(writes, &u->slot_writes);
}

/*
 * A slot's task ends: unread, its slot is unqueued, so that the next write
 * queues another, and the writes since the last read end with it.
 */
void td_slot_forget(struct td_user *u, struct td_slot_ref *r)
{
	if (!READ_ONCE(r->read))
		td_slot_count(u, td_uslots_unqueue(u->slots, r->index));
}

/* A task of slot @i, by the id the slot has now; TAKE reads its payload. */
static int td_slot_submit(struct td_user *u, struct td_uslots *s, u32 i, struct td_vec *v)
{
	static const struct tdispatch_submit_opts o = { };
	struct td_slot_ref *r;
	struct td_file_task *ft;
	int ret;

	ft = td_file_task_get(u, sizeof(*r), false, v);
	if (IS_ERR(ft)) {
		atomic_long_inc(&u->rejected);
		return PTR_ERR(ft);
	}
	r = (struct td_slot_ref *)ft->p.data;
	r->index = i;
	r->read = false;
	/* It replaces a waiting merge task of its id: no merge may land there. */
	ret = td_submit_unmerged(u, ft, td_uslots_id(s, i), &o, NULL, TD_TASK_SLOT, v);
	/* Refused: no %TD_TASK_SLOT, so the slot stays queued for the next KICK. */
	if (ret)
		td_payload_free(u, &ft->p);
	return ret;
}

/*
 * A slot task's payload reached the caller: the slot is read.  A write
 * that landed between the copy and now, and queued nothing, gets a task
 * of its own; if the dispatcher refuses it (input full, 16 MiB held, no
 * memory), the slot is marked and the kernel owes the KICK its writer
 * does not know of: td_kick_retry() makes it, later.
 */
void td_slot_read(struct td_user *u, struct td_slot_ref *r, struct td_vec *v)
{
	u32 writes;

	WRITE_ONCE(r->read, true);
	if (td_uslots_commit(u->slots, r->index, r->seq, &writes) &&
	    td_slot_submit(u, u->slots, r->index, v)) {
		td_uslots_mark_slot(u->slots, r->index);
		mod_delayed_work(system_wq, &u->kick_retry, 1);
	}
	td_slot_count(u, writes);
}

/*
 * SLOTS: the file's shared slots, made once; the same @nr again (another
 * process sharing the file, say) is told where they are.
 */
int td_ioctl_slots(struct td_user *u, void __user *uarg)
{
	struct td_uslots *s, *old;
	struct tdispatch_slots a;
	int ret;

	/* The marks are 64-bit words that the kernel and the user change atomically. */
	if (!IS_ENABLED(CONFIG_64BIT))
		return -EOPNOTSUPP;
	ret = td_copy_in(&a, sizeof(a), uarg);
	if (ret)
		return ret;
	if (a.flags || a.pad || !a.nr || a.nr % TDISPATCH_SLOTS_MIN || a.nr > TDISPATCH_SLOTS_MAX)
		return -EINVAL;
	/* Pairs with cmpxchg_release() below, as the others do. */
	s = smp_load_acquire(&u->slots);
	if (!s) {
		s = td_uslots_new(a.nr);
		if (!s)
			return -ENOMEM;
		/* Pairs with smp_load_acquire() here, in KICK and mmap(): seen whole. */
		old = cmpxchg_release(&u->slots, NULL, s);
		if (old) {
			td_uslots_free(s);
			s = old;
		}
	}
	if (s->nr != a.nr)
		return -EEXIST;
	a.map_len = s->map_len;
	a.bitmap_off = s->bitmap_off;
	a.slots_off = s->slots_off;
	return td_copy_out(uarg, &a, sizeof(a));
}

int td_user_mmap(struct td_user *u, struct vm_area_struct *vma)
{
	/* Pairs with cmpxchg_release() in SLOTS: the slots are seen whole. */
	struct td_uslots *s = smp_load_acquire(&u->slots);

	return s ? td_uslots_mmap(s, vma) : -ENXIO;
}

/*
 * The marked slots of bitmap word @w: a task each, those after a refusal
 * marked again.
 */
static int td_slots_kick_word(struct td_user *u, struct td_uslots *s, u32 w, struct td_vec *v,
			      int *queued)
{
	u64 bits;
	int ret;

	for (bits = td_uslots_grab(&s->bitmap[w]); bits; bits &= bits - 1) {
		ret = td_slot_submit(u, s, w * 64 + __ffs64(bits), v);
		if (ret) {
			td_uslots_mark(&s->bitmap[w], bits);
			return ret;
		}
		if (++*queued % TD_VEC_FLUSH == 0)
			td_vec_flush(v);
	}
	return 0;
}

/*
 * KICK: a task for each marked slot, found through the summary, as a
 * vector's tasks are submitted (one clock reading, a wake-up owed per
 * %TD_VEC_FLUSH).  Those after a refusal stay marked, and the refusal is
 * the call's result: their writers owe no KICK any more.  Up to 65536 tasks
 * a call, so it yields the CPU between words, and stops (the rest left
 * marked) at a fatal signal.
 */
static int td_slots_kick(struct td_user *u, struct td_uslots *s)
{
	u32 sw, w, words = s->nr / 64;
	struct td_vec v = { };
	int queued = 0, ret = 0;
	u64 sb;

	for (sw = 0; sw < DIV_ROUND_UP(words, 64) && !ret; sw++) {
		for (sb = td_uslots_grab(&s->summary[sw]); sb; sb &= sb - 1) {
			/* A mark the user set beyond the bitmap names nothing. */
			w = sw * 64 + __ffs64(sb);
			if (need_resched()) {
				td_vec_flush(&v);
				cond_resched();
			}
			ret = fatal_signal_pending(current) ? -EINTR :
			      w < words ? td_slots_kick_word(u, s, w, &v, &queued) : 0;
			if (ret) {
				td_uslots_mark(&s->summary[sw], sb);
				break;
			}
		}
	}
	td_vec_flush_here(&v);
	/* A refusal is said even after some were queued: the caller kicks again. */
	return ret ?: queued;
}

int td_ioctl_kick(struct td_user *u)
{
	/* Pairs with cmpxchg_release() in SLOTS: the slots are seen whole. */
	struct td_uslots *s = smp_load_acquire(&u->slots);

	return s ? td_slots_kick(u, s) : -ENXIO;
}

/*
 * The KICK a TAKE owes (td_slot_read()), in a kworker, charged to the
 * file's memory cgroup: again after a refusal, waiting twice as long each
 * time, up to a second.  The file's release cancels it before its
 * dispatcher goes.
 */
void td_kick_retry(struct work_struct *work)
{
	struct td_user *u = container_of(to_delayed_work(work), struct td_user, kick_retry);
	struct mem_cgroup *old = set_active_memcg(u->d->memcg);
	int ret = td_slots_kick(u, u->slots);

	set_active_memcg(old);
	if (ret >= 0) {
		u->kick_backoff = 1;
		return;
	}
	u->kick_backoff = min_t(unsigned long, 2 * u->kick_backoff, HZ);
	queue_delayed_work(system_wq, &u->kick_retry, u->kick_backoff);
}
