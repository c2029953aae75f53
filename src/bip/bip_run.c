/*
 * bip_run.c - single-node launcher: starts N ranks of a program and serves
 * them PMI-1 over one socketpair each, so BIP programs bootstrap the same way
 * under bip_run as under Hydra's mpiexec.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bip.h"
#include "log.h"
#include "pmi_line.h"

#define MAX_RANKS 1024
/* Limits we announce in cmd=maxes (bytes, terminating NUL included). */
#define KVSNAME_MAX 256
#define KEYLEN_MAX 64
#define VALLEN_MAX 1024
/* Longest request line we accept: a put at the maxes fits easily. */
#define LINE_MAX_BYTES 4096
#define KV_BUCKETS 4096
#define KILL_GRACE_MS 2000
#define POLL_MS 100
#define EXIT_USAGE 2
#define EXIT_TIMEOUT 124

struct rank {
	pid_t pid;	 /* 0 once reaped (or never started) */
	int fd;		 /* our end of its PMI socket; -1 once closed */
	bool in_barrier; /* waiting for barrier_out */
	bool finalized;	 /* sent cmd=finalize: takes no part in barriers */
	size_t len;	 /* bytes of an incomplete line in buf */
	char buf[LINE_MAX_BYTES];
};

struct kv {
	struct kv *next;
	char *key;
	char *val;
};

static struct {
	int n;
	struct rank *ranks;
	int alive; /* started and not yet reaped */
	char jobid[64];
	char kvsname[KVSNAME_MAX];
	uint64_t secret; /* handed to the ranks through PMI (bip-secret) */
	struct kv *kv[KV_BUCKETS];
	int status;	 /* first failure's exit status, 0 if none yet */
	int got_signal;	 /* last SIGINT/SIGTERM received, 0 if none */
	bool terminating;
	bool killed;	 /* SIGKILL already sent */
	bool timed_out;
	int64_t kill_at; /* when terminating: SIGKILL deadline (ms) */
} job;

static volatile sig_atomic_t sig_forward; /* to pass on to the ranks */
static volatile sig_atomic_t sig_tty;	   /* the ranks got it already */

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void on_stop_signal(int sig, siginfo_t *info, void *uctx)
{
	(void)uctx;
	/*
	 * A terminal sends ^C to the whole foreground process group, ranks
	 * included (si_code SI_KERNEL): forwarding it would deliver it twice.
	 */
	if (info && info->si_code == SI_KERNEL)
		sig_tty = sig;
	else
		sig_forward = sig;
}

static void on_sigchld(int sig)
{
	/* Only here to interrupt ppoll(); the loop reaps with WNOHANG. */
	(void)sig;
}

/* --- termination ------------------------------------------------------- */

static void signal_all(int sig)
{
	for (int r = 0; r < job.n; r++)
		if (job.ranks[r].pid > 0)
			kill(job.ranks[r].pid, sig);
}

/* Ask the ranks to stop; the main loop SIGKILLs them after a grace period. */
static void begin_terminate(int sig, bool send)
{
	if (send)
		signal_all(sig);
	if (!job.terminating) {
		job.terminating = true;
		job.kill_at = now_ms() + KILL_GRACE_MS;
	}
}

static void fail(int status)
{
	if (!job.status)
		job.status = status;
	begin_terminate(SIGTERM, true);
}

/* --- key-value space ----------------------------------------------------- */

static struct kv **kv_slot(const char *key)
{
	struct kv **p = &job.kv[bip_job_key(key) % KV_BUCKETS];

	while (*p && strcmp((*p)->key, key) != 0)
		p = &(*p)->next;
	return p;
}

/* A second put of a key replaces the value: the tolerant choice. */
static int kv_put(const char *key, const char *val)
{
	struct kv **p = kv_slot(key);
	char *v = strdup(val);

	if (!v)
		return -1;
	if (*p) {
		free((*p)->val);
		(*p)->val = v;
		return 0;
	}
	*p = calloc(1, sizeof(**p));
	if (!*p || !((*p)->key = strdup(key))) {
		free(*p);
		*p = NULL;
		free(v);
		return -1;
	}
	(*p)->val = v;
	return 0;
}

static const char *kv_get(const char *key)
{
	struct kv *e = *kv_slot(key);

	return e ? e->val : NULL;
}

static void kv_free(void)
{
	for (int b = 0; b < KV_BUCKETS; b++) {
		while (job.kv[b]) {
			struct kv *e = job.kv[b];

			job.kv[b] = e->next;
			free(e->key);
			free(e->val);
			free(e);
		}
	}
}

/* --- PMI server ---------------------------------------------------------- */

static void rank_close(int r)
{
	struct rank *rk = &job.ranks[r];

	if (rk->fd >= 0)
		close(rk->fd);
	rk->fd = -1;
	rk->len = 0;
	rk->in_barrier = false;
}

/*
 * Send one reply line. Replies are small and the protocol is one reply per
 * request, so a full socket means the rank is not reading: drop it rather
 * than block the whole job behind it.
 */
static void reply(int r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void reply(int r, const char *fmt, ...)
{
	char line[LINE_MAX_BYTES + 128];
	va_list ap;
	ssize_t n;
	int len;

	if (job.ranks[r].fd < 0)
		return;
	va_start(ap, fmt);
	len = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (len < 0 || len >= (int)sizeof(line) - 1) {
		bip_err("rank %d: PMI reply too long", r);
		rank_close(r);
		return;
	}
	bip_trace("rank %d <- %s", r, line);
	line[len++] = '\n';
	do
		n = send(job.ranks[r].fd, line, (size_t)len,
			 MSG_NOSIGNAL | MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
	if (n == len)
		return;
	if (n < 0 && (errno == EPIPE || errno == ECONNRESET))
		bip_dbg("rank %d: gone before its PMI reply", r);
	else
		bip_err("rank %d: cannot send PMI reply: %s", r,
			n < 0 ? strerror(errno) : "socket full");
	rank_close(r);
}

static void do_put(int r, const struct bip_pmi_line *m)
{
	const char *kvs = bip_pmi_line_find(m, "kvsname");
	const char *key = bip_pmi_line_find(m, "key");
	const char *val = bip_pmi_line_find(m, "value");

	if (!val)
		val = "";
	if (!kvs || strcmp(kvs, job.kvsname) != 0) {
		bip_warn("rank %d: put into unknown kvs '%s'", r,
			 kvs ? kvs : "");
		reply(r, "cmd=put_result rc=-1 msg=unknown_kvsname");
	} else if (!key || !*key || strlen(key) >= KEYLEN_MAX ||
		   strlen(val) >= VALLEN_MAX) {
		bip_warn("rank %d: put with a missing or oversized key/value",
			 r);
		reply(r, "cmd=put_result rc=-1 msg=invalid_key_or_value");
	} else if (kv_put(key, val)) {
		bip_err("out of memory storing PMI key %s", key);
		reply(r, "cmd=put_result rc=-1 msg=no_memory");
	} else {
		reply(r, "cmd=put_result rc=0 msg=success");
	}
}

static void do_get(int r, const struct bip_pmi_line *m)
{
	const char *kvs = bip_pmi_line_find(m, "kvsname");
	const char *key = bip_pmi_line_find(m, "key");
	const char *val;

	if (!kvs || strcmp(kvs, job.kvsname) != 0) {
		bip_warn("rank %d: get from unknown kvs '%s'", r,
			 kvs ? kvs : "");
		reply(r, "cmd=get_result rc=-1 msg=unknown_kvsname");
		return;
	}
	val = key ? kv_get(key) : NULL;
	if (val)
		reply(r, "cmd=get_result rc=0 msg=success value=%s", val);
	else
		reply(r, "cmd=get_result rc=-1 msg=key_not_found");
}

static void handle_line(int r, char *line)
{
	struct rank *rk = &job.ranks[r];
	const char *cmd;
	struct bip_pmi_line m;

	bip_trace("rank %d -> %s", r, line);
	if (bip_pmi_line_parse(line, &m)) {
		bip_warn("rank %d: malformed PMI line", r);
		reply(r, "cmd=error rc=-1 msg=malformed_command");
		return;
	}
	cmd = m.val[0];
	if (strcmp(cmd, "init") == 0) {
		const char *v = bip_pmi_line_find(&m, "pmi_version");
		bool ok = v && strcmp(v, "1") == 0;

		if (!ok)
			bip_warn("rank %d: unsupported pmi_version %s", r,
				 v ? v : "(none)");
		reply(r, "cmd=response_to_init pmi_version=1 "
			 "pmi_subversion=1 rc=%d",
		      ok ? 0 : -1);
	} else if (strcmp(cmd, "get_maxes") == 0) {
		reply(r, "cmd=maxes kvsname_max=%d keylen_max=%d vallen_max=%d",
		      KVSNAME_MAX, KEYLEN_MAX, VALLEN_MAX);
	} else if (strcmp(cmd, "get_my_kvsname") == 0) {
		reply(r, "cmd=my_kvsname kvsname=%s", job.kvsname);
	} else if (strcmp(cmd, "get_universe_size") == 0) {
		reply(r, "cmd=universe_size size=%d", job.n);
	} else if (strcmp(cmd, "get_appnum") == 0) {
		reply(r, "cmd=appnum appnum=0");
	} else if (strcmp(cmd, "put") == 0) {
		do_put(r, &m);
	} else if (strcmp(cmd, "get") == 0) {
		do_get(r, &m);
	} else if (strcmp(cmd, "barrier_in") == 0) {
		/* Answered by barrier_check() once every live rank is in. */
		rk->in_barrier = true;
	} else if (strcmp(cmd, "finalize") == 0) {
		rk->finalized = true;
		reply(r, "cmd=finalize_ack");
	} else if (strcmp(cmd, "abort") == 0) {
		/* MPICH's PMI_Abort: no reply expected, the rank exits next. */
		const char *code = bip_pmi_line_find(&m, "exitcode");
		int c = code ? atoi(code) & 0xff : 1;

		fprintf(stderr, "bip_run: rank %d (pid %d) aborted the job\n",
			r, (int)rk->pid);
		fail(c ? c : 1);
	} else {
		bip_warn("rank %d: unknown PMI command '%s'", r, cmd);
		reply(r, "cmd=%s_result rc=-1 msg=unknown", cmd);
	}
}

/* Run every complete line in the rank's buffer. */
static void handle_lines(int r)
{
	struct rank *rk = &job.ranks[r];
	size_t start = 0;
	char *nl;

	while (rk->fd >= 0 &&
	       (nl = memchr(rk->buf + start, '\n', rk->len - start))) {
		*nl = '\0';
		handle_line(r, rk->buf + start);
		start = (size_t)(nl - rk->buf) + 1;
	}
	if (rk->fd < 0)
		return;
	rk->len -= start;
	memmove(rk->buf, rk->buf + start, rk->len);
	if (rk->len == sizeof(rk->buf)) {
		bip_err("rank %d: PMI line longer than %d bytes", r,
			LINE_MAX_BYTES);
		rank_close(r);
	}
}

static void rank_read(int r)
{
	struct rank *rk = &job.ranks[r];

	while (rk->fd >= 0) {
		ssize_t n = recv(rk->fd, rk->buf + rk->len,
				 sizeof(rk->buf) - rk->len, MSG_DONTWAIT);

		if (n > 0) {
			rk->len += (size_t)n;
			handle_lines(r);
		} else if (n == 0) {
			/* Done with PMI; its exit status tells if it failed. */
			bip_dbg("rank %d: PMI connection closed", r);
			rank_close(r);
		} else if (errno == EAGAIN || errno == EWOULDBLOCK) {
			return;
		} else if (errno != EINTR) {
			if (errno != ECONNRESET)
				bip_err("rank %d: PMI read: %s", r,
					strerror(errno));
			rank_close(r);
		}
	}
}

/* Release the barrier once every rank still taking part has entered it. */
static void barrier_check(void)
{
	int live = 0, in = 0;

	for (int r = 0; r < job.n; r++) {
		struct rank *rk = &job.ranks[r];

		if (rk->fd < 0 || rk->pid <= 0 || rk->finalized)
			continue;
		live++;
		if (rk->in_barrier)
			in++;
	}
	if (in == 0 || in != live)
		return;
	for (int r = 0; r < job.n; r++) {
		struct rank *rk = &job.ranks[r];

		if (rk->in_barrier && rk->fd >= 0 && rk->pid > 0) {
			rk->in_barrier = false;
			reply(r, "cmd=barrier_out");
		}
	}
}

/* --- processes ----------------------------------------------------------- */

static void reap(void)
{
	pid_t pid;
	int st;

	while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
		int code = 0;
		int r;

		for (r = 0; r < job.n; r++)
			if (job.ranks[r].pid == pid)
				break;
		if (r == job.n)
			continue;
		job.ranks[r].pid = 0;
		job.ranks[r].in_barrier = false;
		job.alive--;
		if (WIFSIGNALED(st)) {
			code = 128 + WTERMSIG(st);
			fprintf(stderr, "bip_run: rank %d (pid %d) %s %d\n", r,
				(int)pid, "killed by signal", WTERMSIG(st));
		} else if (WIFEXITED(st) && WEXITSTATUS(st)) {
			code = WEXITSTATUS(st);
			fprintf(stderr, "bip_run: rank %d (pid %d) %s %d\n", r,
				(int)pid, "exited with status", code);
		}
		if (code)
			fail(code);
	}
}

static void __attribute__((noreturn))
child_exec(int r, int fd, char **argv, const sigset_t *mask,
	   const struct rlimit *nofile)
{
	char num[32];

	/* The other ranks' sockets are SOCK_CLOEXEC: exec drops them. */
	if (fcntl(fd, F_SETFD, 0) < 0)
		goto fail_setup;
	snprintf(num, sizeof(num), "%d", fd);
	if (setenv("PMI_FD", num, 1))
		goto fail_setup;
	snprintf(num, sizeof(num), "%d", r);
	if (setenv("PMI_RANK", num, 1))
		goto fail_setup;
	snprintf(num, sizeof(num), "%d", job.n);
	if (setenv("PMI_SIZE", num, 1) ||
	    setenv("BIP_RUN_JOBID", job.jobid, 1))
		goto fail_setup;
	/* Left over from an enclosing mpiexec, these would misdirect PMI. */
	unsetenv("PMI_PORT");
	unsetenv("PMI_ID");

	/* Dispositions and the mask survive exec: give the rank clean ones. */
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGCHLD, SIG_DFL);
	sigprocmask(SIG_SETMASK, mask, NULL);
	setrlimit(RLIMIT_NOFILE, nofile);

	execvp(argv[0], argv);
	fprintf(stderr, "bip_run: cannot run %s: %s\n", argv[0],
		strerror(errno));
	_exit(127);

fail_setup:
	fprintf(stderr, "bip_run: rank %d: setup failed: %s\n", r,
		strerror(errno));
	_exit(127);
}

static void launch(char **argv, const sigset_t *mask,
		   const struct rlimit *nofile)
{
	for (int r = 0; r < job.n; r++) {
		int sv[2];
		pid_t pid;

		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) {
			bip_err("socketpair for rank %d: %s", r,
				strerror(errno));
			fail(1);
			return;
		}
		pid = fork();
		if (pid < 0) {
			bip_err("fork for rank %d: %s", r, strerror(errno));
			close(sv[0]);
			close(sv[1]);
			fail(1);
			return;
		}
		if (pid == 0)
			child_exec(r, sv[1], argv, mask, nofile);
		/* Only the rank holds its end: its exit means EOF here. */
		close(sv[1]);
		job.ranks[r].fd = sv[0];
		job.ranks[r].pid = pid;
		job.alive++;
	}
}

/* Ranks that crashed cannot unlink their segments: do it for them. We
 * gave the job its secret, so we know its names. */
static void cleanup_shm(void)
{
	bip_job_cleanup(job.secret, bip_job_key(job.kvsname), job.n);
}

/* --- main loop ----------------------------------------------------------- */

static void handle_signals(void)
{
	int s;

	if (sig_forward) {
		s = sig_forward;
		sig_forward = 0;
		job.got_signal = s;
		begin_terminate(s, true);
	}
	if (sig_tty) {
		s = sig_tty;
		sig_tty = 0;
		job.got_signal = s;
		begin_terminate(s, false);
	}
}

static void run(int64_t deadline, int timeout_s, const sigset_t *mask)
{
	struct pollfd *pfd = calloc((size_t)job.n, sizeof(*pfd));
	int *who = calloc((size_t)job.n, sizeof(*who));

	if (!pfd || !who) {
		bip_err("out of memory");
		fail(1);
	}
	while (job.alive > 0) {
		int64_t now = now_ms();
		int64_t wait = POLL_MS;
		struct timespec ts;
		int nfds = 0;
		int ret;

		handle_signals();
		if (deadline && !job.timed_out && now >= deadline) {
			fprintf(stderr, "bip_run: timeout after %d s, %s\n",
				timeout_s, "stopping the job");
			job.timed_out = true;
			begin_terminate(SIGTERM, true);
		}
		if (job.terminating && !job.killed && now >= job.kill_at) {
			signal_all(SIGKILL);
			job.killed = true;
		}
		if (deadline && !job.timed_out && deadline - now < wait)
			wait = deadline - now;
		if (job.terminating && !job.killed && job.kill_at - now < wait)
			wait = job.kill_at - now;
		if (wait < 0)
			wait = 0;

		for (int r = 0; pfd && r < job.n; r++) {
			if (job.ranks[r].fd < 0)
				continue;
			pfd[nfds].fd = job.ranks[r].fd;
			pfd[nfds].events = POLLIN;
			pfd[nfds].revents = 0;
			who[nfds++] = r;
		}
		ts.tv_sec = wait / 1000;
		ts.tv_nsec = (wait % 1000) * 1000000;
		/* Signals are blocked except inside ppoll: none slips by. */
		ret = ppoll(pfd, (nfds_t)nfds, &ts, mask);
		if (ret < 0 && errno != EINTR) {
			bip_err("ppoll: %s", strerror(errno));
			fail(1);
		}
		for (int i = 0; ret > 0 && i < nfds; i++)
			if (pfd[i].revents)
				rank_read(who[i]);
		reap();
		barrier_check();
	}
	free(pfd);
	free(who);
}

/* PMI_process_mapping for n ranks on hosts <= n hosts, in blocks. */
static void process_mapping(char *map, size_t len, int n, int hosts)
{
	int ppn = n / hosts, more = n % hosts;

	if (!more)
		snprintf(map, len, "(vector,(0,%d,%d))", hosts, ppn);
	else
		snprintf(map, len, "(vector,(0,%d,%d),(%d,%d,%d))", more,
			 ppn + 1, more, hosts - more, ppn);
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: bip_run -n N [-H HOSTS] [-t SECONDS] [--] PROG [ARGS...]\n"
		"  -n N        start N ranks of PROG on this node (1..%d)\n"
		"  -H HOSTS    tell the ranks they run on HOSTS hosts, in blocks\n"
		"              of consecutive ranks: peers on another \"host\"\n"
		"              use a network wire (default 1)\n"
		"  -t SECONDS  stop the job if it runs longer (exit %d)\n"
		"  -h, --help  show this help\n",
		MAX_RANKS, EXIT_TIMEOUT);
}

static void __attribute__((noreturn)) bad_usage(const char *fmt, ...)
{
	va_list ap;

	fputs("bip_run: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	usage(stderr);
	exit(EXIT_USAGE);
}

static long parse_num(const char *s, long min, long max, const char *what)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max)
		bad_usage("%s must be an integer in %ld..%ld, not '%s'", what,
			  min, max, s);
	return v;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct rlimit nofile, raised;
	struct sigaction sa;
	sigset_t block, mask;
	struct timespec rt;
	char map[64], secret[32];
	int64_t deadline = 0;
	int timeout_s = 0, hosts = 1;
	int status;
	int c;

	bip_log_init();
	job.n = 0;
	opterr = 0;
	/* '+': options end at PROG, so PROG's own options are left alone. */
	while ((c = getopt_long(argc, argv, "+:n:H:t:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'n':
			job.n = (int)parse_num(optarg, 1, MAX_RANKS, "-n");
			break;
		case 'H':
			hosts = (int)parse_num(optarg, 1, MAX_RANKS, "-H");
			break;
		case 't':
			timeout_s = (int)parse_num(optarg, 1, 100000000, "-t");
			break;
		case 'h':
			usage(stdout);
			return 0;
		case ':':
			bad_usage("option -%c needs an argument", optopt);
		default:
			if (optopt)
				bad_usage("unknown option '-%c'", optopt);
			bad_usage("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (!job.n)
		bad_usage("-n N is required");
	if (optind >= argc)
		bad_usage("no program to run");
	if (hosts > job.n)
		bad_usage("-H %d: more hosts than the %d ranks", hosts, job.n);

	job.ranks = calloc((size_t)job.n, sizeof(*job.ranks));
	if (!job.ranks) {
		bip_err("out of memory");
		return 1;
	}
	for (int r = 0; r < job.n; r++)
		job.ranks[r].fd = -1;

	/* pid + time: unique on this node, so is the shm prefix it implies. */
	clock_gettime(CLOCK_REALTIME, &rt);
	snprintf(job.jobid, sizeof(job.jobid), "%d_%llx", (int)getpid(),
		 (unsigned long long)rt.tv_sec * 1000000ULL +
			 (unsigned long long)rt.tv_nsec / 1000);
	snprintf(job.kvsname, sizeof(job.kvsname), "bip_%s", job.jobid);

	/* MPICH and libbip read this at init. Everything runs here; with -H
	 * the ranks are told otherwise, as Hydra fills hosts: the first
	 * n % hosts hosts take one rank more. */
	process_mapping(map, sizeof(map), job.n, hosts);
	if (kv_put("PMI_process_mapping", map)) {
		bip_err("out of memory");
		return 1;
	}
	/* The job's secret names its segments: we draw it, so that we can
	 * find them after a crash. Only the job's processes can read it. */
	if (bip_secret_new(&job.secret))
		return 1;
	snprintf(secret, sizeof(secret), "%016" PRIx64, job.secret);
	if (kv_put("bip-secret", secret)) {
		bip_err("out of memory");
		return 1;
	}

	/* One socket per rank: make room if the soft limit is too low. */
	getrlimit(RLIMIT_NOFILE, &nofile);
	raised = nofile;
	if (raised.rlim_cur != RLIM_INFINITY &&
	    raised.rlim_cur < (rlim_t)job.n + 64) {
		raised.rlim_cur = (rlim_t)job.n + 64;
		if (raised.rlim_max != RLIM_INFINITY &&
		    raised.rlim_cur > raised.rlim_max)
			raised.rlim_cur = raised.rlim_max;
		setrlimit(RLIMIT_NOFILE, &raised);
	}

	sigemptyset(&block);
	sigaddset(&block, SIGCHLD);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigprocmask(SIG_BLOCK, &block, &mask);
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_stop_signal;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sa.sa_flags = SA_NOCLDSTOP;
	sa.sa_handler = on_sigchld;
	sigaction(SIGCHLD, &sa, NULL);

	if (timeout_s)
		deadline = now_ms() + (int64_t)timeout_s * 1000;
	launch(argv + optind, &mask, &nofile);
	run(deadline, timeout_s, &mask);

	for (int r = 0; r < job.n; r++)
		rank_close(r);
	cleanup_shm();
	kv_free();
	free(job.ranks);

	if (job.timed_out)
		status = EXIT_TIMEOUT;
	else if (job.status)
		status = job.status;
	else if (job.got_signal)
		status = 128 + job.got_signal;
	else
		status = 0;
	return status;
}
