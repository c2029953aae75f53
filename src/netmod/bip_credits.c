/*
 * bip_credits.c - control messages: credit flow control and the send FIFOs
 * (MPI-BIP, sections 3.4 and 3.5).
 *
 * BIP's small-message queue is static; overflowing it is the upper layer's
 * fault. For each peer j this process keeps C(i->j), the control messages it
 * may still send to j, and B(i<-j), the messages from j it consumed without
 * returning their credits yet. Sending: C--, B travels in the header, B = 0.
 * Receiving: C += the header's credits; once the message left BIP's queue,
 * B++. When B reaches half of N (rounded up) a credits-only message goes
 * back at once.
 *
 * MPI-BIP sends it at B = N-1. Then a one-way stream stops every N-1
 * messages for a round trip: the sender has used its last credit before
 * the receiver even starts the return. At N/2 the credits travel while the
 * sender still holds the other half, at the price of one credits-only
 * message per N/2 messages instead of per N-1 (none when traffic goes both
 * ways: the credits ride on it).
 *
 * An ordinary message needs C >= 2: the last credit is reserved, so a
 * credits-only message always finds room in the peer's queue. A credits-only
 * message is itself not credited (it does not decrement C and the receiver
 * does not count it in B): counting it would make two peers with N = 2 answer
 * each other's credits forever, and it needs no return - one can be in the
 * peer's queue at a time: the next takes ceil(N/2) more messages from the
 * peer, and without this one's credits the peer has at most N - ceil(N/2)
 * left, of which it can spend all but the reserved one: fewer. So each
 * peer holds at most N-1 ordinary + 1 credits-only messages in our queue.
 *
 * N itself, unless MPIR_CVAR_CH4_BIP_CREDITS sets it: BIP's queue shared
 * evenly among the ranks (ours included, through BIP's self wire), so two
 * ranks get a deep window and many ranks still fit; the pair takes the
 * smaller of its two ends' values.
 *
 * Messages BIP cannot take yet (no credit, or all BIP send slots busy) wait
 * in a FIFO per peer, in order, drained on credits and on completions: MPI's
 * non-overtaking rule holds and the upper layers see unlimited sends. Up
 * to N of them are copies, and their sends complete at once, so a burst
 * twice the peer's window leaves without waiting (NAS LU's); beyond that
 * a short send lends its data and completes when the message leaves. A
 * sender that never waits (a broadcast root) then keeps pace with its
 * receiver, and its FIFO's memory stays bounded: copied without end, it
 * grew to thousands of messages, whose fresh pages cost more than the
 * sends.
 */
#include "mpidimpl.h"
#include "bip_state.h"

/* Entries come in two sizes, for a header and for a whole control
 * message (BIP takes none longer), and are kept for the next ones: freed
 * at once, a burst's copies went back to the system and the next burst's
 * took page faults again (a stream of 4 KiB sends to a rank 20 us late,
 * whose first 128 wait here as copies: 0.22 -> 0.35 us a message, the
 * page faults a fifth of the sender's time). */
#define CTLQ_HDR 128

static size_t ctlq_bytes(size_t len)
{
	return sizeof(MPIDI_BIP_ctlq_t) +
	       (len > CTLQ_HDR ? BIP_SMALL_MAX : CTLQ_HDR);
}

/* An entry of len bytes of message, for node. */
static MPIDI_BIP_ctlq_t *ctlq_get(int node, size_t len, MPIR_Request *lent)
{
	MPIDI_BIP_ctlq_t *q;

	if (len > BIP_SMALL_MAX)
		return NULL;
	q = MPIDI_BIP_spare_get(&MPIDI_BIP_global.ctlq_spares[len > CTLQ_HDR],
				ctlq_bytes(len));
	if (!q)
		return NULL;
	*q = (MPIDI_BIP_ctlq_t){
		.node = node,
		.len = len,
		.lent = lent,
	};
	return q;
}

static void ctlq_free(MPIDI_BIP_ctlq_t *q)
{
	MPIDI_BIP_spare_put(&MPIDI_BIP_global.ctlq_spares[q->len > CTLQ_HDR],
			    q, ctlq_bytes(q->len));
}

void MPIDI_BIP_ctlq_finalize(void)
{
	for (int k = 0; k < 2; k++)
		MPIDI_BIP_spares_free(&MPIDI_BIP_global.ctlq_spares[k]);
}

/* A queued message gathered from iov[0..1]: a copy, or with lent, a copy
 * of iov[0] and iov[1] where it is. */
static MPIDI_BIP_ctlq_t *ctlq_new(int node, const struct iovec *iov,
				  MPIR_Request *lent)
{
	size_t len = iov[0].iov_len + (lent ? 0 : iov[1].iov_len);
	MPIDI_BIP_ctlq_t *q = ctlq_get(node, len, lent);

	if (!q)
		return NULL;
	memcpy(q->msg, iov[0].iov_base, iov[0].iov_len);
	if (lent) {
		q->data = iov[1].iov_base;
		q->data_len = iov[1].iov_len;
	} else {
		memcpy(q->msg + iov[0].iov_len, iov[1].iov_base,
		       iov[1].iov_len);
	}
	return q;
}

static void fifo_push(MPIDI_BIP_peer_t *p, MPIDI_BIP_ctlq_t *q)
{
	MPIDI_BIP_global_t *g = &MPIDI_BIP_global;

	if (p->tail)
		p->tail->next = q;
	else
		p->head = q;
	p->tail = q;
	if (p->queued++ == 0)
		g->sfifo_peers++;
	if (++g->cnt.sfifo_depth > g->cnt.sfifo_max)
		g->cnt.sfifo_max = g->cnt.sfifo_depth;
}

/* q leaves p's FIFO; prev is the entry before it (NULL: q is the head). */
static void fifo_unlink(MPIDI_BIP_peer_t *p, MPIDI_BIP_ctlq_t *prev,
			MPIDI_BIP_ctlq_t *q)
{
	MPIDI_BIP_global_t *g = &MPIDI_BIP_global;

	if (prev)
		prev->next = q->next;
	else
		p->head = q->next;
	if (p->tail == q)
		p->tail = prev;
	g->cnt.sfifo_depth--;
	if (--p->queued == 0)
		g->sfifo_peers--;
}

/* The message of a send that lent its data left (err 0), or never will:
 * the send is over. */
static void lent_done(MPIR_Request *sreq, int err)
{
	if (err)
		sreq->status.MPI_ERROR = err;
	MPIDIU_request_complete(sreq);
}

static void ctlq_done(MPIDI_BIP_ctlq_t *q, int err)
{
	if (q->lent)
		lent_done(q->lent, err);
	ctlq_free(q);
}

/* What we can take from each peer: the CVAR (0: as much as the headers
 * carry), lowered so that every peer's messages fit BIP's queue of
 * small_queue - our own rank's too, which reaches us through BIP like any
 * other. The pairs agree on N later. */
int MPIDI_BIP_credits_init(unsigned small_queue)
{
	MPIDI_BIP_global_t *g = &MPIDI_BIP_global;
	int peers = MPIR_Process.size, n = g->accept ? g->accept : UINT8_MAX;

	if (n > (int)small_queue / peers)
		n = (int)small_queue / peers;
	if (n < 2)
		return MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE,
					    __func__, __LINE__, MPI_ERR_OTHER,
					    "**bipcredits",
					    "**bipcredits %d %d %d", g->accept,
					    peers, (int)small_queue);
	g->accept = n;
	g->peers = MPL_calloc((size_t)MPIR_Process.size, sizeof(*g->peers),
			      MPL_MEM_BUFFER);
	if (!g->peers)
		return MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE,
					    __func__, __LINE__, MPI_ERR_OTHER,
					    "**nomem", 0);
	return MPI_SUCCESS;
}

/* Rule: a pair's N is the smaller of what each end can take, so neither
 * end's queue overflows, and both ends count with the same N. */
void MPIDI_BIP_credits_agree(int node, int peer_accepts)
{
	MPIDI_BIP_peer_t *p = &MPIDI_BIP_global.peers[node];

	p->ncredits = MPL_MIN(MPIDI_BIP_global.accept, peer_accepts);
	p->credits = p->ncredits;
}

/* Hand one message (header, then data) to BIP: the credits we owe ride in
 * its header. With more, others to node follow it at once (BIP may hold
 * it back to send them together). */
static inline int ctl_post(int node, MPIDI_BIP_peer_t *p,
			   const struct iovec *iov, bool more)
{
	MPIDI_BIP_ctl_t *h = iov[0].iov_base;
	int rc;

	h->credits = (uint8_t)p->owed;
	rc = more ? bip_sendv_more(MPIDI_BIP_global.ep, node, iov, 2)
		  : bip_sendv_try(MPIDI_BIP_global.ep, node, iov, 2);
	if (rc == 0) {
		p->owed = 0;
		if (h->type != MPIDI_BIP_CTL_CREDITS)
			p->credits--;
	}
	return rc;
}

/* Send a control message - a header and its data, gathered by BIP - now,
 * or queue a copy behind what waits for node (ourselves included: BIP's
 * self wire loops it back); with lent, the header's copy and the data where
 * it is, lent's request completing when it leaves. With more, another to
 * node follows at once. In line in each of the three ways in, so that
 * more and lent fold away in the commonest (MPIDI_BIP_ctl_sendv). */
static inline __attribute__((always_inline)) int
ctl_sendv(int node, void *hdr, size_t hdr_len, const void *data,
	  size_t data_len, bool more, MPIR_Request *lent)
{
	MPIDI_BIP_global_t *g = &MPIDI_BIP_global;
	MPIDI_BIP_peer_t *p = &g->peers[node];
	MPIDI_BIP_ctlq_t *q;
	int mpi_errno = MPI_SUCCESS, rc = -BIP_EAGAIN;
	const struct iovec iov[2] = { { hdr, hdr_len },
				      { (void *)data, data_len } };

	/* To a dead peer, nothing goes: what waits on an answer from it has
	 * failed already (MPIDI_BIP_peer_failed). */
	if (p->failed)
		goto fn_exit;
	/* Held back only if the next one can follow it straight away. */
	if (!p->head && p->credits >= 2)
		rc = ctl_post(node, p, iov, more && p->credits >= 3);
	if (rc == -BIP_EPEERGONE)
		return MPIDI_BIP_peer_failed(node);
	if (rc != -BIP_EAGAIN) {
		BIP_CHECK(rc, "bip_send");
		goto fn_exit;
	}
	q = ctlq_new(node, iov, lent);
	MPIR_ERR_CHKANDJUMP(!q, mpi_errno, MPI_ERR_OTHER, "**nomem");
	fifo_push(p, q);
	return MPI_SUCCESS;
fn_exit:
	/* To a dead peer (a lent send never goes at once: the FIFO was
	 * full): it is over. */
	if (lent && !mpi_errno)
		lent_done(lent, p->failed ? MPIDI_BIP_proc_failed(node) : 0);
	return mpi_errno;
fn_fail:
	goto fn_exit;
}

int MPIDI_BIP_ctl_sendv(int node, void *hdr, size_t hdr_len, const void *data,
			size_t data_len)
{
	return ctl_sendv(node, hdr, hdr_len, data, data_len, false, NULL);
}

int MPIDI_BIP_ctl_sendv_more(int node, void *hdr, size_t hdr_len,
			     const void *data, size_t data_len)
{
	return ctl_sendv(node, hdr, hdr_len, data, data_len, true, NULL);
}

int MPIDI_BIP_ctl_sendv_lent(int node, void *hdr, size_t hdr_len,
			     const void *data, size_t data_len,
			     MPIR_Request *sreq)
{
	return ctl_sendv(node, hdr, hdr_len, data, data_len, false, sreq);
}

int MPIDI_BIP_send_fifo_unlend(int node, MPIR_Request *sreq)
{
	MPIDI_BIP_peer_t *p = &MPIDI_BIP_global.peers[node];
	MPIDI_BIP_ctlq_t *q, *prev = NULL, *copy;

	for (q = p->head; q && q->lent != sreq; prev = q, q = q->next)
		;
	if (!q)
		return MPI_SUCCESS;
	copy = ctlq_get(node, q->len + q->data_len, NULL);
	if (!copy)
		return MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE,
					    __func__, __LINE__, MPI_ERR_OTHER,
					    "**nomem", 0);
	copy->next = q->next;
	memcpy(copy->msg, q->msg, q->len);
	memcpy(copy->msg + q->len, q->data, q->data_len);
	if (prev)
		prev->next = copy;
	else
		p->head = copy;
	if (p->tail == q)
		p->tail = copy;
	ctlq_done(q, 0);
	return MPI_SUCCESS;
}

int MPIDI_BIP_ctl_send(int node, void *msg, size_t len)
{
	return MPIDI_BIP_ctl_sendv(node, msg, len, NULL, 0);
}

/* Rule: credits-only once B reaches half of N (rounded up), unless one
 * already went or a queued message will carry them. */
static int send_credits(int node, MPIDI_BIP_peer_t *p)
{
	MPIDI_BIP_global_t *g = &MPIDI_BIP_global;
	MPIDI_BIP_ctl_t msg = { .type = MPIDI_BIP_CTL_CREDITS };
	const struct iovec iov[2] = { { &msg, sizeof(msg) } };
	int rc;

	if (p->owed < (p->ncredits + 1) / 2)
		return 0;
	rc = ctl_post(node, p, iov, false);
	if (rc == 0)
		g->cnt.credits_only++;
	if (rc == -BIP_EPEERGONE) {
		/* It closed after sending: nothing will use the credits. */
		p->owed = 0;
		rc = 0;
	}
	return rc;
}

/* Half of N consumed (MPIDI_BIP_ctl_consumed): a credits-only message now,
 * or as soon as BIP has room for it. */
int MPIDI_BIP_credits_return(int node)
{
	MPIDI_BIP_global_t *g = &MPIDI_BIP_global;
	MPIDI_BIP_peer_t *p = &g->peers[node];
	int mpi_errno = MPI_SUCCESS, rc = send_credits(node, p);

	if (rc == -BIP_EAGAIN) {
		p->credits_due = true;
		g->credits_due++;
		return MPI_SUCCESS;
	}
	BIP_CHECK(rc, "bip_send");
fn_exit:
	return mpi_errno;
fn_fail:
	goto fn_exit;
}

bool MPIDI_BIP_send_fifo_take(int node, uint64_t handle)
{
	MPIDI_BIP_peer_t *p = &MPIDI_BIP_global.peers[node];

	for (MPIDI_BIP_ctlq_t *q = p->head, *prev = NULL; q;
	     prev = q, q = q->next) {
		MPIDI_BIP_ctl_rts_t rts;

		if (q->len != sizeof(rts) || q->lent)
			continue;
		memcpy(&rts, q->msg, sizeof(rts));
		if ((rts.h.type != MPIDI_BIP_CTL_RTS3 &&
		     rts.h.type != MPIDI_BIP_CTL_RNDV) ||
		    rts.sreq != handle)
			continue;
		fifo_unlink(p, prev, q);
		ctlq_free(q);
		return true;
	}
	return false;
}

void MPIDI_BIP_ctl_peer_failed(int node, int err)
{
	MPIDI_BIP_global_t *g = &MPIDI_BIP_global;
	MPIDI_BIP_peer_t *p = &g->peers[node];
	MPIDI_BIP_ctlq_t *q;

	while ((q = p->head)) {
		fifo_unlink(p, NULL, q);
		ctlq_done(q, err);
	}
	if (p->credits_due) {
		p->credits_due = false;
		g->credits_due--;
	}
	p->owed = 0;
}

/* Send what the FIFOs hold, as far as credits and BIP's slots allow; the
 * scan starts one peer further each time, so no peer waits behind another
 * for BIP's send slots. */
int MPIDI_BIP_send_fifo_drain(int *progress)
{
	MPIDI_BIP_global_t *g = &MPIDI_BIP_global;
	MPIDI_BIP_ctlq_t *q;
	int mpi_errno = MPI_SUCCESS, rc, n = MPIR_Process.size;

	/* Wrapped by compares, not divisions: a sender that runs ahead of
	 * its credits comes here on every progress call. */
	if (++g->sfifo_next >= n)
		g->sfifo_next = 0;
	for (int i = 0, node = g->sfifo_next; i < n;
	     i++, node = node + 1 < n ? node + 1 : 0) {
		MPIDI_BIP_peer_t *p = &g->peers[node];

		if (p->credits_due) {
			rc = send_credits(node, p);
			if (rc == -BIP_EAGAIN)
				break;
			BIP_CHECK(rc, "bip_send");
			p->credits_due = false;
			g->credits_due--;
			(*progress)++;
		}
		while ((q = p->head) && p->credits >= 2) {
			const struct iovec iov[2] = {
				{ q->msg, q->len },
				{ (void *)q->data, q->data_len },
			};

			rc = ctl_post(node, p, iov, q->next && p->credits >= 3);
			if (rc == -BIP_EAGAIN)
				goto fn_exit;
			if (rc == -BIP_EPEERGONE) {
				mpi_errno = MPIDI_BIP_peer_failed(node);
				MPIR_ERR_CHECK(mpi_errno);
				break;
			}
			BIP_CHECK(rc, "bip_send");
			fifo_unlink(p, NULL, q);
			ctlq_done(q, 0);
			(*progress)++;
		}
	}
fn_exit:
	return mpi_errno;
fn_fail:
	goto fn_exit;
}
