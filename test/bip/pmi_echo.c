/*
 * pmi_echo.c - checks the PMI-1 client end to end: every rank publishes a key,
 * reads everyone else's back, and the run must agree under bip_run and Hydra.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bip.h"
#include "log.h"
#include "pmi.h"

static int check(int ret, const char *what)
{
	if (ret) {
		fprintf(stderr, "pmi_echo: %s failed: %d\n", what, ret);
		exit(1);
	}
	return 0;
}

int main(void)
{
	struct bip_pmi *pmi;
	char key[32], want[32], got[64];
	int rank, size;

	bip_log_init();
	check(bip_pmi_open(&pmi), "bip_pmi_open");
	rank = bip_pmi_rank(pmi);
	size = bip_pmi_size(pmi);
	bip_log_set_node(rank);

	snprintf(key, sizeof(key), "k%d", rank);
	snprintf(want, sizeof(want), "v%d", rank);
	check(bip_pmi_put(pmi, key, want), "bip_pmi_put");
	check(bip_pmi_barrier(pmi), "bip_pmi_barrier");

	for (int r = 0; r < size; r++) {
		if (r == rank)
			continue;
		snprintf(key, sizeof(key), "k%d", r);
		snprintf(want, sizeof(want), "v%d", r);
		check(bip_pmi_get(pmi, key, got, sizeof(got)), "bip_pmi_get");
		if (strcmp(got, want) != 0) {
			fprintf(stderr, "pmi_echo: rank %d: %s=%s, not %s\n",
				rank, key, got, want);
			return 1;
		}
	}
	/* The client must refuse what the wire cannot carry (quietly here:
	 * these errors are expected). */
	int saved = bip_log_threshold;
	int bad_key, bad_val;

	bip_log_threshold = -1;
	bad_key = bip_pmi_put(pmi, "bad key", "x");
	bad_val = bip_pmi_put(pmi, "k", "a=b");
	bip_log_threshold = saved;
	if (bad_key != -BIP_EINVAL || bad_val != -BIP_EINVAL) {
		fprintf(stderr, "pmi_echo: rank %d: bad key/value accepted\n",
			rank);
		return 1;
	}
	check(bip_pmi_barrier(pmi), "bip_pmi_barrier");

	printf("pmi ok rank %d of %d\n", rank, size);
	bip_pmi_close(pmi);
	return 0;
}
