// SPDX-License-Identifier: GPL-2.0
/*
 * Harness self-test: a module whose only job is to WARN once at load, so
 * that "make check" can prove its log scanner catches a WARN.
 */
#include <linux/bug.h>
#include <linux/module.h>

static int __init td_plant_warn_init(void)
{
	WARN(1, "tdispatch harness self-test: planted WARN\n");
	return 0;
}

static void __exit td_plant_warn_exit(void)
{
}

module_init(td_plant_warn_init);
module_exit(td_plant_warn_exit);
MODULE_DESCRIPTION("tdispatch harness self-test: planted WARN");
MODULE_LICENSE("GPL");
