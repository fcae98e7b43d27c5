// SPDX-License-Identifier: GPL-2.0
/*
 * tdispatch_fuzz: random and hostile call sequences on /dev/tdispatch.
 *
 * Several processes (half of them nobody), each with several threads,
 * share a table of descriptors per process and make random calls on
 * them: every ioctl with valid, boundary and garbage arguments (sizes,
 * flags, strides, counts; pointers that are NULL, unmapped, read-only or
 * that run into the middle of a guard page; huge vectors), shared slots
 * mapped and written with garbage where the kernel reads, read, poll and
 * epoll, close racing the other threads, fork with the files shared,
 * SIGKILL of such children, and attaching to the test driver's
 * dispatchers while root withdraws and republishes one and now and then
 * unloads and reloads the test driver itself.  Every call must
 * return (TAKE always has a timeout or NONBLOCK; files are O_NONBLOCK for
 * read), and every file whose counters can be read before it is closed
 * must satisfy the accounting equation.
 *
 * With -f, every fuzzing thread has /proc/thread-self/make-it-fail set
 * (the caller configures failslab and fail_page_alloc with task-filter):
 * the kernel's allocations for its calls fail at random, and each must
 * become an errno or a counted outcome.
 *
 * usage: tdispatch_fuzz [-f] [-s seed] [-n calls] [-p procs] [-t threads]
 *
 * Prints its seed, the calls made and an errno histogram as KTAP:
 *   ok 1 fuzz # seed=S calls=N equation_checks=E errnos: 0=.. EINVAL=..
 * and "not ok" if the equation ever failed or a process died unexpectedly.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <linux/tdispatch.h>

#define PAGE		4096
#define NFDS		8
#define NERR		136
#define NOBODY		65534
#define PUBLISHED	"/sys/module/tdispatch_testdrv/parameters/published"
#define TESTDRV_KO	"/lib/tdispatch/testdrv/tdispatch_testdrv.ko"

/* Shared by every process: the totals. */
struct totals {
	unsigned long calls;
	unsigned long checks;
	unsigned long bad_equation;
	unsigned long errnos[NERR];
};

static struct totals *tot;
static unsigned long budget;		/* calls per thread */
static bool faults;			/* -f: allocations fail at random */
static int fds[NFDS];			/* this process's, shared by its threads */
static char *good;			/* a buffer of 1 MiB */
static char *ro;			/* a read-only page */
static char *edge;			/* a page followed by an unmapped one */

static unsigned int rnd(unsigned long long *s, unsigned int below)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return below ? *s % below : 0;
}

static void count(long ret)
{
	int e = ret < 0 ? errno : 0;

	__atomic_add_fetch(&tot->calls, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&tot->errnos[e < NERR ? e : NERR - 1], 1, __ATOMIC_RELAXED);
}

/* A pointer for an argument of @len bytes: mostly good, sometimes not. */
static void *arg_ptr(unsigned long long *s, size_t len)
{
	switch (rnd(s, 16)) {
	case 0:
		return NULL;
	case 1:
		return edge + PAGE;			/* unmapped */
	case 2:
		return ro;				/* read-only */
	case 3:
		return edge + PAGE - (len > 8 ? len / 2 : 4);	/* runs into the guard */
	case 4:
		return (void *)-4096L;
	default:
		return good + rnd(s, 64) * 8;
	}
}

/* A struct size: the right one (its 1.0 size) mostly, else a boundary or garbage. */
static unsigned int arg_size(unsigned long long *s, unsigned int right)
{
	switch (rnd(s, 12)) {
	case 0:
		return 0;
	case 1:
		return right - 1;
	case 2:
		return right - 8;
	case 3:
		return PAGE + 8;
	case 4:
		return right + 8;		/* a tail the kernel must find zero */
	case 5:
		return rnd(s, 0xffffffff);
	default:
		return right;
	}
}

static unsigned int arg_flags(unsigned long long *s, unsigned int valid)
{
	switch (rnd(s, 8)) {
	case 0:
		return rnd(s, 0xffffffff);
	case 1:
		return 1u << rnd(s, 32);
	default:
		return valid & rnd(s, valid + 1);
	}
}

static int pick_fd(unsigned long long *s)
{
	return __atomic_load_n(&fds[rnd(s, NFDS)], __ATOMIC_RELAXED);
}

/* Close with the equation checked first, if the counters can be read. */
static void close_checked(int fd)
{
	struct tdispatch_stats_user st = { .size = sizeof(st) };

	if (fd < 0)
		return;
	if (!ioctl(fd, TDISPATCH_IOC_STATS, &st)) {
		__atomic_add_fetch(&tot->checks, 1, __ATOMIC_RELAXED);
		if (st.accepted != st.queued + st.delayed + st.pending + st.in_flight + st.done +
				   st.failed + st.overridden + st.expired + st.dropped +
				   st.cancelled)
			__atomic_add_fetch(&tot->bad_equation, 1, __ATOMIC_RELAXED);
	}
	count(close(fd));
}

static void fuzz_create(unsigned long long *s, int fd)
{
	struct tdispatch_create *c = (void *)(good + 2048);

	memset(c, 0, sizeof(*c) + 16);
	*c = (struct tdispatch_create) {
		.size = arg_size(s, sizeof(*c)),
		.flags = arg_flags(s, TDISPATCH_CREATE_EVENTS),
		.max_buffer = 1 + rnd(s, 2048),
		.max_batch = 1 + rnd(s, 64),
		.max_delay_ns = rnd(s, 3) ? rnd(s, 2000000) : ~0ULL,
		.workers = rnd(s, 6),
		.max_input = 1 + rnd(s, 4096),
		.lease_ns = 1000000 + rnd(s, 100000000),
		.max_delayed = rnd(s, 1024),
	};
	if (c->flags & TDISPATCH_CREATE_EVENTS)
		c->event_queue = rnd(s, 256);
	snprintf(c->name, sizeof(c->name), "fz%u", rnd(s, 100));
	count(ioctl(fd, TDISPATCH_IOC_CREATE, rnd(s, 10) ? c : arg_ptr(s, sizeof(*c))));
}

static void fuzz_submit(unsigned long long *s, int fd)
{
	struct tdispatch_submit sub = {
		.size = arg_size(s, sizeof(sub)),
		.flags = arg_flags(s, TDISPATCH_SUBMIT_RELATIVE),
		.count = rnd(s, 8) ? 1 + rnd(s, 64) : rnd(s, 3) ? TDISPATCH_SUBMIT_MAX + 1 :
						       TDISPATCH_SUBMIT_MAX,
		.task_size = rnd(s, 4) ? sizeof(struct tdispatch_submit_task) :
			     rnd(s, 2) ? 0 : rnd(s, PAGE + 16),
	};
	struct tdispatch_submit_task *ut = (void *)(good + 65536);
	unsigned int i, n = sub.count < 1024 ? sub.count : 1024;

	for (i = 0; i < n; i++)
		ut[i] = (struct tdispatch_submit_task) {
			.id = rnd(s, 64),
			.payload = (unsigned long)(rnd(s, 8) ? good : arg_ptr(s, 64)),
			.payload_len = rnd(s, 10) ? 1 + rnd(s, 64) :
						    rnd(s, 2 * TDISPATCH_PAYLOAD_MAX),
			.deadline_ns = rnd(s, 6) ? 0 : rnd(s, 0xffffffff),
			.not_before_ns = rnd(s, 4) ? 0 : rnd(s, 50000000),
			.flags = rnd(s, 3) ? 0 : arg_flags(s, TDISPATCH_TASK_MERGE |
							     TDISPATCH_TASK_WATCH),
		};
	sub.tasks = (unsigned long)(rnd(s, 10) ? (void *)ut : arg_ptr(s, sizeof(*ut)));
	count(ioctl(fd, TDISPATCH_IOC_SUBMIT, rnd(s, 12) ? &sub : arg_ptr(s, sizeof(sub))));
}

static void fuzz_take_complete(unsigned long long *s, int fd)
{
	struct tdispatch_take tk = {
		.size = arg_size(s, sizeof(tk)),
		/* Never unbounded: NONBLOCK, or a timeout of at most 2 ms. */
		.flags = rnd(s, 2) ? TDISPATCH_TAKE_NONBLOCK : 0,
		.timeout_ns = 1 + rnd(s, 2000000),
		.tasks = (unsigned long)(rnd(s, 6) ? (void *)(good + 262144) : arg_ptr(s, 32)),
		.buf = (unsigned long)(rnd(s, 6) ? (void *)(good + 524288) : arg_ptr(s, 64)),
		.max_tasks = rnd(s, 6) ? 64 : rnd(s, 128),
		.buf_len = rnd(s, 6) ? 262144 : rnd(s, 4096),
	};
	struct tdispatch_complete c = {
		.size = arg_size(s, sizeof(c)),
		.result = rnd(s, 6),
	};

	if (tk.size < sizeof(tk) || tk.size > PAGE)
		tk.size = sizeof(tk);	/* keep the no-limit wait out */
	count(ioctl(fd, TDISPATCH_IOC_TAKE, &tk));
	c.batch = rnd(s, 4) ? tk.batch : rnd(s, 100);
	c.flags = rnd(s, 10) ? 0 : 1;
	count(ioctl(fd, TDISPATCH_IOC_COMPLETE, &c));
}

/*
 * Shared slots: SLOTS with good and bad sizes, KICK, and a mapping (of any
 * length and kind) written with garbage where the kernel reads: summary,
 * bitmap and slots.
 */
static void fuzz_slots(unsigned long long *s, int fd)
{
	struct tdispatch_slots a = {
		.size = arg_size(s, sizeof(a)),
		.flags = arg_flags(s, 0),
		.nr = rnd(s, 4) ? 64 << rnd(s, 5) : rnd(s, 100000),
	};
	size_t len = PAGE * (1 + rnd(s, 12)), i;
	unsigned char *m;

	switch (rnd(s, 3)) {
	case 0:
		count(ioctl(fd, TDISPATCH_IOC_SLOTS, rnd(s, 10) ? &a : arg_ptr(s, 40)));
		break;
	case 1:
		count(ioctl(fd, TDISPATCH_IOC_KICK));
		break;
	default:
		m = mmap(NULL, len, PROT_READ | PROT_WRITE, rnd(s, 8) ? MAP_SHARED : MAP_PRIVATE,
			 fd, rnd(s, 8) ? 0 : PAGE);
		count(m == MAP_FAILED ? -1 : 0);
		if (m == MAP_FAILED)
			break;
		for (i = rnd(s, 64); i; i--)
			m[rnd(s, 2) ? rnd(s, 256) : rnd(s, len)] = rnd(s, 256);
		if (rnd(s, 2))
			count(ioctl(fd, TDISPATCH_IOC_KICK));
		munmap(m, len);
		break;
	}
}

static void fuzz_small(unsigned long long *s, int fd)
{
	struct tdispatch_id id = { .size = arg_size(s, sizeof(id)),
				   .id = rnd(s, 64), .flags = arg_flags(s, 0) };
	struct tdispatch_query q = { .size = arg_size(s, sizeof(q)),
				     .id = rnd(s, 64) };
	struct tdispatch_stats_user st = { .size = arg_size(s, sizeof(st)) };
	struct tdispatch_version v = { .size = rnd(s, 64) };

	switch (rnd(s, 6)) {
	case 4:
		fuzz_slots(s, fd);
		break;
	case 0:
		count(ioctl(fd, TDISPATCH_IOC_CANCEL, rnd(s, 10) ? &id : arg_ptr(s, 16)));
		break;
	case 1:
		count(ioctl(fd, TDISPATCH_IOC_QUERY, rnd(s, 10) ? &q : arg_ptr(s, 32)));
		break;
	case 2:
		count(ioctl(fd, TDISPATCH_IOC_STATS, rnd(s, 10) ? &st : arg_ptr(s, 160)));
		break;
	case 3:
		count(ioctl(fd, TDISPATCH_IOC_VERSION, rnd(s, 10) ? &v : arg_ptr(s, 16)));
		break;
	default:
		/* Unknown numbers, or known ones with a wrong direction or size. */
		count(ioctl(fd, _IOC(rnd(s, 4), rnd(s, 3) ? TDISPATCH_IOC_MAGIC : rnd(s, 256),
				     rnd(s, 20), rnd(s, 300)), good));
		break;
	}
}

static void fuzz_named(unsigned long long *s, int fd)
{
	static const char * const names[] = { "testdrv-rw", "testdrv-ro", "nosuch", "" };
	struct tdispatch_entry *e = (void *)(good + 131072);
	struct tdispatch_list l = {
		.size = arg_size(s, sizeof(l)),
		.entries = (unsigned long)(rnd(s, 6) ? (void *)e : arg_ptr(s, 40)),
		.max_entries = rnd(s, 4) ? 16 : rnd(s, 0xffffffff),
	};
	struct tdispatch_attach a = {
		.size = arg_size(s, sizeof(a)),
		.flags = arg_flags(s, TDISPATCH_ATTACH_SUBMIT | TDISPATCH_ATTACH_EVENTS),
	};

	if (a.flags & TDISPATCH_ATTACH_EVENTS)
		a.event_queue = rnd(s, 64);
	snprintf(a.name, sizeof(a.name), "%s", names[rnd(s, 4)]);
	if (rnd(s, 2))
		count(ioctl(fd, TDISPATCH_IOC_LIST, rnd(s, 10) ? &l : arg_ptr(s, 24)));
	else
		count(ioctl(fd, TDISPATCH_IOC_ATTACH, rnd(s, 10) ? &a : arg_ptr(s, 40)));
}

static void fuzz_periodic(unsigned long long *s, int fd)
{
	struct tdispatch_periodic_add a = {
		.size = arg_size(s, sizeof(a)),
		.flags = arg_flags(s, 0),
		.id = rnd(s, 8),
		.payload = (unsigned long)(rnd(s, 8) ? good : arg_ptr(s, 8)),
		.payload_len = 1 + rnd(s, 64),
		.period_ns = 1000000 + rnd(s, 20000000),
		.timeout_ns = 1000000 + rnd(s, 20000000),
		.max_backoff = rnd(s, 8),
	};
	struct tdispatch_id id = { .size = sizeof(id), .id = rnd(s, 8) };
	struct tdispatch_periodic_stats_user ps = { .size = sizeof(ps), .id = rnd(s, 8) };

	switch (rnd(s, 3)) {
	case 0:
		count(ioctl(fd, TDISPATCH_IOC_PERIODIC_ADD, &a));
		break;
	case 1:
		count(ioctl(fd, TDISPATCH_IOC_PERIODIC_DEL, &id));
		break;
	default:
		count(ioctl(fd, TDISPATCH_IOC_PERIODIC_STATS, &ps));
		break;
	}
}

static void fuzz_io(unsigned long long *s, int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN | POLLRDBAND };
	struct epoll_event ev = { .events = EPOLLIN | EPOLLRDBAND };
	int ep;

	switch (rnd(s, 3)) {
	case 0:
		/* Every file is O_NONBLOCK: read() never waits. */
		count(read(fd, rnd(s, 6) ? good : arg_ptr(s, 48), rnd(s, 4) ? 480 : rnd(s, 100)));
		break;
	case 1:
		count(poll(&p, 1, rnd(s, 2)));
		break;
	default:
		ep = epoll_create1(EPOLL_CLOEXEC);
		if (ep < 0)
			break;
		count(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev));
		count(epoll_wait(ep, &ev, 1, rnd(s, 2)));
		close(ep);
		break;
	}
}

/*
 * Grow this thread's stack now: growing it later needs an allocation, and
 * one that fails then is a SIGSEGV, not an errno.
 */
static void grow_stack(void)
{
	char pad[256 << 10];

	memset(pad, 0, sizeof(pad));
	__asm__ volatile("" : : "r"(pad) : "memory");
}

/* A child sharing the files makes a few calls, then exits or is killed. */
static void fuzz_fork(unsigned long long *s)
{
	unsigned long long cs = *s ^ 0x9e3779b97f4a7c15ULL;
	pid_t pid = fork();
	int i;

	if (pid < 0)
		return;
	if (!pid) {
		for (i = 0; i < 20; i++)
			fuzz_take_complete(&cs, pick_fd(&cs));
		_exit(0);
	}
	if (rnd(s, 2))
		kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static void *fuzz_thread(void *arg)
{
	unsigned long long s = (unsigned long)arg;
	unsigned long n;

	for (n = 0; n < budget; n++) {
		unsigned int op = rnd(&s, 100), slot = rnd(&s, NFDS);
		int fd = pick_fd(&s), nfd;

		if (op < 6) {
			nfd = open("/dev/" TDISPATCH_DEV_NAME, O_RDWR | O_NONBLOCK | O_CLOEXEC);
			count(nfd);
			/* Races the other threads' calls on the old one. */
			close_checked(__atomic_exchange_n(&fds[slot], nfd, __ATOMIC_ACQ_REL));
		} else if (op < 14) {
			fuzz_create(&s, fd);
		} else if (op < 40) {
			fuzz_submit(&s, fd);
		} else if (op < 60) {
			fuzz_take_complete(&s, fd);
		} else if (op < 75) {
			fuzz_small(&s, fd);
		} else if (op < 83) {
			fuzz_named(&s, fd);
		} else if (op < 88) {
			fuzz_periodic(&s, fd);
		} else if (op < 98) {
			fuzz_io(&s, fd);
		} else if (op < 99) {
			fuzz_fork(&s);
		} else if (!geteuid() && rnd(&s, 8)) {
			/* Root withdraws or republishes the test driver's dispatcher. */
			int p = open(PUBLISHED, O_WRONLY | O_CLOEXEC);

			if (p >= 0) {
				count(write(p, rnd(&s, 2) ? "1" : "0", 1));
				close(p);
			}
		} else if (!geteuid() && !faults) {
			/*
			 * Or unloads the test driver under everyone, and loads it
			 * again; not with faults injected, where the module
			 * loader's own failed allocations would warn.
			 */
			int ko = open(TESTDRV_KO, O_RDONLY | O_CLOEXEC);

			if (ko >= 0) {
				count(syscall(__NR_delete_module, "tdispatch_testdrv", O_NONBLOCK));
				count(syscall(__NR_finit_module, ko, "", 0));
				close(ko);
			}
		}
	}
	return NULL;
}

static int fuzz_process(unsigned long long seed, unsigned int threads, bool nobody)
{
	unsigned int i, tries = 0;
	pthread_t th[16];

	/* Needs CAP_SYS_RESOURCE; the threads made after inherit it. */
	if (faults) {
		grow_stack();
		int f = open("/proc/self/make-it-fail", O_WRONLY | O_CLOEXEC);

		if (f < 0 || write(f, "1", 1) != 1)
			return 5;
		close(f);
	}
	/* Under fault injection the credentials' allocation may fail too. */
	while (nobody && (setgid(NOBODY) || setuid(NOBODY)))
		if (!faults || ++tries == 1000)
			return 3;
	for (i = 0; i < NFDS; i++)
		fds[i] = open("/dev/" TDISPATCH_DEV_NAME, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	for (i = 0; i < threads; i++) {
		unsigned int tries = 0;

		/* Under fault injection, making a thread may fail too. */
		while (pthread_create(&th[i], NULL, fuzz_thread,
				      (void *)(unsigned long)(seed * 7919 + i + 1)))
			if (!faults || ++tries == 1000)
				return 4;
	}
	for (i = 0; i < threads; i++)
		pthread_join(th[i], NULL);
	for (i = 0; i < NFDS; i++)
		close_checked(fds[i]);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long long seed = time(NULL), calls = 100000;
	unsigned int procs = 4, threads = 3, i, died = 0;
	char line[4096];
	size_t len;
	int opt;

	while ((opt = getopt(argc, argv, "fs:n:p:t:")) != -1) {
		switch (opt) {
		case 'f':
			faults = true;
			break;
		case 's':
			seed = strtoull(optarg, NULL, 0);
			break;
		case 'n':
			calls = strtoull(optarg, NULL, 0);
			break;
		case 'p':
			procs = atoi(optarg);
			break;
		case 't':
			threads = atoi(optarg);
			break;
		default:
			return 2;
		}
	}
	if (!procs || procs > 64 || !threads || threads > 16)
		return 2;
	budget = calls / (procs * threads) + 1;
	tot = mmap(NULL, sizeof(*tot), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	good = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ro = mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	edge = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (tot == MAP_FAILED || good == MAP_FAILED || ro == MAP_FAILED || edge == MAP_FAILED ||
	    munmap(edge + PAGE, PAGE))
		return 2;
	printf("# tdispatch_fuzz: seed %llu, %llu calls over %u processes x %u threads%s\n",
	       seed, calls, procs, threads, faults ? ", allocations failing at random" : "");
	fflush(stdout);
	for (i = 0; i < procs; i++) {
		pid_t pid = fork();

		if (!pid)
			_exit(fuzz_process(seed + i, threads, i & 1));
	}
	for (i = 0; i < procs; i++) {
		int status;

		pid_t pid = wait(&status);

		if (pid < 0 || !WIFEXITED(status) || WEXITSTATUS(status)) {
			bool sig = WIFSIGNALED(status);

			printf("# process %d: %s %d\n", pid, sig ? "signal" : "exit",
			       sig ? WTERMSIG(status) : WEXITSTATUS(status));
			died++;
		}
	}
	/* Leave the test driver as found: loaded, its dispatcher published. */
	if (!geteuid()) {
		int ko = open(TESTDRV_KO, O_RDONLY | O_CLOEXEC), p;

		if (ko >= 0) {
			syscall(__NR_finit_module, ko, "", 0);
			close(ko);
		}
		p = open(PUBLISHED, O_WRONLY | O_CLOEXEC);
		if (p >= 0) {
			if (write(p, "1", 1) != 1)
				died++;
			close(p);
		}
	}
	len = snprintf(line, sizeof(line), "seed=%llu calls=%lu equation_checks=%lu errnos:",
		       seed, tot->calls, tot->checks);
	for (i = 0; i < NERR && len < sizeof(line) - 64; i++)
		if (tot->errnos[i])
			len += snprintf(line + len, sizeof(line) - len, " %s=%lu",
					i ? strerrorname_np(i) ?: "?" : "0", tot->errnos[i]);
	printf("KTAP version 1\n1..1\n");
	if (tot->bad_equation || died)
		printf("# %lu equation failures, %u processes failed\nnot ok 1 %s # %s\n",
		       tot->bad_equation, died, faults ? "fuzz_faults" : "fuzz", line);
	else
		printf("ok 1 %s # %s\n", faults ? "fuzz_faults" : "fuzz", line);
	return tot->bad_equation || died;
}
