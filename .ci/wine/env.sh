# Sourced by .ci/wine/run and .ci/wine/smoke: the Windows target dir, a Wine prefix inside
# it, its server (stopped when the script ends; a script that sets an EXIT trap of its own
# calls stop_wineserver in it), and the stand-in bcryptprimitives.dll in that prefix. Needs
# Debian's wine64 and gcc-mingw-w64-x86-64 (the linker of x86_64-pc-windows-gnu, and the
# dll's compiler).
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
# .ci/run keeps it outside the clone (BATON_WIN_TARGET_DIR); by hand it is target-win here.
export CARGO_TARGET_DIR="${BATON_WIN_TARGET_DIR:-$PWD/target-win}"
# The cargo profile its builds use: .ci/run's is `ci` (Cargo.toml); by hand it is `dev`.
export BATON_CARGO_PROFILE="${BATON_CARGO_PROFILE:-dev}"
if [ "$BATON_CARGO_PROFILE" = dev ]; then profile_dir=debug; else profile_dir=$BATON_CARGO_PROFILE; fi
export WINEPREFIX="${WINEPREFIX:-$CARGO_TARGET_DIR/wine-prefix}"
export WINEDEBUG=-all
# No offer to install Mono or Gecko while the prefix is made: there is no one to answer.
export WINEDLLOVERRIDES="mscoree,mshtml="
wine=$(command -v wine64 || echo /usr/lib/wine/wine64)
export CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER="$wine"
mkdir -p "$(dirname "$WINEPREFIX")"
"$wine" cmd /c exit 0 >/dev/null 2>&1 || true # makes the prefix
[ -d "$WINEPREFIX/drive_c/windows/system32" ] || {
  echo "error: $wine could not make the Wine prefix $WINEPREFIX" >&2
  exit 1
}
# One Wine server for the whole script, up until it ends: left to itself, the server shuts
# down a few seconds after its last process, and a command starting just then can fail.
wineserver=$(command -v wineserver || echo "${wine%/*}/wineserver")
"$wineserver" -k 2>/dev/null || true
"$wineserver" -p
stop_wineserver() { "$wineserver" -k 2>/dev/null || true; }
trap stop_wineserver EXIT
# Wine 8 has no bcryptprimitives.dll, whose ProcessPrng Rust's std calls: a stand-in.
x86_64-w64-mingw32-gcc -shared -O2 -o "$WINEPREFIX/drive_c/windows/system32/bcryptprimitives.dll" \
  .ci/wine/bcryptprimitives.c .ci/wine/bcryptprimitives.def -ladvapi32
