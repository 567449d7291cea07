#!/bin/bash
# slurm-local-test.sh: an opt-in end-to-end test of `gfn bench ... --slurm`
# against a real single-node Slurm on this machine.
#
# It starts its own munged, slurmctld and slurmd (Debian's munge and
# slurm-wlm, in the foreground in the background, with their state, spool,
# sockets and logs under a temporary directory and the Slurm ports 16817 and
# 16818), then
#
#   1. writes the quick grid table (tb and teacher on d2 H128, 1 seed) as an
#      array job with gfn bench grid --slurm, submits it with sbatch --wait,
#      checks that every task completed and every run has a summary.json,
#      submits it again (every task finds its run done), aggregates with
#      --collect-only, and times the same table run by gfn bench grid
#      --jobs 2 for comparison;
#   2. (unless --no-resume) writes bench biochem on tfbind8 (tb and
#      teacher-per, 1 seed, the full 2,000 rounds, a checkpoint every 100)
#      as an array job, cancels it with scancel once every run has a
#      checkpoint, submits it again and checks that the interrupted runs
#      were resumed and finished;
#
# and stops the daemons. It installs nothing unless given --install
# (apt-get install -y slurm-wlm munge). It must run as root (slurmd starts
# the jobs) from anywhere inside the repository; Go builds the gfn binary.
#
# Usage: scripts/slurm-local-test.sh [--install] [--keep] [--no-resume] [--methods=LIST]
#   --install         apt-get install -y slurm-wlm munge first
#   --keep            keep the temporary directory (runs, logs, slurm.conf)
#   --no-resume       skip the cancel-and-resubmit test (about two minutes)
#   --methods=LIST    the grid table's methods (default tb,teacher; the
#                     table's six: tb,eps,gafn,prt,per,teacher)
set -euo pipefail

install=0 keep=0 resume=1 methods=tb,teacher
for a in "$@"; do
	case $a in
	--install) install=1 ;;
	--methods=*) methods=${a#--methods=} ;;
	--keep) keep=1 ;;
	--no-resume) resume=0 ;;
	-h | --help)
		sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
		exit 0
		;;
	*)
		echo "slurm-local-test: unknown argument $a (see --help)" >&2
		exit 2
		;;
	esac
done

die() {
	echo "slurm-local-test: $*" >&2
	exit 1
}
say() { echo "== $*"; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

[ "$(id -u)" = 0 ] || die "run as root: slurmd must start the jobs"
if ((install)); then
	apt-get update
	DEBIAN_FRONTEND=noninteractive apt-get install -y slurm-wlm munge
fi
for c in munged mungekey slurmctld slurmd sbatch squeue scancel scontrol sinfo go; do
	command -v "$c" >/dev/null || die "$c not found (apt-get install -y slurm-wlm munge, or run with --install)"
done

repo=$(cd "$(dirname "$0")/.." && pwd)
W=$(mktemp -d /tmp/gfn-slurm.XXXXXX)
chmod 755 "$W" # munged wants its socket's directories searchable by all
export SLURM_CONF=$W/etc/slurm.conf
pids=()

cleanup() {
	set +e
	if [ -f "$SLURM_CONF" ] && scontrol ping >/dev/null 2>&1; then
		squeue -h -o %A | sort -u | xargs -r scancel
	fi
	# Stop what this script started, newest first, by process id.
	for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
		kill "${pids[i]}" 2>/dev/null && wait "${pids[i]}" 2>/dev/null
	done
	if ((keep)); then
		echo "kept $W"
	else
		rm -rf "$W"
	fi
}
trap cleanup EXIT

# waitfor SECONDS DESCRIPTION COMMAND...: poll COMMAND every half second.
waitfor() {
	local limit=$1 what=$2
	shift 2
	local t0
	t0=$(now)
	until "$@" >/dev/null 2>&1; do
		awk -v a="$t0" -v b="$(now)" -v l="$limit" 'BEGIN { exit !(b - a > l) }' && die "no $what after ${limit}s (logs in $W/log; run with --keep)"
		sleep 0.5
	done
}

say "building gfn"
(cd "$repo" && go build -o "$W/gfn" ./cmd/gfn)
gfn=$W/gfn

say "starting munged"
mkdir -p "$W/munge/key" "$W/etc" "$W/state" "$W/spool" "$W/log" "$W/out"
chmod 700 "$W/munge/key"
mungekey --create --keyfile="$W/munge/key/munge.key"
munged -F --socket="$W/munge/munge.socket" --key-file="$W/munge/key/munge.key" \
	--pid-file="$W/munge/munged.pid" --seed-file="$W/munge/key/munged.seed" \
	--log-file="$W/log/munged.log" >"$W/log/munged.out" 2>&1 &
pids+=($!)
waitfor 10 "munge socket" test -S "$W/munge/munge.socket"

say "starting slurmctld and slurmd"
host=$(hostname -s)
# slurmd -C prints this machine's node line (CPUs, sockets, cores, memory).
node=$(slurmd -C | head -n 1)
cat >"$SLURM_CONF" <<EOF
ClusterName=gfntest
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
SlurmctldPort=16817
SlurmdPort=16818
AuthType=auth/munge
AuthInfo=socket=$W/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$W/state
SlurmdSpoolDir=$W/spool
SlurmctldPidFile=$W/slurmctld.pid
SlurmdPidFile=$W/slurmd.pid
SlurmctldLogFile=$W/log/slurmctld.log
SlurmdLogFile=$W/log/slurmd.log
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
ReturnToService=2
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
$node State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
slurmctld -D -c >"$W/log/slurmctld.out" 2>&1 &
pids+=($!)
waitfor 30 "slurmctld answering" scontrol ping
slurmd -D >"$W/log/slurmd.out" 2>&1 &
pids+=($!)
idle() { grep -qx idle <<<"$(sinfo -h -o %T)"; }
waitfor 60 "idle node" idle
sinfo

# submit SCRIPT: sbatch --wait SCRIPT, timing both how long sbatch --wait
# takes to return (it polls with growing intervals) and how long the job
# stays in the queue (squeue every half second). Sets job, rc, queued, waited.
submit() {
	local t0 out
	t0=$(now)
	out=$W/sbatch.$RANDOM
	sbatch --parsable --wait "$1" >"$out" &
	local sb=$!
	waitfor 10 "job id" test -s "$out"
	job=$(cut -d';' -f1 "$out")
	inqueue() { [ -n "$(squeue -h -j "$job" -o %i 2>/dev/null)" ]; }
	while inqueue; do sleep 0.5; done
	queued=$(since "$t0")
	rc=0
	wait "$sb" || rc=$?
	waited=$(since "$t0")
}

# states JOB: each array task's final state, counted.
states() { scontrol -o show job "$1" | grep -o 'JobState=[A-Z_]*' | sort | uniq -c | xargs; }

# checkruns DIR: every run of DIR/slurm/tasks.tsv has a summary.json.
checkruns() {
	local n=0 missing=0 i name run cmd
	while IFS=$'\t' read -r i name run cmd; do
		[ "$i" = task ] && continue
		n=$((n + 1))
		[ -f "$run/summary.json" ] || {
			echo "missing $run/summary.json" >&2
			missing=$((missing + 1))
		}
	done <"$1/slurm/tasks.tsv"
	((missing == 0)) || die "$missing of $n runs of $1 did not finish"
	echo "$n runs, all with summary.json"
}

say "1. the quick grid table as an array job"
table=(bench grid --table tb --quick --methods "$methods" --grids d2H128)
grid=$W/out/grid
"$gfn" "${table[@]}" --out "$grid" --slurm
ntasks=$(($(wc -l <"$grid/slurm/tasks.tsv") - 1))
submit "$grid/slurm/gfn-bench.sbatch"
((rc == 0)) || die "sbatch --wait exited with $rc (task logs in $grid/slurm/logs)"
echo "job $job: $(states "$job"); in the queue ${queued}s, sbatch --wait returned after ${waited}s"
checkruns "$grid"
array_queued=$queued array_waited=$waited
runwalls=$(cat "$grid"/*/summary.json | grep -o '"wall_seconds": *[0-9.]*' | awk '{ s = s $2 "s " } END { print s }')

say "1b. submitted again: every task finds its run done"
submit "$grid/slurm/gfn-bench.sbatch"
((rc == 0)) || die "second submission: sbatch --wait exited with $rc"
grep -q "already done" "$grid/slurm/logs/${job}_0.out" || die "second submission trained again: $(cat "$grid/slurm/logs/${job}_0.out")"
again_queued=$queued
echo "job $job: $(states "$job"); in the queue ${queued}s"

say "1c. --collect-only"
"$gfn" "${table[@]}" --out "$grid" --collect-only >/dev/null
rows=$(($(wc -l <"$grid/results.csv") - 1))
((rows == ntasks)) || die "results.csv has $rows rows, want $ntasks"
echo "results.csv: $rows rows"

say "1d. the same table with --jobs 2, no Slurm"
t0=$(now)
"$gfn" "${table[@]}" --out "$W/out/jobs2" --jobs 2 >/dev/null
jobs2=$(since "$t0")
jobs2walls=$(cat "$W"/out/jobs2/*/summary.json | grep -o '"wall_seconds": *[0-9.]*' | awk '{ s = s $2 "s " } END { print s }')

if ((resume)); then
	say "2. cancel and resubmit: bench biochem tfbind8, tb and teacher-per, 2,000 rounds"
	bio=(bench biochem --task tfbind8 --methods tb,teacher-per --seeds 1 --checkpoint-every 100)
	"$gfn" "${bio[@]}" --out "$W/out" --slurm >/dev/null
	dir=$W/out/biochem
	job=$(sbatch --parsable "$dir/slurm/gfn-bench.sbatch" | cut -d';' -f1)
	checkpointed() { [ -f "$dir/tfbind8-tb-seed0/checkpoint.safetensors" ] && [ -f "$dir/tfbind8-teacher-per-seed0/checkpoint.safetensors" ]; }
	t0=$(now)
	waitfor 600 "checkpoints of both runs" checkpointed
	scancel "$job"
	gone() { [ -z "$(squeue -h -j "$job" -o %i 2>/dev/null)" ]; }
	waitfor 120 "end of the cancelled job" gone
	echo "job $job cancelled after $(since "$t0")s: $(states "$job")"
	interrupted=0
	for r in "$dir"/tfbind8-*-seed0; do
		[ -f "$r/summary.json" ] || interrupted=$((interrupted + 1))
	done
	((interrupted > 0)) || die "both runs finished before the cancellation"
	echo "$interrupted run(s) interrupted"
	submit "$dir/slurm/gfn-bench.sbatch"
	((rc == 0)) || die "resubmission: sbatch --wait exited with $rc"
	echo "job $job: $(states "$job"); in the queue ${queued}s"
	resumed=$(cat "$dir/slurm/logs/${job}"_*.out | grep -c "(resumed): done" || true)
	((resumed == interrupted)) || die "$resumed run(s) resumed, want $interrupted: $(cat "$dir/slurm/logs/${job}"_*.out)"
	checkruns "$dir"
	"$gfn" "${bio[@]}" --out "$W/out" --collect-only >/dev/null
	echo "$resumed run(s) resumed from their checkpoints and finished; --collect-only wrote $dir/results.md"
fi

say "summary"
cat <<EOF
Slurm $(sinfo -V | awk '{ print $2 }'), node: $node
quick grid table, $ntasks runs (${table[*]}):
  array job: ${array_queued}s in the queue (submission to the last task's end), sbatch --wait returned after ${array_waited}s; run wall times $runwalls
  resubmitted, all done: ${again_queued}s in the queue
  --jobs 2 without Slurm: ${jobs2}s; run wall times $jobs2walls
EOF
echo "PASS"
