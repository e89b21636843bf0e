#!/usr/bin/env bash
# Builds baton's release binary and prints its path (the build's own output goes to stderr).
#
# On Linux with glibc, the C library is linked in statically when this machine has a static
# one: a binary that needs no dynamic loader starts about half a millisecond sooner, on every
# command and every hook an agent runs (docs/performance.md). The binary is built here,
# against this machine's glibc, which is what glibc asks of static binaries that look up
# users (the home directory, when $HOME is unset). Anywhere else it is an ordinary build.
#
#   bash install/build.sh            build, print the binary's path
#   BATON_STATIC=0 bash install/build.sh   ordinary (dynamically linked) build
#
set -euo pipefail

here="$(cd "$(dirname "$0")/.." && pwd)"
host="$(rustc -vV | sed -n 's/^host: //p')"

# The path cargo reports for the binary, wherever the target directory is configured.
built() {
  sed -n 's/.*"executable":"\([^"]*\/baton\)".*/\1/p' | tail -n 1
}

static_works() {
  local probe
  probe="$(mktemp -d)"
  echo 'fn main() {}' >"$probe/probe.rs"
  local result=1
  if rustc -C target-feature=+crt-static -o "$probe/probe" "$probe/probe.rs" 2>/dev/null &&
    "$probe/probe"; then
    result=0
  fi
  rm -rf "$probe"
  return $result
}

flags=()
if [ "${BATON_STATIC:-1}" != 0 ] && [[ "$host" == *-linux-gnu ]] && static_works; then
  # With an explicit --target, these flags reach baton and its dependencies but not the
  # build scripts and proc-macros, which must stay dynamic.
  export RUSTFLAGS="${RUSTFLAGS:-} -C target-feature=+crt-static"
  flags=(--target "$host")
fi

binary="$(cargo build --release --locked ${flags[@]+"${flags[@]}"} --manifest-path "$here/Cargo.toml" \
  --message-format=json-render-diagnostics | built)"
if [ -z "$binary" ] || [ ! -x "$binary" ]; then
  echo "error: cargo did not report where it built baton" >&2
  exit 1
fi
echo "$binary"
