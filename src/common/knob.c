/* knob.c - the one parser of BIP's tunables (see knob.h). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bip_errno.h"
#include "knob.h"
#include "log.h"
#include "profile.h"

static int parse_size(const char *s, unsigned long long *v)
{
	char *end;
	unsigned long long n;
	unsigned shift = 0;

	if (strcmp(s, "never") == 0) {
		*v = SIZE_MAX;
		return 0;
	}
	errno = 0;
	n = strtoull(s, &end, 10);
	if (errno || end == s || *s == '-')
		return -1;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	}
	if (*end || (n << shift) >> shift != n)
		return -1;
	*v = n << shift;
	return 0;
}

/* Parse one knob's text into v; 0 or -BIP_EINVAL with a reason. */
static int parse_knob(const struct bip_knob_def *k, const char *text,
		      unsigned long long *v, char *why, size_t len)
{
	char *end;

	switch (k->kind) {
	case BIP_KNOB_TEXT:
		*v = strlen(text);
		if (*v >= k->max ||
		    strspn(text, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
				 "0123456789._:/,-") != *v) {
			snprintf(why, len,
				 "%s=%.64s: expected a %s of fewer than %llu "
				 "characters of [A-Za-z0-9._:/,-]",
				 k->d.name, text, k->d.type, k->max);
			return -BIP_EINVAL;
		}
		return 0;
	case BIP_KNOB_CHOICE:
		for (unsigned i = 0; k->choices[i]; i++)
			if (strcmp(text, k->choices[i]) == 0) {
				*v = i;
				return 0;
			}
		snprintf(why, len, "%s=%s: expected one of %s", k->d.name, text,
			 k->d.type);
		return -BIP_EINVAL;
	case BIP_KNOB_SIZE:
	case BIP_KNOB_SIZE_AUTO:
		if (k->kind == BIP_KNOB_SIZE_AUTO && strcmp(text, "auto") == 0) {
			*v = BIP_KNOB_AUTO;
			return 0;
		}
		if (parse_size(text, v)) {
			snprintf(why, len,
				 "%s=%s: expected a size (bytes, or with "
				 "k/m/g)%s%s",
				 k->d.name, text,
				 k->max == SIZE_MAX ? ", never" : "",
				 k->kind == BIP_KNOB_SIZE_AUTO ? " or auto" : "");
			return -BIP_EINVAL;
		}
		break;
	case BIP_KNOB_COUNT_AUTO:
		if (strcmp(text, "auto") == 0) {
			*v = BIP_KNOB_AUTO_COUNT;
			return 0;
		}
		/* fall through */
	case BIP_KNOB_COUNT:
	case BIP_KNOB_POW2:
		errno = 0;
		*v = strtoull(text, &end, 10);
		if (errno || end == text || *end || *text == '-') {
			snprintf(why, len, "%s=%s: expected a whole number%s",
				 k->d.name, text,
				 k->kind == BIP_KNOB_COUNT_AUTO ? " or auto" : "");
			return -BIP_EINVAL;
		}
		if (k->kind == BIP_KNOB_POW2 && (*v & (*v - 1))) {
			snprintf(why, len, "%s=%s: expected a power of two",
				 k->d.name, text);
			return -BIP_EINVAL;
		}
		break;
	}
	if (*v < k->min || *v > k->max) {
		snprintf(why, len, "%s=%s: out of range [%llu, %llu]",
			 k->d.name, text, k->min, k->max);
		return -BIP_EINVAL;
	}
	return 0;
}

/* The profile's value of a knob, or NULL (none, or the knob naming the
 * profile itself). */
const char *bip_knob_def_profile(const struct bip_knob_def *k)
{
	const struct bip_profile *p;

	if (strcmp(k->d.name, "BIP_PROFILE") == 0 ||
	    bip_profile_load(&p, NULL, 0) || !p)
		return NULL;
	return bip_profile_get(p, k->d.name);
}

/* Rule: a variable set by hand wins over the machine profile, which wins
 * over the built-in default. */
static const char *knob_text(const struct bip_knob_def *k, const char **from)
{
	const char *v = getenv(k->d.name);

	*from = "";
	if (v && *v)
		return v;
	if ((v = bip_knob_def_profile(k))) {
		*from = " (from the machine profile)";
		return v;
	}
	return k->d.def;
}

/* Parse a knob's current text into v: 0, or -BIP_EINVAL with the reason
 * (and where the text came from) in why. A malformed profile fails every
 * knob. */
static int knob_value(const struct bip_knob_def *k, const char **text,
		      unsigned long long *v, char *why, size_t len)
{
	const struct bip_profile *p;
	const char *from;
	size_t n;

	if (bip_profile_load(&p, why, len))
		return -BIP_EINVAL;
	*text = knob_text(k, &from);
	if (!parse_knob(k, *text, v, why, len))
		return 0;
	n = strlen(why);
	if (n < len)
		snprintf(why + n, len - n, "%s", from);
	return -BIP_EINVAL;
}

int bip_knob_def_check(const struct bip_knob_def *k, char *why, size_t len)
{
	unsigned long long v;
	const char *text;

	return knob_value(k, &text, &v, why, len);
}

int bip_knob_table_load(const struct bip_knob_table *t, void *out)
{
	for (unsigned i = 0; i < t->n; i++) {
		const struct bip_knob_def *k = &t->defs[i];
		unsigned long long v;
		const char *text;
		uint8_t *field;
		char why[600];

		if (knob_value(k, &text, &v, why, sizeof(why))) {
			bip_err("invalid knob %s", why);
			return -BIP_EINVAL;
		}
		if (!out)
			continue;
		field = (uint8_t *)out + k->off;
		if (k->kind == BIP_KNOB_TEXT) {
			memcpy(field, text, v + 1);
		} else if (k->kind == BIP_KNOB_SIZE ||
			   k->kind == BIP_KNOB_SIZE_AUTO) {
			size_t s = (size_t)v;

			memcpy(field, &s, sizeof(s));
		} else {
			unsigned u = (unsigned)v;

			memcpy(field, &u, sizeof(u));
		}
	}
	return 0;
}
