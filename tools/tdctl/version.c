// SPDX-License-Identifier: GPL-2.0
/*
 * tdctl version, and what a command needs of the module's features.
 */
#include "tdctl.h"

static int get_version(int fd, struct tdispatch_version *v)
{
	*v = (struct tdispatch_version) { .size = sizeof(*v) };
	return td_ioctl(fd, TDISPATCH_IOC_VERSION, v, "version");
}

/* The feature bits, as "tdctl version" names them. */
static const char * const feature_names[] = {
	"user", "named", "delayed", "periodic", "results", "attempts",
	"expedite", "watch", "rate", "merge", "slots",
};

/* " (user, named, ...)": the bits tdctl knows, then any others in hex. */
static void print_features(__u64 features)
{
	const char *sep = " (";
	__u64 unknown = features;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(feature_names); i++) {
		if (!(features & (1ULL << i)))
			continue;
		printf("%s%s", sep, feature_names[i]);
		sep = ", ";
		unknown &= ~(1ULL << i);
	}
	if (unknown)
		printf("%sunknown %#llx", sep, ull(unknown));
	if (features)
		printf(")");
}

int cmd_version(int argc, char **argv)
{
	struct tdispatch_version v;
	int fd, ret;

	parse_opts_only(argc, argv, no_opts);
	fd = open_dev();
	if (fd < 0)
		return 1;
	ret = get_version(fd, &v);
	close(fd);
	if (ret)
		return ret;
	printf("tdctl_version:  %s\n", TDCTL_VERSION);
	printf("module_version: %.*s\n", (int)sizeof(v.module_version), v.module_version);
	printf("features:    %#llx", ull(v.features));
	print_features(v.features);
	printf("\n");
	printf("struct_size: %u\n", v.size);
	return 0;
}

/*
 * The module must have feature @bit (what @what needs); says so if not.
 * @fd is the device or a dispatcher's file: either answers VERSION.
 */
int need_feature(int fd, __u64 bit, const char *what)
{
	struct tdl *t = td_lib(fd, "version");

	if (!t)
		return 1;
	if (!(t->features & bit))
		return fail("the loaded module (%s, features %#llx) has no %s",
			    t->module_version, ull(t->features), what);
	return 0;
}
