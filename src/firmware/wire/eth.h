/* wire/eth.h - the eth wire: raw Ethernet frames between hosts (eth.c). */
#ifndef BIP_FIRMWARE_WIRE_ETH_H
#define BIP_FIRMWARE_WIRE_ETH_H

#include "firmware.h"

extern const struct bipfw_wire_class bipfw_eth_class;

#endif
