/* SPDX-License-Identifier: GPL-2.0 */
/* Each dispatcher's view under /sys/kernel/debug/tdispatch (debugfs.c). */
#ifndef _TDISPATCH_DEBUGFS_H
#define _TDISPATCH_DEBUGFS_H

struct tdispatch;

void td_debugfs_init(void);
void td_debugfs_exit(void);
void td_debugfs_add(struct tdispatch *d);
void td_debugfs_remove(struct tdispatch *d);

#endif /* _TDISPATCH_DEBUGFS_H */
