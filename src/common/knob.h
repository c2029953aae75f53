/*
 * knob.h - tunables read from the environment, declared once in a table by
 * the layer that reads them (libbip, the NIC program, each wire), and parsed
 * by one parser (knob.c).
 */
#ifndef BIP_COMMON_KNOB_PRIV_H
#define BIP_COMMON_KNOB_PRIV_H

#include <limits.h>
#include <stddef.h>

#include "bip_knob.h"

enum bip_knob_kind {
	BIP_KNOB_COUNT,  /* whole number in [min, max] */
	BIP_KNOB_COUNT_AUTO, /* the same, or "auto": BIP_KNOB_AUTO_COUNT */
	BIP_KNOB_POW2,   /* power of two in [min, max] */
	BIP_KNOB_SIZE,   /* bytes, with k/m/g; "never" is SIZE_MAX */
	BIP_KNOB_SIZE_AUTO, /* the same, or "auto": BIP_KNOB_AUTO */
	BIP_KNOB_CHOICE, /* one of choices: its index */
	BIP_KNOB_TEXT,   /* a word of [A-Za-z0-9._:/,-], shorter than max */
};

/* A size the layer measures for itself (BIP_KNOB_SIZE_AUTO). */
#define BIP_KNOB_AUTO (SIZE_MAX - 1)
/* A count the layer chooses for the machine (BIP_KNOB_COUNT_AUTO). */
#define BIP_KNOB_AUTO_COUNT UINT_MAX

/* A knob and where its value goes: a size_t for BIP_KNOB_SIZE(_AUTO), a char
 * array of max bytes for BIP_KNOB_TEXT, else an unsigned (the macros below
 * refuse to compile for a field of another type). */
struct bip_knob_def {
	struct bip_knob_desc d;
	enum bip_knob_kind kind;
	unsigned long long min, max;
	const char *const *choices; /* BIP_KNOB_CHOICE: NULL-terminated */
	size_t off;                 /* the field in the layer's struct */
};

#define BIP_KNOB_UINT(type, field)                                             \
	_Generic(((type *)0)->field, unsigned: offsetof(type, field))
#define BIP_KNOB_SIZE_T(type, field)                                           \
	_Generic(((type *)0)->field, size_t: offsetof(type, field))
#define BIP_KNOB_CHARS(type, field)                                            \
	_Generic(&((type *)0)->field,                                          \
		 char(*)[sizeof(((type *)0)->field)]: offsetof(type, field))

/* A layer's knobs. */
struct bip_knob_table {
	const struct bip_knob_def *defs;
	unsigned n;
};

#define BIP_KNOB_TABLE(defs) { (defs), sizeof(defs) / sizeof((defs)[0]) }

/* The machine profile's value of a knob (profile.h), or NULL. */
const char *bip_knob_def_profile(const struct bip_knob_def *k);

/* Check the value of one knob (its environment variable's, else the
 * machine profile's, else its default):
 * 0, or -BIP_EINVAL with the reason in why. */
int bip_knob_def_check(const struct bip_knob_def *k, char *why, size_t len);

/* Read every knob of a table (as bip_knob_def_check takes it) into the struct at out
 * (NULL: only check them): 0, or -BIP_EINVAL (logged with the knob's name
 * and the reason). */
int bip_knob_table_load(const struct bip_knob_table *t, void *out);

#endif
