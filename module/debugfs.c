// SPDX-License-Identifier: GPL-2.0
/*
 * /sys/kernel/debug/tdispatch/<name>-<n>/state: what a person debugging a
 * stuck system wants to see of one dispatcher, in words.  Read-only and
 * root-only (0400, and debugfs is root's), bounded (the oldest
 * TD_DEBUG_SHOW of each list), and gone before the dispatcher is:
 * debugfs_remove() waits for a read in progress, so a read never meets a
 * freed dispatcher.
 */
#include <linux/ctype.h>
#include <linux/debugfs.h>
#include <linux/seq_file.h>

#include "debugfs.h"
#include "internal.h"
#include "pending.h"
#include "shaper.h"
#include "wheel.h"

#define TD_DEBUG_SHOW	16

static struct dentry *td_debug_root;
static atomic_t td_debug_seq = ATOMIC_INIT(0);	/* read as a u32 */

static void td_show_config(struct seq_file *m, const struct tdispatch *d)
{
	const struct tdispatch_config *c = &d->cfg;

	/* A user's name: no line of its own may be forged with it. */
	seq_puts(m, "name ");
	seq_escape(m, d->name, " \t\n\\");
	seq_putc(m, '\n');
	seq_printf(m, "config max_buffer %u max_batch %u max_delay_ns %llu workers %u\n",
		   c->max_buffer, c->max_batch, c->max_delay_ns, c->workers);
	seq_printf(m, "config max_input %u max_delayed %u max_attempts %u flags %#x\n",
		   c->max_input, c->max_delayed, c->max_attempts, c->flags);
	seq_printf(m, "config congestion_delay_ns %llu transient_delay_ns %llu\n",
		   c->congestion_delay_ns, c->transient_delay_ns);
}

static void td_show_stats(struct seq_file *m, const struct tdispatch_stats *st)
{
	seq_printf(m, "tasks accepted %llu rejected %llu queued %llu delayed %llu\n",
		   st->accepted, st->rejected, st->queued, st->delayed);
	seq_printf(m, "tasks pending %llu in_flight %llu\n", st->pending, st->in_flight);
	seq_printf(m, "ended done %llu failed %llu exhausted %llu overridden %llu\n",
		   st->done, st->failed, st->exhausted, st->overridden);
	seq_printf(m, "ended expired %llu dropped %llu cancelled %llu\n",
		   st->expired, st->dropped, st->cancelled);
	seq_printf(m, "batches %llu retries %llu holdoffs %llu redelivered %llu\n",
		   st->batches, st->retries, st->holdoffs, st->redelivered);
	seq_printf(m, "rate %llu burst %llu throttled_ns %llu expedited %llu\n",
		   st->rate, st->burst, st->throttled_ns, st->expedited);
	seq_printf(m, "acceptor looks %llu wakeups %llu\n", st->looks, st->wakeups);
}

static void td_show_delayed_task(struct seq_file *m, struct td_wheel_node *e, ktime_t now)
{
	struct tdispatch_task *t = &container_of(e, struct td_task_ext, delay)->task;

	seq_printf(m, "delayed id %llu due_in_ms %lld%s\n", t->id,
		   ktime_ms_delta(e->due, now),
		   t->flags & TD_TASK_WATCHED ? " watching" : "");
}

/*
 * The wheel's first tasks: the near window in firing order, then the
 * buckets level by level (each in no order), at most TD_DEBUG_SHOW.
 */
static void td_show_delayed(struct seq_file *m, struct td_pending *p, ktime_t now)
{
	struct td_wheel *w = &p->delayed;
	unsigned int lvl, b, i = 0;
	struct td_wheel_node *e;
	struct rb_node *n;

	for (n = rb_first_cached(&w->near); n && i < TD_DEBUG_SHOW; n = rb_next(n), i++)
		td_show_delayed_task(m, rb_entry(n, struct td_wheel_node, rb), now);
	for (lvl = 0; lvl < TD_WHEEL_LEVELS && i < TD_DEBUG_SHOW; lvl++) {
		for (b = 0; b < TD_WHEEL_SIZE && i < TD_DEBUG_SHOW; b++) {
			hlist_for_each_entry(e, &w->bucket[lvl][b], bucket) {
				if (i == TD_DEBUG_SHOW)
					break;
				td_show_delayed_task(m, e, now);
				i++;
			}
		}
	}
	seq_printf(m, "delayed shown %u of %u\n", i, p->nr_delayed);
}

/* Under d->lock: the shaper, the batches out, the heads of both lines. */
static void td_show_locked(struct seq_file *m, struct tdispatch *d, ktime_t now)
{
	struct td_pending *p = &d->pending;
	struct tdispatch_task *t;
	unsigned int i;

	seq_printf(m, "shaper holding %d hold_ns %llu throttled %d stopping %d\n",
		   d->holding, td_shaper_holdoff(&d->shaper, now), !!d->throttled_since,
		   d->stopping);
	for (i = 0; i < d->nr_workers; i++) {
		const struct tdispatch_batch *b = &d->workers[i].batch;
		/* An express run cuts without the lock: see td_express_cut(). */
		unsigned int nr = smp_load_acquire(&b->nr);

		if (!(d->free_workers & BIT_ULL(i)) && nr)
			seq_printf(m, "in_flight worker %u tasks %u first %llu attempts %u age_ms %lld\n",
				   i, nr, b->tasks[0]->id, b->tasks[0]->attempts,
				   ktime_ms_delta(now, b->tasks[0]->submitted));
	}
	i = 0;
	list_for_each_entry(t, &p->order, order) {
		if (i == TD_DEBUG_SHOW)
			break;
		i++;
		seq_printf(m, "pending id %llu age_ms %lld attempts %u %s\n", t->id,
			   ktime_ms_delta(now, t->submitted), t->attempts,
			   t->state == TD_TASK_WAITING ? "waiting" : "free");
	}
	seq_printf(m, "pending shown %u of %u\n", i, p->nr_pending);
	td_show_delayed(m, p, now);
	seq_printf(m, "periodic %u\n", d->nr_periodic);
}

static int td_state_show(struct seq_file *m, void *unused)
{
	struct tdispatch *d = m->private;
	struct tdispatch_stats st;

	td_show_config(m, d);
	tdispatch_get_stats(d, &st);
	td_show_stats(m, &st);
	mutex_lock(&d->lock);
	td_show_locked(m, d, ktime_get());
	mutex_unlock(&d->lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(td_state);

void td_debugfs_add(struct tdispatch *d)
{
	char name[TD_NAME_LEN + 12];
	char *c;

	if (IS_ERR_OR_NULL(td_debug_root))
		return;
	snprintf(name, sizeof(name), "%s-%u", d->name, (u32)atomic_inc_return(&td_debug_seq));
	/* A user's name: no '/', nothing unprintable in a file name. */
	for (c = name; *c; c++)
		if (*c == '/' || !isgraph(*c))
			*c = '_';
	d->debug_dir = debugfs_create_dir(name, td_debug_root);
	debugfs_create_file("state", 0400, d->debug_dir, d, &td_state_fops);
}

/* Before @d goes: waits for a read in progress. */
void td_debugfs_remove(struct tdispatch *d)
{
	debugfs_remove(d->debug_dir);
	d->debug_dir = NULL;
}

void td_debugfs_init(void)
{
	td_debug_root = debugfs_create_dir(KBUILD_MODNAME, NULL);
}

void td_debugfs_exit(void)
{
	debugfs_remove(td_debug_root);
}
