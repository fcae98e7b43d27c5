/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What every benchmark module shares: it measures while it loads, writes
 * KTAP into a buffer with seq_buf, and leaves the text in
 * /sys/kernel/debug/<module>/results for "make bench" to read.  Every file
 * of a benchmark includes it; the one with module_init() defines
 * BENCH_MAIN first, and so holds the definitions.
 */
#ifndef TD_BENCH_H
#define TD_BENCH_H

#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/seq_buf.h>
#include <linux/sort.h>
#include <linux/vmalloc.h>

#ifndef BENCH_OUT_SIZE
#define BENCH_OUT_SIZE	(32 * 1024)
#endif

extern struct seq_buf out;
extern unsigned int failures;

/* A failed check: the KTAP result becomes "not ok". */
__printf(1, 2) void fail(const char *fmt, ...);
/* For sort(): u64s in ascending order. */
int cmp_u64(const void *a, const void *b);

#ifdef BENCH_MAIN

struct seq_buf out;
unsigned int failures;
static char *out_buf;
static struct dentry *bench_dir;

void fail(const char *fmt, ...)
{
	char line[160];
	va_list args;

	failures++;
	va_start(args, fmt);
	vsnprintf(line, sizeof(line), fmt, args);
	va_end(args);
	seq_buf_printf(&out, "# FAIL: %s\n", line);
}

int cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

static ssize_t results_read(struct file *f, char __user *buf, size_t len, loff_t *pos)
{
	return simple_read_from_buffer(buf, len, pos, out_buf, seq_buf_used(&out));
}

static const struct file_operations results_fops = {
	.owner = THIS_MODULE,
	.read = results_read,
	.llseek = default_llseek,
};

/* Run @run, a benchmark that prints into out, and publish what it printed. */
static int bench_main(int (*run)(void))
{
	int ret;

	out_buf = vzalloc(BENCH_OUT_SIZE);
	if (!out_buf)
		return -ENOMEM;
	seq_buf_init(&out, out_buf, BENCH_OUT_SIZE);
	seq_buf_printf(&out, "KTAP version 1\n1..1\n");
	ret = run();
	if (ret)
		fail("setup failed: %d", ret);
	/* What did not fit is lost: the verdict, at least, must fit. */
	if (seq_buf_has_overflowed(&out)) {
		out.len = BENCH_OUT_SIZE - 256;
		fail("the results overflowed their %u bytes: the end is cut", BENCH_OUT_SIZE);
	}
	/*
	 * The module's name, not KBUILD_MODNAME: a module built from several
	 * files of a subdirectory has that name's path in it.
	 */
	seq_buf_printf(&out, "%s 1 %s\n", failures ? "not ok" : "ok", THIS_MODULE->name);
	bench_dir = debugfs_create_dir(THIS_MODULE->name, NULL);
	debugfs_create_file("results", 0444, bench_dir, NULL, &results_fops);
	return 0;
}

static void bench_exit(void)
{
	debugfs_remove_recursive(bench_dir);
	vfree(out_buf);
}

#endif /* BENCH_MAIN */

#endif /* TD_BENCH_H */
