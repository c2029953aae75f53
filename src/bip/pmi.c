/*
 * pmi.c - PMI-1 client: one text line per request, one line per reply, over
 * the socket whose number the process manager passes in PMI_FD.
 */
#include "pmi.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bip.h"
#include "log.h"
#include "pmi_line.h"

/* Longest line either way; the caps below keep every request under it. */
#define PMI_LINE_MAX 4096
#define PMI_KVSNAME_CAP 512
#define PMI_KEY_CAP 256
#define PMI_VAL_CAP 2048

struct bip_pmi {
	int fd;
	int rank;
	int size;
	/* Limits in bytes, terminating NUL included (as PMI counts them). */
	size_t kvsname_max;
	size_t keylen_max;
	size_t vallen_max;
	char *kvsname;
	/* Bytes received but not yet consumed as a reply line. */
	size_t rlen;
	char rbuf[PMI_LINE_MAX];
	char line[PMI_LINE_MAX];
};

/* A reply split in place into key=value tokens; key[0] is "cmd". */
static int env_int(const char *name, long min, long max, int *out)
{
	const char *s = getenv(name);
	char *end;
	long v;

	if (!s || !*s) {
		bip_err("PMI: %s not set (not run by mpiexec or bip_run?)",
			name);
		return -BIP_EBOOT;
	}
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < min || v > max) {
		bip_err("PMI: %s='%s' is not an integer in %ld..%ld", name, s,
			min, max);
		return -BIP_EBOOT;
	}
	*out = (int)v;
	return 0;
}

static int pmi_write_all(struct bip_pmi *pmi, const char *buf, size_t len)
{
	bool is_sock = true;

	while (len) {
		ssize_t n;

		/* MSG_NOSIGNAL: a dead server must be an error, not SIGPIPE. */
		if (is_sock)
			n = send(pmi->fd, buf, len, MSG_NOSIGNAL);
		else
			n = write(pmi->fd, buf, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == ENOTSOCK && is_sock) {
				is_sock = false;
				continue;
			}
			bip_err("PMI: write to fd %d: %s", pmi->fd,
				strerror(errno));
			return -BIP_EBOOT;
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Read one reply line (without '\n') into pmi->line. */
static int pmi_read_line(struct bip_pmi *pmi)
{
	for (;;) {
		char *nl = memchr(pmi->rbuf, '\n', pmi->rlen);
		ssize_t n;

		if (nl) {
			size_t len = (size_t)(nl - pmi->rbuf);

			memcpy(pmi->line, pmi->rbuf, len);
			pmi->line[len] = '\0';
			pmi->rlen -= len + 1;
			memmove(pmi->rbuf, nl + 1, pmi->rlen);
			return 0;
		}
		if (pmi->rlen == sizeof(pmi->rbuf)) {
			bip_err("PMI: reply over %d bytes", PMI_LINE_MAX);
			return -BIP_EBOOT;
		}
		n = read(pmi->fd, pmi->rbuf + pmi->rlen,
			 sizeof(pmi->rbuf) - pmi->rlen);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			bip_err("PMI: read from fd %d: %s", pmi->fd,
				strerror(errno));
			return -BIP_EBOOT;
		}
		if (n == 0) {
			bip_err("PMI: process manager closed the connection");
			return -BIP_EBOOT;
		}
		pmi->rlen += (size_t)n;
	}
}

/* Send a request line and wait for the reply named expect. */
static int pmi_call(struct bip_pmi *pmi, const char *req, const char *expect,
		    struct bip_pmi_line *reply)
{
	int ret;

	bip_trace("PMI -> %.*s", (int)strcspn(req, "\n"), req);
	ret = pmi_write_all(pmi, req, strlen(req));
	if (ret)
		return ret;
	ret = pmi_read_line(pmi);
	if (ret)
		return ret;
	bip_trace("PMI <- %s", pmi->line);
	if (bip_pmi_line_parse(pmi->line, reply)) {
		bip_err("PMI: malformed reply to '%.*s'",
			(int)strcspn(req, " \n"), req);
		return -BIP_EBOOT;
	}
	if (strcmp(reply->val[0], expect) != 0) {
		bip_err("PMI: expected cmd=%s, got cmd=%s", expect,
			reply->val[0]);
		return -BIP_EBOOT;
	}
	return 0;
}

/* rc=0 means success; anything else (or no rc at all) is a failure. */
static int pmi_check_rc(const struct bip_pmi_line *m, const char *what)
{
	const char *rc = bip_pmi_line_find(m, "rc");
	const char *msg;

	if (rc && strcmp(rc, "0") == 0)
		return 0;
	msg = bip_pmi_line_find(m, "msg");
	bip_err("PMI: %s failed (rc=%s%s%s)", what, rc ? rc : "missing",
		msg ? " msg=" : "", msg ? msg : "");
	return -BIP_EBOOT;
}

static int pmi_get_size(const struct bip_pmi_line *m, const char *key,
			size_t cap,
			size_t *out)
{
	const char *s = bip_pmi_line_find(m, key);
	char *end;
	long v;

	if (!s) {
		bip_err("PMI: maxes reply lacks %s", key);
		return -BIP_EBOOT;
	}
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < 2) {
		bip_err("PMI: malformed %s=%s", key, s);
		return -BIP_EBOOT;
	}
	/* Larger limits are legal but we never need them: clamp to our
	 * buffers. */
	*out = (size_t)v < cap ? (size_t)v : cap;
	return 0;
}

/* The protocol has no quoting, so a separator inside a token would split it. */
static bool pmi_token_ok(const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c <= ' ' || c == '=' || c == 0x7f)
			return false;
	}
	return true;
}

static int pmi_handshake(struct bip_pmi *pmi)
{
	struct bip_pmi_line m;
	const char *v;
	int ret;

	ret = pmi_call(pmi, "cmd=init pmi_version=1 pmi_subversion=1\n",
		       "response_to_init", &m);
	if (ret)
		return ret;
	ret = pmi_check_rc(&m, "init");
	if (ret)
		return ret;
	v = bip_pmi_line_find(&m, "pmi_version");
	if (v && strcmp(v, "1") != 0) {
		bip_err("PMI: server speaks pmi_version=%s, not 1", v);
		return -BIP_EBOOT;
	}

	ret = pmi_call(pmi, "cmd=get_maxes\n", "maxes", &m);
	if (ret)
		return ret;
	ret = pmi_get_size(&m, "kvsname_max", PMI_KVSNAME_CAP,
			   &pmi->kvsname_max);
	if (!ret)
		ret = pmi_get_size(&m, "keylen_max", PMI_KEY_CAP,
				   &pmi->keylen_max);
	if (!ret)
		ret = pmi_get_size(&m, "vallen_max", PMI_VAL_CAP,
				   &pmi->vallen_max);
	if (ret)
		return ret;

	ret = pmi_call(pmi, "cmd=get_my_kvsname\n", "my_kvsname", &m);
	if (ret)
		return ret;
	v = bip_pmi_line_find(&m, "kvsname");
	if (!v || !*v || strlen(v) >= pmi->kvsname_max) {
		bip_err("PMI: my_kvsname reply: kvsname missing or too long");
		return -BIP_EBOOT;
	}
	pmi->kvsname = strdup(v);
	if (!pmi->kvsname) {
		bip_err("PMI: out of memory");
		return -BIP_ENOMEM;
	}
	return 0;
}

int bip_pmi_open(struct bip_pmi **pmi_p)
{
	struct bip_pmi *pmi;
	int fd, rank, size;
	int ret;

	if (!pmi_p)
		return -BIP_EINVAL;
	*pmi_p = NULL;

	ret = env_int("PMI_FD", 0, INT_MAX, &fd);
	if (!ret)
		ret = env_int("PMI_SIZE", 1, INT_MAX, &size);
	if (!ret)
		ret = env_int("PMI_RANK", 0, size - 1, &rank);
	if (ret)
		return ret;
	if (fcntl(fd, F_GETFD) < 0) {
		bip_err("PMI: PMI_FD=%d is not an open file descriptor", fd);
		return -BIP_EBOOT;
	}
	/* Programs the job execs must not inherit (and hold open) our link. */
	(void)fcntl(fd, F_SETFD, FD_CLOEXEC);

	pmi = calloc(1, sizeof(*pmi));
	if (!pmi) {
		bip_err("PMI: out of memory");
		return -BIP_ENOMEM;
	}
	pmi->fd = fd;
	pmi->rank = rank;
	pmi->size = size;

	ret = pmi_handshake(pmi);
	if (ret) {
		close(pmi->fd);
		free(pmi->kvsname);
		free(pmi);
		return ret;
	}
	bip_dbg("PMI: rank %d of %d, kvsname %s, maxes %zu/%zu/%zu", rank,
		size, pmi->kvsname, pmi->kvsname_max, pmi->keylen_max,
		pmi->vallen_max);
	*pmi_p = pmi;
	return 0;
}

int bip_pmi_rank(const struct bip_pmi *pmi)
{
	return pmi->rank;
}

int bip_pmi_size(const struct bip_pmi *pmi)
{
	return pmi->size;
}

const char *bip_pmi_kvsname(const struct bip_pmi *pmi)
{
	return pmi->kvsname;
}

static int pmi_check_key(const struct bip_pmi *pmi, const char *key)
{
	if (!key || !*key || strlen(key) >= pmi->keylen_max ||
	    !pmi_token_ok(key)) {
		bip_err("PMI: invalid key '%s' (empty, too long or bad chars)",
			key ? key : "(null)");
		return -BIP_EINVAL;
	}
	return 0;
}

int bip_pmi_put(struct bip_pmi *pmi, const char *key, const char *value)
{
	char req[PMI_LINE_MAX];
	struct bip_pmi_line m;
	int ret;

	if (!pmi || !value)
		return -BIP_EINVAL;
	ret = pmi_check_key(pmi, key);
	if (ret)
		return ret;
	if (strlen(value) >= pmi->vallen_max || !pmi_token_ok(value)) {
		bip_err("PMI: invalid value for key %s (too long or bad chars)",
			key);
		return -BIP_EINVAL;
	}
	/* The caps on the maxes guarantee this fits. */
	snprintf(req, sizeof(req), "cmd=put kvsname=%s key=%s value=%s\n",
		 pmi->kvsname, key, value);
	ret = pmi_call(pmi, req, "put_result", &m);
	if (ret)
		return ret;
	return pmi_check_rc(&m, "put");
}

static int pmi_get(struct bip_pmi *pmi, const char *key, char *buf,
		   size_t len, bool required)
{
	char req[PMI_LINE_MAX];
	struct bip_pmi_line m;
	const char *v, *rc;
	size_t vlen;
	int ret;

	if (!pmi || !buf)
		return -BIP_EINVAL;
	ret = pmi_check_key(pmi, key);
	if (ret)
		return ret;
	snprintf(req, sizeof(req), "cmd=get kvsname=%s key=%s\n", pmi->kvsname,
		 key);
	ret = pmi_call(pmi, req, "get_result", &m);
	if (ret)
		return ret;
	rc = bip_pmi_line_find(&m, "rc");
	if (!required && (!rc || strcmp(rc, "0") != 0))
		return -BIP_EAGAIN;
	ret = pmi_check_rc(&m, "get");
	if (ret)
		return ret;
	v = bip_pmi_line_find(&m, "value");
	if (!v) {
		bip_err("PMI: get_result for %s has no value", key);
		return -BIP_EBOOT;
	}
	vlen = strlen(v);
	if (vlen >= len) {
		bip_err("PMI: value of %s (%zu bytes) exceeds buffer of %zu",
			key, vlen, len);
		return -BIP_ETOOLONG;
	}
	memcpy(buf, v, vlen + 1);
	return 0;
}

int bip_pmi_get(struct bip_pmi *pmi, const char *key, char *buf, size_t len)
{
	return pmi_get(pmi, key, buf, len, true);
}

int bip_pmi_get_opt(struct bip_pmi *pmi, const char *key, char *buf,
		    size_t len)
{
	return pmi_get(pmi, key, buf, len, false);
}

int bip_pmi_barrier(struct bip_pmi *pmi)
{
	struct bip_pmi_line m;

	if (!pmi)
		return -BIP_EINVAL;
	return pmi_call(pmi, "cmd=barrier_in\n", "barrier_out", &m);
}

void bip_pmi_close(struct bip_pmi *pmi)
{
	struct bip_pmi_line m;

	if (!pmi)
		return;
	/* Errors are already logged; nothing else can be done at close. */
	(void)pmi_call(pmi, "cmd=finalize\n", "finalize_ack", &m);
	close(pmi->fd);
	free(pmi->kvsname);
	free(pmi);
}
