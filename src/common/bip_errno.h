/*
 * bip_errno.h - BIP's error codes and their texts, shared by libbip, the NIC
 * program and (later) the kernel module. Installed beside bip.h.
 */
#ifndef BIP_COMMON_ERRNO_H
#define BIP_COMMON_ERRNO_H

#ifdef __cplusplus
extern "C" {
#endif

/* Error codes: returned negated (e.g. -BIP_ENODE). */
enum bip_error {
	BIP_OK = 0,
	BIP_EINVAL,   /* invalid argument (NULL pointer, bad knob value, ...) */
	BIP_ENODE,    /* node number out of range */
	BIP_ETAG,     /* tag out of range */
	BIP_ETOOLONG, /* length over a limit (BIP_SMALL_MAX, receive buffer) */
	BIP_EOVERFLOW,/* the small-message queue overflowed (nothing was lost) */
	BIP_EPEERGONE,/* the peer exited or died */
	BIP_EAGAIN,   /* resources busy: try again after bip_poll() */
	BIP_EBUSY,    /* a long receive is already posted on that tag */
	BIP_ETRUNC,   /* incoming long message larger than the posted buffer */
	BIP_ENOMEM,   /* out of memory */
	BIP_ESYS,     /* a system call failed (details in the log) */
	BIP_EBOOT,    /* bootstrap (PMI) failed */
	BIP_EWIRE,    /* no wire reaches that node */
	BIP_ECARD,    /* malformed or foreign business card */
	BIP_ESTATE,   /* call not valid in this state (e.g. node not connected) */
	BIP_ENOREQ,   /* request handle not in use */
	BIP_ENOTREADY,/* ready-mode send: no receive was posted on the tag */
	BIP_ETIMEDOUT,/* bip_close: sends still unacknowledged at its timeout */
	BIP_EACCES,   /* a resource of the job is held by another user */
	BIP_NERRORS
};

/* Human-readable text for a code (either sign). Never NULL. */
const char *bip_strerror(int err);

#ifdef __cplusplus
}
#endif

#endif
