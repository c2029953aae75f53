/*
 * init.c - bip_init(): bootstrap a BIP job from the PMI-1 environment that
 * Hydra's mpiexec and bip_run provide: the job's secret and host map, open,
 * publish the card, fetch every peer's card, connect, and synchronise so
 * every segment is unlinked.
 */
#include <inttypes.h>
#include <stdio.h>

#include "bip_field.h"
#include "bip_impl.h"
#include "log.h"
#include "pmi.h"
#include "pmi_line.h"

static int exchange_cards(bip_ep_t *ep, struct bip_pmi *pmi)
{
	char key[32], card[BIP_CARD_MAX];
	int rc;

	rc = bip_card(ep, card, sizeof(card));
	if (rc)
		return rc;
	snprintf(key, sizeof(key), "bip-card-%d", ep->node);
	rc = bip_pmi_put(pmi, key, card);
	if (!rc)
		rc = bip_pmi_barrier(pmi);
	for (int n = 0; !rc && n < ep->nnodes; n++) {
		snprintf(key, sizeof(key), "bip-card-%d", n);
		rc = bip_pmi_get(pmi, key, card, sizeof(card));
		if (!rc)
			rc = bip_connect(ep, n, card);
	}
	/* Once everybody attached, no segment name is left behind. */
	return rc ? rc : bip_pmi_barrier(pmi);
}

#define SECRET_KEY "bip-secret"

/* The job's secret: the launcher's if it set one (bip_run does, to clean up
 * after a crash), else node 0 draws it; the others read it after a barrier.
 * The PMI key-value space is the job's own. */
static int job_secret(struct bip_pmi *pmi, uint64_t *secret_p)
{
	char v[32];
	const char *p = v;
	uint64_t s;
	int rc = 0;

	if (bip_pmi_rank(pmi) == 0) {
		rc = bip_pmi_get_opt(pmi, SECRET_KEY, v, sizeof(v));
		if (rc == -BIP_EAGAIN && !(rc = bip_secret_new(&s))) {
			snprintf(v, sizeof(v), "%016" PRIx64, s);
			rc = bip_pmi_put(pmi, SECRET_KEY, v);
		}
	}
	if (!rc)
		rc = bip_pmi_barrier(pmi);
	if (!rc && bip_pmi_rank(pmi) != 0)
		rc = bip_pmi_get(pmi, SECRET_KEY, v, sizeof(v));
	if (rc)
		return rc;
	if (!bip_field_uint(&p, '\0', 16, UINT64_MAX, &s) || !s) {
		bip_err("PMI: malformed job secret");
		return -BIP_EBOOT;
	}
	*secret_p = s;
	return 0;
}

/* Where the launcher placed this node: locality comes from its host map,
 * never from host names (containers and namespaces share those). Without
 * a map, every node is taken to be on this host. */
static int job_hosts(struct bip_pmi *pmi, struct bip_open_params *params)
{
	struct bip_pmi_place pl;
	char map[1024];
	int rc = bip_pmi_get_opt(pmi, "PMI_process_mapping", map, sizeof(map));

	if (rc == -BIP_EAGAIN) {
		bip_info("PMI gives no process mapping: every node is taken "
			 "to be on this host");
		params->nhosts = 1;
		return 0;
	}
	if (rc)
		return rc;
	if (bip_pmi_map_place(map, params->node, params->nnodes, &pl)) {
		bip_err("PMI: malformed process mapping \"%.80s\"", map);
		return -BIP_EBOOT;
	}
	params->host = pl.host;
	params->nhosts = pl.nhosts;
	params->local_nodes = pl.local;
	return 0;
}

int bip_init(bip_ep_t **ep_p)
{
	struct bip_open_params params;
	struct bip_pmi *pmi;
	bip_ep_t *ep;
	int rc;

	if (!ep_p)
		return -BIP_EINVAL;
	bip_log_init(); /* BIP_LOG applies to the PMI steps too */
	rc = bip_pmi_open(&pmi);
	if (rc)
		return rc;
	params = (struct bip_open_params){
		.node = bip_pmi_rank(pmi),
		.nnodes = bip_pmi_size(pmi),
		.job_key = bip_job_key(bip_pmi_kvsname(pmi)),
	};
	rc = job_secret(pmi, &params.secret);
	if (!rc)
		rc = job_hosts(pmi, &params);
	if (!rc)
		rc = bip_open(&params, &ep);
	if (rc) {
		bip_pmi_close(pmi);
		return rc;
	}
	ep->pmi = pmi;
	rc = exchange_cards(ep, pmi);
	if (rc) {
		bip_close(ep);
		return rc;
	}
	*ep_p = ep;
	return 0;
}
