/* errno.c - the text of every BIP error code. */
#include "bip_errno.h"

static const char *const messages[BIP_NERRORS] = {
	[BIP_OK] = "success",
	[BIP_EINVAL] = "invalid argument",
	[BIP_ENODE] = "invalid node number",
	[BIP_ETAG] = "invalid tag",
	[BIP_ETOOLONG] = "length over the limit",
	[BIP_EOVERFLOW] = "small-message queue overflowed (messages were "
			  "held back, none lost)",
	[BIP_EPEERGONE] = "peer is gone",
	[BIP_EAGAIN] = "resources busy, try again",
	[BIP_EBUSY] = "busy: a long receive is already posted on this tag, "
		      "or a small message is held by bip_drain's handler",
	[BIP_ETRUNC] = "long message larger than the posted receive buffer",
	[BIP_ENOMEM] = "out of memory",
	[BIP_ESYS] = "system call failed",
	[BIP_EBOOT] = "bootstrap (PMI) failed",
	[BIP_EWIRE] = "no wire reaches that node",
	[BIP_ECARD] = "malformed or foreign business card",
	[BIP_ESTATE] = "not valid in this state",
	[BIP_ENOREQ] = "request not in use",
	[BIP_ENOTREADY] = "ready-mode send, but no receive was posted on the "
			  "tag (the message was dropped)",
	[BIP_ETIMEDOUT] = "sends still unacknowledged when the close timeout "
			  "expired (their peers may not have received them)",
	[BIP_EACCES] = "a shared-memory segment of the job is held by another "
		       "user or process",
};

const char *bip_strerror(int err)
{
	long e = err < 0 ? -(long)err : err;

	return e < BIP_NERRORS ? messages[e] : "unknown error";
}
