// SPDX-License-Identifier: GPL-2.0
/*
 * tdctl create: a dispatcher owned by an open file, and the command that
 * inherits it.
 */
#include "tdctl.h"

/* In the child: keep the file open across exec, say where it is, run. */
static void exec_with_fd(int fd, char **cmdv)
{
	char *sh = getenv("SHELL");
	char *shell[2] = { NULL, NULL };
	char num[16];

	snprintf(num, sizeof(num), "%d", fd);
	if (fcntl(fd, F_SETFD, 0) || setenv(FD_ENV, num, 1)) {
		fail("create: %s", strerror(errno));
		_exit(126);
	}
	if (!cmdv[0]) {
		shell[0] = sh && *sh ? sh : "/bin/sh";
		cmdv = shell;
	}
	execvp(cmdv[0], cmdv);
	fail("%s: %s", cmdv[0], strerror(errno));
	_exit(errno == ENOENT ? 127 : 126);
}

/* Run @cmdv with the dispatcher's file; the child's exit is ours. */
static int run_with_fd(int fd, char **cmdv)
{
	pid_t pid = fork();

	if (pid < 0) {
		close(fd);
		return fail("fork: %s", strerror(errno));
	}
	if (!pid)
		exec_with_fd(fd, cmdv);
	/* The dispatcher lives as long as the child and what it starts. */
	close(fd);
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	return wait_child(pid);
}

int cmd_create(int argc, char **argv)
{
	const char *name = "tdctl";
	__u64 max_buffer = 4096, max_batch = 0, max_delay = 100, workers = 4;
	__u64 lease = 30000, events = 0, max_input = 4096;
	__u64 congestion = 1000, transient = 100;
	__u64 max_delayed = UINT64_MAX;		/* not given */
	__u64 max_attempts = 0, rate = 0, burst = 0;
	const struct opt opts[] = {
		STR_OPT("name", &name),
		NUM_OPT("max-buffer", &max_buffer, 1, 65536),
		NUM_OPT("max-batch", &max_batch, 1, BATCH_MAX),
		NUM_OPT("max-delay-ms", &max_delay, 0, 30000),
		NUM_OPT("workers", &workers, 1, 64),
		NUM_OPT("lease-ms", &lease, 1, 3600000),
		NUM_OPT("events", &events, 1, 65536),
		NUM_OPT("max-input", &max_input, 1, 65536),
		NUM_OPT("congestion-delay-ms", &congestion, 0, 30000),
		NUM_OPT("transient-delay-ms", &transient, 0, 30000),
		NUM_OPT("max-delayed", &max_delayed, 0, MAX_DELAYED),
		NUM_OPT("max-attempts", &max_attempts, 0, 65535),
		NUM_OPT("rate", &rate, 0, UINT32_MAX),
		NUM_OPT("burst", &burst, 0, 65536),
		END_OPT,
	};
	int first = parse_opts(argc, argv, opts);
	struct tdispatch_create c = { .size = sizeof(c) };
	int fd;

	if (strlen(name) >= sizeof(c.name))
		return fail("create: --name: at most %zu bytes", sizeof(c.name) - 1);
	if (!max_batch)
		max_batch = max_buffer < 64 ? max_buffer : 64;
	if (max_batch > max_buffer)
		return fail("create: --max-batch %llu is more than --max-buffer %llu",
			    ull(max_batch), ull(max_buffer));
	memcpy(c.name, name, strlen(name));
	c.flags = events ? TDISPATCH_CREATE_EVENTS : 0;
	c.max_buffer = max_buffer;
	c.max_batch = max_batch;
	c.workers = workers;
	c.max_input = max_input;
	c.max_delay_ns = max_delay * NSEC_PER_MSEC;
	c.congestion_delay_ns = congestion * NSEC_PER_MSEC;
	c.transient_delay_ns = transient * NSEC_PER_MSEC;
	c.lease_ns = lease * NSEC_PER_MSEC;
	c.event_queue = events;
	c.max_attempts = max_attempts;
	c.rate = rate;
	c.burst = burst;

	fd = open_dev();
	if (fd < 0)
		return 1;
	if (need_feature(fd, TDISPATCH_FEAT_USER, "userspace dispatchers"))
		goto fail;
	if (max_delayed != UINT64_MAX && max_delayed &&
	    need_feature(fd, TDISPATCH_FEAT_DELAYED, "delayed tasks (--max-delayed)"))
		goto fail;
	if (max_attempts && need_feature(fd, TDISPATCH_FEAT_ATTEMPTS, "--max-attempts"))
		goto fail;
	if ((rate || burst) && need_feature(fd, TDISPATCH_FEAT_RATE, "--rate, --burst"))
		goto fail;
	c.max_delayed = max_delayed == UINT64_MAX ? DEFAULT_MAX_DELAYED : max_delayed;
	if (td_ioctl(fd, TDISPATCH_IOC_CREATE, &c, "create"))
		goto fail;
	if (first == argc)
		fprintf(stderr, "tdctl: dispatcher \"%s\" is on descriptor %d (%s) of this shell;\n"
			"tdctl: it goes away when the shell and all it started have exited\n",
			name, fd, FD_ENV);
	return run_with_fd(fd, argv + first);

fail:
	close(fd);
	return 1;
}
