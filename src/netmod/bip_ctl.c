/*
 * bip_ctl.c - decoding and checking control messages: bytes from another
 * process in, a checked copy or a reason to drop it out. Kept free of MPICH
 * so that a unit test and a fuzzer link it alone; dispatch, which needs
 * MPICH's requests, stays in bip_progress.c.
 */
#include <stdio.h>
#include <string.h>

#include "bip_copy.h"
#include "bip_ctl.h"
#include "bip_field.h"

#define CARD_VERSION "bipnm7"
#define ACK_FLAGS                                                              \
	(MPIDI_BIP_ACK_LAST | MPIDI_BIP_ACK_READ | MPIDI_BIP_ACK_FAILED |      \
	 MPIDI_BIP_ACK_WITHDRAWN | MPIDI_BIP_ACK_CHOSEN)

/* The fixed part of each type, by which its length is judged. */
static const size_t fixed_len[MPIDI_BIP_CTL_NTYPES] = {
	[MPIDI_BIP_CTL_CREDITS] = sizeof(MPIDI_BIP_ctl_t),
	[MPIDI_BIP_CTL_SHORT] = sizeof(MPIDI_BIP_ctl_t),
	[MPIDI_BIP_CTL_RTS3] = sizeof(MPIDI_BIP_ctl_rts_t),
	[MPIDI_BIP_CTL_RNDV] = sizeof(MPIDI_BIP_ctl_rts_t),
	[MPIDI_BIP_CTL_ACK] = sizeof(MPIDI_BIP_ctl_ack_t),
	[MPIDI_BIP_CTL_AM] = sizeof(MPIDI_BIP_ctl_am_t),
	[MPIDI_BIP_CTL_AM_RTS] = sizeof(MPIDI_BIP_ctl_am_t),
	[MPIDI_BIP_CTL_AM_CTS] = sizeof(MPIDI_BIP_ctl_ack_t),
	[MPIDI_BIP_CTL_EAGER] = sizeof(MPIDI_BIP_ctl_rts_t),
	[MPIDI_BIP_CTL_MORE] = sizeof(MPIDI_BIP_ctl_t),
	[MPIDI_BIP_CTL_WITHDRAW] = sizeof(MPIDI_BIP_ctl_ack_t),
	[MPIDI_BIP_CTL_PUSH] = sizeof(MPIDI_BIP_ctl_push_t),
	[MPIDI_BIP_CTL_PUSHED] = sizeof(MPIDI_BIP_ctl_ack_t),
};

/* Rule per type: what its length and fields may be. */
static int check_fields(const MPIDI_BIP_ctl_msg_t *m, size_t len,
			const MPIDI_BIP_ctl_peer_t *peer)
{
	size_t fixed = fixed_len[m->h.type], rest = len - fixed;

	switch (m->h.type) {
	case MPIDI_BIP_CTL_RTS3:
		if (m->rts.data_sz > peer->rts3_max)
			return MPIDI_BIP_CTL_DROP_SIZE;
		/* fallthrough */
	case MPIDI_BIP_CTL_RNDV:
		if (rest)
			return MPIDI_BIP_CTL_DROP_LENGTH;
		return m->rts.data_sz > MPIDI_BIP_DATA_MAX || m->h.rank < 0
			       ? MPIDI_BIP_CTL_DROP_SIZE
			       : 0;
	case MPIDI_BIP_CTL_EAGER:
		/* Bounded as three-way messages are: the receiver may hold
		 * it whole before a receive matches. */
		if (rest != m->h.len)
			return MPIDI_BIP_CTL_DROP_LENGTH;
		return m->rts.data_sz > peer->rts3_max || m->rts.addr ||
				       m->h.len > m->rts.data_sz ||
				       m->h.rank < 0
			       ? MPIDI_BIP_CTL_DROP_SIZE
			       : 0;
	case MPIDI_BIP_CTL_MORE:
		return rest != m->h.len || !rest ? MPIDI_BIP_CTL_DROP_LENGTH
						 : 0;
	case MPIDI_BIP_CTL_ACK:
	case MPIDI_BIP_CTL_AM_CTS:
		/* Both within an MPI_Aint: their sum cannot wrap. */
		if (rest)
			return MPIDI_BIP_CTL_DROP_LENGTH;
		return m->ack.offset > MPIDI_BIP_DATA_MAX ||
				       m->ack.len > MPIDI_BIP_DATA_MAX ||
				       m->ack.flags &
					       ~(m->h.type == MPIDI_BIP_CTL_ACK
							 ? ACK_FLAGS
							 : MPIDI_BIP_ACK_FAILED) ||
				       ((m->ack.flags &
					 MPIDI_BIP_ACK_CHOSEN) &&
					(m->ack.flags & (MPIDI_BIP_ACK_READ |
							 MPIDI_BIP_ACK_FAILED))) ||
				       ((m->ack.flags &
					 MPIDI_BIP_ACK_WITHDRAWN) &&
					m->ack.flags != MPIDI_BIP_ACK_WITHDRAWN)
			       ? MPIDI_BIP_CTL_DROP_SIZE
			       : 0;
	case MPIDI_BIP_CTL_WITHDRAW:
		/* The request it names, and nothing else. */
		if (rest)
			return MPIDI_BIP_CTL_DROP_LENGTH;
		return m->ack.offset || m->ack.len || m->ack.bip_tag ||
				       m->ack.flags
			       ? MPIDI_BIP_CTL_DROP_SIZE
			       : 0;
	case MPIDI_BIP_CTL_PUSH:
		/* Some bytes, within an MPI_Aint, to somewhere. */
		if (rest)
			return MPIDI_BIP_CTL_DROP_LENGTH;
		return !m->push.len || !m->push.addr ||
				       m->push.offset > MPIDI_BIP_DATA_MAX ||
				       m->push.len > MPIDI_BIP_DATA_MAX
			       ? MPIDI_BIP_CTL_DROP_SIZE
			       : 0;
	case MPIDI_BIP_CTL_PUSHED:
		if (rest)
			return MPIDI_BIP_CTL_DROP_LENGTH;
		return m->ack.offset > MPIDI_BIP_DATA_MAX ||
				       m->ack.len > MPIDI_BIP_DATA_MAX ||
				       m->ack.bip_tag ||
				       (m->ack.flags & ~MPIDI_BIP_ACK_FAILED)
			       ? MPIDI_BIP_CTL_DROP_SIZE
			       : 0;
	case MPIDI_BIP_CTL_AM:
		if (!peer->handler_ok(m->am.handler_id))
			return MPIDI_BIP_CTL_DROP_HANDLER;
		/* The MPIDIG header, then the data, fill the rest. */
		return m->am.am_hdr_sz > rest ||
				       m->am.data_sz != rest - m->am.am_hdr_sz
			       ? MPIDI_BIP_CTL_DROP_LENGTH
			       : 0;
	case MPIDI_BIP_CTL_AM_RTS:
		if (!peer->handler_ok(m->am.handler_id))
			return MPIDI_BIP_CTL_DROP_HANDLER;
		if (m->am.am_hdr_sz != rest)
			return MPIDI_BIP_CTL_DROP_LENGTH;
		return m->am.data_sz > MPIDI_BIP_DATA_MAX
			       ? MPIDI_BIP_CTL_DROP_SIZE
			       : 0;
	default: /* CREDITS: the fixed part only */
		return rest ? MPIDI_BIP_CTL_DROP_LENGTH : 0;
	}
}

/* The fixed parts past the header are copied inline (bip_copy_small). */
_Static_assert(sizeof(MPIDI_BIP_ctl_msg_t) - sizeof(MPIDI_BIP_ctl_t) <=
		       BIP_COPY_SMALL_MAX,
	       "every fixed part past the header fits an inline copy");

int MPIDI_BIP_ctl_decode(const void *bytes, size_t len,
			 const MPIDI_BIP_ctl_peer_t *peer,
			 MPIDI_BIP_ctl_msg_t *m, size_t *fixed_p)
{
	size_t fixed;

	if (len < sizeof(MPIDI_BIP_ctl_t))
		return MPIDI_BIP_CTL_DROP_TOO_SHORT;
	memcpy(&m->h, bytes, sizeof(m->h));
	if (m->h.type == MPIDI_BIP_CTL_NONE ||
	    m->h.type >= MPIDI_BIP_CTL_NTYPES)
		return MPIDI_BIP_CTL_DROP_TYPE;
	fixed = fixed_len[m->h.type];
	if (len < fixed)
		return MPIDI_BIP_CTL_DROP_TOO_SHORT;
	*fixed_p = fixed;
	if (m->h.type == MPIDI_BIP_CTL_SHORT) {
		*fixed_p = len - m->h.len;
		return MPIDI_BIP_ctl_short_check(
			&m->h, len, peer->ncredits - peer->credits);
	}
	/* The rest of the fixed part only: the header already checked is not
	 * read again (the sender may still write the bytes: BIP can lend
	 * its ring). */
	bip_copy_small((char *)m + sizeof(m->h),
		       (const char *)bytes + sizeof(m->h),
		       fixed - sizeof(m->h));
	/* Credits: C + returned never exceeds N (each was given once). */
	if (m->h.credits > peer->ncredits - peer->credits)
		return MPIDI_BIP_CTL_DROP_CREDITS;
	return check_fields(m, len, peer);
}

int MPIDI_BIP_card_format(char *buf, size_t len, const MPIDI_BIP_card_t *c,
			  const char *bip_card)
{
	int n = snprintf(buf, len, CARD_VERSION ";%u;%llu;%u;%u;%s;%s",
			 c->credits, (unsigned long long)c->rts3_max,
			 c->barrier, c->pid, c->host, bip_card);

	return n < 0 || (size_t)n >= len ? -1 : 0;
}

void MPIDI_BIP_card_host(char *host, const char *name)
{
	size_t n = strnlen(name, MPIDI_BIP_HOST_MAX - 1);

	if (!n) {
		strcpy(host, "_"); /* a card field is never empty */
		return;
	}
	for (size_t i = 0; i < n; i++)
		host[i] = strchr(MPIDI_BIP_HOST_CHARS, name[i]) ? name[i] : '_';
	host[n] = '\0';
}

int MPIDI_BIP_card_parse(const char *card, MPIDI_BIP_card_t *c,
			 const char **bip_card_p)
{
	const char *p = card;
	uint64_t credits, rts3_max, barrier, pid;

	if (!bip_field_lit(&p, ';', CARD_VERSION) ||
	    !bip_field_uint(&p, ';', 10, UINT8_MAX, &credits) ||
	    !bip_field_uint(&p, ';', 10, MPIDI_BIP_DATA_MAX, &rts3_max) ||
	    !bip_field_uint(&p, ';', 10, 1, &barrier) ||
	    !bip_field_uint(&p, ';', 10, INT32_MAX, &pid) ||
	    !bip_field_str(&p, ';', MPIDI_BIP_HOST_CHARS, c->host,
			   sizeof(c->host)))
		return -1;
	c->credits = (uint32_t)credits;
	c->rts3_max = rts3_max;
	c->barrier = (uint32_t)barrier;
	c->pid = (uint32_t)pid;
	*bip_card_p = p;
	return 0;
}

const char *MPIDI_BIP_ctl_drop_name(int reason)
{
	static const char *const names[MPIDI_BIP_CTL_NDROPS] = {
		[MPIDI_BIP_CTL_OK] = "ok",
#define MPIDI_BIP_CTL_DROP_NAME(name) [MPIDI_BIP_CTL_DROP_##name] = #name,
		MPIDI_BIP_CTL_DROPS(MPIDI_BIP_CTL_DROP_NAME)
#undef MPIDI_BIP_CTL_DROP_NAME
	};

	return reason >= 0 && reason < MPIDI_BIP_CTL_NDROPS ? names[reason]
							     : "INVALID";
}

const char *MPIDI_BIP_ctl_type_name(int type)
{
	static const char *const names[MPIDI_BIP_CTL_NTYPES] = {
		[MPIDI_BIP_CTL_NONE] = "NONE",
#define MPIDI_BIP_CTL_TYPE_NAME(name) [MPIDI_BIP_CTL_##name] = #name,
		MPIDI_BIP_CTL_TYPES(MPIDI_BIP_CTL_TYPE_NAME)
#undef MPIDI_BIP_CTL_TYPE_NAME
	};

	return type >= 0 && type < MPIDI_BIP_CTL_NTYPES ? names[type]
							: "INVALID";
}
