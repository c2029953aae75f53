/*
 * bip_info.c - what BIP would do on this machine: version, wires and which
 * is chosen, cross-memory attach, limits, and every knob with its default,
 * current value and description (printed from libbip's knob table).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bip.h"
#include "bip_wire.h"

int main(int argc, char **argv)
{
	const struct bip_knob_desc *k;
	int cma = bip_cma_probe(), bad = 0;

	if (argc > 1) {
		fprintf(stderr, "usage: %s\n", argv[0]);
		return strcmp(argv[1], "-h") == 0 ? 0 : 2;
	}
	printf("BIP version:       %s (wire protocol %d)\n", BIP_VERSION_STRING,
	       BIP_WIRE_VERSION);
	printf("wires:             shm (processes of one host): available, "
	       "chosen for peers on this host\n");
	printf("                   udp, eth: not built yet; peers on other "
	       "hosts are refused (BIP_EWIRE)\n");
	if (cma == 0)
		printf("cross-memory attach: available\n");
	else
		printf("cross-memory attach: unavailable (%s); long messages "
		       "use the rings\n",
		       strerror(-cma));
	printf("small messages:    at most %d bytes (BIP_SMALL_MAX)\n",
	       BIP_SMALL_MAX);
	printf("business card:     at most %d bytes\n", BIP_CARD_MAX);
	printf("\nknobs (environment variables):\n");
	for (unsigned i = 0; (k = bip_knob(i)); i++) {
		char why[256];
		const char *now = getenv(k->name);

		printf("  %-22s default %-8s %s\n", k->name, k->def,
		       now ? "" : "(not set)");
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
