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

/* The engine's own state: the task cache and the debugfs root. */
static int __init td_engine_init(void)
{
	int ret;

	ret = td_task_cache_init();
	if (ret)
		return ret;
	td_debugfs_init();
	return 0;
}

static int __init tdispatch_user_init(void)
{
	int ret = td_chardev_init();

	if (ret)
		return ret;
	pr_info("version %s loaded\n", TDISPATCH_MODULE_VERSION);
	return 0;
}

#ifdef MODULE
static void td_engine_exit(void)
{
	td_debugfs_exit();
	td_task_cache_exit();
}

static int __init tdispatch_init(void)
{
	int ret;

	ret = td_engine_init();
	if (ret)
		return ret;
	ret = tdispatch_user_init();
	if (ret)
		td_engine_exit();
	return ret;
}

/* Every dispatcher is gone: drivers hold the module, and so do open files. */
static void __exit tdispatch_exit(void)
{
	td_chardev_exit();
	td_engine_exit();
}

module_init(tdispatch_init);
module_exit(tdispatch_exit);
#else
/*
 * Built in, the engine is ready before the initcalls of the code that
 * uses it (the link watch's dispatcher is made in net_dev_init(), a
 * subsys_initcall); the device, which needs the misc class, comes later.
 */
postcore_initcall(td_engine_init);
device_initcall(tdispatch_user_init);
#endif

MODULE_DESCRIPTION("Coalescing work dispatcher with per-CPU submission and batching workers");
MODULE_LICENSE("GPL");
MODULE_VERSION(TDISPATCH_MODULE_VERSION);
MODULE_AUTHOR("The tdispatch developers");
