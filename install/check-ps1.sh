#!/usr/bin/env bash
# Checks install/install.ps1 where no PowerShell can be had: parses it with the
# tree-sitter-powershell grammar (npm) through py-tree-sitter (PyPI), compiled here with cc,
# and fails on a syntax error or on what Windows PowerShell 5.1 lacks (the pipeline chains
# `&&` and `||`, `ForEach-Object -Parallel`; the grammar knows no `?:` or `??`, so those
# are syntax errors here). A grammar is not PowerShell's own parser: passing says the script
# is well formed as far as that grammar goes, not that it runs.
#
#   bash install/check-ps1.sh [FILE.ps1 ...]     default: install/install.ps1
#
set -euo pipefail

here="$(cd "$(dirname "$0")/.." && pwd)"
[ $# -gt 0 ] || set -- "$here/install/install.ps1"
for command in npm python3 cc; do
  command -v "$command" >/dev/null 2>&1 || {
    echo "error: $command is needed to check PowerShell scripts here" >&2
    exit 1
  }
done

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent tree-sitter-powershell@0.26.4 >/dev/null)
tar xzf "$work"/tree-sitter-powershell-0.26.4.tgz -C "$work"
cc -shared -fPIC -O1 -I "$work/package/src" "$work/package/src/parser.c" \
  "$work/package/src/scanner.c" -o "$work/powershell.so"
python3 -m venv "$work/venv"
"$work/venv/bin/pip" install --quiet --disable-pip-version-check tree-sitter==0.26.1

"$work/venv/bin/python" - "$work/powershell.so" "$@" <<'EOF'
import ctypes
import sys
import warnings

from tree_sitter import Language, Parser

library = ctypes.cdll.LoadLibrary(sys.argv[1])
library.tree_sitter_powershell.restype = ctypes.c_void_p
with warnings.catch_warnings():
    # py-tree-sitter takes the language's address as an int, and warns that it may stop.
    warnings.simplefilter("ignore", DeprecationWarning)
    parser = Parser(Language(library.tree_sitter_powershell()))


def problems(source, node):
    if node.is_missing:
        yield node, f"missing {node.type}"
    elif node.is_error:
        yield node, "syntax error"
    elif node.type == "pipeline_chain_tail":
        yield node, "a pipeline chain (&&, ||), which Windows PowerShell 5.1 lacks"
    elif node.type == "command_parameter" and node.text.decode().lower() == "-parallel":
        yield node, "-Parallel, which Windows PowerShell 5.1 lacks"
    for child in node.children:
        yield from problems(source, child)


failed = False
for path in sys.argv[2:]:
    source = open(path, "rb").read()
    lines = source.decode("utf-8").splitlines()
    found = list(problems(source, parser.parse(source).root_node))
    for node, what in found:
        row, column = node.start_point
        print(f"{path}:{row + 1}:{column + 1}: {what}: {lines[row].strip()}")
    print(f"{path}: {'FAILED' if found else 'parses'} ({len(lines)} lines)")
    failed = failed or bool(found)
sys.exit(1 if failed else 0)
EOF
