/* wire/udp.h - the udp wire: datagrams between hosts (see udp.c). */
#ifndef BIP_FIRMWARE_WIRE_UDP_H
#define BIP_FIRMWARE_WIRE_UDP_H

#include "firmware.h"

extern const struct bipfw_wire_class bipfw_udp_class;

#endif
