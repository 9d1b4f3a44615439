#!/usr/bin/env bash
# Runs every native Go fuzz target of the module, one after the other, for
# FUZZTIME each (default 1m): `make fuzz`, or `FUZZTIME=1h make fuzz` by
# hand. A target that finds a crasher stops the run; its input is written
# to testdata/fuzz/<Target>/ beside the test, where `go test` replays it
# from then on (commit it with the fix as a regression case).
# FUZZ selects targets by a regular expression on "package/Target".
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime=${FUZZTIME:-1m}
select=${FUZZ:-.}
targets=$(git grep -E '^func Fuzz[A-Za-z0-9_]*\(f \*testing\.F\)' -- '*_test.go' |
	sed -E 's#^(.*)/[^/]*_test\.go:func (Fuzz[A-Za-z0-9_]*)\(.*#\1 \2#' | sort -u)
count=$(wc -l <<<"$targets")
echo "fuzz: $count targets, $fuzztime each"
n=0
while read -r dir target; do
	grep -qE "$select" <<<"$dir/$target" || continue
	n=$((n + 1))
	echo "fuzz: [$n] ./$dir $target"
	go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" "./$dir"
done <<<"$targets"
echo "fuzz: ran $n targets, no crasher"
