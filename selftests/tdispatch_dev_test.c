// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/tdispatch basics: the node, the version ioctl and how bad calls
 * fail.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <linux/tdispatch.h>

#include "kselftest_harness.h"
#include "tdispatch_helpers.h"

#define MISC_MAJOR	10

FIXTURE(dev) {
	int fd;
};

FIXTURE_SETUP(dev)
{
	self->fd = td_open(_metadata);
}

FIXTURE_TEARDOWN(dev)
{
	close(self->fd);
}

TEST(node_is_misc_char_device_0666)
{
	struct stat st;

	ASSERT_EQ(0, stat(TD_DEV_PATH, &st));
	EXPECT_TRUE(S_ISCHR(st.st_mode));
	EXPECT_EQ(MISC_MAJOR, major(st.st_rdev));
	EXPECT_EQ(0666, st.st_mode & 07777);
	EXPECT_EQ(0, st.st_uid);
	EXPECT_EQ(0, st.st_gid);
}

/* Every feature of 1.0, the last bit this header defines. */
#define TD_FEATURES_1_0	(TDISPATCH_FEAT_SLOTS | (TDISPATCH_FEAT_SLOTS - 1))

TEST_F(dev, version_reports_features)
{
	struct tdispatch_version v = { .size = sizeof(v) };
	__u64 want = TD_FEATURES_1_0 & ~(sizeof(long) < 8 ? TDISPATCH_FEAT_SLOTS : 0);

	ASSERT_EQ(0, ioctl(self->fd, TDISPATCH_IOC_VERSION, &v));
	EXPECT_EQ(sizeof(v), v.size);
	EXPECT_EQ(0, v.pad);
	/* A 32-bit caller may run on a 64-bit kernel, which has slots. */
	EXPECT_EQ(want, v.features & want) TH_LOG("features %#llx", v.features);
	EXPECT_EQ(0, v.features & ~TD_FEATURES_1_0) TH_LOG("features %#llx", v.features);
}

/*
 * The size field is an argument's only version: a number with a size in
 * it, as the ioctls before 1.0 had, is another call, unknown.
 */
TEST_F(dev, numbers_carry_no_size)
{
	struct tdispatch_version v = { .size = sizeof(v) };

	EXPECT_EQ(-1, ioctl(self->fd, _IOWR(TDISPATCH_IOC_MAGIC, 0x00, struct tdispatch_version),
			    &v));
	EXPECT_EQ(ENOTTY, errno);
	EXPECT_EQ(-1, ioctl(self->fd, _IOR(TDISPATCH_IOC_MAGIC, 0x07, __u32), &v));
	EXPECT_EQ(ENOTTY, errno);
	EXPECT_EQ(-1, ioctl(self->fd, _IO(TDISPATCH_IOC_MAGIC, 0x12), &v));
	EXPECT_EQ(ENOTTY, errno);
	EXPECT_EQ(0, ioctl(self->fd, _IO(TDISPATCH_IOC_MAGIC, 0x00), &v));
}

/* The version in VERSION is the one modinfo and sysfs show. */
TEST_F(dev, version_names_the_module_version)
{
	struct tdispatch_version v = { .size = sizeof(v) };
	char sys[32] = "";
	FILE *f;

	ASSERT_EQ(0, ioctl(self->fd, TDISPATCH_IOC_VERSION, &v));
	ASSERT_EQ(sizeof(v), v.size);
	ASSERT_NE(NULL, memchr(v.module_version, 0, sizeof(v.module_version)));
	EXPECT_NE(0, v.module_version[0]);
	f = fopen("/sys/module/tdispatch/version", "r");
	ASSERT_NE(NULL, f);
	ASSERT_NE(NULL, fgets(sys, sizeof(sys), f));
	fclose(f);
	sys[strcspn(sys, "\n")] = 0;
	EXPECT_STREQ(sys, v.module_version);
}

TEST_F(dev, version_larger_struct_gets_kernel_size)
{
	struct {
		struct tdispatch_version v;
		__u64 future[4];
	} big;

	memset(&big, 0xa5, sizeof(big));
	big.v.size = sizeof(big);
	ASSERT_EQ(0, ioctl(self->fd, TDISPATCH_IOC_VERSION, &big));
	EXPECT_EQ(sizeof(big.v), big.v.size);
	EXPECT_NE(0, big.v.features & TDISPATCH_FEAT_USER);
	/* The kernel must not write past what it reports. */
	EXPECT_EQ(0xa5a5a5a5a5a5a5a5ULL, big.future[0]);
}

TEST_F(dev, version_size_too_small_is_einval)
{
	struct tdispatch_version v = { .size = sizeof(v) - 1 };

	EXPECT_EQ(-1, ioctl(self->fd, TDISPATCH_IOC_VERSION, &v));
	EXPECT_EQ(EINVAL, errno);
	v.size = 0;
	EXPECT_EQ(-1, ioctl(self->fd, TDISPATCH_IOC_VERSION, &v));
	EXPECT_EQ(EINVAL, errno);
	/* As every call's: above a page is E2BIG. */
	v.size = sysconf(_SC_PAGESIZE) + 1;
	EXPECT_EQ(-1, ioctl(self->fd, TDISPATCH_IOC_VERSION, &v));
	EXPECT_EQ(E2BIG, errno);
}

TEST_F(dev, version_bad_pointer_is_efault)
{
	void *none;

	EXPECT_EQ(-1, ioctl(self->fd, TDISPATCH_IOC_VERSION, NULL));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(-1, ioctl(self->fd, TDISPATCH_IOC_VERSION, (void *)1));
	EXPECT_EQ(EFAULT, errno);

	/* Readable size, unwritable struct: the copy out must fail. */
	none = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, none);
	EXPECT_EQ(-1, ioctl(self->fd, TDISPATCH_IOC_VERSION, none));
	/* The page reads as zeros, so the size check fails first. */
	EXPECT_EQ(EINVAL, errno);
	ASSERT_EQ(0, munmap(none, 4096));

	none = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, none);
	EXPECT_EQ(-1, ioctl(self->fd, TDISPATCH_IOC_VERSION, none));
	EXPECT_EQ(EFAULT, errno);
	ASSERT_EQ(0, munmap(none, 4096));
}

TEST_F(dev, version_readonly_struct_is_efault)
{
	struct tdispatch_version *v;

	v = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, v);
	v->size = sizeof(*v);
	ASSERT_EQ(0, mprotect(v, 4096, PROT_READ));
	EXPECT_EQ(-1, ioctl(self->fd, TDISPATCH_IOC_VERSION, v));
	EXPECT_EQ(EFAULT, errno);
	ASSERT_EQ(0, munmap(v, 4096));
}

TEST_F(dev, unknown_ioctls_are_enotty)
{
	struct tdispatch_version v = { .size = sizeof(v) };
	static const unsigned long cmds[] = {
		_IOWR(TDISPATCH_IOC_MAGIC, 0x00, struct tdispatch_version),
		_IOR(TDISPATCH_IOC_MAGIC, 0x00, struct tdispatch_version),
		_IO(TDISPATCH_IOC_MAGIC, 0x12),
		_IOWR(TDISPATCH_IOC_MAGIC, 0x7f, struct tdispatch_version),
		_IOWR(TDISPATCH_IOC_MAGIC, 0xff, __u64),
		_IOWR(TDISPATCH_IOC_MAGIC + 1, 0x00, struct tdispatch_version),
		TCGETS,
		0,
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cmds); i++) {
		errno = 0;
		EXPECT_EQ(-1, ioctl(self->fd, cmds[i], &v)) TH_LOG("cmd %#lx", cmds[i]);
		EXPECT_EQ(ENOTTY, errno) TH_LOG("cmd %#lx", cmds[i]);
	}
}

TEST_HARNESS_MAIN
