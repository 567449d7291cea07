#!/bin/sh
# export.sh SRC DEST: copy what `gfn bench grid --out SRC` produced into DEST,
# leaving out checkpoints: results.csv, results.md, figures/, and each run's
# summary.json and metrics.csv under DEST/runs/. To resume or re-aggregate a
# table later, copy DEST/runs/* back into an --out directory: bench grid
# skips runs that have a summary.json.
set -eu
src=$1
dest=$2
mkdir -p "$dest/runs" "$dest/figures"
cp "$src/results.csv" "$src/results.md" "$dest/"
cp "$src"/figures/*.png "$dest/figures/"
for d in "$src"/*/; do
	[ -f "$d/summary.json" ] || continue
	n=$(basename "$d")
	mkdir -p "$dest/runs/$n"
	cp "$d/summary.json" "$d/metrics.csv" "$dest/runs/$n/"
done
