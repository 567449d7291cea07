#!/bin/bash
# lanes.sh: run a queue of long, resumable commands in lanes, one core each.
#
#   scripts/lanes.sh QUEUE [LANES]
#
# QUEUE is a text file with one shell command per line (blank lines and
# lines starting with # are skipped), typically `gfn bench ... --slurm-task I`
# or `gfn train --resume DIR`. LANES (default 2) commands run at a time, each
# with GOMAXPROCS=1, taking the queue's lines in order. Every command that
# ends is recorded in QUEUE.done as "status seconds line-number command";
# a command recorded with status 0 is skipped, so running the script again
# after a stop (a session's end, a crash) continues the queue: the commands
# themselves continue from their checkpoints. A failed command is run again
# the next time. Each line's output goes to QUEUE.logs/<line-number>.log.
#
# Commands are known by their text, not their line: the queue may be edited
# while it runs (a lane reads it afresh each time it takes a line), lines
# inserted or moved, and a finished command stays finished wherever it
# goes; identical lines count as one. One invocation runs a queue at a
# time: a second is refused while the first, or any command it started,
# still runs (they hold QUEUE.lock), so no two processes resume one run.
set -u

queue=${1:?usage: lanes.sh QUEUE [LANES]}
lanes=${2:-2}
[ -f "$queue" ] || { echo "lanes.sh: no queue file $queue" >&2; exit 2; }
case $lanes in '' | *[!0-9]* | 0) echo "lanes.sh: lanes $lanes must be a positive integer" >&2; exit 2 ;; esac
done_file=$queue.done
claim_file=$queue.claimed
logs=$queue.logs
exec 9>"$queue.lock"
flock -n 9 || { echo "lanes.sh: $queue is being run by another lanes.sh (or commands it started still run)" >&2; exit 2; }
mkdir -p "$logs"
touch "$done_file"
: >"$claim_file" # claims of an earlier invocation died with it

# next prints "N<TAB>command" of the first line whose command is neither
# finished nor claimed, and claims it; nothing when the queue is exhausted.
next() {
	flock "$claim_file.lock" awk -v done="$done_file" -v claimed="$claim_file" '
		BEGIN {
			while ((getline l < done) > 0) {
				split(l, f, " ")
				if (f[1] == 0) { sub(/^[^ ]+ [^ ]+ [^ ]+ /, "", l); skip[l] = 1 }
			}
			while ((getline l < claimed) > 0) skip[l] = 1
		}
		/^[[:space:]]*(#|$)/ { next }
		!($0 in skip) { print NR "\t" $0; print $0 >> claimed; exit }
	' "$queue"
}

lane() {
	local k=$1 item n cmd start status
	while item=$(next) && [ -n "$item" ]; do
		n=${item%%$'\t'*}
		cmd=${item#*$'\t'}
		start=$(date +%s)
		echo "$(date '+%F %T') lane $k: line $n: $cmd"
		GOMAXPROCS=1 bash -c "$cmd" >"$logs/$n.log" 2>&1
		status=$?
		echo "$status $(($(date +%s) - start)) $n $cmd" >>"$done_file"
		echo "$(date '+%F %T') lane $k: line $n ended with status $status after $(($(date +%s) - start)) s"
	done
}

for k in $(seq 1 "$lanes"); do
	lane "$k" &
done
wait
echo "$(date '+%F %T') lanes.sh: $queue exhausted"
