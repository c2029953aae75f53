/* profile.c - the machine profile's parser and loader (see profile.h). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bip_errno.h"
#include "profile.h"

#ifndef BIP_PROFILE_PATH
#define BIP_PROFILE_PATH "/etc/bip/profile"
#endif

static int is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

static int is_name(const char *s, size_t n)
{
	if (!n)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
			return 0;
	return 1;
}

/* One setting, without its line's surrounding blanks. */
static int parse_line(const char *s, size_t n, struct bip_profile *p,
		      const char **reason)
{
	const char *eq = memchr(s, '=', n);
	size_t k, v;

	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 && s[i] != '\t') {
			*reason = "a control character";
			return -1;
		}
	if (!eq) {
		*reason = "expected NAME=VALUE";
		return -1;
	}
	k = (size_t)(eq - s);
	while (k && is_blank(s[k - 1]))
		k--;
	eq++;
	while (eq < s + n && is_blank(*eq))
		eq++;
	v = (size_t)(s + n - eq);
	if (!is_name(s, k) || k >= BIP_PROFILE_NAME_MAX) {
		*reason = "the name is not a knob's ([A-Za-z0-9_], at most 47)";
		return -1;
	}
	if (!v) {
		*reason = "an empty value";
		return -1;
	}
	if (k == 7 && memcmp(s, "machine", 7) == 0) {
		if (p->machine[0]) {
			*reason = "a second machine line";
			return -1;
		}
		if (v >= sizeof(p->machine)) {
			*reason = "a machine name longer than 127 characters";
			return -1;
		}
		memcpy(p->machine, eq, v);
		return 0;
	}
	if (v >= BIP_PROFILE_VALUE_MAX || memchr(eq, ' ', v) ||
	    memchr(eq, '\t', v)) {
		*reason = "a knob's value is one word of at most 63 characters";
		return -1;
	}
	for (unsigned i = 0; i < p->n; i++)
		if (strlen(p->e[i].name) == k &&
		    memcmp(p->e[i].name, s, k) == 0) {
			*reason = "a knob set twice";
			return -1;
		}
	if (p->n == BIP_PROFILE_ENTRIES) {
		*reason = "more than 32 knobs";
		return -1;
	}
	memcpy(p->e[p->n].name, s, k);
	memcpy(p->e[p->n].value, eq, v);
	p->n++;
	return 0;
}

int bip_profile_parse(const char *text, size_t len, struct bip_profile *p,
		      char *why, size_t wlen)
{
	const char *reason = NULL;
	unsigned line = 0;
	size_t at = 0;

	memset(p, 0, sizeof(*p));
	while (at < len) {
		const char *s = text + at, *eol = memchr(s, '\n', len - at);
		size_t n = eol ? (size_t)(eol - s) : len - at;

		at += n + (eol != NULL);
		line++;
		while (n && is_blank(*s)) {
			s++;
			n--;
		}
		while (n && is_blank(s[n - 1]))
			n--;
		if (!n || *s == '#')
			continue;
		if (parse_line(s, n, p, &reason)) {
			snprintf(why, wlen, "line %u: %s", line, reason);
			return -BIP_EINVAL;
		}
	}
	if (!p->machine[0]) {
		snprintf(why, wlen, "no machine= line (the machine it was "
				    "measured on)");
		return -BIP_EINVAL;
	}
	return 0;
}

const char *bip_profile_get(const struct bip_profile *p, const char *name)
{
	for (unsigned i = 0; i < p->n; i++)
		if (strcmp(p->e[i].name, name) == 0)
			return p->e[i].value;
	return NULL;
}

/* The value of /proc/cpuinfo's first line for key in text, blanks
 * trimmed, into out (len bytes): 0, or -1 if there is none or it is cut
 * off. "model" is not "model name": the key ends at blanks and a colon. */
static int cpuinfo_field(const char *text, const char *key, char *out,
			 size_t len)
{
	size_t k = strlen(key);
	const char *s, *end;

	for (s = text; *s; s = end + 1) {
		end = strchr(s, '\n');
		if (!end)
			return -1; /* cut off: the line is not all here */
		if (strncmp(s, key, k) != 0)
			continue;
		for (s += k; is_blank(*s); s++)
			;
		if (*s != ':')
			continue;
		for (s++; is_blank(*s); s++)
			;
		while (end > s && is_blank(end[-1]))
			end--;
		if (end == s)
			return -1;
		snprintf(out, len, "%.*s", (int)(end - s), s);
		return 0;
	}
	return -1;
}

void bip_profile_machine_of(const char *text, char *buf, size_t len)
{
	char name[BIP_PROFILE_MACHINE_MAX], family[16], model[16];

	if (cpuinfo_field(text, "model name", name, sizeof(name)))
		snprintf(buf, len, "unknown");
	/* A virtual machine may name its processor only "AMD EPYC", Zen 4
	 * and Zen 5 alike, whose verdicts differ (streams of 16 KiB: rings
	 * 1.5x faster against reads 1.1x faster): the family and model
	 * tell them apart. */
	else if (!cpuinfo_field(text, "cpu family", family, sizeof(family)) &&
		 !cpuinfo_field(text, "model", model, sizeof(model)))
		snprintf(buf, len, "%s (family %s, model %s)", name, family,
			 model);
	else
		snprintf(buf, len, "%s", name);
}

void bip_profile_machine(char *buf, size_t len)
{
	char text[8192];
	FILE *f = fopen("/proc/cpuinfo", "re");
	size_t n = f ? fread(text, 1, sizeof(text) - 1, f) : 0;

	if (f)
		fclose(f);
	text[n] = '\0';
	bip_profile_machine_of(text, buf, len);
}

static struct {
	pthread_once_t once;
	int rc;
	const struct bip_profile *p;
	struct bip_profile profile;
	char why[512];
} loaded = { .once = PTHREAD_ONCE_INIT };

/* Read path into loaded.profile: 0, 1 if it does not exist, or
 * -BIP_EINVAL with loaded.why. */
static int read_profile(const char *path)
{
	static char text[BIP_PROFILE_BYTES + 1];
	char reason[160];
	size_t n = 0;
	ssize_t r = 1;
	int err, fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		if (errno == ENOENT)
			return 1;
		snprintf(loaded.why, sizeof(loaded.why), "profile %s: %s", path,
			 strerror(errno));
		return -BIP_EINVAL;
	}
	while (n < sizeof(text) &&
	       (r = read(fd, text + n, sizeof(text) - n)) > 0)
		n += (size_t)r;
	err = errno; /* close may change it */
	close(fd);
	if (r < 0 || n > BIP_PROFILE_BYTES) {
		snprintf(loaded.why, sizeof(loaded.why), "profile %s: %s", path,
			 r < 0 ? strerror(err) : "larger than 16 KiB");
		return -BIP_EINVAL;
	}
	if (bip_profile_parse(text, n, &loaded.profile, reason,
			      sizeof(reason))) {
		snprintf(loaded.why, sizeof(loaded.why), "profile %s: %s", path,
			 reason);
		return -BIP_EINVAL;
	}
	return 0;
}

static void load_once(void)
{
	const char *path = getenv("BIP_PROFILE");
	int named = path && *path && strcmp(path, "auto") != 0;
	char here[BIP_PROFILE_MACHINE_MAX];
	int rc;

	if (named && strcmp(path, "none") == 0) {
		snprintf(loaded.why, sizeof(loaded.why),
			 "none (BIP_PROFILE=none)");
		return;
	}
	if (!named)
		path = BIP_PROFILE_PATH;
	rc = read_profile(path);
	if (rc == 1 && !named) {
		snprintf(loaded.why, sizeof(loaded.why),
			 "none (%s does not exist; bipmpi-tune writes it)",
			 path);
		return;
	}
	if (rc) {
		if (rc == 1)
			snprintf(loaded.why, sizeof(loaded.why),
				 "BIP_PROFILE=%s: no such file", path);
		loaded.rc = -BIP_EINVAL;
		return;
	}
	bip_profile_machine(here, sizeof(here));
	if (strcmp(here, loaded.profile.machine) != 0) {
		snprintf(loaded.why, sizeof(loaded.why),
			 "%s not used: measured on \"%s\", this machine is "
			 "\"%s\"",
			 path, loaded.profile.machine, here);
		return;
	}
	loaded.p = &loaded.profile;
	snprintf(loaded.why, sizeof(loaded.why), "%s (%u knob%s)", path,
		 loaded.profile.n, loaded.profile.n == 1 ? "" : "s");
}

int bip_profile_load(const struct bip_profile **p, char *why, size_t wlen)
{
	pthread_once(&loaded.once, load_once);
	*p = loaded.p;
	if (why)
		snprintf(why, wlen, "%s", loaded.why);
	return loaded.rc;
}
