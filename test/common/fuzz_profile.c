/*
 * fuzz_profile.c - libFuzzer harness for the machine profile's parser
 * (bip_profile_parse): whatever the file holds, it parses into bounded,
 * NUL-terminated names and values or is refused with a reason; and for
 * the machine's name read from /proc/cpuinfo (bip_profile_machine_of):
 * whatever the text, a bounded, non-empty name. Built with
 * -DFUZZ_SEEDS instead, it writes seeds: a profile as bipmpi-tune writes
 * it, and some near misses.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"

#ifndef FUZZ_SEEDS

/* With FUZZ_REPORT set: inputs taken and refused; printed at exit. */
static unsigned taken, refused;

static void report(void)
{
	printf("reached profile-taken %u\nreached profile-refused %u\n", taken,
	       refused);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int registered;
	/* Exactly size bytes: the parser must not read past them. */
	char *copy = malloc(size ? size : 1), *text = malloc(size + 1), why[160];
	char name[BIP_PROFILE_MACHINE_MAX + 1];
	struct bip_profile p;

	if (!registered++ && getenv("FUZZ_REPORT"))
		atexit(report);
	/* As /proc/cpuinfo: NUL-terminated; the name within its bound. */
	memcpy(text, data, size);
	text[size] = '\0';
	name[BIP_PROFILE_MACHINE_MAX] = 'x';
	bip_profile_machine_of(text, name, BIP_PROFILE_MACHINE_MAX);
	if (!memchr(name, '\0', BIP_PROFILE_MACHINE_MAX) || !name[0] ||
	    name[BIP_PROFILE_MACHINE_MAX] != 'x')
		abort();
	free(text);
	memcpy(copy, data, size);
	if (bip_profile_parse(copy, size, &p, why, sizeof(why))) {
		if (!memchr(why, '\0', sizeof(why)) || !why[0])
			abort();
		refused++;
	} else {
		if (!p.machine[0] || p.n > BIP_PROFILE_ENTRIES ||
		    !memchr(p.machine, '\0', sizeof(p.machine)))
			abort();
		for (unsigned i = 0; i < p.n; i++)
			if (!memchr(p.e[i].name, '\0', sizeof(p.e[i].name)) ||
			    !memchr(p.e[i].value, '\0',
				    sizeof(p.e[i].value)) ||
			    !p.e[i].name[0] || !p.e[i].value[0] ||
			    strchr(p.e[i].value, ' ') ||
			    bip_profile_get(&p, p.e[i].name) != p.e[i].value)
				abort();
		taken++;
	}
	free(copy);
	return 0;
}

#else /* FUZZ_SEEDS */

static void save(const char *dir, const char *name, const char *text)
{
	char path[512];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fp = fopen(path, "wb");
	if (!fp || fputs(text, fp) == EOF || fclose(fp)) {
		perror(path);
		exit(1);
	}
}

int main(int argc, char **argv)
{
	char machine[BIP_PROFILE_MACHINE_MAX], text[1024];

	if (argc != 2) {
		fprintf(stderr, "usage: %s DIR\n", argv[0]);
		return 2;
	}
	bip_profile_machine(machine, sizeof(machine));
	snprintf(text, sizeof(text),
		 "# The machine profile: knob defaults measured on this\n"
		 "machine=%s\n"
		 "# Streams: eager over three-way throughput, one way, both "
		 "ways:\n"
		 "#     8192   1.02   1.51\n"
		 "BIP_STREAM_RING_MAX=8192\n",
		 machine);
	save(argv[1], "tuned", text);
	save(argv[1], "spaces", "  machine = x y \r\n BIP_A = 1k \r\n");
	save(argv[1], "no-machine", "BIP_A=1\n");
	save(argv[1], "twice", "machine=x\nBIP_A=1\nBIP_A=2\n");
	save(argv[1], "no-eq", "machine=x\nBIP_A\n");
	save(argv[1], "cpuinfo", "processor\t: 0\ncpu family\t: 26\n"
				 "model\t\t: 2\nmodel name\t: AMD EPYC\n");
	return 0;
}

#endif
