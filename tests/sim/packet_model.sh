#!/usr/bin/env bash
# The packet-level model of scripts/simulate.sh (ns-3 TCP) on 4 machines of one switch,
# beside the fluid model, and its refusals. Builds commbench with SimGrid (build-sim/ or
# SIM_BUILD_DIR) when needed. Run by scripts/test.sh; takes about a minute once built.
source "$(dirname "$0")/common.sh" libcomm-packet-test
python3 scripts/reproduce/topo2platform.py inputs/topologies/star4.topo "$TMP/star4.xml" \
  --hostfile "$TMP/star4.hosts" >/dev/null
sim() { scripts/simulate.sh --platform "$TMP/star4.xml" --hostfile "$TMP/star4.hosts" "$@"; }
# time_of LOG ALGO: the median in microseconds commbench printed for ALGO
time_of() { awk -v a="$2" '$1 == "alltoall" && $2 == a {print $6}' "$1"; }

echo "== build (first run) and the fluid model"
sim --network fluid commbench --sizes 16K --reps 1 --warmup 0 --algo linear,pairwise \
  >"$TMP/fluid.log" 2>&1 || { cat "$TMP/fluid.log"; fail "fluid run failed"; }
export SIM_REBUILD=0
echo "== packet model: the same run"
sim --network packet commbench --sizes 16K --reps 1 --warmup 0 --algo linear,pairwise \
  >"$TMP/packet.log" 2>&1 || { cat "$TMP/packet.log"; fail "packet run failed"; }
for log in fluid packet; do
  grep -q "^validation: PASS" "$TMP/$log.log" || fail "$log: validation did not pass"
  grep -q "Deadlock" "$TMP/$log.log" && fail "$log: SimGrid reported a deadlock"
done
tf=$(time_of "$TMP/fluid.log" linear) tp=$(time_of "$TMP/packet.log" linear)
echo "linear at 16 KiB: fluid $tf us, packet $tp us"
# TCP's headers, handshakes and slow start make every message slower than the fluid
# model's ideal share: a packet time no larger than the fluid one means ns-3 did not run.
python3 -c "import sys; sys.exit(0 if float('$tp') > float('$tf') * 1.02 else 1)" ||
  fail "the packet-level time ($tp us) is not above the fluid one ($tf us): was ns-3 used?"

echo "== packet model: 4 MiB messages through one switch (ns-3.37's empty-segment crash)"
# Without the receive buffer that simulate.sh sets, ns-3 crashes here (SIGSEGV in
# TcpRateLinux::SkbSent, README "Packet-level model").
sim --network packet commbench --sizes 4M --reps 1 --warmup 0 --algo linear --skip-native \
  >"$TMP/big.log" 2>&1 || { tail -5 "$TMP/big.log"; fail "4 MiB packet run failed"; }
grep -q "^validation: PASS" "$TMP/big.log" || fail "4 MiB: validation did not pass"

echo "== packet model: 6 nodes x 4 cores (topo2platform --cores), the run SimGrid deadlocked"
python3 scripts/reproduce/topo2platform.py inputs/topologies/star6.topo "$TMP/cores.xml" \
  --hostfile "$TMP/cores.hosts" --cores 4 --memory-bandwidth 300Mbps >/dev/null
[[ $(wc -l <"$TMP/cores.hosts") == 24 && $(head -2 "$TMP/cores.hosts" | tr '\n' ' ') == "n0-c0 n0-c1 " ]] ||
  fail "topo2platform --cores 4: host file $(head -3 "$TMP/cores.hosts" | tr '\n' ' ')"
cores() { scripts/simulate.sh --network packet --platform "$TMP/cores.xml" --hostfile "$TMP/cores.hosts" "$@" \
  commbench --nodes sizes=4,4,4,4,4,4 --sizes 1K,4K --reps 3 --warmup 0 --algo clustered_factor --skip-native; }
# With SimGrid's 10 ns sleep in MPI_Wtime this run stopped on "Deadlock detected" after the
# 1 KiB runs (and SimGrid exited 0); simulate.sh sets smpi/wtime:0.
cores >"$TMP/cores.log" 2>&1 || { tail -5 "$TMP/cores.log"; fail "the cores run failed"; }
grep -Eq "^alltoall +clustered_factor +24 +4 KiB .*PASS" "$TMP/cores.log" || fail "the cores run did not finish 4 KiB"
# Whatever SimGrid does with the sleeps, a run that stops on a deadlock must fail.
rc=0
cores --cfg smpi/wtime:1e-8 >"$TMP/sleeps.log" 2>&1 || rc=$?
if ((rc == 0)); then
  grep -q "^validation: PASS" "$TMP/sleeps.log" || fail "a run exited 0 without finishing"
elif ! grep -q "simulate.sh: SimGrid stopped the simulation on a deadlock" "$TMP/sleeps.log"; then
  tail -5 "$TMP/sleeps.log"
  fail "a failed run without the deadlock message (exit $rc)"
fi

echo "== packet model: a message above the TCP buffer gets a clear error"
printf 'n0\nn1\n' >"$TMP/two.hosts"
if scripts/simulate.sh --network packet --tcp-buffer 512K --platform "$TMP/star4.xml" \
    --hostfile "$TMP/two.hosts" commbench --sizes 1M --reps 1 --warmup 0 --algo linear \
    --skip-native >"$TMP/buf.log" 2>&1; then
  fail "a 1 MiB message with a 512 KiB TCP buffer ran"
fi
grep -q "simulate.sh: a TCP connection closed before its message was through" "$TMP/buf.log" ||
  { tail -5 "$TMP/buf.log"; fail "no clear message for the TCP buffer limit"; }

echo "== packet model: refusals"
expect_refusal() {  # expect_refusal TEXT ARGS...
  local text="$1"
  shift
  local rc=0
  scripts/simulate.sh --network packet "$@" commbench --sizes 1K >"$TMP/refuse.log" 2>&1 || rc=$?
  if ((rc != 2)) || ! grep -q -- "$text" "$TMP/refuse.log"; then
    cat "$TMP/refuse.log"
    fail "simulate.sh --network packet $* exited $rc, not 2 with '$text'"
  fi
}
expect_refusal "one shared CSMA bus" --platform flat64 -np 4
expect_refusal "host n0 holds 2 ranks" --platform "$TMP/star4.xml" --ppn 2
expect_refusal "must be fluid or packet" --network tcp --platform "$TMP/star4.xml"
expect_refusal "below 4 GiB" --tcp-buffer 8G --platform "$TMP/star4.xml"
expect_refusal "tracing fails under the ns-3 binding" --platform "$TMP/star4.xml" --cfg tracing:yes
if ((failures)); then
  echo "packet model: $failures failure(s)"
  exit 1
fi
echo "packet model: all checks passed"
