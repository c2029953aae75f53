/*
 * bip_long.c - large data as BIP long messages (MPI-BIP, sections 3.2 and
 * 3.4), for the three-way and rendezvous protocols and large active
 * messages alike.
 *
 * The receiver posts a BIP long receive on a free tag, then tells the sender
 * which (ACK or AM_CTS); BIP has few tags, so a receive finding none waits in
 * the receive FIFO and its answer goes out when it leaves. The sender sends
 * on the named tag in BIP's ready mode (the answer proves the receive is
 * posted, so BIP's own announcement and reply would only add a round trip);
 * a BIP send slot may be busy, so sends wait in a list until BIP takes
 * them. Transfers to our own rank take the same steps through BIP's self
 * wire.
 */
#include "mpidimpl.h"
#include "bip_state.h"

static int free_tag(void)
{
	for (int t = 0; t < MPIDI_BIP_global.ntags; t++)
		if (!MPIDI_BIP_global.tag_owner[t])
			return t;
	return -1;
}

int MPIDI_BIP_answer_failed(int node, int ack_type, uint64_t sreq)
{
	MPIDI_BIP_ctl_ack_t nack = {
		.h.type = (uint8_t)ack_type,
		.sreq = sreq,
		.flags = MPIDI_BIP_ACK_FAILED,
	};

	return MPIDI_BIP_ctl_send(node, &nack, sizeof(nack));
}

/* lr can go no further (err): its transfer ends in that error at both
 * ends, its owner hearing it through lr's completion and its sender
 * through the answer with FAILED, which fails its send. Never a sender
 * that waits for ever. A receive's error is in its request; an active
 * message's is also the caller's, since MPIDIG's handlers drop a
 * request's error (the data would be lost without a word). lr stays the
 * caller's. */
static int lrecv_fail(MPIDI_BIP_lrecv_t *lr, int err)
{
	int mpi_errno = MPIDI_BIP_answer_failed(lr->node, lr->ack.h.type,
						lr->ack.sreq);
	int done = lr->complete(lr, err);

	if (mpi_errno || done)
		return mpi_errno ? mpi_errno : done;
	return lr->ack.h.type == MPIDI_BIP_CTL_AM_CTS ? err : MPI_SUCCESS;
}

/* BIP refused lr's receive (rc): only a tag table out of step with BIP's
 * could make it. */
static int lrecv_refused(MPIDI_BIP_lrecv_t *lr, int rc)
{
	int mpi_errno = lrecv_fail(lr, MPIDI_BIP_error(rc, "bip_ilrecv"));

	MPL_free(lr);
	return mpi_errno;
}

/* Own the tag, post the receive, answer the sender. */
static int lrecv_post(MPIDI_BIP_lrecv_t *lr, int tag)
{
	MPIDI_BIP_global_t *g = &MPIDI_BIP_global;
	int rc = bip_ilrecv(g->ep, tag, lr->dst, lr->ack.len, &lr->breq);

	if (rc)
		return lrecv_refused(lr, rc);
	lr->tag = tag;
	g->tag_owner[tag] = lr;
	g->nlrecvs++;
	lr->ack.bip_tag = (uint32_t)tag;
	return MPIDI_BIP_ctl_send(lr->node, &lr->ack, sizeof(lr->ack));
}

int MPIDI_BIP_lrecv(int node, int ack_type, uint64_t sreq, uint64_t offset,
		    uint64_t len, uint32_t flags, MPIDI_BIP_paths_t *timed,
		    void *dst,
		    int (*complete)(MPIDI_BIP_lrecv_t *, int), void *arg)
{
	MPIDI_BIP_global_t *g = &MPIDI_BIP_global;
	MPIDI_BIP_lrecv_t want = {
		.node = node,
		.tag = -1,
		.dst = dst,
		.ack = {
			.h.type = (uint8_t)ack_type,
			.sreq = sreq,
			.offset = offset,
			.len = len,
			.flags = flags,
		},
		.timed = timed,
		.complete = complete,
		.arg = arg,
	}, *lr;
	int tag = free_tag(), err;

	/* No memory (for the data: dst NULL; or for lr), or the FIFO at its
	 * limit: the transfer fails. */
	if (!dst && len)
		err = MPIDI_BIP_NOMEM();
	else if (tag < 0 && g->rfifo_limit &&
		 g->cnt.rfifo_depth >= g->rfifo_limit)
		err = MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE,
					   __func__, __LINE__, MPI_ERR_OTHER,
					   "**bipfifo", "**bipfifo %s %d",
					   "receive", (int)g->rfifo_limit);
	else if (!(lr = MPL_malloc(sizeof(*lr), MPL_MEM_BUFFER)))
		err = MPIDI_BIP_NOMEM();
	else
		err = MPI_SUCCESS;
	if (err)
		return lrecv_fail(&want, err);
	*lr = want;
	if (tag >= 0)
		return lrecv_post(lr, tag);
	if (++g->cnt.rfifo_depth > g->cnt.rfifo_max)
		g->cnt.rfifo_max = g->cnt.rfifo_depth;
	MPIDI_BIP_QUEUE_APPEND(g->rfifo_head, g->rfifo_tail, lr);
	return MPI_SUCCESS;
}

int MPIDI_BIP_lsend(const MPIDI_BIP_ctl_ack_t *ack, int node,
			  const void *src,
			  int (*complete)(MPIDI_BIP_lsend_t *, int), void *arg)
{
	MPIDI_BIP_lsend_t *ls = MPL_malloc(sizeof(*ls), MPL_MEM_BUFFER);

	if (!ls)
		return MPIDI_BIP_NOMEM();
	*ls = (MPIDI_BIP_lsend_t){
		.node = node,
		.tag = (int)ack->bip_tag,
		.src = (const char *)src + ack->offset,
		.len = ack->len,
		.packets = ack->flags & MPIDI_BIP_ACK_CHOSEN,
		.complete = complete,
		.arg = arg,
	};
	/* In order: BIP's send slots go to the oldest first. */
	if (!MPIDI_BIP_global.lsends)
		MPIDI_BIP_global.lsends_tail = &MPIDI_BIP_global.lsends;
	*MPIDI_BIP_global.lsends_tail = ls;
	MPIDI_BIP_global.lsends_tail = &ls->next;
	return MPI_SUCCESS;
}

/* The next send after ls (NULL: from the first) that arg owns, or NULL. */
static MPIDI_BIP_lsend_t *lsend_next(MPIDI_BIP_lsend_t *ls, const void *arg)
{
	for (ls = ls ? ls->next : MPIDI_BIP_global.lsends; ls && ls->arg != arg;
	     ls = ls->next)
		;
	return ls;
}

bool MPIDI_BIP_lsend_pending(const void *arg)
{
	return lsend_next(NULL, arg) != NULL;
}

int MPIDI_BIP_lsends_move(void *arg, const char *from, const char *to)
{
	for (MPIDI_BIP_lsend_t *ls = lsend_next(NULL, arg); ls;
	     ls = lsend_next(ls, arg)) {
		int rc;

		ls->src = to + ((const char *)ls->src - from);
		if (!ls->posted)
			continue;
		rc = bip_rebase(MPIDI_BIP_global.ep, &ls->breq, ls->src);
		if (rc < 0 && rc != -BIP_ENOREQ)
			return MPIDI_BIP_error(rc, "bip_rebase");
	}
	return MPI_SUCCESS;
}

static void lsend_unlink(MPIDI_BIP_lsend_t **link, MPIDI_BIP_lsend_t *ls)
{
	*link = ls->next;
	if (!ls->next)
		MPIDI_BIP_global.lsends_tail = link;
}

/* Post what BIP can take, complete what BIP finished. A send BIP failed
 * fails its owner alone, and the others go on (a peer that died takes
 * all of its transfers with it, through MPIDI_BIP_peer_failed). */
static int poll_lsends(int *progress)
{
	MPIDI_BIP_global_t *g = &MPIDI_BIP_global;
	int mpi_errno = MPI_SUCCESS;

	for (MPIDI_BIP_lsend_t **link = &g->lsends, *ls; (ls = *link);) {
		int rc = 0, done = 0;

		if (!ls->posted) {
			rc = (ls->packets ? bip_irsend_packets : bip_irsend)(
				g->ep, ls->node, ls->tag, ls->src, ls->len,
				&ls->breq);
			if (rc == -BIP_EAGAIN) {
				link = &ls->next;
				continue;
			}
			ls->posted = !rc;
		}
		if (!rc && !done)
			rc = bip_test_nopoll(g->ep, &ls->breq, &done, NULL);
		if (rc == -BIP_EPEERGONE) {
			/* Every transfer with that peer ends: start over. */
			mpi_errno = MPIDI_BIP_peer_failed(ls->node);
			MPIR_ERR_CHECK(mpi_errno);
			link = &g->lsends;
			continue;
		}
		if (!rc && !done) {
			link = &ls->next;
			continue;
		}
		lsend_unlink(link, ls);
		(*progress)++;
		mpi_errno = ls->complete(ls, rc ? MPIDI_BIP_error(rc, "long send")
						: MPI_SUCCESS);
		MPL_free(ls);
		MPIR_ERR_CHECK(mpi_errno);
	}
fn_exit:
	return mpi_errno;
fn_fail:
	goto fn_exit;
}

/* The tag is free: the oldest receive waiting for one takes it (the next
 * one, if BIP refused it: an error, the first, goes back only once the
 * tag is taken or none waits, since nothing else would look again). */
static int tag_freed(int t)
{
	MPIDI_BIP_global_t *g = &MPIDI_BIP_global;
	MPIDI_BIP_lrecv_t *lr;
	int mpi_errno = MPI_SUCCESS, err;

	while ((lr = g->rfifo_head) && !g->tag_owner[t]) {
		g->rfifo_head = lr->next;
		if (!g->rfifo_head)
			g->rfifo_tail = NULL;
		lr->next = NULL;
		g->cnt.rfifo_depth--;
		err = lrecv_post(lr, t);
		mpi_errno = mpi_errno ? mpi_errno : err;
	}
	return mpi_errno;
}

/* The receive on tag t is over (err: how it failed, or MPI_SUCCESS). */
static int lrecv_end(int t, int err)
{
	MPIDI_BIP_global_t *g = &MPIDI_BIP_global;
	MPIDI_BIP_lrecv_t *lr = g->tag_owner[t];
	int mpi_errno, rc;

	g->tag_owner[t] = NULL;
	g->nlrecvs--;
	mpi_errno = lr->complete(lr, err);
	MPL_free(lr);
	/* The next one takes the tag whatever this one's owner said. */
	rc = tag_freed(t);
	return mpi_errno ? mpi_errno : rc;
}

static int poll_lrecvs(int *progress)
{
	MPIDI_BIP_global_t *g = &MPIDI_BIP_global;
	int mpi_errno = MPI_SUCCESS;

	for (int t = 0; t < g->ntags; t++) {
		MPIDI_BIP_lrecv_t *lr = g->tag_owner[t];
		int done, rc = 0;

		if (!lr)
			continue;
		rc = bip_test_nopoll(g->ep, &lr->breq, &done, NULL);
		if (rc == -BIP_EPEERGONE) {
			mpi_errno = MPIDI_BIP_peer_failed(lr->node);
			MPIR_ERR_CHECK(mpi_errno);
			continue;
		}
		if (!rc && !done)
			continue;
		(*progress)++;
		mpi_errno = lrecv_end(t, rc ? MPIDI_BIP_error(rc, "long receive")
					    : MPI_SUCCESS);
		MPIR_ERR_CHECK(mpi_errno);
	}
fn_exit:
	return mpi_errno;
fn_fail:
	goto fn_exit;
}

/* A dead peer's transfers end in err: its long sends (BIP failed those it
 * held, which are reaped so its slots free), its receives waiting for a
 * tag (first: a tag a receive of its frees below would go to one of
 * them), and its long receives (withdrawn from BIP when nothing of theirs
 * arrived yet). Their owners hear it through their completion functions;
 * an error of one of those, the first, goes back once all are over. */
int MPIDI_BIP_long_peer_failed(int node, int err)
{
	MPIDI_BIP_global_t *g = &MPIDI_BIP_global;
	int mpi_errno = MPI_SUCCESS, rc, done;

	for (MPIDI_BIP_lsend_t **link = &g->lsends, *ls; (ls = *link);) {
		if (ls->node != node) {
			link = &ls->next;
			continue;
		}
		if (ls->posted)
			(void)bip_test_nopoll(g->ep, &ls->breq, &done, NULL);
		lsend_unlink(link, ls);
		rc = ls->complete(ls, err);
		MPL_free(ls);
		mpi_errno = mpi_errno ? mpi_errno : rc;
	}
	for (MPIDI_BIP_lrecv_t **link = &g->rfifo_head, *lr, *prev = NULL;
	     (lr = *link);) {
		if (lr->node != node) {
			prev = lr;
			link = &lr->next;
			continue;
		}
		*link = lr->next;
		if (g->rfifo_tail == lr)
			g->rfifo_tail = prev;
		g->cnt.rfifo_depth--;
		rc = lr->complete(lr, err);
		MPL_free(lr);
		mpi_errno = mpi_errno ? mpi_errno : rc;
	}
	for (int t = 0; t < g->ntags; t++) {
		MPIDI_BIP_lrecv_t *lr = g->tag_owner[t];

		if (!lr || lr->node != node)
			continue;
		if (bip_test_nopoll(g->ep, &lr->breq, &done, NULL) == 0 &&
		    !done)
			(void)bip_cancel(g->ep, &lr->breq);
		rc = lrecv_end(t, err);
		mpi_errno = mpi_errno ? mpi_errno : rc;
	}
	return mpi_errno;
}

int MPIDI_BIP_long_progress(int *progress)
{
	int mpi_errno = poll_lsends(progress);

	if (mpi_errno)
		return mpi_errno;
	return poll_lrecvs(progress);
}
