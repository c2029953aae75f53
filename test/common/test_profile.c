/*
 * test_profile.c - the machine profile (profile.h): its parser takes the
 * documented form (comments, blanks, CRLF, spaces around '=') and refuses
 * each malformed line with its number; a knob takes its variable's value
 * over the profile's and the profile's over its default, and a bad value
 * from the profile is refused saying where it came from; a profile of
 * another machine is not used, a malformed one fails the knobs, a missing
 * file named by BIP_PROFILE is an error and BIP_PROFILE=none reads none;
 * the machine's name tells processors a virtual machine names alike apart.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bip_errno.h"
#include "knob.h"
#include "log.h"
#include "profile.h"
#include "unit.h"

static void test_parse(void)
{
	static const char text[] =
		"# a comment\n"
		"\n"
		"machine = Some CPU  @ 2.0GHz \r\n"
		"  BIP_A=8k\n"
		"BIP_B =  12\t\n"
		"\t# another\n"
		"BIP_C=x"; /* no final newline */
	struct bip_profile p;
	char why[160] = "";

	CHECK(bip_profile_parse(text, strlen(text), &p, why, sizeof(why)) == 0,
	      "%s", why);
	CHECK(strcmp(p.machine, "Some CPU  @ 2.0GHz") == 0, "machine '%s'",
	      p.machine);
	CHECK(p.n == 3, "%u knobs", p.n);
	CHECK(bip_profile_get(&p, "BIP_A") &&
		      strcmp(bip_profile_get(&p, "BIP_A"), "8k") == 0,
	      "BIP_A");
	CHECK(bip_profile_get(&p, "BIP_B") &&
		      strcmp(bip_profile_get(&p, "BIP_B"), "12") == 0,
	      "BIP_B");
	CHECK(bip_profile_get(&p, "BIP_C") &&
		      strcmp(bip_profile_get(&p, "BIP_C"), "x") == 0,
	      "BIP_C");
	CHECK(!bip_profile_get(&p, "BIP_D") && !bip_profile_get(&p, "BIP_"),
	      "a knob not in it");
}

static void test_malformed(void)
{
	static const struct {
		const char *text;
		const char *why;
	} bad[] = {
		{ "machine=x\nBIP_A\n", "line 2: expected NAME=VALUE" },
		{ "machine=x\nBIP-A=1\n", "line 2: the name" },
		{ "machine=x\n=1\n", "line 2: the name" },
		{ "machine=x\nBIP_A=\n", "line 2: an empty value" },
		{ "machine=x\nBIP_A=1 2\n", "line 2: a knob's value" },
		{ "machine=x\nBIP_A=1\nBIP_A=2\n", "line 3: a knob set twice" },
		{ "machine=x\nmachine=x\n", "line 2: a second machine" },
		{ "machine=x\nBIP_A=\001\n", "line 2: a control character" },
		{ "machine=x\nBIP_A=1\0\n", "line 2: a control character" },
		{ "BIP_A=1\n", "no machine= line" },
		{ "# only a comment\n", "no machine= line" },
		{ "", "no machine= line" },
	};
	struct bip_profile p;
	char text[4096], why[160];
	size_t n;

	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		/* The NUL case counts its byte: one past strlen. */
		n = strlen(bad[i].text) +
		    (strstr(bad[i].why, "control") && !strchr(bad[i].text, 1)
			     ? 2
			     : 0);
		why[0] = '\0';
		CHECK(bip_profile_parse(bad[i].text, n, &p, why, sizeof(why)) ==
				      -BIP_EINVAL &&
			      strstr(why, bad[i].why),
		      "case %u: '%s', expected '%s'", i, why, bad[i].why);
	}
	/* Lengths: a value of 63 characters fits, 64 do not; 32 knobs
	 * fit, 33 do not; a machine of 127 characters fits, 128 do not. */
	n = (size_t)snprintf(text, sizeof(text), "machine=x\nBIP_A=%063d\n", 0);
	CHECK(bip_profile_parse(text, n, &p, why, sizeof(why)) == 0, "%s", why);
	n = (size_t)snprintf(text, sizeof(text), "machine=x\nBIP_A=%064d\n", 0);
	CHECK(bip_profile_parse(text, n, &p, why, sizeof(why)) == -BIP_EINVAL,
	      "a value of 64");
	n = (size_t)snprintf(text, sizeof(text), "machine=%0127d\n", 0);
	CHECK(bip_profile_parse(text, n, &p, why, sizeof(why)) == 0, "%s", why);
	n = (size_t)snprintf(text, sizeof(text), "machine=%0128d\n", 0);
	CHECK(bip_profile_parse(text, n, &p, why, sizeof(why)) == -BIP_EINVAL,
	      "a machine of 128");
	for (unsigned k = 33; k >= 32; k--) {
		n = (size_t)snprintf(text, sizeof(text), "machine=x\n");
		for (unsigned i = 0; i < k; i++)
			n += (size_t)snprintf(text + n, sizeof(text) - n,
					      "BIP_%u=1\n", i);
		CHECK(bip_profile_parse(text, n, &p, why, sizeof(why)) ==
			      (k == 32 ? 0 : -BIP_EINVAL),
		      "%u knobs: %s", k, why);
	}
}

/* The machine's name: model name, family and model, whichever order the
 * lines come in; a Zen 4 and a Zen 5 that a virtual machine names alike
 * differ. */
static void test_machine(void)
{
	static const struct {
		const char *cpuinfo, *name;
	} cases[] = {
		{ "processor\t: 0\ncpu family\t: 26\nmodel\t\t: 2\n"
		  "model name\t: AMD EPYC  \nstepping\t: 0\n",
		  "AMD EPYC (family 26, model 2)" },
		{ "model name : AMD EPYC\nmodel : 17\ncpu family : 25\n",
		  "AMD EPYC (family 25, model 17)" },
		{ "model name\t: Some CPU\n", "Some CPU" },
		{ "model name\t: Some CPU\nmodel\t:\ncpu family\t: 6\n",
		  "Some CPU" },
		{ "model name\t:  \nmodel\t: 1\n", "unknown" },
		{ "cpu family\t: 6\nmodel\t: 1\n", "unknown" },
		{ "model name\t: cut off", "unknown" },
		{ "", "unknown" },
	};
	char name[BIP_PROFILE_MACHINE_MAX], big[300];

	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		bip_profile_machine_of(cases[i].cpuinfo, name, sizeof(name));
		CHECK(strcmp(name, cases[i].name) == 0, "case %u: '%s', not '%s'",
		      i, name, cases[i].name);
	}
	/* A name that fills the line: cut to what a profile holds. */
	snprintf(big, sizeof(big), "model name : %0200d\ncpu family : 1\n"
				   "model : 2\n", 0);
	bip_profile_machine_of(big, name, sizeof(name));
	CHECK(strlen(name) == BIP_PROFILE_MACHINE_MAX - 1, "long: %zu",
	      strlen(name));
}

struct vals {
	unsigned a, b, c;
};

static const struct bip_knob_def defs[] = {
	{ { "TEST_PROFILE_A", "count", "1", "from the profile" },
	  BIP_KNOB_COUNT, 0, 100, NULL, BIP_KNOB_UINT(struct vals, a) },
	{ { "TEST_PROFILE_B", "count", "2", "the variable wins" },
	  BIP_KNOB_COUNT, 0, 100, NULL, BIP_KNOB_UINT(struct vals, b) },
	{ { "TEST_PROFILE_C", "count", "3", "its default" },
	  BIP_KNOB_COUNT, 0, 100, NULL, BIP_KNOB_UINT(struct vals, c) },
};

static const struct bip_knob_def bad_def = {
	{ "TEST_PROFILE_BAD", "count", "4", "out of range in the profile" },
	BIP_KNOB_COUNT, 0, 100, NULL, 0
};

/* Write a profile for this machine (or another) with extra lines. */
static void write_profile(const char *path, int here, const char *extra)
{
	char machine[BIP_PROFILE_MACHINE_MAX];
	FILE *f = fopen(path, "w");

	bip_profile_machine(machine, sizeof(machine));
	CHECK(f != NULL, "cannot write %s", path);
	if (!f)
		exit(1);
	fprintf(f, "machine=%s%s\n%s", machine, here ? "" : " (another)",
		extra);
	fclose(f);
}

/* In a child (the profile is read once a process): what loading it with
 * BIP_PROFILE=value gives: 0 none, 1 one, 2 an error with why containing
 * expect. */
static int load_in_child(const char *value, const char *expect)
{
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		const struct bip_profile *p;
		char why[512];
		int rc;

		setenv("BIP_PROFILE", value, 1);
		rc = bip_profile_load(&p, why, sizeof(why));
		if (!strstr(why, expect)) {
			fprintf(stderr, "BIP_PROFILE=%s: '%s', expected '%s'\n",
				value, why, expect);
			_exit(3);
		}
		_exit(rc ? 2 : p != NULL);
	}
	return pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status)
		       ? WEXITSTATUS(status)
		       : -1;
}

static void test_load(const char *dir)
{
	char path[256], other[256], broken[256], why[600];
	struct vals v;
	int rc;

	snprintf(path, sizeof(path), "%s/profile", dir);
	snprintf(other, sizeof(other), "%s/other", dir);
	snprintf(broken, sizeof(broken), "%s/broken", dir);
	write_profile(path, 1,
		      "TEST_PROFILE_A=10\nTEST_PROFILE_B=20\n"
		      "TEST_PROFILE_BAD=1000\nTEST_NOT_A_KNOB=1\n");
	write_profile(other, 0, "TEST_PROFILE_A=10\n");
	write_profile(broken, 1, "TEST_PROFILE_A\n");

	rc = load_in_child(path, "(4 knobs)");
	CHECK(rc == 1, "this machine's profile: %d", rc);
	rc = load_in_child(other, "not used: measured on");
	CHECK(rc == 0, "another machine's profile: %d", rc);
	rc = load_in_child(broken, "line 2: expected NAME=VALUE");
	CHECK(rc == 2, "a malformed profile: %d", rc);
	rc = load_in_child("/nonexistent/profile", "no such file");
	CHECK(rc == 2, "a missing profile named by BIP_PROFILE: %d", rc);
	rc = load_in_child("none", "none (BIP_PROFILE=none)");
	CHECK(rc == 0, "BIP_PROFILE=none: %d", rc);

	/* This process: variable over profile over default. */
	setenv("BIP_PROFILE", path, 1);
	setenv("TEST_PROFILE_B", "30", 1);
	unsetenv("TEST_PROFILE_A");
	unsetenv("TEST_PROFILE_C");
	rc = bip_knob_table_load(
		&(const struct bip_knob_table)BIP_KNOB_TABLE(defs), &v);
	CHECK(rc == 0 && v.a == 10 && v.b == 30 && v.c == 3,
	      "rc %d: a %u (10), b %u (30), c %u (3)", rc, v.a, v.b, v.c);
	CHECK(bip_knob_def_profile(&defs[1]) &&
		      strcmp(bip_knob_def_profile(&defs[1]), "20") == 0,
	      "the profile's B");
	why[0] = '\0';
	CHECK(bip_knob_def_check(&bad_def, why, sizeof(why)) == -BIP_EINVAL &&
		      strstr(why, "TEST_PROFILE_BAD=1000: out of range") &&
		      strstr(why, "(from the machine profile)"),
	      "a bad value from the profile: '%s'", why);
	setenv("TEST_PROFILE_BAD", "5", 1);
	CHECK(bip_knob_def_check(&bad_def, why, sizeof(why)) == 0,
	      "the variable set by hand wins over a bad profile value: %s",
	      why);
}

int main(void)
{
	char dir[] = "/tmp/test_profile.XXXXXX";
	char cmd[64];

	bip_log_threshold = -1; /* the errors tested are expected */
	test_parse();
	test_malformed();
	test_machine();
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	test_load(dir);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
	return unit_result("test_profile");
}
