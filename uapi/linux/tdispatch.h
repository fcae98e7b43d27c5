/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * tdispatch: a coalescing work dispatcher, userspace interface.
 *
 * Every ioctl argument begins with a __u32 size field that the caller sets
 * to sizeof() of the struct it was compiled with.  Structs only ever grow
 * at the end; the kernel accepts any size from the first published one up,
 * requires that bytes it does not know about are zero, and reports what it
 * filled in.  The layout is the same for 32- and 64-bit userspace, so no
 * compat ioctl is needed.
 */
#ifndef _UAPI_LINUX_TDISPATCH_H
#define _UAPI_LINUX_TDISPATCH_H

#include <linux/ioctl.h>
#include <linux/types.h>

/* Bumped on incompatible changes only; additions are feature bits. */
#define TDISPATCH_ABI_VERSION		1

#define TDISPATCH_DEV_NAME		"tdispatch"
#define TDISPATCH_IOC_MAGIC		0xD7

/**
 * struct tdispatch_version - what this kernel's tdispatch provides
 * @size: in: sizeof(struct tdispatch_version) as the caller knows it, at
 *	least %TDISPATCH_VERSION_SIZE_VER0; out: the number of bytes the
 *	kernel wrote, the smaller of the caller's and the kernel's size.
 * @abi_version: out: %TDISPATCH_ABI_VERSION of the running module.
 * @features: out: bitmap of %TDISPATCH_FEAT_* the module supports; bits
 *	that a caller does not know must be ignored.
 *
 * Argument of %TDISPATCH_IOC_VERSION.
 */
struct tdispatch_version {
	__u32 size;
	__u32 abi_version;
	__u64 features;
};

#define TDISPATCH_VERSION_SIZE_VER0	16

/* No optional features yet; later ABI additions each get a bit here. */
#define TDISPATCH_FEAT_ALL		0ULL

/* Report the ABI version and feature bitmap.  Errors: EFAULT, EINVAL. */
#define TDISPATCH_IOC_VERSION	_IOWR(TDISPATCH_IOC_MAGIC, 0x00, struct tdispatch_version)

#endif /* _UAPI_LINUX_TDISPATCH_H */
