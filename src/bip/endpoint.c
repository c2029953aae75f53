/*
 * endpoint.c - opening an endpoint (knobs, the NIC program and its wires),
 * exchanging business cards, connecting peers, and closing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bip_field.h"
#include "bip_impl.h"
#include "log.h"
#include "pmi.h"

/* A card: "bip3;" the settings every node must share, the node's host, then
 * the card of every wire it opened ("name,..." separated by ';'). A
 * mismatch of settings is refused at connect time, naming the knob and both
 * values, rather than discovered as dropped packets or a receiver that runs
 * out of room for a peer's announcements (sized from BIP_SEND_SLOTS). */
#define CARD_VERSION "bip3"

/* The shared settings, in card order. */
static void card_shared(const bip_ep_t *ep, uint64_t v[3])
{
	v[0] = ep->k.fw.packet_size;
	v[1] = ep->k.fw.long_tags;
	v[2] = ep->k.fw.send_slots;
}

static const char *const card_knobs[3] = { "BIP_PACKET_SIZE", "BIP_LONG_TAGS",
					   "BIP_SEND_SLOTS" };

static bool node_in_job(const bip_ep_t *ep, int node)
{
	return node >= 0 && node < ep->nnodes;
}

/* The knobs from the environment, with what they leave to the job's size
 * (BIP_SMALL_QUEUE=auto) worked out for nnodes. */
static int knobs_for(struct bip_knobs *k, int nnodes)
{
	int rc = bip_knobs_load(k);

	if (rc)
		return rc;
	k->fw.nnodes = nnodes;
	k->fw.small_queue = bipfw_small_queue(k->fw.small_queue, nnodes);
	return 0;
}

int bip_open(const struct bip_open_params *params, bip_ep_t **ep_p)
{
	struct bipfw_wire_params wp;
	struct bipfw_config fc;
	bip_ep_t *ep;
	int rc;

	if (!params || !ep_p)
		return -BIP_EINVAL;
	if (params->nnodes < 1 || params->nnodes > BIPFW_NODES_MAX ||
	    params->node < 0 || params->node >= params->nnodes)
		return -BIP_ENODE;
	if (!params->secret) {
		bip_err("bip_open: no job secret (every node needs the same "
			"non-zero one: see bip_secret_new)");
		return -BIP_EINVAL;
	}
	if (params->nhosts < 0 || params->nhosts > params->nnodes ||
	    params->host < 0 ||
	    params->host >= (params->nhosts > 1 ? params->nhosts : 1)) {
		bip_err("bip_open: host %d of %d is not a host of the job",
			params->host, params->nhosts);
		return -BIP_EINVAL;
	}
	if (params->local_nodes < 0 || params->local_nodes > params->nnodes) {
		bip_err("bip_open: %d nodes on this host, of %d in the job",
			params->local_nodes, params->nnodes);
		return -BIP_EINVAL;
	}
	ep = calloc(1, sizeof(*ep));
	if (!ep)
		return -BIP_ENOMEM;
	ep->node = params->node;
	ep->nnodes = params->nnodes;
	ep->job_key = params->job_key;
	ep->host = params->host;
	ep->nhosts = params->nhosts > 1 ? params->nhosts : 1;
	bip_log_set_node(ep->node);
	rc = knobs_for(&ep->k, ep->nnodes);
	if (rc)
		goto fail;
	bip_idle_setup(ep, params->local_nodes ? params->local_nodes
					      : ep->nnodes);
	ep->connected = calloc((size_t)ep->nnodes, sizeof(*ep->connected));
	if (!ep->connected) {
		rc = -BIP_ENOMEM;
		goto fail;
	}

	fc = ep->k.fw;
	fc.node = ep->node;
	fc.nnodes = ep->nnodes;
	fc.job_key = (uint32_t)ep->job_key;
	rc = bipfw_create(&fc, &ep->fw);
	if (rc)
		goto fail;
	wp = (struct bipfw_wire_params){
		.node = ep->node,
		.nnodes = ep->nnodes,
		.host = ep->host,
		.nhosts = ep->nhosts,
		/* Unknown: every node may be here. */
		.local_nodes = params->local_nodes ? params->local_nodes
						   : ep->nnodes,
		.shared_cores = ep->idle.crowded,
		.job_key = ep->job_key,
		.secret = params->secret,
		.packet_size = ep->k.fw.packet_size,
	};
	rc = bipfw_wires_open(ep->fw, &wp);
	if (rc)
		goto fail;
	*ep_p = ep;
	return 0;
fail:
	bip_close(ep);
	return rc;
}

int bip_card(bip_ep_t *ep, char *buf, size_t len)
{
	uint64_t v[3];
	int pre;

	if (!ep || !buf)
		return -BIP_EINVAL;
	card_shared(ep, v);
	pre = snprintf(buf, len, CARD_VERSION ";%llu;%llu;%llu;%d;",
		       (unsigned long long)v[0], (unsigned long long)v[1],
		       (unsigned long long)v[2], ep->host);
	if (pre < 0 || (size_t)pre >= len)
		return -BIP_ETOOLONG;
	return bipfw_cards(ep->fw, buf + pre, len - (size_t)pre);
}

/* Check the shared settings of a card and read the node's host; returns
 * where the wire cards start. */
static const char *card_settings(const bip_ep_t *ep, int node,
				 const char *card, int *host_p)
{
	const char *p = card;
	uint64_t mine[3], theirs[3], host = 0;
	bool same = true;

	bool ok = bip_field_lit(&p, ';', CARD_VERSION);

	for (int i = 0; ok && i < 3; i++)
		ok = bip_field_uint(&p, ';', 10, UINT64_MAX, &theirs[i]);
	ok = ok && bip_field_uint(&p, ';', 10, (uint64_t)ep->nhosts - 1, &host);
	if (!ok) {
		bip_err("card for node %d is not a BIP card: \"%.40s\"", node,
			card);
		return NULL;
	}
	card_shared(ep, mine);
	for (int i = 0; i < 3; i++)
		if (theirs[i] != mine[i]) {
			bip_err("node %d uses %s=%llu, this node %llu: every "
				"node must use the same",
				node, card_knobs[i],
				(unsigned long long)theirs[i],
				(unsigned long long)mine[i]);
			same = false;
		}
	*host_p = (int)host;
	return same ? p : NULL;
}

int bip_connect(bip_ep_t *ep, int node, const char *card)
{
	const char *wires;
	int rc, host;

	if (!ep || !card)
		return -BIP_EINVAL;
	if (!node_in_job(ep, node))
		return -BIP_ENODE;
	if (ep->connected[node])
		return -BIP_ESTATE;
	wires = card_settings(ep, node, card, &host);
	if (!wires)
		return -BIP_ECARD;
	rc = bipfw_connect(ep->fw, node, wires, host == ep->host);
	if (rc == -BIP_ECARD)
		bip_err("malformed card for node %d: \"%.60s\"", node, card);
	if (rc)
		return rc;
	ep->connected[node] = true;
	return 0;
}

int bip_check_node(const bip_ep_t *ep, int node)
{
	if (!node_in_job(ep, node))
		return -BIP_ENODE;
	if (!ep->connected[node])
		return -BIP_ESTATE;
	return 0;
}

/* Close in two phases within BIP_CLOSE_TIMEOUT_MS: the peers acknowledge
 * what we sent, then our CLOSE (on lossy wires; it carries our last ack). */
static int close_handshake(bip_ep_t *ep)
{
	uint64_t deadline = bipfw_now_us() + ep->k.close_timeout_ms * 1000ull;

	while (!bipfw_sends_drained(ep->fw)) {
		if (bipfw_now_us() > deadline) {
			bip_err("closing with sends unacknowledged after %u ms "
				"(BIP_CLOSE_TIMEOUT_MS): their peers may not "
				"have received them",
				ep->k.close_timeout_ms);
			bipfw_announce_close(ep->fw);
			return -BIP_ETIMEDOUT;
		}
		bip_idle_wait(ep, 1000);
	}
	bipfw_announce_close(ep->fw);
	while (bipfw_close_pending(ep->fw) && bipfw_now_us() <= deadline)
		bip_idle_wait(ep, 1000);
	return 0;
}

int bip_close(bip_ep_t *ep)
{
	int rc = 0;

	if (!ep)
		return -BIP_EINVAL;
	if (ep->fw) {
		rc = close_handshake(ep);
		bip_mem_close(ep);
		bipfw_destroy(ep->fw);
	}
	bip_idle_close(ep);
	bip_pmi_close(ep->pmi);
	free(ep->connected);
	free(ep);
	return rc;
}

int bip_node(const bip_ep_t *ep)
{
	return ep ? ep->node : -BIP_EINVAL;
}

int bip_nnodes(const bip_ep_t *ep)
{
	return ep ? ep->nnodes : -BIP_EINVAL;
}

static void limits_of(const struct bip_knobs *k, struct bip_limits *l)
{
	*l = (struct bip_limits){
		.small_max = BIP_SMALL_MAX,
		.small_queue = k->fw.small_queue,
		.send_slots = k->fw.send_slots,
		.long_tags = k->fw.long_tags,
		.packet_size = k->fw.packet_size,
	};
}

int bip_limits(const bip_ep_t *ep, struct bip_limits *l)
{
	if (!ep || !l)
		return -BIP_EINVAL;
	limits_of(&ep->k, l);
	return 0;
}

int bip_env_limits(int nnodes, struct bip_limits *l)
{
	struct bip_knobs k;
	int rc;

	if (!l)
		return -BIP_EINVAL;
	if (nnodes < 1 || nnodes > BIPFW_NODES_MAX)
		return -BIP_ENODE;
	rc = knobs_for(&k, nnodes);
	if (rc)
		return rc;
	limits_of(&k, l);
	return 0;
}

int bip_get_counters(const bip_ep_t *ep, struct bip_counters *c)
{
	const struct bipfw_counters *f;

	if (!ep || !c)
		return -BIP_EINVAL;
	f = bipfw_counters(ep->fw);
#define COPY_COUNTER(name) c->name = f->name;
	BIPFW_COUNTERS(COPY_COUNTER)
#undef COPY_COUNTER
	c->idle_yields = ep->idle.yields;
	c->idle_sleeps = ep->idle.sleeps;
	c->idle_moves = ep->idle.moves;
	return 0;
}

int bip_peers_lost(const bip_ep_t *ep)
{
	return ep ? (int)bipfw_counters(ep->fw)->peers_lost : -BIP_EINVAL;
}

int bip_peer_gone(const bip_ep_t *ep, int node)
{
	if (!ep)
		return -BIP_EINVAL;
	if (!node_in_job(ep, node))
		return -BIP_ENODE;
	return bipfw_peer_gone(ep->fw, node);
}

int bip_wire_info(unsigned i, struct bip_wire_desc *d)
{
	const struct bipfw_wire_class *cls;
	struct bip_knobs knobs;
	size_t pkt;

	if (!d)
		return -BIP_EINVAL;
	for (unsigned k = 0; k <= i; k++)
		if (!bipfw_wire_classes[k])
			return -BIP_ENODE;
	cls = bipfw_wire_classes[i];
	*d = (struct bip_wire_desc){
		.name = cls->name,
		.scope = cls->scope == BIPFW_SCOPE_SELF	  ? "this process"
			 : cls->scope == BIPFW_SCOPE_HOST ? "this host"
							  : "any host",
		.lossy = !!(cls->flags & BIPFW_WIRE_LOSSY),
	};
	snprintf(d->state, sizeof(d->state), "works");
	/* What the wire does with the packets the knobs ask for. */
	pkt = bip_knobs_load(&knobs) ? BIP_SMALL_MAX : knobs.fw.packet_size;
	if (cls->probe)
		d->usable = cls->probe(pkt, d->state, sizeof(d->state));
	return 0;
}

int bip_kmod_info(const bip_ep_t *ep, char *buf, size_t len)
{
	const char *why;
	int rc;

	if (!buf || !len)
		return -BIP_EINVAL;
	if (!ep)
		return bipfw_kmod_probe(buf, len);
	rc = bipfw_kmod_state(ep->fw, &why);
	snprintf(buf, len, "%s", why);
	return rc;
}

int bip_peer_chunk(const bip_ep_t *ep, int node, size_t *chunk)
{
	if (!ep || !chunk)
		return -BIP_EINVAL;
	if (!node_in_job(ep, node))
		return -BIP_ENODE;
	*chunk = bipfw_port_chunk(ep->fw, node);
	return *chunk ? 0 : -BIP_ESTATE;
}

int bip_memory(int nnodes, size_t *bytes)
{
	struct bip_knobs k;
	size_t fixed, per_peer;
	int rc;

	if (nnodes < 1 || nnodes > BIPFW_NODES_MAX || !bytes)
		return -BIP_EINVAL;
	rc = knobs_for(&k, nnodes);
	if (rc)
		return rc;
	fixed = bipfw_memory(&k.fw, &per_peer);
	*bytes = fixed + (size_t)nnodes * per_peer; /* ourselves included */
	return 0;
}

int bip_peer_wire(const bip_ep_t *ep, int node, const char **name,
		  const char **why)
{
	const char *n;

	if (!ep || !name)
		return -BIP_EINVAL;
	if (!node_in_job(ep, node))
		return -BIP_ENODE;
	n = bipfw_port_name(ep->fw, node, why);
	if (!n)
		return -BIP_ESTATE;
	*name = n;
	return 0;
}
