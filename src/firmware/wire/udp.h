/* wire/udp.h - the udp wire: datagrams between hosts (see udp.c). */
#ifndef BIP_FIRMWARE_WIRE_UDP_H
#define BIP_FIRMWARE_WIRE_UDP_H

#include "firmware.h"

extern const struct bipfw_wire_class bipfw_udp_class;

/* Bytes from the network, judged purely (the fuzzer's entry points). */
struct msghdr;

/* What one received datagram of len bytes is: a BIP packet after the
 * outer header (at least a whole packet header), a peer's liveness answer
 * (its node in *node_p), another job's, or malformed. */
enum bipfw_udp_kind {
	BIPFW_UDP_PACKET,
	BIPFW_UDP_ALIVE,
	BIPFW_UDP_FOREIGN,
	BIPFW_UDP_BAD,
};
enum bipfw_udp_kind bipfw_udp_classify(const void *buf, size_t len,
				       uint64_t tag, int nnodes,
				       uint32_t *node_p);

/* The segment size of a received message of len bytes: a coalesced run
 * (UDP GRO) says it in its control data, in (0, len); else len. */
size_t bipfw_udp_seg_size(const struct msghdr *h, size_t len);

#endif
