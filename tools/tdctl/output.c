// SPDX-License-Identifier: GPL-2.0
/*
 * Output shared by the commands: names padded for tables, JSON strings,
 * durations.
 */
#include "tdctl.h"

/* A name as the driver gave it, for a terminal: control bytes as '?'. */
void print_name(const char *name, int width)
{
	int i;

	for (i = 0; i < TDISPATCH_NAME_LEN && name[i]; i++)
		putchar((unsigned char)name[i] < 0x20 || name[i] == 0x7f ? '?' : name[i]);
	for (; i < width; i++)
		putchar(' ');
}

void print_json_string(const char *s, size_t max)
{
	size_t i;

	putchar('"');
	for (i = 0; i < max && s[i]; i++) {
		unsigned char c = s[i];

		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

/* @ns as milliseconds: whole ones as such, else with three decimals. */
void print_ms(__u64 ns)
{
	if (ns % NSEC_PER_MSEC)
		printf("%.3f", ns / 1e6);
	else
		printf("%llu", ull(ns / NSEC_PER_MSEC));
}
