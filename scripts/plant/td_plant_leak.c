// SPDX-License-Identifier: GPL-2.0
/*
 * Harness self-test: a module that leaks allocations at load, so that
 * "make check" can prove kmemleak and its scanner catch a leak.
 *
 * It leaks several: the last pointer may survive in a stale, cached
 * kernel stack that kmemleak still scans, which would hide a single leak.
 */
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/string.h>

#define TD_PLANT_LEAKS	8

static int __init td_plant_leak_init(void)
{
	int i;

	for (i = 0; i < TD_PLANT_LEAKS; i++) {
		void *p = kmalloc(256, GFP_KERNEL);

		if (!p)
			return -ENOMEM;
		/* Touch it so the allocation is not optimised away; drop it. */
		memset(p, 0x5a, 256);
	}
	pr_info("tdispatch harness self-test: planted %d leaks of 256 bytes\n", TD_PLANT_LEAKS);
	return 0;
}

static void __exit td_plant_leak_exit(void)
{
}

module_init(td_plant_leak_init);
module_exit(td_plant_leak_exit);
MODULE_DESCRIPTION("tdispatch harness self-test: planted leak");
MODULE_LICENSE("GPL");
