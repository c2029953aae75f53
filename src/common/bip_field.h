/*
 * bip_field.h - strict, bounded readers for the text fields of business
 * cards ("a;b;c", "x,y,z"). Cards come from other processes (PMI, the
 * caller of bip_connect): every field is length-checked before it is
 * copied, and numbers are whole fields of digits within a range, so a card
 * is either taken exactly or refused. Header-only: libbip, the NIC program
 * and the netmod each parse their own part of a card with these.
 */
#ifndef BIP_COMMON_FIELD_H
#define BIP_COMMON_FIELD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The field at *p up to sep (or the end of the string when sep is '\0'),
 * as [*start, *start + *len); *p moves past the separator. False when the
 * separator is missing. */
static inline bool bip_field_next(const char **p, char sep, const char **start,
				  size_t *len)
{
	const char *s = *p, *e = sep ? strchr(s, sep) : s + strlen(s);

	if (!e)
		return false;
	*start = s;
	*len = (size_t)(e - s);
	*p = sep ? e + 1 : e;
	return true;
}

/* A field of 1..cap-1 characters from set (any printable but sep if set is
 * NULL), copied with its NUL. */
static inline bool bip_field_str(const char **p, char sep, const char *set,
				 char *buf, size_t cap)
{
	const char *s;
	size_t n;

	if (!bip_field_next(p, sep, &s, &n) || !n || n >= cap)
		return false;
	for (size_t i = 0; i < n; i++)
		if (set ? !strchr(set, s[i]) || !s[i]
			: s[i] <= ' ' || s[i] > '~')
			return false;
	memcpy(buf, s, n);
	buf[n] = '\0';
	return true;
}

/* A field of digits in base 10 or 16 (no sign, no prefix, at most 20
 * digits) whose value is at most max. */
static inline bool bip_field_uint(const char **p, char sep, unsigned base,
				  uint64_t max, uint64_t *out)
{
	const char *s;
	size_t n;
	uint64_t v = 0;

	if (!bip_field_next(p, sep, &s, &n) || !n || n > 20)
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned d;

		if (s[i] >= '0' && s[i] <= '9')
			d = (unsigned)(s[i] - '0');
		else if (base == 16 && s[i] >= 'a' && s[i] <= 'f')
			d = (unsigned)(s[i] - 'a' + 10);
		else
			return false;
		if (v > max / base)
			return false;
		v *= base;
		if (d > max - v)
			return false;
		v += d;
	}
	*out = v;
	return true;
}

/* The literal text at *p, followed by sep. */
static inline bool bip_field_lit(const char **p, char sep, const char *lit)
{
	const char *s;
	size_t n;

	return bip_field_next(p, sep, &s, &n) && n == strlen(lit) &&
	       memcmp(s, lit, n) == 0;
}

#endif
