/*
 * msg.c - the message calls of bip.h: small and long sends and receives,
 * requests, progress, and waiting (with the idle policy of idle.c).
 */
#include <string.h>

#include "bip_impl.h"
#include "log.h"

int bip_poll(bip_ep_t *ep)
{
	int n, err;

	if (!ep)
		return -BIP_EINVAL;
	n = bipfw_poll(ep->fw);
	err = bipfw_take_error(ep->fw);
	return err ? err : n;
}

int bip_idle_wait(bip_ep_t *ep, long timeout_us)
{
	uint64_t start, now;
	unsigned left = 100000;

	if (!ep)
		return -BIP_EINVAL;
	start = bipfw_now_us();
	bip_idle_restart(ep);
	for (unsigned i = 1;; i++) {
		int n = bipfw_step(ep->fw);

		if (n || timeout_us == 0)
			return n;
		/* The clock is slow to read: look at it every 32 turns. */
		if (timeout_us > 0 &&
		    (i % 32 == 0 || ep->idle.mode != BIP_IDLE_SPIN)) {
			now = bipfw_now_us();
			uint64_t rest = start + (uint64_t)timeout_us - now;

			if (now - start >= (uint64_t)timeout_us)
				return 0;
			if (rest < left)
				left = (unsigned)rest;
		}
		bip_idle_empty(ep, true, true, left);
	}
}

/* --- small messages ---------------------------------------------------- */

/* A try that finds no room runs a turn of the NIC program for the retry
 * (acks may free a slot) and says in *stepped what that turn did. Rule: a
 * blocking call waits only after a turn that did nothing. A turn that took
 * the last acks made the room already, and nothing more may ever come to
 * end the wait: the receiver may be waiting for this very message. */
static void wait_for_room(bip_ep_t *ep, int stepped)
{
	if (stepped <= 0)
		bip_idle_wait(ep, -1);
}

/* Inline in each caller: flush and stepped fold into the one way of each
 * (the send of a small message is the commonest call). The pieces' own
 * checks are bipfw_post_small's, in its one pass over them. */
static inline __attribute__((always_inline)) int
sendv_try(bip_ep_t *ep, int node, const struct iovec *iov, int iovcnt,
	  bool flush, int *stepped)
{
	int rc;

	*stepped = 0;
	if (!ep || iovcnt < 0 || (!iov && iovcnt))
		return -BIP_EINVAL;
	rc = bip_check_node(ep, node);
	if (rc)
		return rc;
	rc = bipfw_post_small(ep->fw, node, iov, iovcnt);
	/* Written straight onto a lossless link: nothing waits for a kick
	 * there (a batching wire is lossy, and never takes that path). */
	if (rc == 1)
		return 0;
	if (!rc)
		bipfw_tx_kick(ep->fw, node, flush); /* immediate sending */
	else if (rc == -BIP_EAGAIN)
		*stepped = bipfw_step(ep->fw);
	return rc;
}

int bip_sendv_try(bip_ep_t *ep, int node, const struct iovec *iov,
		  int iovcnt)
{
	int stepped;

	return sendv_try(ep, node, iov, iovcnt, true, &stepped);
}

int bip_sendv_more(bip_ep_t *ep, int node, const struct iovec *iov,
		   int iovcnt)
{
	int stepped;

	return sendv_try(ep, node, iov, iovcnt, false, &stepped);
}

int bip_sendv(bip_ep_t *ep, int node, const struct iovec *iov, int iovcnt)
{
	int rc, stepped;

	while ((rc = sendv_try(ep, node, iov, iovcnt, true, &stepped)) ==
	       -BIP_EAGAIN)
		wait_for_room(ep, stepped);
	return rc;
}

int bip_send_try(bip_ep_t *ep, int node, const void *buf, size_t len)
{
	struct iovec iov = { (void *)buf, len };

	return bip_sendv_try(ep, node, &iov, 1);
}

int bip_send(bip_ep_t *ep, int node, const void *buf, size_t len)
{
	struct iovec iov = { (void *)buf, len };

	return bip_sendv(ep, node, &iov, 1);
}

/* The oldest small message, queued or at the head of a ring of a peer on
 * this host; after a poll of the NIC program first if `poll` and there
 * is none. */
static inline int peek(bip_ep_t *ep, const void **data,
		       struct bip_status *st, bool poll)
{
	size_t len;
	int node, err;

	if (!ep || !data)
		return -BIP_EINVAL;
	if (ep->draining)
		return -BIP_EBUSY;
	if (bipfw_small_peek(ep->fw, data, &len, &node)) {
		if (poll)
			bipfw_step(ep->fw);
		err = bipfw_take_error(ep->fw);
		if (err)
			return err;
		if (!poll || bipfw_small_peek(ep->fw, data, &len, &node))
			return bipfw_any_live(ep->fw) ? -BIP_EAGAIN
						      : -BIP_EPEERGONE;
	}
	if (st)
		*st = (struct bip_status){ .node = node, .tag = -1, .len = len };
	return (int)len;
}

int bip_peek(bip_ep_t *ep, const void **data, struct bip_status *st)
{
	return peek(ep, data, st, true);
}

int bip_peek_nopoll(bip_ep_t *ep, const void **data, struct bip_status *st)
{
	return peek(ep, data, st, false);
}

int bip_consume(bip_ep_t *ep)
{
	if (!ep)
		return -BIP_EINVAL;
	return ep->draining ? -BIP_EBUSY : bipfw_small_pop(ep->fw);
}

int bip_drain(bip_ep_t *ep, int max, bip_small_fn fn, void *arg)
{
	int n;

	if (!ep || !fn || max < 0)
		return -BIP_EINVAL;
	if (ep->draining)
		return -BIP_EBUSY;
	ep->draining = true;
	n = bipfw_drain(ep->fw, max, fn, arg);
	ep->draining = false;
	return n ? n : bipfw_take_error(ep->fw);
}

int bip_recv_try(bip_ep_t *ep, void *buf, size_t cap, struct bip_status *st)
{
	const void *data;
	struct bip_status s;
	int len;

	if (!ep || (!buf && cap))
		return -BIP_EINVAL;
	len = bip_peek(ep, &data, &s);
	if (len < 0)
		return len;
	if ((size_t)len > cap)
		return -BIP_ETOOLONG;
	memcpy(buf, data, (size_t)len);
	bipfw_small_pop(ep->fw);
	if (st)
		*st = s;
	return len;
}

int bip_recv(bip_ep_t *ep, void *buf, size_t cap, struct bip_status *st)
{
	int rc;

	while ((rc = bip_recv_try(ep, buf, cap, st)) == -BIP_EAGAIN)
		bip_idle_wait(ep, -1);
	return rc;
}

/* --- long messages ------------------------------------------------------ */

static int post_long(bip_ep_t *ep, int node, int tag, const void *buf,
		     size_t len, unsigned flags, bip_req_t *req, int *stepped)
{
	uint32_t gen;
	int rc;

	*stepped = 0;
	if (!ep || !req || (!buf && len))
		return -BIP_EINVAL;
	rc = bip_check_node(ep, node);
	if (rc)
		return rc;
	if (tag < 0 || (unsigned)tag >= ep->k.fw.long_tags)
		return -BIP_ETAG;
	rc = bipfw_post_long(ep->fw, node, (uint32_t)tag, buf, len, flags,
			     &gen);
	if (rc < 0) {
		if (rc == -BIP_EAGAIN)
			*stepped = bipfw_step(ep->fw);
		return rc;
	}
	*req = (bip_req_t){ .id = (uint32_t)rc, .gen = gen };
	bipfw_tx_kick(ep->fw, node, true);
	return 0;
}

int bip_ilsend(bip_ep_t *ep, int node, int tag, const void *buf, size_t len,
	       bip_req_t *req)
{
	int stepped;

	return post_long(ep, node, tag, buf, len, 0, req, &stepped);
}

int bip_irsend(bip_ep_t *ep, int node, int tag, const void *buf, size_t len,
	       bip_req_t *req)
{
	int stepped;

	return post_long(ep, node, tag, buf, len, BIPFW_LONG_READY, req,
			 &stepped);
}

int bip_irsend_packets(bip_ep_t *ep, int node, int tag, const void *buf,
		       size_t len, bip_req_t *req)
{
	int stepped;

	return post_long(ep, node, tag, buf, len,
			 BIPFW_LONG_READY | BIPFW_LONG_PACKETS, req, &stepped);
}

int bip_rebase(bip_ep_t *ep, bip_req_t *req, const void *copy)
{
	int rc;

	if (!ep || !req || !copy)
		return -BIP_EINVAL;
	if (req->id & BIP_REQ_RECV)
		return -BIP_ENOREQ;
	/* A message the receiver is reading by single copy moves only once
	 * that read is over: the caller may reuse the original at return. */
	while ((rc = bipfw_rebase_send(ep->fw, req->id, req->gen, copy)) ==
	       -BIP_EBUSY)
		bip_idle_wait(ep, -1);
	return rc;
}

size_t bip_read_min(bip_ep_t *ep, int node)
{
	if (!ep || node < 0 || node >= bip_nnodes(ep))
		return SIZE_MAX;
	return bipfw_read_min(ep->fw, node);
}

size_t bip_stream_read_min(bip_ep_t *ep, int node)
{
	size_t min = bip_read_min(ep, node);

	if (min == SIZE_MAX || min > ep->k.stream_ring_max)
		return min;
	return ep->k.stream_ring_max + 1;
}

int bip_rma_reach(bip_ep_t *ep, int node)
{
	return ep && node >= 0 && node < bip_nnodes(ep) &&
	       bipfw_rma_reach(ep->fw, node);
}

static int rma(bip_ep_t *ep, int node, void *local, uint64_t addr,
	       size_t len, bool write)
{
	if (!ep || (!local && len))
		return -BIP_EINVAL;
	if (node < 0 || node >= bip_nnodes(ep))
		return -BIP_ENODE;
	return len ? bipfw_rma(ep->fw, node, local, addr, len, write) : 0;
}

int bip_read(bip_ep_t *ep, int node, void *dst, uint64_t addr, size_t len)
{
	return rma(ep, node, dst, addr, len, false);
}

int bip_readv(bip_ep_t *ep, int node, struct bip_rvec *v, unsigned n)
{
	int rc = 0;

	if (!v && n)
		return -BIP_EINVAL;
	/* More than BIP_READV_MAX pieces: bipfw_readv says so. */
	if (!ep)
		rc = -BIP_EINVAL;
	else if (node < 0 || node >= bip_nnodes(ep))
		rc = -BIP_ENODE;
	for (unsigned i = 0; i < n && !rc; i++)
		if (!v[i].dst && v[i].len)
			rc = -BIP_EINVAL;
	if (rc) {
		for (unsigned i = 0; i < n; i++)
			v[i].rc = rc;
		return rc;
	}
	return n ? bipfw_readv(ep->fw, node, v, n) : 0;
}

int bip_write(bip_ep_t *ep, int node, uint64_t addr, const void *src,
	      size_t len)
{
	return rma(ep, node, (void *)src, addr, len, true);
}

int bip_ilrecv(bip_ep_t *ep, int tag, void *buf, size_t cap, bip_req_t *req)
{
	uint32_t gen;
	int rc;

	if (!ep || !req || (!buf && cap))
		return -BIP_EINVAL;
	if (tag < 0 || (unsigned)tag >= ep->k.fw.long_tags)
		return -BIP_ETAG;
	rc = bipfw_post_lrecv(ep->fw, (uint32_t)tag, buf, cap, &gen);
	if (rc)
		return rc;
	*req = (bip_req_t){ .id = BIP_REQ_RECV | (uint32_t)tag, .gen = gen };
	bipfw_step(ep->fw);
	return 0;
}

/* Reap without driving progress: 1 done, 0 not yet, < 0 failed. */
/* waiting: the caller blocks until the request completes, so it sends
 * nothing meanwhile. */
static int reap(bip_ep_t *ep, bip_req_t *req, struct bip_status *st,
		bool waiting)
{
	struct bip_status s = { .node = -1, .tag = -1 };
	int rc;

	if (req->id & BIP_REQ_RECV) {
		uint32_t tag = req->id & ~BIP_REQ_RECV;

		rc = bipfw_reap_lrecv(ep->fw, tag, req->gen, &s.node, &s.len);
		s.tag = (int)tag;
		/* Waited on with every other node gone and none of our own
		 * sends to ourselves due: nobody could ever send to it, give
		 * it up. (Tested, it stays: we may yet send to ourselves.) */
		if (rc == 0 && waiting && !bipfw_live_peers(ep->fw) &&
		    bipfw_cancel_lrecv(ep->fw, tag, req->gen) == 0)
			rc = -BIP_EPEERGONE;
	} else {
		rc = bipfw_reap_send(ep->fw, req->id, req->gen);
	}
	if (rc == 1 && st)
		*st = s;
	return rc;
}

int bip_cancel(bip_ep_t *ep, bip_req_t *req)
{
	if (!ep || !req)
		return -BIP_EINVAL;
	if (!(req->id & BIP_REQ_RECV))
		return -BIP_ENOREQ;
	return bipfw_cancel_lrecv(ep->fw, req->id & ~BIP_REQ_RECV, req->gen);
}

int bip_test_nopoll(bip_ep_t *ep, bip_req_t *req, int *done,
		    struct bip_status *st)
{
	int rc;

	if (!ep || !req || !done)
		return -BIP_EINVAL;
	rc = reap(ep, req, st, false);
	*done = rc != 0;
	return rc < 0 ? rc : 0;
}

int bip_test(bip_ep_t *ep, bip_req_t *req, int *done, struct bip_status *st)
{
	if (ep)
		bipfw_step(ep->fw);
	return bip_test_nopoll(ep, req, done, st);
}

int bip_wait(bip_ep_t *ep, bip_req_t *req, struct bip_status *st)
{
	int rc;

	if (!ep || !req)
		return -BIP_EINVAL;
	while ((rc = reap(ep, req, st, true)) == 0)
		bip_idle_wait(ep, -1);
	return rc < 0 ? rc : 0;
}

static int send_long(bip_ep_t *ep, int node, int tag, const void *buf,
		     size_t len, unsigned flags)
{
	bip_req_t req;
	int rc, stepped;

	while ((rc = post_long(ep, node, tag, buf, len, flags, &req,
			       &stepped)) == -BIP_EAGAIN)
		wait_for_room(ep, stepped);
	return rc ? rc : bip_wait(ep, &req, NULL);
}

int bip_lsend(bip_ep_t *ep, int node, int tag, const void *buf, size_t len)
{
	return send_long(ep, node, tag, buf, len, 0);
}

int bip_rsend(bip_ep_t *ep, int node, int tag, const void *buf, size_t len)
{
	return send_long(ep, node, tag, buf, len, BIPFW_LONG_READY);
}

int bip_lrecv(bip_ep_t *ep, int tag, void *buf, size_t cap,
	      struct bip_status *st)
{
	bip_req_t req;
	int rc = bip_ilrecv(ep, tag, buf, cap, &req);

	return rc ? rc : bip_wait(ep, &req, st);
}
