#!/usr/bin/env bash
# Installs the agent clients whose own checks test `baton setup` (tests/it/clients.rs) and
# that prove, woken by baton against a scripted model, that each works through baton
# (tests/it/clients_woken.rs): pinned versions from npm, into a cache directory outside the
# repository.
#
#   bash tests/clients/install.sh [CACHE_DIR]
#
# CACHE_DIR defaults to $BATON_CLIENTS_CACHE, else ~/.cache/baton-clients. On success the
# last line on stdout is the directory of the clients' programs (for BATON_TEST_CLIENTS).
# When npm cannot reach its registry at all, it says so loudly on stderr, leaves
# CACHE_DIR/SKIPPED, prints nothing on stdout and exits 0: the caller skips the checks.
# Any other failure (npm missing, a package that will not install, a wrong version) exits 1.
set -euo pipefail

packages=(
  "@anthropic-ai/claude-code@2.1.332"
  "@openai/codex@0.171.0"
  "@google/gemini-cli@0.61.0"
  "opencode-ai@1.18.33"
)
# program and the version its `--version` must show, in the order of $packages
programs=(claude codex gemini opencode)
versions=(2.1.332 0.171.0 0.61.0 1.18.33)

cache="${1:-${BATON_CLIENTS_CACHE:-${HOME}/.cache/baton-clients}}"
bin="$cache/node_modules/.bin"
stamp="$cache/installed"

fail() { echo "error: $*" >&2; exit 1; }

command -v npm >/dev/null 2>&1 || fail "npm is not installed; the client checks need Node.js and npm"
mkdir -p "$cache"
rm -f "$cache/SKIPPED"

check_versions() {
  local i shown
  for i in "${!programs[@]}"; do
    [ -x "$bin/${programs[$i]}" ] || return 1
    shown="$("$bin/${programs[$i]}" --version 2>/dev/null </dev/null || true)"
    case "$shown" in
      *"${versions[$i]}"*) ;;
      *) echo "${programs[$i]} shows version '${shown}', expected ${versions[$i]}" >&2; return 1 ;;
    esac
  done
}

if [ "$(cat "$stamp" 2>/dev/null || true)" = "${packages[*]}" ] && check_versions; then
  echo "==> agent clients already installed in $cache" >&2
  echo "$bin"
  exit 0
fi

# Tell "the registry cannot be reached at all" (no network: skip) from every other failure.
if ! ping_output="$(npm ping 2>&1)"; then
  if grep -qiE 'ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENETUNREACH|EHOSTUNREACH|socket hang up|network' <<<"$ping_output"; then
    {
      echo
      echo "##############################################################################"
      echo "## SKIPPED: the agent client checks (claude, codex, gemini, opencode)       ##"
      echo "## npm cannot reach its registry, so the pinned clients cannot be installed. ##"
      echo "##############################################################################"
      echo "$ping_output" | tail -n 5
      echo
    } >&2
    grep -m 1 -iE 'ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENETUNREACH|EHOSTUNREACH|socket hang up|network' \
      <<<"$ping_output" >"$cache/SKIPPED"
    exit 0
  fi
  fail "npm ping failed: $ping_output"
fi

echo "==> installing ${packages[*]} into $cache" >&2
npm install --prefix "$cache" --no-audit --no-fund --loglevel=error "${packages[@]}" >&2 \
  || fail "npm install of the pinned clients failed"
check_versions || fail "the installed clients are not the pinned versions"
echo "${packages[*]}" >"$stamp"
echo "$bin"
