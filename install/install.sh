#!/usr/bin/env bash
# Builds baton in release mode, installs it, and shows it working.
#
#   ./install/install.sh                 install into ~/.local/bin
#   ./install/install.sh --prefix DIR    install into DIR/bin
#
set -euo pipefail

prefix="${HOME}/.local"
while [ $# -gt 0 ]; do
  case "$1" in
    --prefix)
      [ $# -ge 2 ] || { echo "error: --prefix needs a directory" >&2; exit 1; }
      prefix="$2"; shift 2 ;;
    --prefix=*) prefix="${1#--prefix=}"; shift ;;
    -h|--help)
      sed -n '2,6p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "error: unknown option $1 (try --help)" >&2; exit 1 ;;
  esac
done

here="$(cd "$(dirname "$0")/.." && pwd)"
if ! command -v cargo >/dev/null 2>&1; then
  echo "error: cargo is not installed; get Rust from https://rustup.rs and run this again" >&2
  exit 1
fi

echo "==> building baton (release; the first build takes a few minutes)"
cargo build --release --locked --manifest-path "$here/Cargo.toml"

bindir="${prefix}/bin"
mkdir -p "$bindir"
install -m 0755 "$here/target/release/baton" "$bindir/baton"
echo "==> installed $bindir/baton ($("$bindir/baton" --version))"

case ":${PATH}:" in
  *":${bindir}:"*) ;;
  *)
    echo
    echo "note: $bindir is not on your PATH. Add it, e.g. in ~/.bashrc or ~/.zshrc:"
    echo "  export PATH=\"$bindir:\$PATH\""
    ;;
esac

echo
echo "==> baton demo"
"$bindir/baton" demo
