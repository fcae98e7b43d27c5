// SPDX-License-Identifier: GPL-2.0
/*
 * Which structure should hold tdispatch's delayed tasks?  This module
 * measures the candidates in one boot, so that the choice rests on ratios
 * taken on the same machine, and keeps the measurement reproducible
 * ("make bench").  It runs at load; the results are plain text in
 * /sys/kernel/debug/td_timer_bench/results.
 *
 * Each candidate's entry is the minimal record tdispatch would keep per
 * waiting task, from a cache of its own, so that kmem_cache_size() is the
 * memory a waiting task costs.  The id lookup that replace and cancel by
 * id need is the same for every candidate, so it is left out.
 *
 * The candidates are in timer_structs.c; the third is tdispatch's own
 * delayed set, module/wheel.c, built in: the code measured is the code
 * that runs.
 *
 * "fire" is from the first to the last of N entries due at one instant;
 * "last late" from their due time to the last: it holds what is paid
 * before the first fires (the timer wheel's granularity, the wheel's move
 * of the whole group into its near rbtree).
 */
#define pr_fmt(fmt) "td_timer_bench: " fmt

#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/hrtimer.h>
#include <linux/jiffies.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/random.h>
#include <linux/rbtree.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/timer.h>
#include <linux/utsname.h>
#include <linux/vmalloc.h>

#define BENCH_MAIN
#include "bench.h"
#include "timer_bench.h"

static unsigned int max_tasks = 1000000;
module_param(max_tasks, uint, 0444);
MODULE_PARM_DESC(max_tasks, "largest N to measure (default 1000000)");

#define REPS_MAX	9
static unsigned int reps = 5;
module_param(reps, uint, 0444);
MODULE_PARM_DESC(reps, "interleaved runs, of which the median counts (default 5, at most 9)");

/*
 * Firing many hrtimers at one instant runs every callback in one hard
 * interrupt; a million of them would hold interrupts off for seconds.
 */
unsigned int hrtimer_fire_max = 100000;
module_param(hrtimer_fire_max, uint, 0444);
MODULE_PARM_DESC(hrtimer_fire_max, "most hrtimers fired at once (default 100000)");

#define LAT_TASKS	1000
#define ACCEPTOR_SLACK	(20 * NSEC_PER_USEC)	/* what td_acceptor_sleep() uses */
#define FIRE_TIMEOUT	(300 * HZ)

enum { MODE_STRAY, MODE_FIRE, MODE_LATENESS };

static int bench_mode;
static atomic_t bench_count, bench_strays;
static unsigned int bench_target;
static u64 bench_first, bench_last;
static s64 *bench_lat;
static DECLARE_COMPLETION(bench_done);

/* Timer callbacks, and the rbtree's acceptor, report each firing here. */
void td_bench_fired(u64 id, u64 due)
{
	unsigned int n;

	if (READ_ONCE(bench_mode) == MODE_STRAY) {
		atomic_inc(&bench_strays);
		return;
	}
	if (bench_mode == MODE_LATENESS)
		bench_lat[id] = ktime_get_ns() - due;
	n = atomic_inc_return(&bench_count);
	if (n == 1)
		bench_first = ktime_get_ns();
	if (n == bench_target) {
		bench_last = ktime_get_ns();
		complete(&bench_done);
	}
}

bool td_bench_wait(void)
{
	return wait_for_completion_timeout(&bench_done, FIRE_TIMEOUT);
}

/*
 * The acceptor's loop, for the structures it pops itself: under @lock,
 * @pop fires what is due and returns the next due time (U64_MAX: none
 * left), then the thread sleeps until then, with the acceptor's slack.
 */
bool td_pop_wait(struct mutex *lock, u64 (*pop)(u64 now))
{
	for (;;) {
		ktime_t until;
		u64 next;

		mutex_lock(lock);
		next = pop(ktime_get_ns());
		mutex_unlock(lock);
		if (next == U64_MAX)
			return completion_done(&bench_done);
		until = ns_to_ktime(next);
		set_current_state(TASK_IDLE);
		schedule_hrtimeout_range(&until, ACCEPTOR_SLACK, HRTIMER_MODE_ABS);
	}
}

/* The jiffy and the time that wheel expiries are computed from. */
unsigned long td_base_j;
u64 td_base_ns;

static const unsigned int sizes[] = { 1000, 100000, 1000000 };

struct row {
	u64 insert, cancel, fire;	/* ns for all of them */
	u64 late;			/* ns from their due time to the last firing */
	unsigned int n, nfire;
};

/* Every run's figures; rows[] gets their medians. */
static struct row runs[REPS_MAX][NR_CANDS][ARRAY_SIZE(sizes)];
static struct row rows[NR_CANDS][ARRAY_SIZE(sizes)];
static unsigned int cur_rep;
/* The wheel's median p99 lateness (the worse window) and early firings. */
static s64 wheel_p99;
static unsigned int wheel_early;

static void set_base(void)
{
	td_base_ns = ktime_get_ns();
	td_base_j = jiffies;	/* after the time, so expiries can only be later */
}

static void arm_for(struct cand *c, unsigned int target, int mode)
{
	reinit_completion(&bench_done);
	atomic_set(&bench_count, 0);
	bench_target = target;
	WRITE_ONCE(bench_mode, mode);
	set_base();
}

/*
 * get_random_u32() costs microseconds under TCG, where the millions of
 * draws a run needs took minutes; it only seeds this xorshift64*.
 */
static u64 rng_state;
static u64 *offs;

static u32 rng_below(u32 ceil)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return ((rng_state * 0x2545f4914f6cdd1dULL) >> 32) * ceil >> 32;
}

static void maybe_resched(unsigned int i)
{
	if (!(i & 4095))
		cond_resched();
}

static void run_one(struct cand *c, void **ents, unsigned int n, struct row *r)
{
	unsigned int i, j, missed = 0;
	u64 t, due;

	/*
	 * 10 s to 70 s ahead: levels 2 and 3 of the wheel at HZ=250, and
	 * late enough that under TCG they do not fire before their cancel.
	 */
	for (i = 0; i < n; i++)
		offs[i] = 10 * NSEC_PER_SEC + (u64)rng_below(60000) * NSEC_PER_MSEC +
			  rng_below(NSEC_PER_MSEC);
	WRITE_ONCE(bench_mode, MODE_STRAY);
	atomic_set(&bench_strays, 0);
	set_base();
	t = ktime_get_ns();
	for (i = 0; i < n; i++) {
		c->insert(ents[i], i, td_base_ns + offs[i]);
		maybe_resched(i);
	}
	r->insert = ktime_get_ns() - t;

	for (i = n - 1; i > 0; i--) {
		j = rng_below(i + 1);	/* not inside swap(), which evaluates twice */
		swap(ents[i], ents[j]);
	}
	t = ktime_get_ns();
	for (i = 0; i < n; i++) {
		missed += !c->cancel(ents[i]);
		maybe_resched(i);
	}
	r->cancel = ktime_get_ns() - t;
	if (missed != atomic_read(&bench_strays))
		fail("%s N=%u: %u cancels missed, %d fired", c->name, n, missed,
		     atomic_read(&bench_strays));
	else if (missed)
		seq_buf_printf(&out, "# %s N=%u: %u fired before their cancel\n",
			       c->name, n, missed);

	/* All due at one instant, far enough ahead that inserting ends first. */
	r->nfire = c->fire_max ? min(n, *c->fire_max) : n;
	arm_for(c, r->nfire, MODE_FIRE);
	due = td_base_ns + 20 * NSEC_PER_MSEC + 3 * div_u64(r->insert, n) * r->nfire;
	for (i = 0; i < r->nfire; i++) {
		c->insert(ents[i], i, due);
		maybe_resched(i);
	}
	if (ktime_get_ns() > due)
		seq_buf_printf(&out, "# %s N=%u: inserting ran past the due time\n",
			       c->name, r->nfire);
	if (!c->wait())
		fail("%s N=%u: %d of %u fired", c->name, r->nfire,
		     atomic_read(&bench_count), r->nfire);
	r->fire = bench_last - bench_first;
	r->late = bench_last > due ? bench_last - due : 0;
	/* The last callback may still be returning; the next run reuses these. */
	for (i = 0; i < r->nfire; i++)
		c->sync(ents[i]);
}

static int cmp_s64(const void *a, const void *b)
{
	s64 x = *(const s64 *)a, y = *(const s64 *)b;

	return x < y ? -1 : x > y;
}

static void print_us(s64 ns)
{
	seq_buf_printf(&out, " %s%lld.%01lld |", ns < 0 ? "-" : "",
		       abs(ns) / NSEC_PER_USEC, abs(ns) % NSEC_PER_USEC / 100);
}

/* Lateness is measured for LAT_TASKS due over [from, from + spread) ms. */
static const struct {
	unsigned int from, spread;
} spreads[] = { { 20, 200 }, { 1000, 1000 } };

struct lat {
	s64 p50, p99, max;
	unsigned int early;
};

/* Every round's lateness figures, interleaved as the others are. */
static struct lat lats[REPS_MAX][NR_CANDS][ARRAY_SIZE(spreads)];
/* A round that did not fire all its tasks: no medians are taken. */
static bool lat_failed;

/* Fire LAT_TASKS spread over the @sp'th window and note their lateness. */
static void run_lateness(struct cand *c, void **ents, unsigned int sp)
{
	struct lat *l = &lats[cur_rep][c - td_cands][sp];
	unsigned int i, from = spreads[sp].from, spread = spreads[sp].spread;

	arm_for(c, LAT_TASKS, MODE_LATENESS);
	for (i = 0; i < LAT_TASKS; i++)
		c->insert(ents[i], i, td_base_ns + from * NSEC_PER_MSEC +
			  (u64)rng_below(spread * USEC_PER_MSEC) * NSEC_PER_USEC);
	if (!c->wait()) {
		fail("%s lateness: %d of %u fired", c->name,
		     atomic_read(&bench_count), LAT_TASKS);
		lat_failed = true;
		return;
	}
	sort(bench_lat, LAT_TASKS, sizeof(*bench_lat), cmp_s64, NULL);
	*l = (struct lat) {
		.p50 = bench_lat[LAT_TASKS / 2],
		.p99 = bench_lat[LAT_TASKS * 99 / 100],
		.max = bench_lat[LAT_TASKS - 1],
	};
	for (i = 0; i < LAT_TASKS; i++)
		l->early += bench_lat[i] < 0;
	if (l->early)
		fail("%s: %u fired before they were due", c->name, l->early);
}

/* The median, min and max over the rounds of the s64 at @off. */
static void lat_stats(unsigned int c, unsigned int sp, size_t off, unsigned int nr,
		      s64 *med, s64 *min, s64 *max)
{
	s64 v[REPS_MAX];
	unsigned int i;

	for (i = 0; i < nr; i++)
		v[i] = *(s64 *)((char *)&lats[i][c][sp] + off);
	sort(v, nr, sizeof(*v), cmp_s64, NULL);
	*med = v[nr / 2];
	*min = v[0];
	*max = v[nr - 1];
}

/*
 * Medians over the rounds: of the p50, of the p99 (and its min and max
 * over the rounds), the largest lateness seen, and early firings in all.
 * The wheel's median p99 is what its target is held to.
 */
static void print_lateness(unsigned int nr)
{
	unsigned int c, sp, i;

	seq_buf_printf(&out, "\n| structure | due in | lateness p50 us | p99 us | ");
	seq_buf_printf(&out, "p99 min us | p99 max us | max us | early |\n");
	seq_buf_printf(&out, "|---|---|---|---|---|---|---|---|\n");
	for (c = 0; c < NR_CANDS; c++) {
		for (sp = 0; sp < ARRAY_SIZE(spreads); sp++) {
			s64 p50, p99, lo, hi, worst, unused;
			unsigned int early = 0;

			lat_stats(c, sp, offsetof(struct lat, p50), nr, &p50, &unused, &unused);
			lat_stats(c, sp, offsetof(struct lat, p99), nr, &p99, &lo, &hi);
			lat_stats(c, sp, offsetof(struct lat, max), nr, &unused, &unused, &worst);
			for (i = 0; i < nr; i++)
				early += lats[i][c][sp].early;
			seq_buf_printf(&out, "| %s | %u-%u ms |", td_cands[c].name,
				       spreads[sp].from, spreads[sp].from + spreads[sp].spread);
			print_us(p50);
			print_us(p99);
			print_us(lo);
			print_us(hi);
			print_us(worst);
			seq_buf_printf(&out, " %u |\n", early);
			if (c == CAND_WHEEL) {
				wheel_p99 = max(wheel_p99, p99);
				wheel_early += early;
			}
		}
	}
	seq_buf_printf(&out, "# medians over %u interleaved rounds of %u tasks each\n",
		       nr, LAT_TASKS);
}

/* Allocate @n entries, run @fn over them, make sure they are quiet, free. */
static int with_entries(struct cand *c, void **ents, unsigned int n,
			void (*fn)(struct cand *c, void **ents, unsigned int n))
{
	unsigned int i, got;
	int ret = 0;

	for (got = 0; got < n; got++) {
		ents[got] = kmem_cache_alloc(c->cache, GFP_KERNEL);
		if (!ents[got]) {
			ret = -ENOMEM;
			break;
		}
		if (c->init)
			c->init(ents[got]);
		maybe_resched(got);
	}
	if (!ret)
		fn(c, ents, n);
	for (i = 0; i < got; i++) {
		if (!ret)
			c->sync(ents[i]);
		kmem_cache_free(c->cache, ents[i]);
		maybe_resched(i);
	}
	return ret;
}

static void sizes_fn(struct cand *c, void **ents, unsigned int n)
{
	unsigned int s;

	for (s = 0; s < ARRAY_SIZE(sizes) && sizes[s] <= n; s++) {
		struct row *r = &runs[cur_rep][c - td_cands][s];

		r->n = sizes[s];
		run_one(c, ents, r->n, r);
	}
}

/* The median over the runs of the u64 at @off in each run's row. */
static u64 median_of(unsigned int c, unsigned int s, size_t off, unsigned int nr)
{
	u64 v[REPS_MAX];
	unsigned int i;

	for (i = 0; i < nr; i++)
		v[i] = *(u64 *)((char *)&runs[i][c][s] + off);
	sort(v, nr, sizeof(*v), cmp_u64, NULL);
	return v[nr / 2];
}

static void take_medians(unsigned int nr)
{
	unsigned int c, s;

	for (c = 0; c < NR_CANDS; c++) {
		for (s = 0; s < ARRAY_SIZE(sizes); s++) {
			struct row *r = &rows[c][s];

			*r = runs[0][c][s];
			if (!r->n)
				continue;
			r->insert = median_of(c, s, offsetof(struct row, insert), nr);
			r->cancel = median_of(c, s, offsetof(struct row, cancel), nr);
			r->fire = median_of(c, s, offsetof(struct row, fire), nr);
			r->late = median_of(c, s, offsetof(struct row, late), nr);
		}
	}
}

static void lateness_fn(struct cand *c, void **ents, unsigned int n)
{
	unsigned int sp;

	for (sp = 0; sp < ARRAY_SIZE(spreads); sp++)
		run_lateness(c, ents, sp);
}

static void print_per_task(u64 ns, unsigned int n, const char *end)
{
	u64 tenths = div_u64(ns * 10, n);

	seq_buf_printf(&out, " %llu.%llu%s", tenths / 10, tenths % 10, end);
}

static void print_ratio(u64 a, unsigned int na, u64 b, unsigned int nb, char end)
{
	u64 r = div64_u64(a * 100 * nb, max_t(u64, b * na, 1));

	seq_buf_printf(&out, "%llu.%02llux%c", r / 100, r % 100, end);
}

static void print_tables(void)
{
	unsigned int c, s, big = 0;

	seq_buf_printf(&out, "| structure | N | insert ns/task | cancel ns/task | ");
	seq_buf_printf(&out, "fire ns/task | last late us | bytes/task |\n");
	seq_buf_printf(&out, "|---|---|---|---|---|---|---|\n");
	for (s = 0; s < ARRAY_SIZE(sizes); s++) {
		for (c = 0; c < NR_CANDS; c++) {
			struct row *r = &rows[c][s];

			if (!r->n)
				continue;
			big = s;
			seq_buf_printf(&out, "| %s | %u |", td_cands[c].name, r->n);
			print_per_task(r->insert, r->n, " |");
			print_per_task(r->cancel, r->n, " |");
			print_per_task(r->fire, r->nfire, r->nfire == r->n ? " |" : " * |");
			print_us(r->late);
			seq_buf_printf(&out, " %u |\n", kmem_cache_size(td_cands[c].cache));
		}
	}
	seq_buf_printf(&out, "# * fired only %u at once, see hrtimer_fire_max\n",
		       hrtimer_fire_max);
	seq_buf_printf(&out, "# ratio vs timer_list at N=%u (insert/cancel/fire/bytes):",
		       rows[0][big].n);
	for (c = 1; c < NR_CANDS; c++) {
		struct row *r = &rows[c][big], *w = &rows[0][big];

		seq_buf_printf(&out, " %s ", td_cands[c].name);
		print_ratio(r->insert, r->n, w->insert, w->n, '/');
		print_ratio(r->cancel, r->n, w->cancel, w->n, '/');
		print_ratio(r->fire, r->nfire, w->fire, w->nfire, '/');
		print_ratio(kmem_cache_size(td_cands[c].cache), 1,
			    kmem_cache_size(td_cands[0].cache), 1,
			    c + 1 < NR_CANDS ? ';' : '\n');
	}
}

static void print_target(const char *what, u64 got, u64 limit, const char *unit)
{
	seq_buf_printf(&out, "# target %s: %llu.%02llu%s (at most %llu.%02llu%s): %s\n", what,
		       got / 100, got % 100, unit, limit / 100, limit % 100, unit,
		       got <= limit ? "met" : "MISSED");
}

/* Issue 14's bar for the wheel, at the largest N, against the timer_list. */
static void print_targets(void)
{
	unsigned int s, w = 0;
	struct row *a, *b;

	w = CAND_WHEEL;
	for (s = 0; s + 1 < ARRAY_SIZE(sizes) && rows[0][s + 1].n; s++)
		;
	a = &rows[w][s];
	b = &rows[0][s];
	if (!a->n || !b->n)
		return;
	seq_buf_printf(&out, "\n# wheel against timer_list at N=%u, medians:\n", a->n);
	print_target("insert", div64_u64(a->insert * 100, max(b->insert, 1ULL)), 150, "x");
	print_target("cancel", div64_u64(a->cancel * 100, max(b->cancel, 1ULL)), 150, "x");
	print_target("lateness p99", max(wheel_p99, 0LL) / (NSEC_PER_MSEC / 100), 100, " ms");
	print_target("early", wheel_early * 100, 0, "");
	print_target("bytes", 100 * kmem_cache_size(td_cands[w].cache) /
		     kmem_cache_size(td_cands[0].cache), 100, "x");
}

static int bench_run(void)
{
	unsigned int c, s, n = sizes[0];
	void **ents;
	int ret = -ENOMEM;

	/* Only sizes the tables have: an entry no table set up has no timer. */
	for (s = 1; s < ARRAY_SIZE(sizes); s++)
		if (sizes[s] <= max_tasks)
			n = sizes[s];

	rng_state = (u64)get_random_u32() << 32 | get_random_u32() | 1;
	ents = vmalloc_array(max(n, LAT_TASKS), sizeof(*ents));
	offs = vmalloc_array(n, sizeof(*offs));
	bench_lat = vmalloc_array(LAT_TASKS, sizeof(*bench_lat));
	if (!ents || !offs || !bench_lat)
		goto out;

	reps = clamp(reps, 1U, REPS_MAX);
	td_wh_reset();
	seq_buf_printf(&out, "# kernel %s, HZ=%d, %u CPUs, median of %u interleaved runs\n",
		       utsname()->release, HZ, num_online_cpus(), reps);
	for (c = 0; c < NR_CANDS; c++) {
		td_cands[c].cache = kmem_cache_create(td_cands[c].cache_name, td_cands[c].size,
						      0, 0, NULL);
		if (!td_cands[c].cache)
			goto out;
		seq_buf_printf(&out, "# %s: sizeof %u, kmem_cache_size %u\n", td_cands[c].name,
			       td_cands[c].size, kmem_cache_size(td_cands[c].cache));
	}
	/* Interleaved, so that a busy spell on the host hits all of them. */
	for (cur_rep = 0; cur_rep < reps; cur_rep++) {
		for (c = 0; c < NR_CANDS; c++) {
			ret = with_entries(&td_cands[c], ents, n, sizes_fn);
			if (ret)
				goto out;
		}
	}
	take_medians(reps);
	print_tables();
	/*
	 * The rbtree's and the wheel's loop stands for the acceptor, which
	 * runs SCHED_FIFO at the lowest priority: so does this thread here.
	 */
	sched_set_fifo_low(current);
	for (cur_rep = 0; !ret && !lat_failed && cur_rep < reps; cur_rep++)
		for (c = 0; !ret && !lat_failed && c < NR_CANDS; c++)
			ret = with_entries(&td_cands[c], ents, LAT_TASKS, lateness_fn);
	sched_set_normal(current, 0);
	if (!ret && lat_failed)
		ret = -ETIMEDOUT;
	if (ret)
		goto out;
	print_lateness(reps);
	print_targets();
	if (!td_wh_empty())
		fail("the wheel still holds entries");
out:
	for (c = 0; c < NR_CANDS; c++)
		kmem_cache_destroy(td_cands[c].cache);
	vfree(bench_lat);
	vfree(offs);
	vfree(ents);
	return ret;
}

static int __init td_timer_bench_init(void)
{
	return bench_main(bench_run);
}

static void __exit td_timer_bench_exit(void)
{
	bench_exit();
}

module_init(td_timer_bench_init);
module_exit(td_timer_bench_exit);
MODULE_DESCRIPTION("tdispatch: delayed-task structure benchmark");
MODULE_LICENSE("GPL");
