// SPDX-License-Identifier: GPL-2.0
/*
 * linkstorm: a link storm on dummy devices, made through the kernel's own
 * interfaces (a carrier write in sysfs, rtnetlink), to test the kernel's
 * link watch (net/core/link_watch.c), as mainline has it or converted to
 * tdispatch.  It needs root and the dummy driver as a module file.
 *
 *   linkstorm -m dummy.ko [-n devices] [-w writers] [-t storm_ms]
 *
 * It loads the driver with that many devices, brings them up and prints
 * KTAP for three cases:
 *  1. writers, each owning a share of the devices, set random carriers for
 *     storm_ms while a twentieth of the devices are deleted; after it,
 *     every device left must show the carrier its owner wrote last at once
 *     and the operstate that goes with it within a minute (awaited on
 *     rtnetlink's link notifications);
 *  2. the deleted devices are gone;
 *  3. the driver is unloaded during a second storm, and every device goes.
 * A reference leaked on the way shows in the kernel log ("waiting for
 * dummyN to become free"), which the test VM's judge fails.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/if.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#define CONVERGE_MS	60000

struct dev {
	int carrier;		/* its sysfs carrier file, open for writing */
	int ifindex;
	int8_t last;		/* the carrier its owner wrote last */
	bool was_off;		/* it wrote the carrier off once: a link event */
	bool gone;		/* deleted */
};

static struct dev *devs;	/* shared with the writers */
static unsigned int nr_devs = 1000, nr_writers = 4, storm_ms = 5000;
static const char *module_path;
static int failed;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static int read_attr(unsigned int i, const char *attr, char *buf, size_t len)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/sys/class/net/dummy%u/%s", i, attr);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = 0;
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

static void ktap(bool ok, unsigned int nr, const char *name, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %u %s # ", ok ? "" : "not ", nr, name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	failed += !ok;
}

static int load_driver(void)
{
	char params[32];
	int fd = open(module_path, O_RDONLY | O_CLOEXEC);
	int ret;

	if (fd < 0)
		return -errno;
	snprintf(params, sizeof(params), "numdummies=%u", nr_devs);
	ret = syscall(SYS_finit_module, fd, params, 0) ? -errno : 0;
	close(fd);
	return ret;
}

/* The devices up, their carrier files open, their carriers on. */
static int open_devices(void)
{
	int sock = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	char path[64], buf[16];
	unsigned int i;

	if (sock < 0)
		return -errno;
	for (i = 0; i < nr_devs; i++) {
		struct ifreq ifr = { };

		snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "dummy%u", i);
		if (ioctl(sock, SIOCGIFFLAGS, &ifr))
			return -errno;
		ifr.ifr_flags |= IFF_UP;
		if (ioctl(sock, SIOCSIFFLAGS, &ifr))
			return -errno;
		if (read_attr(i, "ifindex", buf, sizeof(buf)))
			return -ENOENT;
		devs[i].ifindex = atoi(buf);
		devs[i].last = 1;
		snprintf(path, sizeof(path), "/sys/class/net/dummy%u/carrier", i);
		devs[i].carrier = open(path, O_WRONLY);
		if (devs[i].carrier < 0)
			return -errno;
	}
	close(sock);
	return 0;
}

/* Writer @w: random carriers on its devices (i % writers == w) until @end. */
static void writer(unsigned int w, uint64_t end, uint64_t *writes)
{
	unsigned int per = (nr_devs - w + nr_writers - 1) / nr_writers;
	unsigned int seed = w * 2654435761U + 1;
	uint64_t n = 0;

	while (now_ns() < end) {
		unsigned int i = w + nr_writers * (rand_r(&seed) % per);
		int8_t v = rand_r(&seed) & 1;

		if (devs[i].gone)
			continue;
		if (pwrite(devs[i].carrier, v ? "1" : "0", 1, 0) == 1) {
			devs[i].last = v;
			devs[i].was_off |= !v;
			n++;
		}
	}
	*writes = n;
}

/* The writers, forked, storming until @end; their pids in @pids. */
static void start_writers(pid_t *pids, uint64_t end, uint64_t *writes)
{
	unsigned int w;

	for (w = 0; w < nr_writers; w++) {
		pids[w] = fork();
		if (pids[w] == 0) {
			writer(w, end, &writes[w]);
			_exit(0);
		}
	}
}

static uint64_t join_writers(pid_t *pids, uint64_t *writes)
{
	uint64_t total = 0;
	unsigned int w;

	for (w = 0; w < nr_writers; w++) {
		if (pids[w] > 0)
			waitpid(pids[w], NULL, 0);
		total += writes[w];
	}
	return total;
}

static int rtnl_open(unsigned int groups)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK, .nl_groups = groups };
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);

	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		close(fd);
		return -errno;
	}
	return fd;
}

/* RTM_DELLINK of @ifindex, and its answer. */
static int delete_link(int nl, int ifindex)
{
	struct {
		struct nlmsghdr nh;
		struct ifinfomsg ifi;
	} req = {
		.nh = {
			.nlmsg_len = sizeof(req),
			.nlmsg_type = RTM_DELLINK,
			.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK,
		},
		.ifi = { .ifi_family = AF_UNSPEC, .ifi_index = ifindex },
	};
	char buf[512];
	struct nlmsghdr *nh = (struct nlmsghdr *)buf;
	ssize_t n;

	if (send(nl, &req, sizeof(req), 0) < 0)
		return -errno;
	n = recv(nl, buf, sizeof(buf), 0);
	if (n < (ssize_t)sizeof(*nh) || nh->nlmsg_type != NLMSG_ERROR)
		return -EPROTO;
	return ((struct nlmsgerr *)NLMSG_DATA(nh))->error;
}

/*
 * How many devices left show other than what was written last: their
 * operstate, and with @carrier their carrier too (whose read syncs the
 * device's link watch, linkwatch_sync_dev(), so it comes last); with @say,
 * the first few are printed.
 */
static unsigned int mismatches(bool carrier, bool say)
{
	unsigned int i, bad = 0;
	char op[32], ca[32] = "-";

	for (i = 0; i < nr_devs; i++) {
		int last = devs[i].last;
		bool wrong;

		if (devs[i].gone)
			continue;
		if (read_attr(i, "operstate", op, sizeof(op)))
			snprintf(op, sizeof(op), "(unreadable)");
		/* Never off: its carrier never changed, no link event came. */
		wrong = strcmp(op, !devs[i].was_off ? "unknown" : last ? "up" : "down");
		if (carrier) {
			if (read_attr(i, "carrier", ca, sizeof(ca)))
				snprintf(ca, sizeof(ca), "(unreadable)");
			wrong |= strcmp(ca, last ? "1" : "0");
		}
		if (wrong && say && bad < 5)
			printf("# dummy%u: written %d, carrier %s, operstate %s\n",
			       i, last, ca, op);
		bad += wrong;
	}
	return bad;
}

/*
 * Wait, on the link notifications of @nl, until every device's operstate
 * is what its owner wrote last, then check the carriers; the milliseconds
 * the operstates took, or -1.
 */
static int converge(int nl)
{
	uint64_t start = now_ns(), deadline = start + CONVERGE_MS * 1000000ULL;
	char buf[16384];
	unsigned int bad;
	int ms;

	while (mismatches(false, false)) {
		struct pollfd p = { .fd = nl, .events = POLLIN };
		uint64_t now = now_ns();

		if (now >= deadline)
			break;
		if (poll(&p, 1, (deadline - now) / 1000000 + 1) < 0)
			return -1;
		/* Drained: any change after this wakes the next poll. */
		while (recv(nl, buf, sizeof(buf), MSG_DONTWAIT) > 0 || errno == ENOBUFS)
			;
	}
	ms = (now_ns() - start) / 1000000;
	bad = mismatches(true, true);
	if (bad)
		printf("# %u devices differ %d ms after the storm\n", bad, ms);
	return bad ? -1 : ms;
}

static void storm_with_deletions(void)
{
	pid_t pids[64];
	uint64_t *writes = mmap(NULL, sizeof(*writes) * nr_writers, PROT_READ | PROT_WRITE,
				MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	unsigned int i, deleted = 0, del_from = nr_devs - nr_devs / 20;
	uint64_t end = now_ns() + storm_ms * 1000000ULL, total;
	int nl = rtnl_open(0), mon, ms, err = 0;
	char buf[32];

	if (nl < 0 || writes == MAP_FAILED) {
		ktap(false, 1, "storm_converges", "netlink: %s", strerror(nl < 0 ? -nl : errno));
		return;
	}
	start_writers(pids, end, writes);
	/* Halfway through, delete the last twentieth, while they are written. */
	usleep(storm_ms * 500);
	for (i = del_from; i < nr_devs; i++) {
		devs[i].gone = true;
		err = delete_link(nl, devs[i].ifindex);
		if (err)
			break;
		deleted++;
	}
	/* Subscribed before the last write: no change of state goes unseen. */
	mon = rtnl_open(RTMGRP_LINK);
	total = join_writers(pids, writes);
	printf("# storm: %u devices, %u writers, %u ms, %llu carrier writes, %u deleted in it\n",
	       nr_devs, nr_writers, storm_ms, (unsigned long long)total, deleted);
	ms = mon < 0 ? -1 : converge(mon);
	if (ms < 0)
		ktap(false, 1, "storm_converges", "not every device as written last");
	else
		ktap(total, 1, "storm_converges",
		     "every device as written last %d ms after the storm", ms);
	for (i = del_from; i < nr_devs && !err; i++)
		if (!read_attr(i, "ifindex", buf, sizeof(buf)))
			err = -EEXIST;
	ktap(!err, 2, "deleted_in_storm_are_gone", "%u deleted: %s", deleted,
	     err ? strerror(-err) : "none left");
	if (mon >= 0)
		close(mon);
	close(nl);
	munmap(writes, sizeof(*writes) * nr_writers);
}

static void unload_in_storm(void)
{
	pid_t pids[64];
	uint64_t *writes = mmap(NULL, sizeof(*writes) * nr_writers, PROT_READ | PROT_WRITE,
				MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	uint64_t end = now_ns() + storm_ms * 1000000ULL, t;
	unsigned int i, left = 0;
	char buf[32];
	int ret;

	if (writes == MAP_FAILED) {
		ktap(false, 3, "unload_in_storm", "mmap: %s", strerror(errno));
		return;
	}
	start_writers(pids, end, writes);
	usleep(storm_ms * 500);
	t = now_ns();
	ret = syscall(SYS_delete_module, "dummy", 0) ? -errno : 0;
	t = now_ns() - t;
	join_writers(pids, writes);
	for (i = 0; i < nr_devs; i++)
		left += !read_attr(i, "ifindex", buf, sizeof(buf));
	ktap(!ret && !left, 3, "unload_in_storm", "rmmod: %s in %llu ms, %u devices left",
	     ret ? strerror(-ret) : "done", (unsigned long long)(t / 1000000), left);
	munmap(writes, sizeof(*writes) * nr_writers);
}

int main(int argc, char **argv)
{
	int opt, ret;

	while ((opt = getopt(argc, argv, "m:n:w:t:")) != -1) {
		switch (opt) {
		case 'm':
			module_path = optarg;
			break;
		case 'n':
			nr_devs = strtoul(optarg, NULL, 0);
			break;
		case 'w':
			nr_writers = strtoul(optarg, NULL, 0);
			break;
		case 't':
			storm_ms = strtoul(optarg, NULL, 0);
			break;
		default:
			goto usage;
		}
	}
	if (!module_path || nr_devs < 20 || !nr_writers || nr_writers > 64 ||
	    nr_writers > nr_devs || !storm_ms)
		goto usage;
	printf("KTAP version 1\n1..3\n");
	fflush(stdout);
	devs = mmap(NULL, sizeof(*devs) * nr_devs, PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ret = devs == MAP_FAILED ? -errno : load_driver();
	if (!ret)
		ret = open_devices();
	if (ret) {
		printf("Bail out! dummy devices: %s\n", strerror(-ret));
		return 1;
	}
	storm_with_deletions();
	unload_in_storm();
	return failed ? 1 : 0;
usage:
	fprintf(stderr, "usage: %s -m dummy.ko [-n devices] [-w writers] [-t storm_ms]\n",
		argv[0]);
	return 2;
}
