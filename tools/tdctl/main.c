// SPDX-License-Identifier: GPL-2.0
/*
 * tdctl: command-line front end to /dev/tdispatch.
 *
 * Built against uapi/ and libtdispatch only, so it runs on any kernel
 * that has the module.
 *
 * A dispatcher belongs to the open file that created it, so "tdctl create"
 * opens the device, creates one and runs a command that inherits the file;
 * every other command finds that file through TDISPATCH_FD.  A driver's
 * named dispatcher is reached instead with -n NAME: the command opens the
 * device and attaches to it, with the rights the driver grants this user.
 */
#include "tdctl.h"

static void cmd_usage(const char *name, FILE *out, bool full);
static int cmd_help(int argc, char **argv);

void usage_exit(const char *name)
{
	cmd_usage(name, stderr, false);
	exit(EXIT_USAGE);
}

static int set_opt(const struct opt *o, const char *arg)
{
	__u64 v;

	if (o->kind == OPT_FLAG) {
		*(bool *)o->dst = true;
		return 0;
	}
	if (o->kind == OPT_STR) {
		*(const char **)o->dst = arg;
		return 0;
	}
	if (parse_u64(arg, &v) || v < o->min || v > o->max) {
		if (o->max == UINT64_MAX || o->max == MS_MAX)
			return fail("--%s: '%s' is not a number", o->name, arg);
		return fail("--%s: '%s' is not a number from %llu to %llu",
			    o->name, arg, ull(o->min), ull(o->max));
	}
	*(__u64 *)o->dst = v;
	return 0;
}

/*
 * Parse the options of command argv[0] up to its first operand ("--"
 * ends them too); --help prints the command's help.  Returns the index
 * of the first operand; exits on a usage error.
 */
int parse_opts(int argc, char **argv, const struct opt *opts)
{
	return parse_opts_among(argc, argv, opts, NULL);
}

/*
 * The same, with options before and after the operands: with @operands,
 * the operands, up to "--" and all after it, are gathered there in order
 * (room for argc) and their number returned.
 */
int parse_opts_among(int argc, char **argv, const struct opt *opts, char **operands)
{
	struct option lo[MAX_OPTS + 2];
	char shorts[2 * MAX_OPTS + 3] = "+h";
	int n, c, k, len = 2, nr = 0;

	for (n = 0; opts[n].name && n < MAX_OPTS; n++) {
		lo[n] = (struct option) {
			.name = opts[n].name,
			.has_arg = opts[n].kind == OPT_FLAG ? no_argument : required_argument,
			.val = 256 + n,
		};
		if (opts[n].letter) {
			shorts[len++] = opts[n].letter;
			if (opts[n].kind != OPT_FLAG)
				shorts[len++] = ':';
		}
	}
	shorts[len] = '\0';
	lo[n++] = (struct option) { .name = "help", .val = 'h' };
	lo[n] = (struct option) { 0 };

	/* "-": getopt_long() returns each operand as the argument of option 1. */
	if (operands)
		shorts[0] = '-';
	optind = 0;
	while ((c = getopt_long(argc, argv, shorts, lo, NULL)) != -1) {
		if (c == 1 && operands) {
			operands[nr++] = optarg;
			continue;
		}
		if (c == 'h') {
			cmd_usage(argv[0], stdout, true);
			exit(0);
		}
		for (k = 0; c < 256 && c != '?' && opts[k].name; k++)
			if (opts[k].letter == c)
				c = 256 + k;
		if (c < 256 || set_opt(&opts[c - 256], optarg))
			usage_exit(argv[0]);
	}
	if (!operands)
		return optind;
	while (optind < argc)
		operands[nr++] = argv[optind++];
	return nr;
}

const struct opt no_opts[] = { END_OPT };

/* Exit with a usage error unless there are @min to @max operands. */
void want_operands(int argc, char **argv, int first, int min, int max)
{
	if (argc - first < min || argc - first > max)
		usage_exit(argv[0]);
}

/* Options only, no operands. */
void parse_opts_only(int argc, char **argv, const struct opt *opts)
{
	want_operands(argc, argv, parse_opts(argc, argv, opts), 0, 0);
}

const struct opt named_opts[] = { NAMED_OPT, END_OPT };

struct cmd {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *args;
	const char *summary;
	const char *help;
	bool named;		/* takes -n NAME */
};

#define NAMED_HELP \
	"  -n, --name NAME   attach to the named dispatcher NAME ('tdctl list')\n" \
	"                    instead of using TDISPATCH_FD\n"

static const struct cmd cmds[] = {
	{ "create", cmd_create, "[OPTIONS] [-- CMD [ARG...]]",
	  "create a dispatcher and run CMD with it",
	  "Opens the device, creates a dispatcher owned by that open file and runs\n"
	  "CMD (default: $SHELL, else /bin/sh) with the file inherited and its\n"
	  "descriptor number in TDISPATCH_FD, so that every tdctl command CMD runs\n"
	  "works on this dispatcher.  The dispatcher and the tasks still in it go\n"
	  "away when CMD and everything that inherited the descriptor have exited.\n"
	  "Exits with CMD's status (128+N if signal N killed it; 127 if CMD was not\n"
	  "found).\n"
	  "\n"
	  "options:\n"
	  "  --name NAME              shown in the kernel thread's name and in\n"
	  "                           tracepoints; at most 23 bytes (tdctl)\n"
	  "  --max-buffer N           most pending tasks, 1-65536 (4096); when full,\n"
	  "                           the oldest pending task is dropped\n"
	  "  --max-batch N            most tasks in a batch, 1-1024 and at most\n"
	  "                           --max-buffer (64, or --max-buffer if smaller)\n"
	  "  --max-delay-ms N         cut a batch once its oldest task has waited\n"
	  "                           this long, 0-30000 (100); 0 cuts at once\n"
	  "  --workers N              most batches out at once, 1-64 (4)\n"
	  "  --lease-ms N             a taken batch not completed within this time is\n"
	  "                           delivered again, 1-3600000 (30000)\n"
	  "  --events N               keep up to N outcome events for 'tdctl events',\n"
	  "                           1-65536 (default: no events)\n"
	  "  --max-input N            most submissions waiting on one CPU for the\n"
	  "                           dispatcher's thread, 1-65536 (4096)\n"
	  "  --congestion-delay-ms N  hold-off after a congestion result, 0-30000 (1000)\n"
	  "  --transient-delay-ms N   hold-off after a transient result, 0-30000 (100)\n"
	  "  --max-delayed N          most tasks waiting for their time ('submit\n"
	  "                           --delay-ms'), 0-1048576 (65536); 0: none allowed\n"
	  "  --max-attempts N         most times a task is handed out; one that comes\n"
	  "                           back from its last wanting a retry ends exhausted,\n"
	  "                           0-65535 (0: no limit)\n"
	  "  --rate N                 most tasks a second handed out (0: no limit; see\n"
	  "                           'tdctl rate')\n"
	  "  --burst N                most handed out at once under --rate, 0-65536\n"
	  "                           (0: the max batch)\n"
	  "\n"
	  "example:\n"
	  "  tdctl create --events 64 -- sh -c 'tdctl submit 7 hi; tdctl work --count 1'\n",
	  false },
	{ "submit", cmd_submit,
	  "[-n NAME] [--deadline-ms N] [--delay-ms N | --at-ns T] ID PAYLOAD [ID PAYLOAD...] | -",
	  "submit tasks",
	  "Submits each ID PAYLOAD pair as a task; with '-', reads \"ID PAYLOAD\" lines\n"
	  "from standard input (the payload is the rest of the line; empty lines are\n"
	  "skipped), up to 1024 tasks per call.  ID is a number, decimal or 0x hex;\n"
	  "a newer task with the same ID replaces one still pending.  A payload is 1\n"
	  "to 4096 bytes.  Prints how many tasks were accepted and rejected, and why\n"
	  "each rejected one was; exits 1 if any was rejected.  A named dispatcher\n"
	  "takes tasks only if its driver accepts them from userspace and grants\n"
	  "you write permission; its driver may refuse single tasks.\n"
	  "\n"
	  "A delayed task waits, counted as delayed, until its time and only then\n"
	  "becomes pending; a newer task with its ID replaces it, and the newest\n"
	  "task's time wins.  The dispatcher must allow delayed tasks (create's\n"
	  "--max-delayed, 65536 by default); beyond that many, they are rejected.\n"
	  "\n"
	  "options:\n"
	  "  --deadline-ms N   the tasks expire if no worker took them within N ms\n"
	  "                    of the submission (a delay counts too)\n"
	  "  --delay-ms N      the tasks wait N ms before they become pending,\n"
	  "                    counted from the call that submits them\n"
	  "  --at-ns T         the tasks wait until CLOCK_MONOTONIC time T, in ns;\n"
	  "                    a time not in the future is at once\n"
	  "  --max-attempts N  each task is leased at most N times (1-65535; 0, the\n"
	  "                    default: the dispatcher's limit), then ends exhausted\n"
	  "  --watch KEY       delayed tasks watch KEY: 'tdctl expedite --key KEY'\n"
	  "                    lets them all in at once\n"
	  "  --merge           a task's payload (at most 64 bytes) replaces that of\n"
	  "                    the waiting task of its ID submitted with --merge, if\n"
	  "                    no worker took it yet: counted overridden at once\n"
	  "  --slots N         write task ID into shared slot ID of the file's N\n"
	  "                    slots (IDs below N, payloads of at most 40 bytes),\n"
	  "                    replacing a waiting task's payload with no system\n"
	  "                    call; a kick queues the marked slots every 1024\n"
	  "                    tasks and at the end; counted when a worker reads\n"
	  "                    them.  Prints what it wrote and queued\n"
	  NAMED_HELP, true },
	{ "work", cmd_work,
	  "[--exec CMD] [--result RESULT] [--count N] [--timeout-ms N]",
	  "take batches and complete them",
	  "Takes batches one after the other.  With --exec, runs CMD through /bin/sh\n"
	  "for each batch with the batch's tasks as \"ID PAYLOAD\" lines on its\n"
	  "standard input, and TDISPATCH_BATCH (the lease) and TDISPATCH_BATCH_SIZE\n"
	  "in its environment; its exit status completes the batch: 0 is success,\n"
	  "75 (EX_TEMPFAIL) transient (retried after a hold-off), anything else\n"
	  "permanent (the tasks fail).  Lines \"ID RESULT\" (success, congestion,\n"
	  "transient, permanent) that CMD writes to the file $TDISPATCH_RESULTS give\n"
	  "those tasks a result of their own; only the tasks that need a retry go\n"
	  "back.  Without --exec, prints the tasks as\n"
	  "\"ID PAYLOAD\" lines and completes each batch with --result.  A summary\n"
	  "goes to standard error at the end.  If this process dies, the batch it\n"
	  "holds is delivered again at once.\n"
	  "\n"
	  "options:\n"
	  "  --exec CMD        shell command to run per batch\n"
	  "  --result RESULT   success, congestion, transient or permanent (success)\n"
	  "  --count N         stop after N batches (0: never, the default)\n"
	  "  --timeout-ms N    stop when no batch came for N ms (0: wait forever)\n"
	  "\n"
	  "Only a dispatcher of 'tdctl create': a named dispatcher's batches are\n"
	  "processed by its driver.\n", false },
	{ "stats", cmd_stats, "[-n NAME] [--json]", "print the dispatcher's counters",
	  "Prints every counter: tasks accepted and rejected, where the accepted\n"
	  "ones are (queued, delayed, pending, in_flight) or how they ended (done,\n"
	  "failed, overridden, expired, dropped, cancelled), batches, retries,\n"
	  "hold-offs, redeliveries, failed calls on the file, lost events and the\n"
	  "runs of periodic tasks submitted (counted in accepted too), the failed\n"
	  "tasks that ran out of attempts (exhausted) and the delayed tasks let in\n"
	  "early (expedited).  At any moment\n"
	  "accepted = queued + delayed + pending + in_flight + done + failed +\n"
	  "overridden + expired + dropped + cancelled.  rejected_calls and\n"
	  "events_lost are the file's: for a named dispatcher, those of the file\n"
	  "tdctl attached.  A module without delayed tasks has no delayed and no\n"
	  "periodic_runs counter; they are not shown.\n"
	  "\n"
	  "options:\n"
	  "  --json            one JSON object instead of \"name value\" lines\n"
	  NAMED_HELP, true },
	{ "watch", cmd_watch, "[-n NAME] [--interval-ms N] [--count N]",
	  "show the counters as they change",
	  "Samples the counters every interval.  On a terminal the screen is redrawn\n"
	  "in place with the rate of each running total; otherwise each sample is\n"
	  "one line: seconds since the start, then name=value pairs.\n"
	  "\n"
	  "options:\n"
	  "  --interval-ms N   time between samples (1000)\n"
	  "  --count N         stop after N samples (0: never, the default)\n"
	  NAMED_HELP, true },
	{ "events", cmd_events, "[-n NAME [--queue N]] [--json] [--follow] [--count N]",
	  "print task outcome events",
	  "Reads the outcome events queued since the last read (the dispatcher must\n"
	  "have been created with --events N): for each task that ended, its\n"
	  "sequence number, outcome (done, failed, overridden, expired, dropped,\n"
	  "cancelled), id, time since submission and retries.  When the queue was\n"
	  "full, a record says how many events were lost at that point.  Reading\n"
	  "consumes the events.  With -n NAME, tdctl attaches with an event queue of\n"
	  "its own, which starts empty: it always follows, until interrupted,\n"
	  "--count is reached or the driver withdraws the dispatcher.\n"
	  "\n"
	  "options:\n"
	  "  --json            one JSON object per line\n"
	  "  --follow          keep waiting for new events instead of stopping\n"
	  "  --count N         stop after N records (0: no limit, the default)\n"
	  NAMED_HELP
	  "  --queue N         with -n: events kept until read, 1-65536 (4096)\n", true },
	{ "cancel", cmd_cancel, "[-n NAME] ID", "cancel a pending or delayed task",
	  "Cancels the pending and the delayed task with this ID.  Fails (exit 1) if\n"
	  "there is none, or if the task is in flight: a batch being worked on\n"
	  "cannot be recalled.  It does not stop a periodic task: see 'periodic del'.\n"
	  "A named dispatcher needs the same rights as submit.\n"
	  "\n"
	  "options:\n"
	  NAMED_HELP, true },
	{ "expedite", cmd_expedite, "[-n NAME] ID | [-n NAME] --key KEY",
	  "let a delayed task in now, or every one that watches a key",
	  "Lets the delayed task with this ID into the pending set at once, as if\n"
	  "its time had come (it replaces a pending task of its ID, and expires if\n"
	  "past its deadline); with --key, every delayed task submitted with\n"
	  "'--watch KEY', and prints how many.  Fails (exit 1) if there is none.\n"
	  "Counted in expedited (and key_expedites).  A named dispatcher needs the\n"
	  "same rights as submit.\n"
	  "\n"
	  "options:\n"
	  "  --key KEY         expedite the tasks that watch KEY\n"
	  NAMED_HELP, true },
	{ "rate", cmd_rate, "RATE [BURST]", "set the dispatcher's rate limit",
	  "At most RATE tasks a second go to workers, in bursts of at most BURST\n"
	  "(0 or left out: the dispatcher's max batch); due tasks wait, still\n"
	  "coalescing, while the limit holds them; 'stats' shows throttled_ns, the\n"
	  "time they waited, and the limit.  RATE 0 lifts the limit.  Only for a\n"
	  "dispatcher of 'tdctl create' (also --rate and --burst there); a named\n"
	  "dispatcher's limit is its driver's.\n",
	  false },
	{ "query", cmd_query, "[-n NAME] ID", "tell where a task is",
	  "Prints whether the task with this ID is in flight, pending, delayed\n"
	  "(waiting for its time) or absent, in that order, its retries so far, and\n"
	  "whether a newer task with the same ID waits behind the one in flight or\n"
	  "is delayed.\n"
	  "\n"
	  "options:\n"
	  NAMED_HELP, true },
	{ "periodic", cmd_periodic,
	  "add ID PAYLOAD --period-ms N [--timeout-ms N] [--max-backoff N]\n"
	  "       tdctl periodic del ID\n"
	  "       tdctl periodic stats [--json] ID",
	  "periodic tasks, supervised",
	  "add registers a periodic task: a run, a task with this ID and PAYLOAD, is\n"
	  "submitted at once and then every interval; workers process runs like\n"
	  "any task.  A run that has not ended --timeout-ms after it was submitted,\n"
	  "or whose batch ended with congestion or transient, doubles the interval,\n"
	  "up to --period-ms times --max-backoff; a success resets it to\n"
	  "--period-ms.  The next run falls due one interval after the last one\n"
	  "ended or timed out; runs are not retried, the next run is the retry, and\n"
	  "one that is due while the last one still goes is skipped.  A submit with\n"
	  "the ID replaces a pending run, which then counts as a failure.  Up to\n"
	  "1024 periodic tasks per dispatcher; they go with it.\n"
	  "\n"
	  "del removes one: no run starts after it, a pending run is cancelled, one\n"
	  "being worked on ends as usual.\n"
	  "\n"
	  "stats prints its counters: runs submitted, successes, timeouts, failures\n"
	  "(congestion, transient, permanent, or ended unprocessed), skipped due\n"
	  "times, and the current interval in ms.\n"
	  "\n"
	  "options:\n"
	  "  --period-ms N     add: the base interval, 1-86400000 ms\n"
	  "  --timeout-ms N    add: a run not ended this long after it was submitted\n"
	  "                    has timed out, 1-86400000 ms (the period)\n"
	  "  --max-backoff N   add: the interval grows to at most N times the\n"
	  "                    period, 1-1024 (1: it never grows)\n"
	  "  --json            stats: one JSON object with the keys id, runs,\n"
	  "                    successes, timeouts, failures, skipped, interval_ms\n"
	  "                    and interval_ns\n"
	  "\n"
	  "Only a dispatcher of 'tdctl create', through TDISPATCH_FD.\n"
	  "\n"
	  "example:\n"
	  "  tdctl create --max-delay-ms 0 -- sh -c 'tdctl periodic add 1 ping \\\n"
	  "    --period-ms 1000 --timeout-ms 500 --max-backoff 16;\n"
	  "    tdctl work --exec ./health-check'\n", false },
	{ "list", cmd_list, "[--json]", "list named dispatchers",
	  "Prints every dispatcher a driver published under a name: its name, owner\n"
	  "uid:gid, mode (octal, as a file's: read to attach and read it, write to\n"
	  "submit and cancel), whether its driver takes tasks from userspace, and\n"
	  "what you may do with it: read (stats, watch, events, query) and submit\n"
	  "(submit, cancel).  Use one with 'tdctl -n NAME COMMAND'.\n"
	  "\n"
	  "options:\n"
	  "  --json            a JSON array of objects with the keys name, uid, gid,\n"
	  "                    mode, submit, may_read and may_submit\n", false },
	{ "version", cmd_version, "", "print tdctl's and the module's versions and features",
	  "Opens the device and prints tdctl's version, the module's version (they\n"
	  "come from one VERSION file; DKMS packages it too), the feature bits\n"
	  "(user, named, delayed, periodic, results, attempts, expedite, watch,\n"
	  "rate, merge, slots; see the man page for what needs which) and the\n"
	  "size of the version struct.\n", false },
	{ "help", cmd_help, "[COMMAND]", "print help, for one command too", "", false },
};

static const struct cmd *find_cmd(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cmds); i++)
		if (!strcmp(cmds[i].name, name))
			return &cmds[i];
	return NULL;
}

static void cmd_usage(const char *name, FILE *out, bool full)
{
	const struct cmd *c = find_cmd(name);

	fprintf(out, "usage: tdctl %s %s\n", c->name, c->args);
	if (full)
		fprintf(out, "\n%s.\n\n%s", c->summary, c->help);
	else
		fprintf(out, "Try 'tdctl help %s'.\n", c->name);
}

static void print_help(FILE *out)
{
	size_t i;

	fprintf(out,
		"usage: tdctl [-d DEVICE] [-n NAME] COMMAND [ARGS]\n"
		"\n"
		"Drive the tdispatch coalescing work dispatcher from the shell.  Tasks\n"
		"are (ID, payload) pairs; a newer task replaces a pending one with the\n"
		"same ID, and pending tasks are handed to workers in batches.\n"
		"\n"
		"A dispatcher belongs to the open file that created it: 'tdctl create'\n"
		"makes one and runs a command (a shell by default) that inherits the file\n"
		"in TDISPATCH_FD; the other commands, run from there, work on it.\n"
		"A driver's dispatcher published under a name ('tdctl list') is reached\n"
		"with -n NAME instead: stats, watch, events, submit, query and cancel\n"
		"then attach to it, with the rights its driver grants you.\n"
		"\n"
		"Tasks may be delayed (submit --delay-ms), and a periodic task submits a\n"
		"run every interval, backing off while runs time out or fail (periodic).\n"
		"\n"
		"commands:\n");
	for (i = 0; i < ARRAY_SIZE(cmds); i++)
		fprintf(out, "  %-9s %s\n", cmds[i].name, cmds[i].summary);
	fprintf(out,
		"\n"
		"options:\n"
		"  -d, --device DEVICE  device node to use (default %s)\n"
		"  -n, --name NAME      work on the named dispatcher NAME instead of\n"
		"                       TDISPATCH_FD (stats, watch, events, submit,\n"
		"                       query, cancel; also after the command)\n"
		"  -h, --help           print this text\n"
		"\n"
		"Exit status: 0 on success, 1 on failure, 2 on a usage error; create\n"
		"exits with its command's status.  'tdctl help COMMAND' tells more.\n"
		"\n"
		"examples:\n"
		"  tdctl create --events 1024 -- sh -c \\\n"
		"    'tdctl submit 7 a 8 b; tdctl work --count 1; tdctl stats; tdctl events'\n"
		"  tdctl list; tdctl -n testdrv-rw submit 7 hello; tdctl stats -n testdrv-rw\n"
		"  tdctl create --max-delay-ms 0 -- sh -c \\\n"
		"    'tdctl periodic add 1 ping --period-ms 1000; tdctl work --count 3'\n",
		dev_path);
}

static int unknown_cmd(const char *name)
{
	fail("no command '%s'; 'tdctl help' lists them", name);
	return EXIT_USAGE;
}

static int cmd_help(int argc, char **argv)
{
	int first = parse_opts(argc, argv, no_opts);

	want_operands(argc, argv, first, 0, 1);
	if (first == argc) {
		print_help(stdout);
		return 0;
	}
	if (!find_cmd(argv[first]))
		return unknown_cmd(argv[first]);
	cmd_usage(argv[first], stdout, true);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "device", required_argument, NULL, 'd' },
		{ "name", required_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const struct cmd *c;
	int opt;

	while ((opt = getopt_long(argc, argv, "+d:hn:", longopts, NULL)) != -1) {
		switch (opt) {
		case 'd':
			dev_path = optarg;
			break;
		case 'n':
			target = optarg;
			break;
		case 'h':
			print_help(stdout);
			return 0;
		default:
			print_help(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		print_help(stderr);
		return EXIT_USAGE;
	}
	c = find_cmd(argv[optind]);
	if (!c)
		return unknown_cmd(argv[optind]);
	if (target && !c->named && c->run != cmd_help) {
		fail("-n NAME selects a named dispatcher for stats, watch, events, submit,\n"
		     "       query and cancel; not for %s%s", c->name,
		     c->run == cmd_create ? " (its own --name names the new dispatcher)" : "");
		return EXIT_USAGE;
	}
	return c->run(argc - optind, argv + optind);
}
