/*
 * profile.h - the machine profile: defaults for BIP's knobs measured on the
 * machine itself (bipmpi-tune writes it) and kept in a file, so that a
 * choice that depends on the machine is not one machine's verdict baked
 * into a default. A knob's value comes from its environment variable if
 * set, else from the profile, else from its built-in default (knob.c).
 *
 * The file is text, one setting a line:
 *
 *   # a comment
 *   machine=AMD EPYC 9B14 (family 25, model 17)
 *   BIP_STREAM_RING_MAX=8k
 *
 * `machine` (required) is the processor the values were measured on
 * (bip_profile_machine): a profile measured on another kind of machine
 * is not used. Every other line names a knob; its value
 * is checked as that knob's when the knob is read. Names no table knows
 * are kept and never read (a profile of a newer version stays usable).
 */
#ifndef BIP_COMMON_PROFILE_H
#define BIP_COMMON_PROFILE_H

#include <stddef.h>

#define BIP_PROFILE_BYTES 16384  /* largest file read */
#define BIP_PROFILE_ENTRIES 32
#define BIP_PROFILE_NAME_MAX 48  /* with its NUL */
#define BIP_PROFILE_VALUE_MAX 64 /* with its NUL */
#define BIP_PROFILE_MACHINE_MAX 128

struct bip_profile {
	char machine[BIP_PROFILE_MACHINE_MAX];
	unsigned n;
	struct {
		char name[BIP_PROFILE_NAME_MAX];
		char value[BIP_PROFILE_VALUE_MAX];
	} e[BIP_PROFILE_ENTRIES];
};

/* Parse len bytes of a profile's text (no NUL needed) into p: 0, or
 * -BIP_EINVAL with the line and the reason in why. */
int bip_profile_parse(const char *text, size_t len, struct bip_profile *p,
		      char *why, size_t wlen);

/* The value p gives knob name, or NULL. */
const char *bip_profile_get(const struct bip_profile *p, const char *name);

/* This machine as profiles name it: /proc/cpuinfo's first "model name",
 * then " (family F, model M)" from its first "cpu family" and "model"
 * where it has both; "unknown" without a model name. _of: from text,
 * /proc/cpuinfo's (NUL-terminated; a last line without its newline is
 * cut off, and not taken). */
void bip_profile_machine(char *buf, size_t len);
void bip_profile_machine_of(const char *text, char *buf, size_t len);

/* The process's profile, read once: the file BIP_PROFILE names, else the
 * installed one (BIP_PROFILE_PATH; none if missing); BIP_PROFILE=none:
 * none. *p is NULL when no profile applies (none, or measured on another
 * machine). Returns 0, or -BIP_EINVAL if the file is malformed or the one
 * BIP_PROFILE names cannot be read. why (if not NULL) says which file
 * and what became of it. */
int bip_profile_load(const struct bip_profile **p, char *why, size_t wlen);

#endif
