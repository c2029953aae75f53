/*
 * mem.c - memory shared within a host: what this endpoint allocated for
 * the host's other nodes to map, and what it mapped of theirs, so that a
 * caller names either by its address alone and bip_close ends what is
 * left. Regions are few (an MPI window each): a table searched in order.
 */
#include <stdlib.h>

#include "bip_impl.h"

struct bip_mem {
	void *addr;
	size_t len;
	uint64_t key; /* ours: what names it to peers */
	int node;     /* -1: ours; else the node it was mapped from */
};

static int mem_add(bip_ep_t *ep, const struct bip_mem *m)
{
	if (ep->nmem == ep->mem_cap) {
		unsigned cap = ep->mem_cap ? 2 * ep->mem_cap : 8;
		struct bip_mem *t = realloc(ep->mem, cap * sizeof(*t));

		if (!t)
			return -BIP_ENOMEM;
		ep->mem = t;
		ep->mem_cap = cap;
	}
	ep->mem[ep->nmem++] = *m;
	return 0;
}

/* The entry that starts at addr, of the wanted kind (ours or mapped). */
static struct bip_mem *mem_find(bip_ep_t *ep, const void *addr, bool ours)
{
	for (unsigned i = 0; i < ep->nmem; i++)
		if (ep->mem[i].addr == addr && (ep->mem[i].node < 0) == ours)
			return &ep->mem[i];
	return NULL;
}

static void mem_end(bip_ep_t *ep, struct bip_mem *m)
{
	/* The NIC program's watch of a word in it ends too. */
	if ((uintptr_t)ep->idle.watched - (uintptr_t)m->addr < m->len)
		ep->idle.watched = NULL;
	if (m->node < 0)
		bipfw_mem_free(ep->fw, m->addr, m->len, m->key);
	else
		bipfw_mem_unmap(ep->fw, m->addr, m->len);
	*m = ep->mem[--ep->nmem];
}

int bip_mem_alloc(bip_ep_t *ep, size_t len, void **addr_p)
{
	struct bip_mem m = { .len = len, .node = -1 };
	int rc;

	if (!ep || !addr_p || !len)
		return -BIP_EINVAL;
	rc = bipfw_mem_alloc(ep->fw, len, &m.addr, &m.key);
	if (rc)
		return rc;
	rc = mem_add(ep, &m);
	if (rc) {
		bipfw_mem_free(ep->fw, m.addr, m.len, m.key);
		return rc;
	}
	*addr_p = m.addr;
	return 0;
}

int bip_mem_free(bip_ep_t *ep, void *addr)
{
	struct bip_mem *m = ep ? mem_find(ep, addr, true) : NULL;

	if (!m)
		return -BIP_EINVAL;
	mem_end(ep, m);
	return 0;
}

int bip_mem_key(bip_ep_t *ep, const void *addr, size_t len, uint64_t *key_p,
		uint64_t *off_p)
{
	uintptr_t a = (uintptr_t)addr;

	if (!ep || !key_p || !off_p)
		return -BIP_EINVAL;
	for (unsigned i = 0; i < ep->nmem; i++) {
		const struct bip_mem *m = &ep->mem[i];
		uintptr_t base = (uintptr_t)m->addr;

		if (m->node < 0 && a >= base && a - base <= m->len &&
		    len <= m->len - (a - base)) {
			*key_p = m->key;
			*off_p = a - base;
			return 0;
		}
	}
	return -BIP_EINVAL;
}

int bip_mem_map(bip_ep_t *ep, int node, uint64_t key, uint64_t off,
		size_t len, void **addr_p)
{
	struct bip_mem m = { .len = len, .node = node };
	int rc;

	if (!ep || !addr_p || !len)
		return -BIP_EINVAL;
	if ((rc = bip_check_node(ep, node)))
		return rc;
	if (node == ep->node)
		return -BIP_EAGAIN; /* its own memory is at hand */
	rc = bipfw_mem_map(ep->fw, node, key, off, len, &m.addr);
	if (rc)
		return rc;
	rc = mem_add(ep, &m);
	if (rc) {
		bipfw_mem_unmap(ep->fw, m.addr, len);
		return rc;
	}
	*addr_p = m.addr;
	return 0;
}

int bip_mem_unmap(bip_ep_t *ep, void *addr)
{
	struct bip_mem *m = ep ? mem_find(ep, addr, false) : NULL;

	if (!m)
		return -BIP_EINVAL;
	mem_end(ep, m);
	return 0;
}

int bip_mem_watch(bip_ep_t *ep, const uint64_t *word, uint64_t value)
{
	int rc;

	if (!ep)
		return -BIP_EINVAL;
	rc = bipfw_mem_watch(ep->fw, word, value);
	if (!rc)
		bip_idle_watch(ep, word);
	return rc;
}

int bip_mem_wake_barrier(bip_ep_t *ep)
{
	if (!ep)
		return -BIP_EINVAL;
	bipfw_mem_wake_barrier(ep->fw);
	return 0;
}

int bip_mem_wake(bip_ep_t *ep, int node)
{
	int rc = ep ? bip_check_node(ep, node) : -BIP_EINVAL;

	if (rc)
		return rc;
	if (node != ep->node)
		bipfw_mem_wake(ep->fw, node);
	return 0;
}

size_t bip_mem_read_min(bip_ep_t *ep)
{
	return ep ? ep->k.mem_read_min : SIZE_MAX;
}

/* Memory of ours stays where it is, the caller's until it exits (a program
 * may read an MPI_Alloc_mem buffer after MPI_Finalize); only its key ends.
 * Mappings of the peers' memory end. */
void bip_mem_close(bip_ep_t *ep)
{
	while (ep->nmem) {
		struct bip_mem *m = &ep->mem[ep->nmem - 1];

		if (m->node < 0)
			m->addr = NULL;
		mem_end(ep, m);
	}
	free(ep->mem);
	ep->mem = NULL;
	ep->mem_cap = 0;
}
