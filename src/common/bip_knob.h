/*
 * bip_knob.h - the public description of a BIP tunable (bip.h includes this
 * header, installed beside it). knob.h declares and parses them.
 */
#ifndef BIP_COMMON_KNOB_H
#define BIP_COMMON_KNOB_H

#ifdef __cplusplus
extern "C" {
#endif

/* One tunable, read from the environment variable `name` at bip_open(). */
struct bip_knob_desc {
	const char *name; /* environment variable */
	const char *type; /* "count", "size", "microseconds", ... or choices */
	const char *def;  /* default, as text */
	const char *help; /* one sentence */
};

#ifdef __cplusplus
}
#endif

#endif
