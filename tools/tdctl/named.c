// SPDX-License-Identifier: GPL-2.0
/*
 * Named dispatchers: tdctl list, and -n NAME (attach, with the rights
 * its driver grants, and say why when it does not).
 */
#include "tdctl.h"

/* The module must know named dispatchers; says so if not. */
static int check_named(int fd)
{
	return need_feature(fd, TDISPATCH_FEAT_NAMED, "named dispatchers");
}

/* Every named dispatcher, as this file's opener sees them: malloc()ed. */
static int list_named(int fd, struct tdispatch_entry **out, __u32 *n)
{
	struct tdispatch_entry *e = NULL, *more;
	struct tdispatch_list l;
	__u32 room = 0;

	for (;;) {
		l = (struct tdispatch_list) {
			.size = sizeof(l),
			.entries = (uintptr_t)e,
			.max_entries = room,
		};
		if (td_ioctl(fd, TDISPATCH_IOC_LIST, &l, "list")) {
			free(e);
			return 1;
		}
		if (l.count <= room)
			break;
		/* More than there was room for, or more since: again. */
		room = l.count + 8;
		more = realloc(e, room * sizeof(*e));
		if (!more) {
			free(e);
			return fail("list: %s", strerror(ENOMEM));
		}
		e = more;
	}
	*out = e;
	*n = l.count;
	return 0;
}

bool may_submit(const struct tdispatch_entry *e)
{
	return (e->flags & TDISPATCH_ENTRY_SUBMIT) && (e->flags & TDISPATCH_ENTRY_MAY_WRITE);
}

static const char *may_do(const struct tdispatch_entry *e)
{
	if (!(e->flags & TDISPATCH_ENTRY_MAY_READ))
		return "nothing";
	return may_submit(e) ? "read, submit" : "read";
}

static void print_list_json(const struct tdispatch_entry *e, __u32 n)
{
	__u32 i;

	printf("[");
	for (i = 0; i < n; i++) {
		printf("%s{\"name\":", i ? "," : "");
		print_json_string(e[i].name, sizeof(e[i].name));
		printf(",\"uid\":%u,\"gid\":%u,\"mode\":\"%04o\",\"submit\":%s,", e[i].uid,
		       e[i].gid, e[i].mode, e[i].flags & TDISPATCH_ENTRY_SUBMIT ? "true" : "false");
		printf("\"may_read\":%s,\"may_submit\":%s}",
		       e[i].flags & TDISPATCH_ENTRY_MAY_READ ? "true" : "false",
		       may_submit(&e[i]) ? "true" : "false");
	}
	printf("]\n");
}

static void print_list_text(const struct tdispatch_entry *e, __u32 n)
{
	char owner[24];
	__u32 i;

	if (!n) {
		printf("no named dispatchers: no driver has published one\n");
		return;
	}
	printf("%-24s %-13s %-5s %-7s %s\n", "NAME", "OWNER", "MODE", "SUBMIT", "YOU MAY");
	for (i = 0; i < n; i++) {
		snprintf(owner, sizeof(owner), "%u:%u", e[i].uid, e[i].gid);
		print_name(e[i].name, 24);
		printf(" %-13s %04o  %-7s %s\n", owner, e[i].mode,
		       e[i].flags & TDISPATCH_ENTRY_SUBMIT ? "yes" : "no", may_do(&e[i]));
	}
}

int cmd_list(int argc, char **argv)
{
	bool json = false;
	const struct opt opts[] = {
		FLAG_OPT("json", &json),
		END_OPT,
	};
	struct tdispatch_entry *e;
	__u32 n;
	int fd, ret;

	parse_opts_only(argc, argv, opts);
	fd = open_dev();
	if (fd < 0)
		return 1;
	ret = check_named(fd) || list_named(fd, &e, &n);
	close(fd);
	if (ret)
		return 1;
	if (json)
		print_list_json(e, n);
	else
		print_list_text(e, n);
	free(e);
	return 0;
}

/* Whom @mode grants @bit (4 read, 2 write), in words, into @buf. */
static const char *grantees(char *buf, size_t len, const struct tdispatch_entry *e,
			    unsigned int bit)
{
	bool u = e->mode & (bit << 6), g = e->mode & (bit << 3), o = e->mode & bit;
	size_t at = 0;

	if (u && g && o)
		return "everyone";
	if (!u && !g && !o)
		return "no one";
	buf[0] = '\0';
	if (u)
		at += snprintf(buf + at, len - at, "its owner (uid %u)", e->uid);
	if (g && at < len)
		at += snprintf(buf + at, len - at, "%sgroup %u", at ? " and " : "", e->gid);
	if (o && at < len)
		snprintf(buf + at, len - at, "%severyone else", at ? " and " : "");
	return buf;
}

/* Why ATTACH of @name failed with EACCES, from what LIST on @fd says. */
static void explain_denied(int fd, const char *name, bool submit)
{
	struct tdispatch_entry *e, *it = NULL;
	char r[96], w[96];
	__u32 n, i;

	if (list_named(fd, &e, &n)) {
		fail("attach %s: %s", name, strerror(EACCES));
		return;
	}
	for (i = 0; i < n && !it; i++)
		if (!strncmp(e[i].name, name, sizeof(e[i].name)))
			it = &e[i];
	if (!it) {
		fail("attach %s: %s", name, strerror(EACCES));
	} else {
		fprintf(stderr, "tdctl: attach %s: %s (the driver grants read to %s", name,
			strerror(EACCES), grantees(r, sizeof(r), it, 4));
		if (it->flags & TDISPATCH_ENTRY_SUBMIT)
			fprintf(stderr, " and submit to %s", grantees(w, sizeof(w), it, 2));
		else if (submit)
			fprintf(stderr, " and takes no tasks from userspace");
		fprintf(stderr, ": owner %u:%u, mode %04o; you are uid %u, gid %u)", it->uid,
			it->gid, it->mode, (unsigned int)geteuid(), (unsigned int)getegid());
		if (submit && (it->flags & TDISPATCH_ENTRY_MAY_READ))
			fprintf(stderr, ";\ntdctl: you may read it: stats, watch, events, query");
		failed();
	}
	free(e);
}

/*
 * Open the device and attach to the dispatcher @name with @flags
 * (TDISPATCH_ATTACH_*) and @queue events: the descriptor, or -1 after
 * saying why not.
 */
static int attach_named(const char *name, __u32 flags, __u32 queue)
{
	struct tdispatch_attach a = {
		.size = sizeof(a),
		.flags = flags,
		.event_queue = queue,
	};
	int fd, err;

	if (strlen(name) >= sizeof(a.name)) {
		fail("attach %s: no dispatcher has a name that long (at most %zu bytes)",
		     name, sizeof(a.name) - 1);
		return -1;
	}
	memcpy(a.name, name, strlen(name));
	fd = open_dev();
	if (fd < 0)
		return -1;
	if (check_named(fd)) {
		close(fd);
		return -1;
	}
	if (!ioctl(fd, TDISPATCH_IOC_ATTACH, &a))
		return fd;
	err = errno;
	if (err == EACCES)
		explain_denied(fd, name, flags & TDISPATCH_ATTACH_SUBMIT);
	else if (err == ENOENT)
		fail("attach %s: no dispatcher of that name ('tdctl list' shows them)", name);
	else if (err == EOPNOTSUPP)
		fail("attach %s: its driver takes no tasks from userspace; you may read it:\n"
		     "       stats, watch, events, query", name);
	else
		fail("attach %s: %s%s", name, strerror(err), errno_hint(err));
	close(fd);
	return -1;
}

/* The file of -n NAME, attached with @flags, or the one in TDISPATCH_FD. */
int dispatcher_fd(__u32 flags, __u32 queue)
{
	return target ? attach_named(target, flags, queue) : env_fd();
}
