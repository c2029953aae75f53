#!/bin/sh
# Another user on the host can list /dev/shm. Such a user must not be able to
# break a job (or slip into it) by creating its segment names before it does:
# the names must not be predictable from what the listing shows. A squatter
# watches for the first segment of the job user's and creates every name it
# can derive from it; the job must run regardless. Run as an unprivileged
# job user: root could simply unlink a squatter's file and hide the bug.
. "$top_srcdir/test/bip/lib.sh"
[ "$(id -u)" = 0 ] || {
	echo "SKIP: needs root to create the job user and the squatter (CI runs as root)"
	exit 77
}
for c in useradd runuser; do
	command -v $c >/dev/null ||
		{ echo "SKIP: $c not found (needed to run as other users)"; exit 77; }
done
for u in bipjob bipsquat; do
	id -u $u >/dev/null 2>&1 || useradd --system --no-create-home \
		--shell /usr/sbin/nologin $u ||
		{ echo "FAILED: cannot create user $u"; exit 1; }
done
job=$(id -u bipjob)
squat=$(id -u bipsquat)
# The job user must reach the build tree: read and search only.
d=$top_builddir
while [ "$d" != / ]; do
	runuser -u bipjob -- test -x "$d" ||
		{ echo "SKIP: bipjob cannot enter $d"; exit 77; }
	d=$(dirname "$d")
done

cleanup() {
	[ -n "${watcher:-}" ] && kill "$watcher" 2>/dev/null
	find /dev/shm -maxdepth 1 -user bipsquat -name 'bip-*' -delete 2>/dev/null
	find /dev/shm -maxdepth 1 -user bipjob -name 'bip-*' -delete 2>/dev/null
}
trap cleanup EXIT

# The squatter: for each name of the job user it sees, create the names of
# nodes 0..7 that the same pattern would give (the last field replaced).
runuser -u bipsquat -- sh -c '
	end=$(($(date +%s) + 30))
	while [ "$(date +%s)" -lt "$end" ]; do
		for f in /dev/shm/bip-'"$job"'-*; do
			[ -e "$f" ] || continue
			base=${f%-*}
			for n in 0 1 2 3 4 5 6 7; do
				[ -e "$base-$n" ] || : >"$base-$n"
			done 2>/dev/null
		done
		sleep 0.01
	done' &
watcher=$!
sleep 0.2
# Node 0's name is listed for a second before node 1 opens.
out=$(timeout 60 runuser -u bipjob -- "$T/test_hostile" late-open 2>&1)
status=$?
echo "$out"
taken=$(find /dev/shm -maxdepth 1 -user bipsquat -name "bip-$job-*" | wc -l)
echo "the squatter created $taken name(s)"
[ "$taken" -gt 0 ] || { echo "FAILED: the squatter saw no name"; exit 1; }
[ $status -eq 0 ] || { echo "FAILED: a squatter broke the job"; exit 1; }
echo "the job ran despite the squatter"

# A squatter who learnt a name anyway (here: from the secret, as only the
# job could): the node whose name it took stops with who holds it, and no
# node attaches the squatter's file.
secret=$(od -An -N8 -tx8 /dev/urandom | tr -d ' ')
name=$(runuser -u bipjob -- "$T/test_hostile" name "$secret")
run runuser -u bipsquat -- sh -c \
	"head -c 8192 /dev/zero >/dev/shm/$name && chmod 666 /dev/shm/$name"
out=$(runuser -u bipjob -- "$T/test_hostile" squatted "$secret" 2>&1)
status=$?
echo "$out"
[ $status -eq 0 ] || { echo "FAILED: a squatted name was used"; exit 1; }
echo "$out" | grep -q "held by uid $squat" ||
	{ echo "FAILED: no message naming the squatter's uid"; exit 1; }
echo "$out" | grep -q "belongs to uid $squat" ||
	{ echo "FAILED: no message naming the squatter's file owner"; exit 1; }
