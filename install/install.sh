#!/usr/bin/env bash
# Builds baton in release mode, installs it, shows it working, wires the agent clients
# found here (Claude Code, Codex, Gemini CLI, opencode) and checks the result.
#
#   ./install/install.sh                 install into ~/.local/bin
#   ./install/install.sh --prefix DIR    install into DIR/bin
#   ./install/install.sh --no-setup      do not wire the clients (`baton setup --auto`)
#
set -euo pipefail

prefix="${HOME}/.local"
setup=yes
while [ $# -gt 0 ]; do
  case "$1" in
    --prefix)
      [ $# -ge 2 ] || { echo "error: --prefix needs a directory" >&2; exit 1; }
      prefix="$2"; shift 2 ;;
    --prefix=*) prefix="${1#--prefix=}"; shift ;;
    --no-setup) setup=no; shift ;;
    -h|--help)
      sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "error: unknown option $1 (try --help)" >&2; exit 1 ;;
  esac
done

here="$(cd "$(dirname "$0")/.." && pwd)"
if ! command -v cargo >/dev/null 2>&1; then
  echo "error: cargo is not installed; get Rust from https://rustup.rs and run this again" >&2
  exit 1
fi

echo "==> building baton (release; the first build takes a few minutes)"
built="$(bash "$here/install/build.sh")"

bindir="${prefix}/bin"
mkdir -p "$bindir"
install -m 0755 "$built" "$bindir/baton"
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

echo
if [ "$setup" = yes ]; then
  echo "==> baton setup --auto (undo with: baton setup --uninstall)"
  "$bindir/baton" setup --auto
else
  echo "==> skipped wiring the agent clients (--no-setup); later: baton setup --auto"
fi

echo
echo "==> baton doctor"
# Findings are for the user to read; the install itself has succeeded either way.
"$bindir/baton" doctor || echo "note: baton doctor found problems, listed above"
