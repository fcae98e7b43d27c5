// SPDX-License-Identifier: GPL-2.0
/*
 * tdctl: command-line front end to /dev/tdispatch.
 *
 * Built against uapi/ only, so it runs on any kernel that has the module.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>

#include <linux/tdispatch.h>

static const char *dev_path = "/dev/" TDISPATCH_DEV_NAME;

static void print_help(FILE *out)
{
	fprintf(out,
		"usage: tdctl [-d DEVICE] COMMAND\n"
		"\n"
		"Talk to the tdispatch coalescing work dispatcher.\n"
		"\n"
		"commands:\n"
		"  version              print the module's ABI version and feature bits\n"
		"  help                 print this text\n"
		"\n"
		"options:\n"
		"  -d, --device DEVICE  device node to use (default %s)\n",
		dev_path);
}

static int open_dev(void)
{
	int fd = open(dev_path, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		fprintf(stderr, "tdctl: %s: %s (is tdispatch.ko loaded?)\n",
			dev_path, strerror(errno));
	return fd;
}

static int cmd_version(void)
{
	struct tdispatch_version v = { .size = sizeof(v) };
	int fd = open_dev();

	if (fd < 0)
		return 1;
	if (ioctl(fd, TDISPATCH_IOC_VERSION, &v)) {
		fprintf(stderr, "tdctl: version: %s\n", strerror(errno));
		close(fd);
		return 1;
	}
	close(fd);
	printf("abi_version: %u\n", v.abi_version);
	printf("features:    %#llx\n", (unsigned long long)v.features);
	printf("struct_size: %u\n", v.size);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "device", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int opt;

	while ((opt = getopt_long(argc, argv, "+d:h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'd':
			dev_path = optarg;
			break;
		case 'h':
			print_help(stdout);
			return 0;
		default:
			print_help(stderr);
			return 2;
		}
	}
	if (optind >= argc) {
		print_help(stderr);
		return 2;
	}
	if (!strcmp(argv[optind], "version"))
		return cmd_version();
	if (!strcmp(argv[optind], "help")) {
		print_help(stdout);
		return 0;
	}
	fprintf(stderr, "tdctl: unknown command '%s'\n", argv[optind]);
	print_help(stderr);
	return 2;
}
