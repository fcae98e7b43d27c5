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
 *
 *   linkstorm -m dummy.ko -b rounds [-n devices] [-w writers] [-t storm_ms]
 *             [-r writes_per_s]
 *
 * measures instead (make bench): each round, from every carrier on and
 * shown, the writers offer that many
 * carrier writes a second in all for storm_ms, and one LWROUND line says
 * how long a write that changed a carrier took to show in a link
 * notification's operstate (from the first such write not yet shown),
 * the CPU time of every CPU per write, and the link watch's passes:
 * executions of its work (linkwatch_event, or tdispatch's td_batch_work),
 * each holding RTNL, from the workqueue tracepoints, and their time in
 * all per write.
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
	uint64_t since;		/* bench: first write not yet shown, or 0 */
};

static struct dev *devs;	/* shared with the writers */
static unsigned int nr_devs = 1000, nr_writers = 4, storm_ms = 5000, rate;
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
	uint64_t n = 0, t, next = now_ns(), gap = rate ? 1000000000ULL * nr_writers / rate : 0;

	while ((t = now_ns()) < end) {
		unsigned int i = w + nr_writers * (rand_r(&seed) % per);
		int8_t v = rand_r(&seed) & 1;

		if (devs[i].gone)
			continue;
		if (gap) {
			struct timespec ts = { next / 1000000000ULL, next % 1000000000ULL };

			clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
			next += gap;
			t = now_ns();
		}
		/*
		 * A change is a link event, whose notification is awaited:
		 * ->last, then ->since, before the write, which the kernel may
		 * process and notify before it returns.
		 */
		if (v != devs[i].last) {
			devs[i].last = v;
			if (!__atomic_load_n(&devs[i].since, __ATOMIC_ACQUIRE))
				__atomic_store_n(&devs[i].since, t, __ATOMIC_RELEASE);
		}
		if (pwrite(devs[i].carrier, v ? "1" : "0", 1, 0) == 1) {
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

/* ---- make bench: the link watch measured -------------------------------- */

#define TRACEFS	"/sys/kernel/tracing"
#define MAX_SAMPLES	1048576

static int write_str(const char *path, const char *str)
{
	int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC), ok;

	if (fd < 0)
		return -errno;
	ok = write(fd, str, strlen(str)) == (ssize_t)strlen(str);
	close(fd);
	return ok ? 0 : -EIO;
}

/* The address of @sym in /proc/kallsyms, or 0. */
static unsigned long long ksym(const char *sym)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	unsigned long long addr, found = 0;
	char type, name[256];

	while (f && fscanf(f, "%llx %c %255s%*[^\n]", &addr, &type, name) == 3)
		if (!strcmp(name, sym)) {
			found = addr;
			break;
		}
	if (f)
		fclose(f);
	return found;
}

/* Busy time of every CPU so far, in ns, from /proc/stat. */
static uint64_t cpu_busy_ns(void)
{
	unsigned long long v[8] = { 0 };
	FILE *f = fopen("/proc/stat", "r");
	int n = f ? fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu",
			   &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) : 0;

	if (f)
		fclose(f);
	if (n < 8)
		return 0;
	/* user nice system (idle iowait) irq softirq steal */
	return (v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) * (1000000000ULL / sysconf(_SC_CLK_TCK));
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The @pct-th percentile of @v (sorted here), in us. */
static double pct_us(uint64_t *v, size_t n, double pct)
{
	size_t i;

	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmp_u64);
	i = (size_t)(pct / 100 * (n - 1) + 0.5);
	return v[i] / 1000.0;
}

/* A link notification: sample the device's wait if it shows the last write. */
static void link_note(struct nlmsghdr *nh, const int *dev_of, int max_ifindex,
		      uint64_t now, uint64_t *lat, size_t *nlat)
{
	struct ifinfomsg *ifi = NLMSG_DATA(nh);
	int len = nh->nlmsg_len - NLMSG_LENGTH(sizeof(*ifi)), i;
	struct rtattr *a = IFLA_RTA(ifi);
	uint64_t since;

	if (nh->nlmsg_type != RTM_NEWLINK || ifi->ifi_index > max_ifindex)
		return;
	i = dev_of[ifi->ifi_index];
	if (i < 0)
		return;
	for (; RTA_OK(a, len); a = RTA_NEXT(a, len)) {
		uint8_t op;

		if (a->rta_type != IFLA_OPERSTATE)
			continue;
		op = *(uint8_t *)RTA_DATA(a);
		since = __atomic_load_n(&devs[i].since, __ATOMIC_ACQUIRE);
		if (!since || op != (devs[i].last ? IF_OPER_UP : IF_OPER_DOWN))
			return;
		/* Unless a newer write came meanwhile, which is still awaited. */
		if (__atomic_compare_exchange_n(&devs[i].since, &since, 0, false,
						__ATOMIC_ACQ_REL, __ATOMIC_RELAXED) &&
		    *nlat < MAX_SAMPLES)
			lat[(*nlat)++] = now - since;
		return;
	}
}

static unsigned int unshown(void)
{
	unsigned int i, n = 0;

	for (i = 0; i < nr_devs; i++)
		n += !!__atomic_load_n(&devs[i].since, __ATOMIC_ACQUIRE);
	return n;
}

/*
 * The executions of the link watch's work in the trace: their number and
 * their times (start to end, RTNL taken and dropped inside) into @pass.
 */
static size_t passes(const char *fn, uint64_t *pass)
{
	FILE *f = fopen(TRACEFS "/trace", "r");
	char line[512], key[96];
	double start = -1, ts;
	size_t n = 0;

	snprintf(key, sizeof(key), "function %s", fn);
	while (f && fgets(line, sizeof(line), f)) {
		char *ev = strstr(line, ": workqueue_execute_"), *p;

		if (!ev || !strstr(ev, key))
			continue;
		for (p = ev; p > line && p[-1] != ' '; p--)
			;
		ts = atof(p);
		if (!strncmp(ev, ": workqueue_execute_start", 25))
			start = ts;
		else if (start >= 0 && n < MAX_SAMPLES)
			pass[n++] = (uint64_t)((ts - start) * 1e9), start = -1;
	}
	if (f)
		fclose(f);
	return n;
}

static void bench_round(unsigned int round, int mon, const int *dev_of, int max_ifindex,
			const char *fn, uint64_t *lat, uint64_t *pass)
{
	uint64_t *writes = mmap(NULL, sizeof(*writes) * nr_writers, PROT_READ | PROT_WRITE,
				MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	uint64_t start, end, deadline, cpu, total, now, work;
	size_t nlat = 0, npass;
	static char buf[1 << 16];
	pid_t pids[64];
	unsigned int i;

	/* Every round from the same state: each carrier on, and shown. */
	for (i = 0; i < nr_devs; i++)
		if (devs[i].last != 1 && pwrite(devs[i].carrier, "1", 1, 0) == 1)
			devs[i].last = 1;
	if (converge(mon) < 0)
		printf("# round %u: not every carrier on before it\n", round);
	for (i = 0; i < nr_devs; i++)
		devs[i].since = 0;
	write_str(TRACEFS "/trace", "");
	write_str(TRACEFS "/tracing_on", "1");
	cpu = cpu_busy_ns();
	start = now_ns();
	end = start + storm_ms * 1000000ULL;
	deadline = end + CONVERGE_MS * 1000000ULL;
	start_writers(pids, end, writes);
	while ((now = now_ns()) < deadline && (now < end || unshown())) {
		struct pollfd p = { .fd = mon, .events = POLLIN };
		ssize_t len;

		if (poll(&p, 1, 10) <= 0)
			continue;
		while ((len = recv(mon, buf, sizeof(buf), MSG_DONTWAIT)) > 0) {
			struct nlmsghdr *nh = (struct nlmsghdr *)buf;

			now = now_ns();
			for (; NLMSG_OK(nh, len); nh = NLMSG_NEXT(nh, len))
				link_note(nh, dev_of, max_ifindex, now, lat, &nlat);
		}
		if (len < 0 && errno == ENOBUFS)
			printf("# round %u: link notifications lost (ENOBUFS)\n", round);
	}
	now = now_ns();
	cpu = cpu_busy_ns() - cpu;
	write_str(TRACEFS "/tracing_on", "0");
	total = join_writers(pids, writes);
	npass = passes(fn, pass);
	for (i = 0, work = 0; i < npass; i++)
		work += pass[i];
	printf("LWROUND round=%u writes=%llu changes_shown=%zu unshown=%u window_ms=%llu",
	       round, (unsigned long long)total, nlat, unshown(),
	       (unsigned long long)((now - start) / 1000000));
	printf(" lat_p50_us=%.0f lat_p99_us=%.0f lat_max_us=%.0f cpu_ns_per_write=%.0f",
	       pct_us(lat, nlat, 50), pct_us(lat, nlat, 99), pct_us(lat, nlat, 100),
	       total ? (double)cpu / total : 0);
	printf(" work_ns_per_write=%.0f passes=%zu passes_per_s=%.2f",
	       total ? (double)work / total : 0, npass, npass * 1e9 / (now - start));
	printf(" pass_p50_us=%.0f pass_p99_us=%.0f pass_max_us=%.0f\n",
	       pct_us(pass, npass, 50), pct_us(pass, npass, 99), pct_us(pass, npass, 100));
	/* Every change shown within the deadline: a lost one is a bug. */
	ktap(!unshown(), round, "linkbench_round", "%zu changes shown, %u not",
	     nlat, unshown());
	munmap(writes, sizeof(*writes) * nr_writers);
}

/* Rounds of a paced storm, measured; the link watch's work from kallsyms. */
static int bench_rounds(unsigned int rounds)
{
	const char *fn = ksym("linkwatch_event") ? "linkwatch_event" : "td_batch_work";
	uint64_t *lat = malloc(MAX_SAMPLES * sizeof(*lat));
	uint64_t *pass = malloc(MAX_SAMPLES * sizeof(*pass));
	int mon = rtnl_open(RTMGRP_LINK), max_ifindex = 0, *dev_of, rcv = 64 << 20;
	unsigned long long addr = ksym(fn);
	char filter[64];
	unsigned int i;

	for (i = 0; i < nr_devs; i++)
		if (devs[i].ifindex > max_ifindex)
			max_ifindex = devs[i].ifindex;
	dev_of = malloc((max_ifindex + 1) * sizeof(*dev_of));
	if (mon < 0 || !lat || !pass || !dev_of || !addr) {
		printf("# linkbench: cannot set up (netlink, memory or %s)\n", fn);
		return 1;
	}
	memset(dev_of, 0xff, (max_ifindex + 1) * sizeof(*dev_of));
	for (i = 0; i < nr_devs; i++)
		dev_of[devs[i].ifindex] = i;
	setsockopt(mon, SOL_SOCKET, SO_RCVBUFFORCE, &rcv, sizeof(rcv));
	snprintf(filter, sizeof(filter), "function == 0x%llx", addr);
	if (write_str(TRACEFS "/tracing_on", "0") ||
	    write_str(TRACEFS "/buffer_size_kb", "8192") ||
	    write_str(TRACEFS "/events/workqueue/workqueue_execute_start/filter", filter) ||
	    write_str(TRACEFS "/events/workqueue/workqueue_execute_end/filter", filter) ||
	    write_str(TRACEFS "/events/workqueue/workqueue_execute_start/enable", "1") ||
	    write_str(TRACEFS "/events/workqueue/workqueue_execute_end/enable", "1")) {
		printf("# linkbench: cannot trace the workqueue in " TRACEFS "\n");
		return 1;
	}
	printf("KTAP version 1\n1..%u\n", rounds);
	printf("# linkbench: %u devices, %u writers, %u writes/s for %u ms, work %s\n",
	       nr_devs, nr_writers, rate, storm_ms, fn);
	for (i = 1; i <= rounds; i++)
		bench_round(i, mon, dev_of, max_ifindex, fn, lat, pass);
	return failed ? 1 : 0;
}

int main(int argc, char **argv)
{
	unsigned int rounds = 0;
	int opt, ret;

	while ((opt = getopt(argc, argv, "m:n:w:t:b:r:")) != -1) {
		switch (opt) {
		case 'b':
			rounds = strtoul(optarg, NULL, 0);
			break;
		case 'r':
			rate = strtoul(optarg, NULL, 0);
			break;
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
	if (!rounds) {
		printf("KTAP version 1\n1..3\n");
		fflush(stdout);
	}
	devs = mmap(NULL, sizeof(*devs) * nr_devs, PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ret = devs == MAP_FAILED ? -errno : load_driver();
	if (!ret)
		ret = open_devices();
	if (ret) {
		printf("Bail out! dummy devices: %s\n", strerror(-ret));
		return 1;
	}
	if (rounds)
		return bench_rounds(rounds);
	storm_with_deletions();
	unload_in_storm();
	return failed ? 1 : 0;
usage:
	fprintf(stderr, "usage: %s -m dummy.ko [-n devices] [-w writers] [-t storm_ms]\n"
		"       [-b rounds [-r writes_per_s]]\n", argv[0]);
	return 2;
}
