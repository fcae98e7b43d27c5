// SPDX-License-Identifier: GPL-2.0
/*
 * tdispatch: a coalescing work dispatcher for drivers and userspace.
 *
 * This file only ties the pieces of the module together; each concern
 * lives in a file of its own.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>

#include "debugfs.h"
#include "file.h"
#include "submit.h"

static int __init tdispatch_init(void)
{
	int ret;

	ret = td_task_cache_init();
	if (ret)
		return ret;
	td_debugfs_init();
	ret = td_chardev_init();
	if (ret) {
		td_debugfs_exit();
		td_task_cache_exit();
		return ret;
	}
	pr_info("version %s loaded\n", TDISPATCH_MODULE_VERSION);
	return 0;
}

/* Every dispatcher is gone: drivers hold the module, and so do open files. */
static void __exit tdispatch_exit(void)
{
	td_chardev_exit();
	td_debugfs_exit();
	td_task_cache_exit();
}

module_init(tdispatch_init);
module_exit(tdispatch_exit);

MODULE_DESCRIPTION("Coalescing work dispatcher with per-CPU submission and batching workers");
MODULE_LICENSE("GPL");
MODULE_VERSION(TDISPATCH_MODULE_VERSION);
MODULE_AUTHOR("The tdispatch developers");
