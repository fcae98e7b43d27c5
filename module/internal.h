/* SPDX-License-Identifier: GPL-2.0 */
/* Declarations shared between the files of tdispatch.ko; not an API. */
#ifndef _TDISPATCH_INTERNAL_H
#define _TDISPATCH_INTERNAL_H

#define TDISPATCH_MODULE_VERSION	"0.1.0"

int td_chardev_init(void);
void td_chardev_exit(void);

#endif /* _TDISPATCH_INTERNAL_H */
