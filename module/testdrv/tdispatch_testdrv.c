// SPDX-License-Identifier: GPL-2.0
/*
 * A driver that publishes two dispatchers for the kselftests of named
 * dispatchers (selftests/tdispatch_named_test.c):
 *
 *   testdrv-rw  root:root 0644, takes user tasks: everyone may attach and
 *               read, only root may submit.  Every batch succeeds.
 *   testdrv-ro  published with the defaults: root may attach and read,
 *               nobody may submit.
 *
 * Writing 0 to /sys/module/tdispatch_testdrv/parameters/published
 * withdraws testdrv-rw, writing 1 publishes it again, so that the tests
 * can cut attached files off.
 *
 * At unload it checks that every task it accepted was released exactly
 * once, whatever the files attached to it were doing (a WARN, which fails
 * the test run, if not).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/err.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/tdispatch.h>

static struct tdispatch *td_rw, *td_ro;
/* Tasks ->release() saw, of testdrv-rw and of testdrv-ro. */
static atomic_long_t td_rw_released, td_ro_released;
/*
 * The parameter is writable from before init has made the dispatchers to
 * after exit has destroyed them (sysfs goes with the module): ->live,
 * under the lock, says whether there is anything to publish.
 */
static DEFINE_MUTEX(td_param_lock);
static bool published, live;

static enum tdispatch_result td_drv_process(struct tdispatch *d, struct tdispatch_batch *b)
{
	return TDISPATCH_RESULT_SUCCESS;
}

static void td_drv_release(struct tdispatch *d, struct tdispatch_task *t,
			   enum tdispatch_outcome outcome)
{
	kfree(tdispatch_task_payload(t));
	atomic_long_inc(d == td_rw ? &td_rw_released : &td_ro_released);
}

static const struct tdispatch_ops td_drv_ops = {
	.process = td_drv_process,
	.release = td_drv_release,
};

/* The payload is a copy of the bytes; a leading '!' is refused. */
static void *td_drv_user_payload(struct tdispatch *d, const struct tdispatch_user_task *ut)
{
	if (((const char *)ut->data)[0] == '!')
		return ERR_PTR(-EPROTO);
	return kmemdup(ut->data, ut->len, GFP_KERNEL_ACCOUNT) ?: ERR_PTR(-ENOMEM);
}

static void td_drv_user_free(struct tdispatch *d, void *payload)
{
	kfree(payload);
}

static const struct tdispatch_publish td_rw_access = {
	.uid = GLOBAL_ROOT_UID,
	.gid = GLOBAL_ROOT_GID,
	.mode = 0644,
	.user_payload = td_drv_user_payload,
	.user_free = td_drv_user_free,
};

static int td_published_set(const char *val, const struct kernel_param *kp)
{
	bool on;
	int ret;

	ret = kstrtobool(val, &on);
	if (ret)
		return ret;
	mutex_lock(&td_param_lock);
	if (!live)
		ret = -ENODEV;
	else if (on && !published)
		ret = tdispatch_publish(td_rw, &td_rw_access);
	else if (!on && published)
		tdispatch_unpublish(td_rw);
	if (!ret)
		published = on;
	mutex_unlock(&td_param_lock);
	return ret;
}

static const struct kernel_param_ops td_published_ops = {
	.set = td_published_set,
	.get = param_get_bool,
};
module_param_cb(published, &td_published_ops, &published, 0644);
MODULE_PARM_DESC(published, "testdrv-rw is published (write 0 or 1)");

static struct tdispatch *td_drv_create(const char *name)
{
	struct tdispatch_config cfg = {
		.name = name,
		.max_buffer = 1024,
		.max_batch = 16,
		.max_delay_ns = NSEC_PER_MSEC,
		.workers = 2,
		.max_input = 4096,
		/* For a key that a quarter of a million tasks watch. */
		.max_delayed = 1 << 20,
	};

	return tdispatch_create(&cfg, &td_drv_ops, NULL);
}

static int __init td_drv_init(void)
{
	int ret;

	td_rw = td_drv_create("testdrv-rw");
	if (IS_ERR(td_rw))
		return PTR_ERR(td_rw);
	td_ro = td_drv_create("testdrv-ro");
	ret = PTR_ERR_OR_ZERO(td_ro);
	if (!ret)
		ret = tdispatch_publish(td_ro, NULL);
	if (!ret)
		ret = tdispatch_publish(td_rw, &td_rw_access);
	if (ret) {
		if (!IS_ERR(td_ro))
			tdispatch_destroy(td_ro, TDISPATCH_DISCARD, 0);
		tdispatch_destroy(td_rw, TDISPATCH_DISCARD, 0);
		return ret;
	}
	mutex_lock(&td_param_lock);
	published = true;
	live = true;
	mutex_unlock(&td_param_lock);
	return 0;
}

/*
 * Withdrawn, nothing can submit any more: what was accepted must all come
 * back through ->release() by the end of destroy.
 */
static void td_drv_destroy(struct tdispatch *d, atomic_long_t *released)
{
	struct tdispatch_stats st;

	tdispatch_unpublish(d);
	tdispatch_get_stats(d, &st);
	tdispatch_destroy(d, TDISPATCH_DISCARD, 0);
	WARN(atomic_long_read(released) != st.accepted,
	     "%s: accepted %llu tasks, released %ld\n", KBUILD_MODNAME, st.accepted,
	     atomic_long_read(released));
}

static void __exit td_drv_exit(void)
{
	mutex_lock(&td_param_lock);
	live = false;
	mutex_unlock(&td_param_lock);
	/* Attached files get ENODEV from the withdrawal on. */
	td_drv_destroy(td_ro, &td_ro_released);
	td_drv_destroy(td_rw, &td_rw_released);
}

module_init(td_drv_init);
module_exit(td_drv_exit);
MODULE_DESCRIPTION("tdispatch: a driver with named dispatchers, for the selftests");
MODULE_LICENSE("GPL");
