#!/usr/bin/env bash
# The Pythons newer than the baseline that this machine has, one interpreter path per line,
# newest last: for each minor version from 3.12 on, `python3.N` on PATH when it runs, else the
# newest pyenv build of it (pyenv's shims are on PATH but refuse a version that is not
# selected, so they are tried and skipped). Prints nothing when there are none.
# Used by `make test-pythons` (Makefile); requires-python in pyproject.toml is the baseline.
set -uo pipefail
PYENV_VERSIONS="${PYENV_ROOT:-$HOME/.pyenv}/versions"
for minor in 12 13 14 15; do
    found=""
    if exe="$(command -v "python3.$minor" 2>/dev/null)" && "$exe" -c "" 2>/dev/null; then
        found="$exe"
    else
        for exe in $(ls -d "$PYENV_VERSIONS"/3."$minor".*/bin/python3."$minor" 2>/dev/null | sort -V); do
            if "$exe" -c "" 2>/dev/null; then found="$exe"; fi
        done
    fi
    if [ -n "$found" ]; then echo "$found"; fi
done
