#!/usr/bin/env bash
# Usage: expect_output.sh PATTERN COMMAND...
# Runs COMMAND; passes when it exits 0 and its output (stdout and stderr) matches PATTERN (grep -E).
set -u
pattern=$1
shift
output=$("$@" 2>&1)
status=$?
printf '%s\n' "$output"
if [ $status -ne 0 ]; then
  echo "expect_output: command exited with $status" >&2
  exit 1
fi
if ! printf '%s\n' "$output" | grep -Eq -- "$pattern"; then
  echo "expect_output: output does not match: $pattern" >&2
  exit 1
fi
