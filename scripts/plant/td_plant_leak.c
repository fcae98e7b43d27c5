// SPDX-License-Identifier: GPL-2.0
/*
 * Harness self-test: a module that leaks one allocation at load, so that
 * "make check" can prove kmemleak and its scanner catch a leak.
 */
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/string.h>

static int __init td_plant_leak_init(void)
{
	void *p = kmalloc(256, GFP_KERNEL);

	if (!p)
		return -ENOMEM;
	/* Touch it so the allocation cannot be optimised away; then drop it. */
	memset(p, 0x5a, 256);
	pr_info("tdispatch harness self-test: planted leak of 256 bytes\n");
	return 0;
}

static void __exit td_plant_leak_exit(void)
{
}

module_init(td_plant_leak_init);
module_exit(td_plant_leak_exit);
MODULE_DESCRIPTION("tdispatch harness self-test: planted leak");
MODULE_LICENSE("GPL");
