/* wire/self.h - the self wire: a process's packets to itself (see self.c). */
#ifndef BIP_FIRMWARE_WIRE_SELF_H
#define BIP_FIRMWARE_WIRE_SELF_H

#include "firmware.h"

extern const struct bipfw_wire_class bipfw_self_class;

#endif
