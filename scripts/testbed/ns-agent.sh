#!/bin/sh
# Open MPI's "remote shell" on the testbed (plm_rsh_agent): HOST is a machine's network
# namespace. The daemon runs inside it, with its own host name (a UTS namespace), so Open
# MPI sees one node per emulated machine: ranks on one machine share memory, ranks on
# different machines use TCP through the emulated links.
#   ns-agent.sh HOST COMMAND...
host="$1"
shift
case "$host" in
  *[!A-Za-z0-9_-]*|"") echo "ns-agent.sh: bad namespace name '$host'" >&2; exit 2 ;;
esac
exec ip netns exec "$host" unshare --uts sh -c "hostname $host && $*"
