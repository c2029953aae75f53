/*
 * bip_info.c - what BIP would do on this machine: version, every wire with
 * its reach and state, how copies fare here, limits, and every knob with
 * its default, current value and description (printed from libbip's knob
 * tables), and the machine profile that sets some of them. With -p, under a launcher: the wire each peer of the job is
 * reached by, and why.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bip.h"
#include "bip_wire.h"

static void print_wires(void)
{
	struct bip_wire_desc d;

	printf("wires (BIP_WIRE=auto takes the first that reaches a peer):\n");
	for (unsigned i = 0; bip_wire_info(i, &d) == 0; i++)
		printf("  %-5s reaches %s, %s: %s%s\n", d.name, d.scope,
		       d.lossy ? "lossy (BIP retransmits)" : "lossless",
		       d.usable ? "UNUSABLE: " : "", d.state);
}

static void print_kmod(void)
{
	char why[512];

	printf("kernel module:     %s%s\n",
	       bip_kmod_info(NULL, why, sizeof(why)) ? "" : "loaded: ", why);
}

/* Whether rep movsb's slow distances are slow here (bip_copy.h), as a
 * process with host peers measures it when it opens (BIP_SHM_ALIAS), and
 * which copies go split (BIP_SHM_COPY_SPLIT, as set). */
static void print_copies(void)
{
	const char *knob = getenv("BIP_SHM_ALIAS");
	char why[160];

	bip_copy_calibrate(why, sizeof(why));
	printf("copies:            %s", why);
	if (knob && (!strcmp(knob, "slow") || !strcmp(knob, "fast")))
		printf("; BIP_SHM_ALIAS=%s: taken as %s", knob, knob);
	knob = getenv("BIP_SHM_COPY_SPLIT");
	printf("; split in 2 KiB pieces: %s%s\n",
	       knob && strcmp(knob, "never") ? "up to " : "",
	       knob ? knob : "never");
}

/* What the NIC program needs with these knobs, sending to every peer. */
static void print_memory(void)
{
	static const int peers[] = { 16, 1000 };
	size_t bytes;

	printf("memory:           ");
	for (unsigned i = 0; i < sizeof(peers) / sizeof(peers[0]); i++)
		if (bip_memory(peers[i] + 1, &bytes) == 0)
			printf(" %.1f MiB for %d peers%s", bytes / 1048576.0,
			       peers[i], i + 1 < sizeof(peers) /
			       sizeof(peers[0]) ? "," : "");
	printf(" (NIC program, with these knobs; the wires' buffers are "
	       "above)\n");
}

/* Under a launcher: join the job and print the wire to every peer. */
static int print_peers(void)
{
	char kmod[512];
	bip_ep_t *ep;
	int rc = bip_init(&ep);

	if (rc) {
		fprintf(stderr, "bip_info -p: %s (run it under mpiexec or "
			"bip_run)\n", bip_strerror(rc));
		return 1;
	}
	(void)bip_kmod_info(ep, kmod, sizeof(kmod));
	printf("node %d: kernel module: %s\n", bip_node(ep), kmod);
	for (int n = 0; n < bip_nnodes(ep); n++) {
		const char *wire, *why;

		if (!bip_peer_wire(ep, n, &wire, &why))
			printf("node %d -> node %d: %s (%s)\n", bip_node(ep),
			       n, wire, why);
	}
	rc = bip_close(ep);
	return rc ? 1 : 0;
}

int main(int argc, char **argv)
{
	const struct bip_knob_desc *k;
	char why[512];
	int bad, rc;

	if (argc == 2 && strcmp(argv[1], "-p") == 0)
		return print_peers();
	if (argc > 1) {
		fprintf(stderr, "usage: %s [-p]\n", argv[0]);
		return strcmp(argv[1], "-h") == 0 ? 0 : 2;
	}
	printf("BIP version:       %s (wire protocol %d)\n", BIP_VERSION_STRING,
	       BIP_WIRE_VERSION);
	print_wires();
	print_kmod();
	print_copies();
	printf("small messages:    at most %d bytes (BIP_SMALL_MAX)\n",
	       BIP_SMALL_MAX);
	printf("business card:     at most %d bytes\n", BIP_CARD_MAX);
	print_memory();
	rc = bip_profile(why, sizeof(why));
	printf("machine profile:   %s%s\n", rc < 0 ? "INVALID: " : "", why);
	bad = rc < 0;
	printf("\nknobs (environment variables):\n");
	for (unsigned i = 0; (k = bip_knob(i)); i++) {
		const char *now = getenv(k->name), *mine = bip_knob_profile(i);

		printf("  %-22s default %-8s %s\n", k->name, k->def,
		       now ? "" : mine ? "(profile)" : "(not set)");
		if (mine)
			printf("  %-22s profile %s%s\n", "", mine,
			       now ? " (the variable wins)" : "");
		if (now)
			printf("  %-22s set to  %s\n", "", now);
		printf("  %-22s %s: %s\n", "", k->type, k->help);
		if (bip_knob_check(i, why, sizeof(why))) {
			printf("  %-22s INVALID: %s\n", "", why);
			bad = 1;
		}
	}
	return bad;
}
