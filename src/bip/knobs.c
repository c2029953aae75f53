/*
 * knobs.c - libbip's own tunables, and the list of every layer's knob table
 * that the parser and bip_info walk.
 */
#include <stdint.h>
#include <string.h>

#include "bip.h"
#include "knobs.h"
#include "log.h"
#include "profile.h"

static const char *const log_choices[] = { "error", "warn", "info", "debug",
					    "trace", NULL };
static const char *const idle_choices[] = { "block", "yield", "spin", NULL };
static const char *const spread_choices[] = { "auto", "off", NULL };

#define U(field) BIP_KNOB_UINT(struct bip_knobs, field)
#define Z(field) BIP_KNOB_SIZE_T(struct bip_knobs, field)
#define T(field) BIP_KNOB_CHARS(struct bip_knobs, field)

static const struct bip_knob_def own_knobs[] = {
	{ { "BIP_LOG", "error|warn|info|debug|trace", "warn",
	    "Lowest level of the messages printed on stderr." },
	  BIP_KNOB_CHOICE, 0, 0, log_choices, U(log) },
	{ { "BIP_IDLE", "block|yield|spin", "block",
	    "What a waiting process does once spinning is over: block until "
	    "traffic arrives, yield the core, or keep spinning." },
	  BIP_KNOB_CHOICE, 0, 0, idle_choices, U(idle) },
	{ { "BIP_SPIN_US", "microseconds|auto", "auto",
	    "How long a waiting process spins before yielding. auto: 50, or "
	    "0 (yield at once) when the host has more nodes than this "
	    "process may use cores." },
	  BIP_KNOB_COUNT_AUTO, 0, 10000000, NULL, U(spin_us) },
	{ { "BIP_YIELD_US", "microseconds|auto", "auto",
	    "With BIP_IDLE=block: how long it yields before blocking. auto: "
	    "1000, or 20000 when the host has more nodes than this process "
	    "may use cores (then 100 for a wait on a watched word after a "
	    "long one, see bip_mem_watch)." },
	  BIP_KNOB_COUNT_AUTO, 0, 10000000, NULL, U(yield_us) },
	{ { "BIP_SLICE_US", "microseconds|auto", "auto",
	    "The time slice the process asks of the scheduler (Linux 6.6 "
	    "and later; the kernel takes 100 to 100000). auto: 100 when "
	    "the host has more nodes than this process may use cores, "
	    "else the system's. 0: the system's." },
	  BIP_KNOB_COUNT_AUTO, 0, 100000, NULL, U(slice_us) },
	{ { "BIP_SPREAD", "auto|off", "auto",
	    "auto: a process that yields while another process of its job "
	    "runs on its CPU, though the host has a core for each, moves "
	    "itself to a CPU none of them waits on (its CPU affinity mask "
	    "is kept). off: the scheduler alone places processes." },
	  BIP_KNOB_CHOICE, 0, 0, spread_choices, U(spread) },
	{ { "BIP_CLOSE_TIMEOUT_MS", "milliseconds", "10000",
	    "How long bip_close waits for unacknowledged sends." },
	  BIP_KNOB_COUNT, 0, 3600000, NULL, U(close_timeout_ms) },
	{ { "BIP_STREAM_RING_MAX", "size", "4k",
	    "Largest message of a stream (messages sent back to back to one "
	    "process of the host) that is better carried by the rings, both "
	    "processes copying, than read by its receiver in one copy "
	    "(bip_stream_read_min; MPI's eager protocol against its "
	    "three-way). Which is faster depends on the machine: bipmpi-tune "
	    "measures it into the machine profile." },
	  BIP_KNOB_SIZE, 0, 1 << 30, NULL, Z(stream_ring_max) },
	{ { "BIP_MEM_READ_MIN", "size|never", "8k",
	    "Smallest data that processes of the host had better read in "
	    "one copy where it lies in another's memory (bip_read) than pass "
	    "through memory they share (bip_mem_alloc: copied in by its "
	    "writer, out by its readers): MPI's collectives within a host "
	    "read a bcast's buffer between two ranks and an alltoall's "
	    "blocks in place from this size (32k at least where ranks share "
	    "cores; bip_mem_read_min). Which is faster depends on the "
	    "machine: bipmpi-tune measures it into the machine profile." },
	  BIP_KNOB_SIZE, 0, SIZE_MAX, NULL, Z(mem_read_min) },
	{ { "BIP_PROFILE", "file|auto|none", "auto",
	    "The machine profile: a file of knob defaults measured on this "
	    "machine (bipmpi-tune writes it), used where the environment "
	    "does not set a knob. auto: the installed one, if any "
	    "(PREFIX/etc/bip/profile). none: no profile." },
	  BIP_KNOB_TEXT, 0, 256, NULL, T(profile) },
};

static const struct bip_knob_table own = BIP_KNOB_TABLE(own_knobs);

/* Every table: libbip's own and the NIC program's are loaded into struct
 * bip_knobs; the others (BIP_WIRE, then each wire class's) are read by
 * their owners when they open, and only checked here. */
#define NOT_LOADED SIZE_MAX

static const struct bip_knob_table *table_at(unsigned t, size_t *off)
{
	static const struct {
		const struct bip_knob_table *t;
		size_t off;
	} loaded[] = {
		{ &own, 0 },
		{ &bipfw_knobs, offsetof(struct bip_knobs, fw) },
		{ &bipfw_port_knobs, NOT_LOADED },
	};
	const unsigned nloaded = sizeof(loaded) / sizeof(loaded[0]);

	if (t < nloaded) {
		*off = loaded[t].off;
		return loaded[t].t;
	}
	*off = NOT_LOADED;
	for (unsigned i = 0; bipfw_wire_classes[i]; i++)
		if (bipfw_wire_classes[i]->knobs && t-- == nloaded)
			return bipfw_wire_classes[i]->knobs;
	return NULL;
}

static const struct bip_knob_def *knob_at(unsigned i)
{
	const struct bip_knob_table *t;
	size_t off;

	for (unsigned n = 0; (t = table_at(n, &off)); i -= t->n, n++)
		if (i < t->n)
			return &t->defs[i];
	return NULL;
}

const struct bip_knob_desc *bip_knob(unsigned i)
{
	const struct bip_knob_def *k = knob_at(i);

	return k ? &k->d : NULL;
}

int bip_knob_check(unsigned i, char *why, size_t len)
{
	const struct bip_knob_def *k = knob_at(i);
	char buf[256];

	if (!k)
		return -BIP_EINVAL;
	return bip_knob_def_check(k, why ? why : buf, why ? len : sizeof(buf));
}

const char *bip_knob_profile(unsigned i)
{
	const struct bip_knob_def *k = knob_at(i);

	return k ? bip_knob_def_profile(k) : NULL;
}

int bip_profile(char *why, size_t len)
{
	const struct bip_profile *p;
	int rc = bip_profile_load(&p, why, len);

	return rc ? rc : p != NULL;
}

int bip_knobs_load(struct bip_knobs *k)
{
	const struct bip_knob_table *t;
	char why[512];
	size_t off;

	memset(k, 0, sizeof(*k));
	for (unsigned n = 0; (t = table_at(n, &off)); n++) {
		int rc = bip_knob_table_load(
			t, off == NOT_LOADED ? NULL : (uint8_t *)k + off);

		if (rc)
			return rc;
	}
	bip_log_threshold = (int)k->log;
	(void)bip_profile(why, sizeof(why));
	bip_info("machine profile (BIP_PROFILE=%s): %s", k->profile, why);
	return 0;
}
