#!/usr/bin/env bash
# Installs Debian packages the tests run (e.g. redis-server) when their
# command is missing. As root it installs them; otherwise it says what to run.
set -euo pipefail
missing=()
for pkg in "$@"; do
	command -v "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
	echo "missing: ${missing[*]}; install with: sudo apt-get install ${missing[*]}" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null 2>&1 ||
	{ apt-get update -qq && apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; }
