#!/bin/sh
# A --host-discovery-script for ctest (tessel launch): prints TESSEL_TEST_HOSTS, one "host:slots" a line (default:
# this machine with 4 slots). With TESSEL_TEST_HOSTS_LATER, prints that instead from its second call on (a host that
# comes back or is added between runs); the calls of one launcher (the parent process) are counted in the file
# TESSEL_TEST_HOSTS_CALLS.PPID.
calls=0
if [ -n "${TESSEL_TEST_HOSTS_CALLS:-}" ]; then
  count="$TESSEL_TEST_HOSTS_CALLS.$PPID"
  [ -f "$count" ] && calls=$(cat "$count")
  echo $((calls + 1)) > "$count"
fi
if [ "$calls" -gt 0 ] && [ -n "${TESSEL_TEST_HOSTS_LATER:-}" ]; then
  printf '%s\n' "$TESSEL_TEST_HOSTS_LATER"
else
  printf '%s\n' "${TESSEL_TEST_HOSTS:-localhost:4}"
fi
