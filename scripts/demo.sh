#!/usr/bin/env bash
# `make demo`: one real turn against the bundled scripted agent, in a fresh temporary directory.
# The prompt streams text, proposes a file write, and (with --policy auto-edits) writes it.
set -euo pipefail
bin="$(cd "$1" && pwd)"
work=$(mktemp -d "${TMPDIR:-/tmp}/baton-demo.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"
echo "\$ baton run --agent-command \"baton agent scripted\" --allow-unattended --policy auto-edits \"...\""
echo "  (in $work)"
echo
"$bin/baton" run \
  --data-dir "$work/.baton" \
  --agent-command "$bin/baton agent scripted" \
  --allow-unattended --policy auto-edits \
  'echo Hello from the scripted agent.\n; stream 3; plan Stream some text | Propose a file | Write it; write hello.txt Hello, Baton!\n; echo Done: hello.txt is written.\n'
echo
echo "\$ cat hello.txt"
cat hello.txt
echo "\$ baton runs"
"$bin/baton" runs --data-dir "$work/.baton"
echo "\$ baton journal verify --all"
"$bin/baton" journal verify --all --data-dir "$work/.baton"
