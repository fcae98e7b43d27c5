// SPDX-License-Identifier: GPL-2.0
/*
 * The tasks a /dev/tdispatch file submits, each with its payload in one
 * allocation counted against the file's 16 MiB bound; small ones kept for
 * reuse when they end.  A task in the merge table or of a shared slot
 * leaves them before it comes here (td_user_task_release()).
 */
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "file.h"
#include "pending.h"
#include "user.h"
#include "vec.h"

/* A kept small task, or NULL; process context. */
static struct td_file_task *td_spare_get(struct td_user *u)
{
	struct llist_node *n;

	if (llist_empty(&u->spare))
		return NULL;
	/* llist_del_first() allows one taker at a time; putters are free. */
	spin_lock(&u->spare_lock);
	n = llist_del_first(&u->spare);
	spin_unlock(&u->spare_lock);
	if (!n)
		return NULL;
	atomic_dec(&u->nr_spare);
	return container_of(n, struct td_file_task, x.task.input);
}

/* Frees the task the payload came with, or keeps it to reuse. */
void td_payload_free(struct td_user *u, struct td_payload *p)
{
	struct td_file_task *ft = container_of(p, struct td_file_task, p);

	atomic_long_sub(p->held, &u->bytes);
	if (p->len <= TD_FILE_TASK_SMALL) {
		if (atomic_inc_return(&u->nr_spare) <= TD_USER_MAX_SPARE) {
			llist_add(&ft->x.task.input, &u->spare);
			return;
		}
		atomic_dec(&u->nr_spare);
	}
	kfree(ft);
}

/*
 * A small payload is copied through the stack: the hardened usercopy check
 * of a copy whose size is known only at run time is cheap for a stack
 * object and, for a heap one, costs more than the copy.
 */
static int td_payload_copy_in(struct td_vec *v, struct td_payload *p, const void __user *from)
{
	u8 bounce[TD_FILE_TASK_SMALL];

	if (p->len > TD_FILE_TASK_SMALL)
		return td_vec_copy_from_user(v, p->data, from, p->len);
	if (td_vec_copy_from_user(v, bounce, from, p->len))
		return -EFAULT;
	memcpy(p->data, bounce, p->len);
	return 0;
}

/*
 * A user's task for a payload of @len bytes, counted against the
 * dispatcher's bound; give it back with td_payload_free().
 */
struct td_file_task *td_file_task_get(struct td_user *u, u32 len, bool watch, struct td_vec *v)
{
	u32 size = max(len, TD_FILE_TASK_SMALL);
	struct td_file_task *ft;
	size_t bytes;

	if (!len || len > TDISPATCH_PAYLOAD_MAX)
		return ERR_PTR(-EINVAL);
	bytes = td_task_bytes(size, watch);
	if (atomic_long_add_return(bytes, &u->bytes) > TD_USER_MAX_BYTES) {
		atomic_long_sub(bytes, &u->bytes);
		return ERR_PTR(-ENOSPC);
	}
	ft = size == TD_FILE_TASK_SMALL ? td_spare_get(u) : NULL;
	if (!ft)
		ft = td_vec_kmalloc(v, struct_size(ft, p.data, size), TD_GFP_USER);
	if (!ft) {
		atomic_long_sub(bytes, &u->bytes);
		return ERR_PTR(-ENOMEM);
	}
	ft->x.task.flags = TD_TASK_EXT;
	ft->taking = false;
	ft->p.len = len;
	ft->p.held = bytes;
	return ft;
}

/* As td_file_task_get(), with the @len payload bytes at @uptr copied in. */
struct td_file_task *td_file_task_new(struct td_user *u, u64 uptr, u32 len, bool watch,
				      struct td_vec *v)
{
	struct td_file_task *ft = td_file_task_get(u, len, watch, v);

	if (IS_ERR(ft) || !td_payload_copy_in(v, &ft->p, u64_to_user_ptr(uptr)))
		return ft;
	td_payload_free(u, &ft->p);
	return ERR_PTR(-EFAULT);
}
