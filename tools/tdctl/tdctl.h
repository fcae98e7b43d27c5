/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tdctl's files share this: the includes, limits, the option parser's
 * types and what one command file calls in another.
 */
#ifndef TDCTL_H
#define TDCTL_H

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <linux/tdispatch.h>

#include "libtdispatch.h"

#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))
#define NSEC_PER_MSEC		1000000ULL
#define MS_MAX			(UINT64_MAX / NSEC_PER_MSEC)

#define FD_ENV			"TDISPATCH_FD"
/* The largest max_batch a dispatcher may have: a take never needs more. */
#define BATCH_MAX		1024U
#define EVENTS_PER_READ		64
#define MAX_OPTS		16
/* Events an attachment to a named dispatcher queues unless --queue says. */
#define NAMED_QUEUE		4096
/* Delayed tasks a dispatcher of "tdctl create" holds unless --max-delayed says. */
#define DEFAULT_MAX_DELAYED	65536
#define MAX_DELAYED		1048576
/* Periodic tasks: period and timeout from 1 ms to a day; backoff bound. */
#define PERIODIC_MAX_MS		86400000ULL
#define PERIODIC_MAX_BACKOFF	1024

/* Exit statuses. */
#define EXIT_USAGE		2

/* Print "tdctl: MESSAGE" on stderr, checked like printf; evaluates to 1. */
#define fail(...)	(fprintf(stderr, "tdctl: " __VA_ARGS__), failed())

enum opt_kind { OPT_FLAG, OPT_STR, OPT_NUM };

/* One --option of a command; @dst is a bool, a const char * or a __u64. */
struct opt {
	const char *name;
	enum opt_kind kind;
	void *dst;
	__u64 min, max;
	char letter;		/* a short option too, or 0 */
};

#define FLAG_OPT(name, dst)		{ name, OPT_FLAG, dst, 0, 0, 0 }
#define STR_OPT(name, dst)		{ name, OPT_STR, dst, 0, 0, 0 }
#define NUM_OPT(name, dst, min, max)	{ name, OPT_NUM, dst, min, max, 0 }
/* -n NAME, --name NAME: the named dispatcher to attach to. */
#define NAMED_OPT			{ "name", OPT_STR, &target, 0, 0, 'n' }
#define END_OPT				{ NULL, 0, NULL, 0, 0, 0 }

extern const char *dev_path;
/* -n NAME, before the command or among its options: a named dispatcher. */
extern const char *target;
extern const char * const result_names[TDISPATCH_RESULT_PERMANENT + 1];
extern const char * const outcome_names[TDISPATCH_OUTCOME_EXHAUSTED + 1];
extern const char * const state_names[TDISPATCH_STATE_DELAYED + 1];
extern const struct opt no_opts[];
extern const struct opt named_opts[];

/* common.c */
int failed(void);
const char *errno_hint(int err);
int td_ioctl(int fd, unsigned long req, void *arg, const char *what);
unsigned long long ull(__u64 v);
int parse_u64(const char *s, __u64 *v);
__u64 now_ns(void);
void sleep_ms(__u64 ms);
const char *plural(unsigned long n);
const char *retries(unsigned long n);
int wait_child(pid_t pid);
int open_dev(void);
int env_fd(void);
struct tdl *td_lib(int fd, const char *what);
int get_stats(int fd, struct tdispatch_stats_user *s);
int lookup(const char * const *names, size_t n, const char *s);
const char *name_of(const char * const *names, size_t n, __u32 i);

/* output.c */
void print_name(const char *name, int width);
void print_json_string(const char *s, size_t max);
void print_ms(__u64 ns);

/* version.c */
int cmd_version(int argc, char **argv);
int need_feature(int fd, __u64 bit, const char *what);

/* named.c */
bool may_submit(const struct tdispatch_entry *e);
int cmd_list(int argc, char **argv);
int dispatcher_fd(__u32 flags, __u32 queue);

/* create.c */
int cmd_create(int argc, char **argv);

/* submit.c */
int cmd_submit(int argc, char **argv);

/* work.c */
int cmd_work(int argc, char **argv);

/* stats.c */
int cmd_stats(int argc, char **argv);
int cmd_watch(int argc, char **argv);

/* events.c */
int cmd_events(int argc, char **argv);

/* task.c */
int cmd_cancel(int argc, char **argv);
int cmd_expedite(int argc, char **argv);
int cmd_rate(int argc, char **argv);
int cmd_query(int argc, char **argv);

/* periodic.c */
int cmd_periodic(int argc, char **argv);

/* main.c */
void usage_exit(const char *name);
int parse_opts(int argc, char **argv, const struct opt *opts);
int parse_opts_among(int argc, char **argv, const struct opt *opts, char **operands);
void want_operands(int argc, char **argv, int first, int min, int max);
void parse_opts_only(int argc, char **argv, const struct opt *opts);

#endif /* TDCTL_H */
