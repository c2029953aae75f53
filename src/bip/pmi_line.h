/*
 * pmi_line.h - PMI-1 text: one line of the wire protocol ("cmd=NAME k=v
 * k=v") split into key/value pairs, shared by the PMI client and bip_run's
 * server; and the launcher's process mapping.
 */
#ifndef BIP_PMI_LINE_H
#define BIP_PMI_LINE_H

#define BIP_PMI_MAX_TOKENS 32

struct bip_pmi_line {
	int n;
	char *key[BIP_PMI_MAX_TOKENS];
	char *val[BIP_PMI_MAX_TOKENS];
};

/* Split line in place; 0, or -1 if it is not "cmd=... k=v ...". */
int bip_pmi_line_parse(char *line, struct bip_pmi_line *m);
/* The value of key (after cmd), or NULL. */
const char *bip_pmi_line_find(const struct bip_pmi_line *m, const char *key);

/* Where a rank runs, by the launcher's process mapping. */
struct bip_pmi_place {
	int host;   /* its host, 0..nhosts-1 */
	int nhosts; /* hosts of the job */
	int local;  /* ranks on its host, itself included */
};

/* The launcher's process mapping (PMI_process_mapping), as Hydra and
 * bip_run write it: "(vector,(START,COUNT,PPN),...)", COUNT hosts from
 * START with PPN consecutive ranks each. Places rank; 0, or -1 if the text
 * is malformed or places ranks beyond size. */
#define BIP_PMI_MAP_BLOCKS 64
int bip_pmi_map_place(const char *map, int rank, int size,
		      struct bip_pmi_place *pl);

#endif
