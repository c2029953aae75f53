/*
 * bip_recv.c - MPI matching and the receiving side of the three protocols.
 *
 * A message is matched by (context id, source rank, tag), with
 * MPI_ANY_SOURCE and MPI_ANY_TAG on the receive. Receives not yet matched
 * wait in the posted queue, messages not yet wanted in the unexpected queue;
 * both are kept in order, and BIP delivers each peer's control messages in
 * order, so MPI's non-overtaking rule holds.
 *
 * What arrives, and what the receiver does (MPI-BIP, section 3.3):
 *   SHORT  the data is in the message: copy it into the matching receive,
 *          or out of BIP's queue into the unexpected queue (freeing the slot
 *          and its credit at once).
 *   RTS3   answer: a BIP long receive into the user buffer if a receive
 *          matches; else the answer waits for one, for a while (held:
 *          MPIDI_BIP_recv_held_due), then goes into a temporary buffer;
 *          the ACK names the tag.
 *   RNDV   answer only when a receive matches; then one ACK per fragment,
 *          the next once the previous arrived.
 *   EAGER  the first piece of a message sent whole: into the matching
 *          receive, else into a temporary buffer, as three-way data; its
 *          MORE pieces follow it from that peer with nothing between.
 * An RTS3 or RNDV that names its data's address (the sender lets us read
 * it, bip_read) is answered, when the ACK would go, by reading the data in
 * one copy, then one ACK saying it was read, whenever that measured
 * cheaper than asking (bip_path.h); else, and where BIP cannot read that
 * peer's memory, the ACKs ask for the data as above. (Matched by a receive
 * call, such a message is answered at the next progress call:
 * fetch_later.) A WITHDRAW drops such an RNDV if no receive took it
 * yet, and an ACK says so.
 */
#include "mpidimpl.h"
#include "bip_state.h"

#define BIP_REQ(req) ((req)->dev.ch4.netmod.bip)

static bool match(int want_rank, int want_tag, int rank, int tag)
{
	return (want_rank == MPI_ANY_SOURCE || want_rank == rank) &&
	       (want_tag == MPI_ANY_TAG ||
		want_tag == MPIR_TAG_MASK_ERROR_BITS(tag));
}

/* The node that alone can match a receive from rank of comm; -1: any. */
static int recv_node(MPIR_Comm *comm, int rank)
{
	return rank == MPI_ANY_SOURCE ? -1 : MPIDI_BIP_node_of(comm, rank);
}

static void posted_unlink(MPIR_Request *prev, MPIR_Request *r)
{
	MPIDI_BIP_global_t *g = &MPIDI_BIP_global;

	if (prev)
		BIP_REQ(prev).next = BIP_REQ(r).next;
	else
		g->posted_head = BIP_REQ(r).next;
	if (g->posted_tail == r)
		g->posted_tail = prev;
}

/* The oldest posted receive that takes (ctx, rank, tag), dequeued. In
 * line: the head takes most messages. */
static inline __attribute__((always_inline)) MPIR_Request *
posted_take(uint16_t ctx, int rank, int tag)
{
	MPIR_Request *prev = NULL;

	for (MPIR_Request *r = MPIDI_BIP_global.posted_head; r;
	     prev = r, r = BIP_REQ(r).next) {
		if (BIP_REQ(r).ctx == ctx &&
		    match(BIP_REQ(r).rank, BIP_REQ(r).tag, rank, tag)) {
			posted_unlink(prev, r);
			return r;
		}
	}
	return NULL;
}

static void posted_append(MPIR_Request *rreq)
{
	MPIDI_BIP_global_t *g = &MPIDI_BIP_global;

	BIP_REQ(rreq).next = NULL;
	if (g->posted_tail)
		BIP_REQ(g->posted_tail).next = rreq;
	else
		g->posted_head = rreq;
	g->posted_tail = rreq;
}

static void unexp_unlink(MPIDI_BIP_unexp_t *prev, MPIDI_BIP_unexp_t *u)
{
	MPIDI_BIP_global_t *g = &MPIDI_BIP_global;

	if (prev)
		prev->next = u->next;
	else
		g->unexp_head = u->next;
	if (g->unexp_tail == u)
		g->unexp_tail = prev;
	g->cnt.unexp_depth--;
}

/* The oldest unexpected message a receive (ctx, rank, tag) takes; dequeued
 * when `take`. */
static MPIDI_BIP_unexp_t *unexp_find(uint16_t ctx, int rank, int tag,
				     bool take)
{
	MPIDI_BIP_unexp_t *prev = NULL;

	for (MPIDI_BIP_unexp_t *u = MPIDI_BIP_global.unexp_head; u;
	     prev = u, u = u->next) {
		if (u->ctx == ctx && match(rank, tag, u->rank, u->tag)) {
			if (take)
				unexp_unlink(prev, u);
			return u;
		}
	}
	return NULL;
}

/* Unexpected short messages come and go at every step of a collective,
 * and in bursts where a receiver comes late: entries are kept for the
 * next ones instead of freed (a malloc and a free were 110 of the 3055
 * instructions of an 8-byte allreduce; bursts of 200 unexpected 4 KiB
 * messages took 93 page faults each, 1.13 us a message, as glibc gave the
 * freed entries back to the system after each). Sized for their inline
 * data: only the pages written take memory. */
static const size_t unexp_inline_max[MPIDI_BIP_UNEXP_SIZES] = {
	256, 1024, 4096, BIP_SMALL_MAX
};

static MPIDI_BIP_unexp_t *unexp_alloc(size_t inline_len, uint8_t *size)
{
	MPIDI_BIP_unexp_t *u;
	uint8_t k = 0;

	/* Inline data is that of one short message, which BIP bounds. */
	if (inline_len > BIP_SMALL_MAX)
		return NULL;
	while (inline_len > unexp_inline_max[k])
		k++;
	*size = k;
	return MPIDI_BIP_spare_get(&MPIDI_BIP_global.unexp_spares[k],
				   sizeof(*u) + unexp_inline_max[k]);
}

static void unexp_free(MPIDI_BIP_unexp_t *u)
{
	MPIDI_BIP_spare_put(&MPIDI_BIP_global.unexp_spares[u->size], u,
			    sizeof(*u) + unexp_inline_max[u->size]);
}

/* The data of an RTS3 entry is over: its buffer goes back, if it had its
 * own. */
static void unexp_data_put(MPIDI_BIP_unexp_t *u)
{
	if (u->data != u->inline_data)
		MPIDI_BIP_buf_put(u->data);
}

void MPIDI_BIP_unexp_finalize(void)
{
	for (int k = 0; k < MPIDI_BIP_UNEXP_SIZES; k++)
		MPIDI_BIP_spares_free(&MPIDI_BIP_global.unexp_spares[k]);
}

static MPIDI_BIP_unexp_t *unexp_new(int node, const MPIDI_BIP_ctl_t *h,
				    uint64_t data_sz, size_t inline_len)
{
	MPIDI_BIP_global_t *g = &MPIDI_BIP_global;
	uint8_t size;
	MPIDI_BIP_unexp_t *u = unexp_alloc(inline_len, &size);

	if (!u)
		return NULL;
	*u = (MPIDI_BIP_unexp_t){
		.size = size,
		.node = node,
		.ctx = h->ctx,
		.rank = h->rank,
		.tag = h->tag,
		.type = h->type,
		.data_sz = data_sz,
		.data = u->inline_data,
	};
	MPIDI_BIP_QUEUE_APPEND(g->unexp_head, g->unexp_tail, u);
	g->cnt.unexpected++;
	if (++g->cnt.unexp_depth > g->cnt.unexp_max)
		g->cnt.unexp_max = g->cnt.unexp_depth;
	return u;
}

/* Bytes the receive can hold; whether they are one contiguous block. */
static inline MPI_Aint recv_capacity(MPIR_Request *rreq, bool *contig,
				     char **dst)
{
	MPIDI_BIP_request_t *r = &BIP_REQ(rreq);
	MPIR_Datatype *dt_ptr;
	MPI_Aint true_lb;
	size_t cap;
	int dt_contig;

	MPIDI_Datatype_get_info(r->count, r->datatype, dt_contig, cap, dt_ptr,
				true_lb);
	*contig = dt_contig;
	*dst = (char *)MPIR_get_contig_ptr(r->buf, true_lb);
	return (MPI_Aint)cap;
}

/* The receive is over: its buffers go, its request completes (and is
 * counted: a send after it is not behind the sends before, bip_send.c). */
static inline __attribute__((always_inline)) void
recv_end(MPIR_Request *rreq)
{
	MPIDI_BIP_request_t *r = &BIP_REQ(rreq);

	MPIDI_BIP_global.recvs_done++;

	if (r->pack) {
		MPIDI_BIP_buf_put(r->pack);
		r->pack = NULL;
	}
	MPIR_Datatype_release_if_not_builtin(r->datatype);
	MPIDIU_request_complete(rreq);
}

/* The message will never come (its sender died, or its fetch failed): the
 * receive ends in err. */
static int recv_fail(MPIR_Request *rreq, int rank, int tag, int err)
{
	rreq->status.MPI_SOURCE = rank;
	rreq->status.MPI_TAG = tag;
	rreq->status.MPI_ERROR = err;
	MPIR_STATUS_SET_COUNT(rreq->status, 0);
	recv_end(rreq);
	return MPI_SUCCESS;
}

/* Non-contiguous data, unpacked into the receive's buffer (out of line:
 * the rarer case). */
static __attribute__((noinline)) int recv_unpack(MPIR_Request *rreq,
						 const void *data, MPI_Aint n)
{
	MPIDI_BIP_request_t *r = &BIP_REQ(rreq);
	MPI_Aint done;
	int err = MPIR_Typerep_unpack(data, n, r->buf, r->count, r->datatype,
				      0, &done);

	return err ? MPIR_Err_create_code(err, MPIR_ERR_RECOVERABLE, __func__,
					  __LINE__, MPI_ERR_OTHER, "**fail", 0)
		   : MPI_SUCCESS;
}

/* The truncation error for the status (out of line: rare). */
static __attribute__((noinline)) int recv_truncated(int rank, int tag,
						    MPI_Aint cap,
						    uint64_t data_sz)
{
	return MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, __func__,
				    __LINE__, MPI_ERR_TRUNCATE, "**truncate",
				    "**truncate %d %d %d %d", rank, tag,
				    (int)cap, (int)data_sz);
}

/* The message is complete: copy `data` in (NULL: it landed in place), set
 * the status (truncation is an error in it, as MPI says), complete. In
 * line where a SHORT message arrives (recv_short), out of line for the
 * rest (recv_finish). */
static inline __attribute__((always_inline)) int
recv_complete(MPIR_Request *rreq, int rank, int tag, const void *data,
	      uint64_t data_sz)
{
	bool contig;
	char *dst;
	MPI_Aint cap = recv_capacity(rreq, &contig, &dst), n;
	int mpi_errno = MPI_SUCCESS;

	n = MPL_MIN((MPI_Aint)data_sz, cap);
	if (data && n && contig)
		bip_copy(dst, data, (size_t)n);
	else if (data && n)
		mpi_errno = recv_unpack(rreq, data, n);
	if (!mpi_errno) {
		rreq->status.MPI_SOURCE = rank;
		rreq->status.MPI_TAG = tag;
		MPIR_STATUS_SET_COUNT(rreq->status, n);
		if ((MPI_Aint)data_sz > cap)
			rreq->status.MPI_ERROR =
				recv_truncated(rank, tag, cap, data_sz);
	}
	if (data_sz >= MPIDI_BIP_DRAIN_STOP_MIN)
		MPIDI_BIP_global.recvs_large++;
	recv_end(rreq);
	return mpi_errno;
}

static int recv_finish(MPIR_Request *rreq, int rank, int tag,
		       const void *data, uint64_t data_sz)
{
	return recv_complete(rreq, rank, tag, data, data_sz);
}

/* Where long data for rreq lands: the user buffer when it is contiguous,
 * else a bounce buffer to unpack from. Only what the receive can hold is
 * asked for (r->cap): a larger message is truncated at the sender, which
 * never sends the rest. */
static void *recv_landing(MPIR_Request *rreq, uint64_t data_sz)
{
	MPIDI_BIP_request_t *r = &BIP_REQ(rreq);
	bool contig;
	char *dst;
	MPI_Aint cap = recv_capacity(rreq, &contig, &dst);

	r->cap = MPL_MIN(data_sz, (uint64_t)cap);
	if (contig)
		return dst;
	r->pack = MPIDI_BIP_buf_get(r->cap);
	return r->pack;
}

/* The ACK flags for the bytes ending at end: the last ones wanted of a
 * message the receive truncates. */
static uint32_t ack_flags(const MPIDI_BIP_request_t *r, uint64_t end)
{
	return end == r->cap && r->cap < r->data_sz ? MPIDI_BIP_ACK_LAST : 0;
}

/* No byte of the message is wanted (it is empty, or the receive holds
 * none): one ACK says so, and the receive is complete. */
static int recv_nothing(MPIR_Request *rreq, int node, uint64_t sreq)
{
	MPIDI_BIP_request_t *r = &BIP_REQ(rreq);
	MPIDI_BIP_ctl_ack_t ack = {
		.h.type = MPIDI_BIP_CTL_ACK,
		.sreq = sreq,
		.flags = ack_flags(r, 0),
	};
	int mpi_errno = MPIDI_BIP_ctl_send(node, &ack, sizeof(ack));

	if (mpi_errno)
		return mpi_errno;
	return recv_finish(rreq, r->rank, r->tag, NULL, r->data_sz);
}

/* --- the receiver reads ---------------------------------------------------- */

/* What read_data did: the data is to be asked for, because the sender did
 * not let us read it (addr 0) or BIP cannot read that peer's memory
 * (ASK); because the rings beat a read here (ASK_RINGS: the kernel's copy
 * is slow, or MPIR_CVAR_CH4_BIP_FETCH=ask) or measured cheaper lately
 * (ASK_CHOSEN: timed for the chooser), both in BIP's packets; or it was
 * read (READ); or it is being read with the sender's help (SPLIT: the
 * receive completes when the sender is done, recv_pushed). */
enum fetch { FETCH_ASK, FETCH_ASK_RINGS, FETCH_ASK_CHOSEN, FETCH_READ,
	     FETCH_SPLIT };

/* Whether to read the sender's data at addr into dst (READ), or ask for
 * it. With more ranks than cores always read: the rings are fast only
 * while both processes run at once, and crowded ranks seldom do (NAS
 * patterns on 8 ranks on 2 cores: CG 1.4 x faster). Our own messages too:
 * one process would do both copies of the other way. Never where the
 * kernel's copy is slow on this machine (bip_copy.h: 4 x slower than the
 * rings on AMD Zen, which avoid it). Else as MPIR_CVAR_CH4_BIP_FETCH
 * says, by default by measured cost (bip_path.h). */
static enum fetch fetch_way(int node, const void *dst, uint64_t addr,
			    uint64_t len)
{
	MPIDI_BIP_global_t *g = &MPIDI_BIP_global;

	if (g->crowded || node == MPIR_Process.rank)
		return FETCH_READ;
	if (bip_copy_slow(BIP_COPY_ALIAS_KERNEL, (uintptr_t)dst, addr))
		return FETCH_ASK_RINGS;
	switch (MPIR_CVAR_CH4_BIP_FETCH) {
	case MPIR_CVAR_CH4_BIP_FETCH_read:
		return FETCH_READ;
	case MPIR_CVAR_CH4_BIP_FETCH_ask:
		return FETCH_ASK_RINGS;
	default:
		return MPIDI_BIP_path_choose(MPIDI_BIP_paths_for(node), len) ==
				       MPIDI_BIP_PATH_READ
			       ? FETCH_READ
			       : FETCH_ASK_CHOSEN;
	}
}

/* The ACK flag of data asked for (how): data we could have read goes in
 * BIP's packets, never read by us after all. */
static uint32_t ask_packets(enum fetch how)
{
	return how == FETCH_ASK ? 0 : MPIDI_BIP_ACK_CHOSEN;
}

/* The chooser that times this ask of len bytes to node (ASK_CHOSEN: the
 * one that chose it), NULL: none. It is in flight for it from now until
 * asked. */
static MPIDI_BIP_paths_t *ask_timed(enum fetch how, int node, uint64_t len)
{
	MPIDI_BIP_paths_t *p;

	if (how != FETCH_ASK_CHOSEN)
		return NULL;
	p = MPIDI_BIP_paths_for(node);
	MPIDI_BIP_path_start(p, MPIDI_BIP_PATH_SEND, len, MPIDI_BIP_now_ns());
	return p;
}

/* The last byte of len bytes asked for is here, or it failed (err), or
 * its receive could not be posted: a timed ask is no longer in flight. */
static void asked(MPIDI_BIP_paths_t *timed, uint64_t len, int err)
{
	if (timed)
		MPIDI_BIP_path_done(timed, MPIDI_BIP_PATH_SEND, len, !err,
				    MPIDI_BIP_now_ns());
}

/* Post the receive of the len bytes at offset asked for into dst; the ACK
 * (flags) follows. A timed ask is in flight until done runs, which is
 * also how a receive that could not be posted ends. */
static int ask_post(int node, uint64_t sreq, uint64_t offset, uint64_t len,
		    uint32_t flags, MPIDI_BIP_paths_t *timed, void *dst,
		    int (*done)(MPIDI_BIP_lrecv_t *, int), void *arg)
{
	return MPIDI_BIP_lrecv(node, MPIDI_BIP_CTL_ACK, sreq, offset, len,
			       flags, timed, dst, done, arg);
}

/* Ask node for the len bytes read_data left to ask for (how) into dst, in
 * one BIP long message. */
static int ask_for(enum fetch how, int node, uint64_t sreq, uint64_t len,
		   uint32_t flags, void *dst,
		   int (*done)(MPIDI_BIP_lrecv_t *, int), void *arg)
{
	return ask_post(node, sreq, 0, len, flags | ask_packets(how),
			ask_timed(how, node, len), dst, done, arg);
}

/* --- reading with the sender's help ---------------------------------------- */

/* Whether a read of len bytes from node is shared with it: from
 * MPIR_CVAR_CH4_BIP_SPLIT_MIN on, with another process whose memory BIP
 * reaches, and only while that process has time for it. One process
 * copying a message alone is bound by the kernel's copy: two copying
 * halves of it took 6.2 us for 64 KiB against 10.5 us (1.6-1.7 x up to
 * 256 KiB, 1.5 x at 1-4 MiB; cross-memory attach, the AMD EPYC 2-core
 * machine). A sender that is busy copying too gains nothing and makes
 * the receive wait for it: not with more ranks than cores (the sender may
 * not even run), nor while it has sends of ours to read (both directions
 * at once: 64 KiB bidirectional bandwidth halved). */
static bool splits(int node, uint64_t len)
{
	MPIDI_BIP_global_t *g = &MPIDI_BIP_global;

	return g->split_min && len >= g->split_min && !g->crowded &&
	       node != MPIR_Process.rank && !g->peers[node].readable &&
	       bip_rma_reach(g->ep, node) == 1;
}

/* The data is read, or the read failed (err): one ACK tells the sender. */
static int read_acked(int node, uint64_t sreq, uint64_t len, uint32_t flags,
		      int err)
{
	MPIDI_BIP_ctl_ack_t ack = {
		.h.type = MPIDI_BIP_CTL_ACK,
		.sreq = sreq,
		.len = len,
		.flags = flags | MPIDI_BIP_ACK_READ |
			 (err ? MPIDI_BIP_ACK_FAILED : 0),
	};

	return MPIDI_BIP_ctl_send(node, &ack, sizeof(ack));
}

/* A read of a shared transfer that failed: the request fails (the other
 * half is under way; asking for the data is no longer a way out). */
static void split_read(MPIDI_BIP_split_t *sp, uint64_t from, uint64_t len)
{
	int rc = bip_read(MPIDI_BIP_global.ep, sp->node, sp->dst + from,
			  sp->addr + from, len);

	if (rc && !sp->err)
		sp->err = MPIDI_BIP_error(rc == -BIP_EAGAIN ? -BIP_ESYS : rc,
					  "reading the sender's data");
}

/* Rule: we read [0, at) while the sender writes [at, len) (PUSH); the
 * receive and the sender's send complete only after both, on its PUSHED
 * and then our ACK: until PUSHED it may still write into dst. */
static int split_start(int node, uint64_t sreq, uint64_t addr, char *dst,
		       uint64_t len, uint32_t flags, enum fetch *how,
		       int (*landed)(void *arg, int err), void *arg)
{
	MPIDI_BIP_global_t *g = &MPIDI_BIP_global;
	MPIDI_BIP_split_t *sp = MPL_malloc(sizeof(*sp), MPL_MEM_OTHER);
	MPIDI_BIP_ctl_push_t push = { .h.type = MPIDI_BIP_CTL_PUSH };
	bool was_failed = g->peers[node].failed;
	int mpi_errno;

	if (!sp)
		return MPI_SUCCESS; /* read alone */
	*sp = (MPIDI_BIP_split_t){
		.node = node, .sreq = sreq, .addr = addr, .dst = dst,
		/* Halves on a cache line's boundary: no line is written by
		 * both copies. */
		.at = (len / 2) & ~(uint64_t)63, .len = len,
		.ack_flags = flags, .paths = MPIDI_BIP_paths_for(node),
		.complete = landed, .arg = arg,
	};
	sp->handle = MPIDI_BIP_handle_new(&g->splits, sp);
	if (!sp->handle) {
		MPL_free(sp);
		return MPI_SUCCESS;
	}
	push.sreq = sreq;
	push.offset = sp->at;
	push.len = len - sp->at;
	push.addr = (uint64_t)(uintptr_t)(dst + sp->at);
	push.split = sp->handle;
	/* In flight from before the PUSH: a send that finds the peer dead
	 * fails its splits at once (splits_fail), this one too. */
	MPIDI_BIP_path_start(sp->paths, MPIDI_BIP_PATH_READ, len,
			     MPIDI_BIP_now_ns());
	mpi_errno = MPIDI_BIP_ctl_send(node, &push, sizeof(push));
	if (mpi_errno) {
		MPIDI_BIP_path_done(sp->paths, MPIDI_BIP_PATH_READ, len, 0,
				    MPIDI_BIP_now_ns());
		MPIDI_BIP_handle_free(&g->splits, sp->handle);
		MPL_free(sp);
		return mpi_errno;
	}
	*how = FETCH_SPLIT;
	if (!was_failed && g->peers[node].failed)
		return MPI_SUCCESS; /* failed, and freed, by splits_fail */
	split_read(sp, 0, sp->at);
	g->cnt.read++;
	g->cnt.split++;
	return MPI_SUCCESS;
}

/* Both copies are over: one ACK says the data was read (or failed), and
 * the receive completes. */
static int split_end(MPIDI_BIP_split_t *sp)
{
	int mpi_errno, rc;

	MPIDI_BIP_handle_free(&MPIDI_BIP_global.splits, sp->handle);
	MPIDI_BIP_path_done(sp->paths, MPIDI_BIP_PATH_READ, sp->len, !sp->err,
			    MPIDI_BIP_now_ns());
	mpi_errno = read_acked(sp->node, sp->sreq, sp->len, sp->ack_flags,
			       sp->err);
	rc = sp->complete(sp->arg, sp->err);
	MPL_free(sp);
	return mpi_errno ? mpi_errno : rc;
}

/* The sender's answer (checked against the split it names in
 * bip_progress.c): its part is written, or we read it ourselves. */
int MPIDI_BIP_recv_pushed(int node, const MPIDI_BIP_ctl_ack_t *pushed)
{
	MPIDI_BIP_global_t *g = &MPIDI_BIP_global;
	MPIDI_BIP_split_t *sp = MPIDI_BIP_handle_get(&g->splits, pushed->sreq);

	if ((pushed->flags & MPIDI_BIP_ACK_FAILED) && !sp->err)
		split_read(sp, sp->at, sp->len - sp->at);
	return split_end(sp);
}

/* A dead sender writes nothing more: its splits fail. */
static void splits_fail(int node, int err)
{
	MPIDI_BIP_handles_t *t = &MPIDI_BIP_global.splits;

	for (uint32_t i = 0; i < t->cap; i++) {
		MPIDI_BIP_split_t *sp = MPIDI_BIP_handle_at(t, i);

		if (!sp || sp->node != node)
			continue;
		MPIDI_BIP_handle_free(t, sp->handle);
		MPIDI_BIP_path_done(sp->paths, MPIDI_BIP_PATH_READ, sp->len,
				    0, MPIDI_BIP_now_ns());
		(void)sp->complete(sp->arg, err);
		MPL_free(sp);
	}
}

/* --- a window's reads at once ------------------------------------------- */

/* Rule: the reads of three-way messages that one progress call starts
 * from one sender (a window of sends, whose announcements the drain takes
 * in a row) are done together, by one bip_readv, when the call ends, or
 * sooner when a read from another sender comes or the batch is full: the
 * kernel's cost per call is paid once (windows of 64 messages of 16 KiB:
 * one way 15.2 -> 25.1 GB/s, both ways 20.9 -> 39.3; of 32 KiB 17.4 ->
 * 22.7 and 28.1 -> 38.5). Each ACK and completion follows its read, as when
 * read alone. Up to READS_LEN_MAX bytes a message: a larger one is read
 * at once (the call's cost is small beside its copy, and its ACK would
 * wait for the others'). */
#define READS_LEN_MAX 65536
#define READS_BYTES_MAX (256u << 10)

/* A read of len bytes from node is over (rc: BIP's result, in ns):
 * counted and timed for the chooser that chose it if it succeeded,
 * acknowledged (FAILED if not), then landed(arg, err). */
static int read_over(int node, uint64_t sreq, uint64_t len, uint32_t flags,
		     int rc, MPIDI_BIP_paths_t *timed, uint64_t ns,
		     int (*landed)(void *arg, int err), void *arg)
{
	MPIDI_BIP_global_t *g = &MPIDI_BIP_global;
	int err = MPI_SUCCESS;

	if (rc) {
		err = MPIDI_BIP_error(rc, "reading the sender's data");
	} else {
		g->cnt.read++;
		MPIDI_BIP_path_sample(timed, MPIDI_BIP_PATH_READ, len, ns);
	}
	rc = read_acked(node, sreq, len, flags, err);
	return rc ? rc : landed(arg, err);
}

int MPIDI_BIP_recv_reads_done(void)
{
	MPIDI_BIP_global_t *g = &MPIDI_BIP_global;
	MPIDI_BIP_reads_t b;
	uint64_t t0, dt, bytes = 0;
	int mpi_errno = MPI_SUCCESS;

	if (!g->reads.n)
		return MPI_SUCCESS;
	/* Taken out first: what follows completes receives and sends
	 * control messages, which must find the batch empty. */
	b.n = g->reads.n;
	b.node = g->reads.node;
	memcpy(b.v, g->reads.v, b.n * sizeof(b.v[0]));
	memcpy(b.m, g->reads.m, b.n * sizeof(b.m[0]));
	g->reads.n = 0;
	g->reads.bytes = 0;
	t0 = MPIDI_BIP_now_ns();
	(void)bip_readv(g->ep, b.node, b.v, b.n);
	dt = MPIDI_BIP_now_ns() - t0;
	for (unsigned i = 0; i < b.n; i++)
		bytes += b.v[i].rc ? 0 : b.v[i].len;
	for (unsigned i = 0; i < b.n; i++) {
		const struct bip_rvec *v = &b.v[i];
		int rc;

		if (v->rc == -BIP_EAGAIN) {
			rc = ask_for(FETCH_ASK, b.node, b.m[i].sreq, v->len,
				     b.m[i].flags, v->dst, b.m[i].ask_done,
				     b.m[i].arg);
		} else {
			g->cnt.read_together += b.n > 1 && !v->rc;
			rc = read_over(b.node, b.m[i].sreq, v->len,
				       b.m[i].flags, v->rc, b.m[i].timed,
				       bytes ? dt * v->len / bytes : 0,
				       b.m[i].landed, b.m[i].arg);
		}
		if (rc && !mpi_errno)
			mpi_errno = rc;
	}
	return mpi_errno;
}

/* The read goes into this progress call's batch. */
static int reads_add(int node, uint64_t sreq, uint64_t addr, void *dst,
		     uint64_t len, uint32_t flags,
		     int (*landed)(void *arg, int err),
		     int (*ask_done)(MPIDI_BIP_lrecv_t *, int), void *arg)
{
	MPIDI_BIP_reads_t *b = &MPIDI_BIP_global.reads;
	int mpi_errno = MPI_SUCCESS;

	if (b->n && (b->node != node || b->n == BIP_READV_MAX ||
		     b->bytes + len > READS_BYTES_MAX))
		mpi_errno = MPIDI_BIP_recv_reads_done();
	b->node = node;
	b->v[b->n] = (struct bip_rvec){ .dst = dst, .addr = addr, .len = len };
	b->m[b->n].sreq = sreq;
	b->m[b->n].flags = flags;
	b->m[b->n].landed = landed;
	b->m[b->n].ask_done = ask_done;
	b->m[b->n].arg = arg;
	/* The regime the choice saw: the drain may change it before the
	 * batch is read (MPIDI_BIP_recv_fetch_due). */
	b->m[b->n].timed = MPIDI_BIP_paths_for(node);
	b->n++;
	b->bytes += len;
	return mpi_errno;
}

/* Read the first len bytes of the sender's data at addr into dst and tell
 * it so with one ACK (flags: LAST for a truncating receive), FAILED if the
 * read failed; then landed(arg, err) (a split calls it when the sender is
 * done). *how says what was done: on an ASK the caller asks. With
 * ask_done (a three-way message's: the done of its ask), a read of up to
 * READS_LEN_MAX goes into the progress call's batch, and a read BIP cannot
 * do becomes that ask when the batch is read. */
static int read_data(int node, uint64_t sreq, uint64_t addr, void *dst,
		     uint64_t len, uint32_t flags, enum fetch *how,
		     int (*landed)(void *arg, int err),
		     int (*ask_done)(MPIDI_BIP_lrecv_t *, int), void *arg)
{
	uint64_t t0;
	int rc;

	*how = FETCH_ASK;
	if (!addr)
		return MPI_SUCCESS;
	*how = fetch_way(node, dst, addr, len);
	if (*how != FETCH_READ)
		return MPI_SUCCESS;
	if (splits(node, len)) {
		rc = split_start(node, sreq, addr, dst, len, flags, how,
				 landed, arg);
		if (rc || *how == FETCH_SPLIT)
			return rc;
	}
	if (ask_done && len <= READS_LEN_MAX)
		return reads_add(node, sreq, addr, dst, len, flags, landed,
				 ask_done, arg);
	t0 = MPIDI_BIP_now_ns();
	rc = bip_read(MPIDI_BIP_global.ep, node, dst, addr, len);
	if (rc == -BIP_EAGAIN) {
		*how = FETCH_ASK;
		return MPI_SUCCESS;
	}
	return read_over(node, sreq, len, flags, rc, MPIDI_BIP_paths_for(node),
			 MPIDI_BIP_now_ns() - t0, landed, arg);
}

/* Whether read_data left the data to be asked for. */
static bool to_ask(enum fetch how)
{
	return how < FETCH_READ;
}

/* --- three-way ----------------------------------------------------------- */

/* The data of a matched receive landed (or never will: err). */
static int rreq_landed(MPIR_Request *rreq, int err)
{
	MPIDI_BIP_request_t *r = &BIP_REQ(rreq);

	if (err)
		return recv_fail(rreq, r->rank, r->tag, err);
	return recv_finish(rreq, r->rank, r->tag, r->pack, r->data_sz);
}

static int rreq_3way_done(MPIDI_BIP_lrecv_t *lr, int err)
{
	asked(lr->timed, lr->ack.len, err);
	return rreq_landed(lr->arg, err);
}

static int rreq_read_done(void *arg, int err)
{
	return rreq_landed(arg, err);
}

/* A message that arrived unexpected is complete: hand it to the receive
 * that matched meanwhile, or keep it for the one to come. */
static int unexp_landed(MPIDI_BIP_unexp_t *u, int err)
{
	int mpi_errno;

	if (!u->rreq) {
		/* Its receive, when it comes, finishes or fails at once. */
		u->arrived = !err;
		u->err = err;
		return MPI_SUCCESS;
	}
	if (err)
		mpi_errno = recv_fail(u->rreq, u->rank, u->tag, err);
	else
		mpi_errno = recv_finish(u->rreq, u->rank, u->tag, u->data,
					u->data_sz);
	unexp_data_put(u);
	unexp_free(u);
	return mpi_errno;
}

static int unexp_3way_done(MPIDI_BIP_lrecv_t *lr, int err)
{
	asked(lr->timed, lr->ack.len, err);
	return unexp_landed(lr->arg, err);
}

static int unexp_read_done(void *arg, int err)
{
	return unexp_landed(arg, err);
}

/* No memory for the len bytes of node's message sreq: it fails at both
 * ends, done ending ours (an ask with no buffer: MPIDI_BIP_lrecv). */
static int recv_no_memory(int node, uint64_t sreq, uint64_t len,
			  int (*done)(MPIDI_BIP_lrecv_t *, int), void *arg)
{
	return ask_post(node, sreq, 0, len, 0, NULL, NULL, done, arg);
}

/* --- announcements: eager, three-way, rendezvous ------------------------- */

/* An announcement meets the receive posted for it, if any: the receive
 * takes its envelope. */
static MPIR_Request *rts_matched(const MPIDI_BIP_ctl_rts_t *rts)
{
	MPIR_Request *rreq = posted_take(rts->h.ctx, rts->h.rank, rts->h.tag);

	if (rreq) {
		BIP_REQ(rreq).rank = rts->h.rank;
		BIP_REQ(rreq).tag = rts->h.tag;
		BIP_REQ(rreq).data_sz = rts->data_sz;
	}
	return rreq;
}

/* An unexpected eager message lands in its entry if it fits there (one
 * piece), or else in a buffer of its own, as a three-way one's does once
 * fetched (u->data NULL: no memory); NULL if not even the envelope could
 * be kept. */
static MPIDI_BIP_unexp_t *unexp_with_data(int node,
					  const MPIDI_BIP_ctl_rts_t *rts)
{
	bool fits = rts->data_sz <= BIP_SMALL_MAX;
	MPIDI_BIP_unexp_t *u = unexp_new(node, &rts->h, rts->data_sz,
					 fits ? rts->data_sz : 0);

	if (!u)
		return NULL;
	u->type = MPIDI_BIP_CTL_RTS3;
	if (!fits)
		u->data = MPIDI_BIP_buf_get(rts->data_sz);
	return u;
}

/* Eager, in pieces. */

/* The eager message is over (err: failed): its receive, or the
 * unexpected message it fills, if it had one. */
static int eager_end(MPIDI_BIP_eager_t *e, int err)
{
	e->active = false;
	if (e->rreq)
		return rreq_landed(e->rreq, err);
	return e->u ? unexp_landed(e->u, err) : MPI_SUCCESS;
}

/* A piece's bytes go where the message lands; past what the receive holds
 * they are dropped (it is truncated). */
static int eager_piece(MPIDI_BIP_eager_t *e, const void *data, size_t len)
{
	if (e->got < e->cap)
		bip_copy(e->dst + e->got, data, MPL_MIN(len, e->cap - e->got));
	e->got += len;
	return e->got < e->data_sz ? MPI_SUCCESS : eager_end(e, e->err);
}

/* The peer died with its eager message half here. */
static int eager_fail(MPIDI_BIP_eager_t *e, int err)
{
	return e->active ? eager_end(e, err) : MPI_SUCCESS;
}

/* Rule: the sender of an eager message is done with it already, so its
 * pieces are always taken, even where there is no memory for them: then
 * they are dropped (their credits still go back), and its receive fails
 * with the last. A message whose envelope could not even be kept fails
 * the call that runs progress: no receive will ever match it. */
int MPIDI_BIP_recv_eager(int node, const MPIDI_BIP_ctl_rts_t *rts,
			 const void *data)
{
	MPIDI_BIP_eager_t *e = &MPIDI_BIP_global.peers[node].eager;
	MPIR_Request *rreq = rts_matched(rts);
	int mpi_errno = MPI_SUCCESS, rc;

	*e = (MPIDI_BIP_eager_t){ .data_sz = rts->data_sz, .rreq = rreq };
	if (rreq) {
		e->dst = recv_landing(rreq, rts->data_sz);
		e->cap = BIP_REQ(rreq).cap;
	} else {
		e->u = unexp_with_data(node, rts);
		e->dst = e->u ? e->u->data : NULL;
		e->cap = rts->data_sz;
		if (!e->u)
			mpi_errno = MPIDI_BIP_NOMEM();
	}
	if (!e->dst && e->cap) {
		e->cap = 0;
		e->err = MPIDI_BIP_NOMEM();
	}
	e->active = true;
	rc = eager_piece(e, data, rts->h.len);
	return rc ? rc : mpi_errno;
}

/* (bip_progress.c checked that it belongs to an eager message in flight,
 * within its size.) */
int MPIDI_BIP_recv_more(int node, const MPIDI_BIP_ctl_t *more,
			const void *data)
{
	return eager_piece(&MPIDI_BIP_global.peers[node].eager, data,
			   more->len);
}

/* --- rendezvous ---------------------------------------------------------- */

static int rndv_fragment(MPIR_Request *rreq, uint32_t packets,
			 MPIDI_BIP_paths_t *timed);

static int rndv_fragment_done(MPIDI_BIP_lrecv_t *lr, int err)
{
	MPIR_Request *rreq = lr->arg;
	MPIDI_BIP_request_t *r = &BIP_REQ(rreq);

	if (err) {
		asked(lr->timed, r->cap, err);
		return recv_fail(rreq, r->rank, r->tag, err);
	}
	r->offset += lr->ack.len;
	MPIDI_BIP_global.cnt.fragments++;
	if (r->offset < r->cap)
		return rndv_fragment(rreq, lr->ack.flags & MPIDI_BIP_ACK_CHOSEN,
				     lr->timed);
	asked(lr->timed, r->cap, MPI_SUCCESS);
	return recv_finish(rreq, r->rank, r->tag, r->pack, r->data_sz);
}

/* Ask for the next fragment: post its receive, the ACK follows (packets:
 * MPIDI_BIP_ACK_CHOSEN or 0, and timed, as read_data decided for the
 * message, carried to its last fragment). */
static int rndv_fragment(MPIR_Request *rreq, uint32_t packets,
			 MPIDI_BIP_paths_t *timed)
{
	MPIDI_BIP_request_t *r = &BIP_REQ(rreq);
	uint64_t len = MPL_MIN(MPIDI_BIP_global.fragment, r->cap - r->offset);

	return ask_post(r->node, r->peer, r->offset, len,
			ack_flags(r, r->offset + len) | packets, timed,
			(char *)r->data + r->offset, rndv_fragment_done, rreq);
}

/* A receive matched a rendezvous request: the transfer starts, by one
 * read of the whole when the sender allows it (addr), else fragment by
 * fragment. */
static int rndv_start(MPIR_Request *rreq, int node, uint64_t sreq,
		      uint64_t data_sz, uint64_t addr)
{
	MPIDI_BIP_request_t *r = &BIP_REQ(rreq);
	enum fetch how;
	void *dst;
	int mpi_errno;

	r->node = node;
	r->peer = sreq;
	r->data_sz = data_sz;
	r->offset = 0;
	r->data = dst = recv_landing(rreq, data_sz);
	if (!r->cap)
		return recv_nothing(rreq, node, sreq);
	if (!dst)
		return recv_no_memory(node, sreq, r->cap, rndv_fragment_done,
				      rreq);
	mpi_errno = read_data(node, sreq, addr, dst, r->cap,
			      ack_flags(r, r->cap), &how, rreq_read_done, NULL,
			      rreq);
	if (mpi_errno || !to_ask(how))
		return mpi_errno;
	return rndv_fragment(rreq, ask_packets(how),
			     ask_timed(how, node, r->cap));
}

/* A three-way message meets its receive: straight into the user buffer,
 * read (alone or with the sender's help) or asked for. */
static int rts3_matched(MPIR_Request *rreq, int node, uint64_t sreq,
			uint64_t addr, uint64_t data_sz)
{
	MPIDI_BIP_request_t *r = &BIP_REQ(rreq);
	void *dst;
	uint32_t flags;
	enum fetch how;
	int mpi_errno;

	r->data_sz = data_sz;
	dst = recv_landing(rreq, data_sz);
	if (!r->cap)
		return recv_nothing(rreq, node, sreq);
	if (!dst)
		return recv_no_memory(node, sreq, r->cap, rreq_3way_done, rreq);
	flags = ack_flags(r, r->cap);
	mpi_errno = read_data(node, sreq, addr, dst, r->cap, flags, &how,
			      rreq_read_done, rreq_3way_done, rreq);
	if (mpi_errno || !to_ask(how))
		return mpi_errno;
	return ask_for(how, node, sreq, r->cap, flags, dst, rreq_3way_done,
		       rreq);
}

/* A receive met a three-way or rendezvous message: the data comes (read,
 * or asked for) by its protocol. */
static int fetch_matched(MPIR_Request *rreq, int node, uint8_t type,
			 uint64_t sreq, uint64_t data_sz, uint64_t addr)
{
	if (type == MPIDI_BIP_CTL_RNDV)
		return rndv_start(rreq, node, sreq, data_sz, addr);
	return rts3_matched(rreq, node, sreq, addr, data_sz);
}

/* --- a matched receive meets its message ---------------------------------- */

/* Rule: a receive call that matches a message whose data it may read (a
 * rendezvous one, or a three-way one still held) leaves the read to the
 * next progress call. The call returns at once, and the sends a program
 * posts right behind its receives (an exchange, OSU's bidirectional
 * windows) are on their way first, and the read-or-ask choice then sees
 * them in flight (MPIDI_BIP_paths_for): read inside MPI_Irecv, 1 MiB
 * messages of windows both ways went by the one-way costs, asked (21.4
 * against 24.3 GB/s). The price: its sender waits for that call (a
 * receive, then computation, then a wait, holds it for the computation;
 * draining the list in the next send instead had each side read the
 * other's window before sending its own, one way at a time again). */
static int fetch_later(MPIR_Request *rreq, MPIDI_BIP_unexp_t *u)
{
	MPIDI_BIP_global_t *g = &MPIDI_BIP_global;

	u->rreq = rreq;
	u->next = NULL;
	MPIDI_BIP_QUEUE_APPEND(g->due_head, g->due_tail, u);
	return MPI_SUCCESS;
}

int MPIDI_BIP_recv_fetch_due(int *progress)
{
	MPIDI_BIP_global_t *g = &MPIDI_BIP_global;
	int mpi_errno = MPI_SUCCESS;

	while (g->due_head && !mpi_errno) {
		MPIDI_BIP_unexp_t *u = g->due_head;
		MPIR_Request *rreq = u->rreq;

		g->due_head = u->next;
		if (!g->due_head)
			g->due_tail = NULL;
		if (g->peers[u->node].failed)
			mpi_errno = recv_fail(rreq, u->rank, u->tag,
					      MPIDI_BIP_proc_failed(u->node));
		else
			mpi_errno = fetch_matched(rreq, u->node, u->type,
						  u->sreq, u->data_sz, u->addr);
		unexp_free(u);
		(*progress)++;
	}
	return mpi_errno;
}

/* Remember who sent it (the status), then run the protocol's next step. */
static int take_unexp(MPIR_Request *rreq, MPIDI_BIP_unexp_t *u)
{
	MPIDI_BIP_request_t *r = &BIP_REQ(rreq);
	int mpi_errno = MPI_SUCCESS;

	r->rank = u->rank;
	r->tag = u->tag;
	if (u->err) {
		mpi_errno = recv_fail(rreq, u->rank, u->tag, u->err);
		if (u->type == MPIDI_BIP_CTL_RTS3)
			unexp_data_put(u);
		unexp_free(u);
		return mpi_errno;
	}
	switch (u->type) {
	case MPIDI_BIP_CTL_SHORT:
		mpi_errno = recv_finish(rreq, u->rank, u->tag, u->data,
					u->data_sz);
		break;
	case MPIDI_BIP_CTL_RTS3:
		if (u->held) {
			u->held = false;
			MPIDI_BIP_global.nheld--;
			if (u->addr)
				return fetch_later(rreq, u);
			mpi_errno = rts3_matched(rreq, u->node, u->sreq,
						 u->addr, u->data_sz);
			break;
		}
		if (!u->arrived) {
			u->rreq = rreq; /* unexp_landed finishes it */
			return MPI_SUCCESS;
		}
		mpi_errno = recv_finish(rreq, u->rank, u->tag, u->data,
					u->data_sz);
		unexp_data_put(u);
		break;
	case MPIDI_BIP_CTL_RNDV:
		if (u->addr)
			return fetch_later(rreq, u);
		mpi_errno = rndv_start(rreq, u->node, u->sreq, u->data_sz,
				       u->addr);
		break;
	}
	unexp_free(u);
	return mpi_errno;
}

/* --- control messages arriving ------------------------------------------- */

int MPIDI_BIP_recv_short(int node, const MPIDI_BIP_ctl_t *ctl,
			 const void *data)
{
	MPIR_Request *rreq = posted_take(ctl->ctx, ctl->rank, ctl->tag);
	MPIDI_BIP_unexp_t *u;

	if (rreq)
		return recv_complete(rreq, ctl->rank, ctl->tag, data,
				     ctl->len);
	u = unexp_new(node, ctl, ctl->len, ctl->len);
	if (!u)
		return MPIDI_BIP_NOMEM();
	memcpy(u->data, data, ctl->len);
	u->arrived = true;
	return MPI_SUCCESS;
}

/* A three-way message no receive took in time comes into a temporary
 * buffer, so that its sender can finish. */
static int rts3_fetch(MPIDI_BIP_unexp_t *u)
{
	enum fetch how;
	int mpi_errno;

	if (u->held) {
		u->held = false;
		MPIDI_BIP_global.nheld--;
		MPIDI_BIP_global.cnt.held_fetched++;
	}
	u->data = MPIDI_BIP_buf_get(u->data_sz);
	if (!u->data)
		return recv_no_memory(u->node, u->sreq, u->data_sz,
				      unexp_3way_done, u);
	mpi_errno = read_data(u->node, u->sreq, u->addr, u->data, u->data_sz,
			      0, &how, unexp_read_done, unexp_3way_done, u);
	if (mpi_errno || !to_ask(how))
		return mpi_errno;
	return ask_for(how, u->node, u->sreq, u->data_sz, 0, u->data,
		       unexp_3way_done, u);
}

/* Rule: a three-way message that comes before its receive is held, its
 * data left with the sender, for MPIDI_BIP_global.hold_ns: a receive
 * posted meanwhile takes it in one copy, into the user buffer. Once the
 * hold is over, the first progress call with nothing else to do fetches
 * it into a temporary buffer (rts3_fetch): its sender finishes whether a
 * receive ever comes or not, as the three-way protocol promises, and two
 * ranks that send to each other before receiving (an unsafe program, but
 * a common one) wait for one hold, not for ever. Sendrecv of 112 KiB
 * along hypercube dimensions on 16 ranks on 2 cores: half of the
 * messages come first, and each cost a second copy and a buffer. */
int MPIDI_BIP_recv_held_due(int *progress)
{
	MPIDI_BIP_global_t *g = &MPIDI_BIP_global;
	uint64_t now = MPIDI_BIP_now_ns();
	int mpi_errno = MPI_SUCCESS;

	for (MPIDI_BIP_unexp_t *u = g->unexp_head; u && g->nheld && !mpi_errno;
	     u = u->next) {
		if (!u->held || now - u->held_ns < g->hold_ns)
			continue;
		mpi_errno = rts3_fetch(u);
		(*progress)++;
	}
	return mpi_errno;
}

int MPIDI_BIP_recv_rts(int node, const MPIDI_BIP_ctl_rts_t *rts)
{
	MPIDI_BIP_global_t *g = &MPIDI_BIP_global;
	MPIR_Request *rreq = rts_matched(rts);
	MPIDI_BIP_unexp_t *u;
	int mpi_errno;

	if (rreq)
		return fetch_matched(rreq, node, rts->h.type, rts->sreq,
				     rts->data_sz, rts->addr);
	/* Rendezvous: the ACK, or the read, waits for a receive. Three-way:
	 * the same for a while (MPIDI_BIP_recv_held_due). */
	u = unexp_new(node, &rts->h, rts->data_sz, 0);
	if (!u) {
		/* Not even its envelope kept: its sender fails, and so does
		 * this call, since no receive will ever match it. */
		mpi_errno = MPIDI_BIP_answer_failed(node, MPIDI_BIP_CTL_ACK,
						    rts->sreq);
		return mpi_errno ? mpi_errno : MPIDI_BIP_NOMEM();
	}
	u->sreq = rts->sreq;
	u->addr = rts->addr;
	if (rts->h.type == MPIDI_BIP_CTL_RNDV)
		return MPI_SUCCESS;
	u->data = NULL;
	if (!g->hold_ns)
		return rts3_fetch(u);
	u->held = true;
	u->held_ns = MPIDI_BIP_now_ns();
	g->nheld++;
	g->cnt.held++;
	return MPI_SUCCESS;
}

/* The sender cancels a rendezvous send whose data we could read: if no
 * receive took its announcement yet, it is dropped and the sender told;
 * else the receive that took it reads it, or has, and its ACK tells. */
int MPIDI_BIP_recv_withdraw(int node, uint64_t sreq)
{
	MPIDI_BIP_unexp_t *prev = NULL;
	MPIDI_BIP_ctl_ack_t ack = {
		.h.type = MPIDI_BIP_CTL_ACK,
		.sreq = sreq,
		.flags = MPIDI_BIP_ACK_WITHDRAWN,
	};

	for (MPIDI_BIP_unexp_t *u = MPIDI_BIP_global.unexp_head; u;
	     prev = u, u = u->next) {
		if (u->node != node || u->type != MPIDI_BIP_CTL_RNDV ||
		    u->sreq != sreq || !u->addr)
			continue;
		unexp_unlink(prev, u);
		unexp_free(u);
		return MPIDI_BIP_ctl_send(node, &ack, sizeof(ack));
	}
	return MPI_SUCCESS;
}

/* A dead peer: the receives only it could match fail; of what it sent,
 * what arrived whole stays to be received, and announcements whose data
 * can no longer come fail their receives when those are posted.
 * Wildcard receives stay posted: another rank may match them. */
int MPIDI_BIP_recv_peer_failed(int node, int err)
{
	MPIDI_BIP_global_t *g = &MPIDI_BIP_global;
	MPIR_Request *prev = NULL, *next;

	for (MPIR_Request *r = g->posted_head; r; r = next) {
		next = BIP_REQ(r).next;
		if (recv_node(r->comm, BIP_REQ(r).rank) != node) {
			prev = r;
			continue;
		}
		posted_unlink(prev, r);
		recv_fail(r, BIP_REQ(r).rank, BIP_REQ(r).tag, err);
	}
	for (MPIDI_BIP_unexp_t *u = g->unexp_head; u; u = u->next) {
		if (u->node != node ||
		    (u->type != MPIDI_BIP_CTL_RNDV && !u->held))
			continue;
		u->err = err;
		if (u->held) {
			u->held = false;
			g->nheld--;
		}
	}
	splits_fail(node, err);
	return eager_fail(&g->peers[node].eager, err);
}

/* --- the MPI calls ------------------------------------------------------- */

static void recv_init(MPIR_Request *rreq, void *buf, MPI_Aint count,
		      MPI_Datatype datatype)
{
	MPIDI_BIP_request_t *r = &BIP_REQ(rreq);

	r->buf = buf;
	r->count = count;
	r->datatype = datatype;
	r->pack = NULL;
	r->unexp = NULL;
	MPIR_Datatype_add_ref_if_not_builtin(datatype);
}

int MPIDI_BIP_irecv(void *buf, MPI_Aint count, MPI_Datatype datatype,
		    int rank, int tag, MPIR_Comm *comm, int context_offset,
		    MPIR_Request **req_p)
{
	MPIR_Request *rreq;
	MPIDI_BIP_unexp_t *u;
	uint16_t ctx = (uint16_t)(comm->recvcontext_id + context_offset);
	int mpi_errno = MPI_SUCCESS, node;

	MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(0).lock);
	rreq = MPIR_Request_create_from_pool(MPIR_REQUEST_KIND__RECV, 0, 2);
	MPIR_ERR_CHKANDJUMP(!rreq, mpi_errno, MPIX_ERR_NOREQ, "**nomemreq");
	*req_p = rreq;
	recv_init(rreq, buf, count, datatype);
	rreq->comm = comm; /* its error handler applies */
	MPIR_Comm_add_ref(comm);
	u = unexp_find(ctx, rank, tag, true);
	if (u) {
		mpi_errno = take_unexp(rreq, u);
		goto fn_exit;
	}
	BIP_REQ(rreq).ctx = ctx;
	BIP_REQ(rreq).rank = rank;
	BIP_REQ(rreq).tag = tag;
	/* A dead node never sends what only it could match. Which node that
	 * is, is looked up once a node died only. */
	node = MPIDI_BIP_global.nfailed ? recv_node(comm, rank) : -1;
	if (node >= 0 && MPIDI_BIP_global.peers[node].failed)
		mpi_errno = recv_fail(rreq, rank, tag,
				      MPIDI_BIP_proc_failed(node));
	else
		posted_append(rreq);
fn_exit:
	MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(0).lock);
	return mpi_errno;
fn_fail:
	goto fn_exit;
}

int MPIDI_BIP_imrecv(void *buf, MPI_Aint count, MPI_Datatype datatype,
		     MPIR_Request *message)
{
	MPIDI_BIP_unexp_t *u = BIP_REQ(message).unexp;
	int mpi_errno;

	MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(0).lock);
	recv_init(message, buf, count, datatype);
	mpi_errno = take_unexp(message, u);
	MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(0).lock);
	return mpi_errno;
}

/* Only a receive still waiting in the posted queue can be cancelled. */
int MPIDI_BIP_cancel_recv(MPIR_Request *rreq)
{
	MPIR_Request *prev = NULL;

	MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(0).lock);
	for (MPIR_Request *r = MPIDI_BIP_global.posted_head; r;
	     prev = r, r = BIP_REQ(r).next) {
		if (r != rreq)
			continue;
		posted_unlink(prev, r);
		MPIR_STATUS_SET_CANCEL_BIT(rreq->status, TRUE);
		MPIR_STATUS_SET_COUNT(rreq->status, 0);
		MPIR_Datatype_release_if_not_builtin(BIP_REQ(rreq).datatype);
		MPIDIU_request_complete(rreq);
		break;
	}
	MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(0).lock);
	return MPI_SUCCESS;
}

/* MPI_Iprobe (message_p NULL) and MPI_Improbe (the message is taken). */
int MPIDI_BIP_iprobe(int source, int tag, MPIR_Comm *comm,
		     int context_offset, int *flag, MPIR_Request **message_p,
		     MPI_Status *status)
{
	uint16_t ctx = (uint16_t)(comm->recvcontext_id + context_offset);
	MPIDI_BIP_unexp_t *u;
	int mpi_errno = MPI_SUCCESS;

	MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(0).lock);
	u = unexp_find(ctx, source, tag, false);
	*flag = u != NULL;
	if (!u)
		goto fn_exit;
	if (status != MPI_STATUS_IGNORE) {
		status->MPI_SOURCE = u->rank;
		status->MPI_TAG = u->tag;
		MPIR_STATUS_SET_COUNT(*status, (MPI_Aint)u->data_sz);
		MPIR_STATUS_SET_CANCEL_BIT(*status, FALSE);
	}
	if (message_p) {
		/* The request first: the message leaves the queue only once
		 * it has a home. */
		MPIR_Request *m = MPIR_Request_create_from_pool(
			MPIR_REQUEST_KIND__MPROBE, 0, 2);

		MPIR_ERR_CHKANDJUMP(!m, mpi_errno, MPIX_ERR_NOREQ,
				    "**nomemreq");
		unexp_find(ctx, source, tag, true);
		BIP_REQ(m).unexp = u;
		m->comm = comm;
		MPIR_Comm_add_ref(comm);
		*message_p = m;
	}
fn_exit:
	MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(0).lock);
	return mpi_errno;
fn_fail:
	goto fn_exit;
}
