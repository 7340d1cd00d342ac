#!/usr/bin/env bash
# Makes sure the programs the test suite spawns are on PATH, so `npm test` is the whole set-up on
# a fresh machine: redis-server and redis-cli (integration tests start their own servers on free
# loopback ports), tmux (the TUI is driven in a real terminal), bash, zsh and fish (each completion
# script is loaded in its own shell), script from util-linux (a real pseudo-terminal), setpriv (a root test run drops to another user
# where file modes must bind) and openssl
# (a self-signed certificate for the SQS client's TLS test).
# Installs what is missing with apt-get when run as root; otherwise says what to install.
set -euo pipefail
declare -A pkg=([redis-server]=redis-server [redis-cli]=redis-tools [tmux]=tmux [zsh]=zsh [fish]=fish [script]=bsdutils [setpriv]=util-linux [openssl]=openssl)
missing=()
for cmd in "${!pkg[@]}"; do
  command -v "$cmd" >/dev/null 2>&1 || missing+=("${pkg[$cmd]}")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "test tools: installing ${missing[*]}" >&2
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
else
  echo "the tests need these packages: ${missing[*]} (e.g. sudo apt-get install -y ${missing[*]})" >&2
  exit 1
fi
