/*
 * fuzz_card.c - libFuzzer harness for the text that reaches libbip from
 * other processes: business cards (bip_connect: BIP's shared settings,
 * then the wires' cards), PMI-1 lines (the client's replies and bip_run's
 * requests share one parser) and the launcher's process mapping. Built
 * with -DFUZZ_SEEDS instead, it writes seeds made from a real endpoint's
 * card and real PMI text.
 *
 * Input: one byte of choice (0: a card for bip_connect, every wire's part
 * parsed by its class, 1: the shm card
 * alone, 2: a PMI line, 3: a process mapping), then the text.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bip.h"
#include "wire/shm.h"
#include "log.h"
#include "pmi_line.h"

static bip_ep_t *endpoint(void)
{
	static bip_ep_t *ep;
	/* Two hosts: the network wires are open too, so their card parsers
	 * (udp's, and eth's where raw frames are allowed) are reached as
	 * well as shm's. */
	struct bip_open_params p = { .node = 0, .nnodes = 2, .job_key = 9,
				     .host = 0, .nhosts = 2 };

	if (!ep) {
		if (bip_secret_new(&p.secret))
			abort();
		setenv("BIP_ETH_IFACE", "auto", 1);
		if (bip_open(&p, &ep)) {
			unsetenv("BIP_ETH_IFACE");
			if (bip_open(&p, &ep))
				abort();
		}
	}
	bip_log_threshold = -1; /* every input is a malformed card */
	return ep;
}

#ifndef FUZZ_SEEDS

/* With FUZZ_REPORT set: what each parser made of its input (bip_connect's
 * result codes; cards and PMI lines taken); printed at exit. */
static unsigned connect_rc[BIP_NERRORS], shm_cards, pmi_lines, pmi_maps;

static void close_endpoint(void)
{
	bip_close(endpoint());
	if (!getenv("FUZZ_REPORT"))
		return;
	for (int i = 0; i < BIP_NERRORS; i++)
		if (connect_rc[i])
			printf("reached connect-%s %u\n",
			       i ? bip_strerror(-i) : "ok", connect_rc[i]);
	printf("reached shm-card %u\nreached pmi-line %u\nreached pmi-map %u\n",
	       shm_cards, pmi_lines, pmi_maps);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int registered;
	char *text = malloc(size ? size : 1);
	struct bipfw_shm_card c;
	struct bip_pmi_line m;

	if (!registered++)
		atexit(close_endpoint);
	if (size) {
		memcpy(text, data + 1, size - 1);
		text[size - 1] = '\0';
	}
	switch (size ? data[0] % 4 : 4) {
	case 0:
		/* A card that parses names node 1 of this job: attaching
		 * then fails, for there is no node 1. */
	{
		int rc = -bip_connect(endpoint(), 1, text);

		connect_rc[rc >= 0 && rc < BIP_NERRORS ? rc : 0]++;
		break;
	}
	case 1:
		if (bipfw_shm_card_parse(text, &c) == 0) {
			if (c.pid <= 0 || c.node < 0 || c.node > 0xffff)
				abort();
			shm_cards++;
		}
		break;
	case 2:
		if (bip_pmi_line_parse(text, &m) == 0) {
			pmi_lines++;
			for (int i = 0; i < m.n; i++)
				if (!m.key[i] || !m.val[i])
					abort();
			bip_pmi_line_find(&m, "rc");
		}
		break;
	case 3:
		/* Every rank of a job of 7 lands on one of its hosts. */
		for (int r = 0; r < 7; r++) {
			struct bip_pmi_place pl;

			if (bip_pmi_map_place(text, r, 7, &pl))
				break;
			if (pl.nhosts < 1 || pl.nhosts > 7 || pl.host < 0 ||
			    pl.host >= pl.nhosts || pl.local < 1 ||
			    pl.local > 7)
				abort();
			pmi_maps += r == 0;
		}
		break;
	}
	free(text);
	return 0;
}

#else /* FUZZ_SEEDS */

static void save(const char *dir, const char *name, int choice,
		 const char *text)
{
	char path[512];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fp = fopen(path, "wb");
	if (!fp || fputc(choice, fp) == EOF || fputs(text, fp) == EOF ||
	    fclose(fp)) {
		perror(path);
		exit(1);
	}
}

int main(int argc, char **argv)
{
	char card[BIP_CARD_MAX], *node;

	if (argc != 2) {
		fprintf(stderr, "usage: %s DIR\n", argv[0]);
		return 2;
	}
	bip_card(endpoint(), card, sizeof(card));
	/* Node 1's card: only the node differs from ours. */
	node = strrchr(card, ',');
	if (node && node - card > 1)
		node[-1] = '1';
	save(argv[1], "card", 0, card);
	save(argv[1], "shm-card", 1, strstr(card, "shm,"));
	save(argv[1], "pmi-get", 2,
	     "cmd=get_result rc=0 msg=success value=bip3;32768;64;64;0;x");
	save(argv[1], "pmi-maxes", 2,
	     "cmd=maxes rc=0 kvsname_max=256 keylen_max=64 vallen_max=1024");
	save(argv[1], "pmi-put", 2, "cmd=put kvsname=kvs_1 key=k value=v");
	save(argv[1], "pmi-map", 3, "(vector,(0,2,2),(2,1,3))");
	save(argv[1], "pmi-map-short", 3, "(vector,(0,2,1))");
	bip_close(endpoint());
	return 0;
}

#endif
