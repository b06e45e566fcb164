#!/usr/bin/env bash
# Runs every capture under a folder through agebloom-replay (every key mode)
# and dedup_fwd (net_pcap, output to /dev/null) and checks that nothing
# crashes, hangs or loses a packet: replay exits 0 or 1 (a damaged file,
# reported), dedup_fwd exits 0 or 3 (damaged input, reported; 2 for a capture
# that is not Ethernet, refused as a port would not carry it, or one libpcap
# cannot open at all, such as an empty file, refused as net_pcap cannot use it) with
# rx = tx + suppressed + mirrored + dropped_error and no mbuf in use at exit.
#   scripts/sweep_captures.sh [FOLDER=../shared/data/pcap] [BUILD=build]
# Prints one line per failure and a summary; non-zero if anything failed.
set -uo pipefail
case "${1:-}" in
  -h|--help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  -*) echo "usage: scripts/sweep_captures.sh [FOLDER] [BUILD]" >&2; exit 2 ;;
esac
[[ $# -le 2 ]] || { echo "usage: scripts/sweep_captures.sh [FOLDER] [BUILD]" >&2; exit 2; }
# FOLDER and BUILD given are the caller's paths; the defaults are the repository's.
caller=$PWD
from_caller() { [[ "$1" == /* ]] && echo "$1" || echo "$caller/$1"; }
dir=${1:+$(from_caller "$1")}
build=${2:+$(from_caller "$2")}
cd "$(dirname "$0")/.."
dir=${dir:-../shared/data/pcap}
build=${build:-build}
[[ -d "$dir" ]] || { echo "sweep: $dir is not a folder" >&2; exit 2; }
for tool in "$build/tools/agebloom-replay" "$build/dpdk_app/dedup_fwd"; do
  [[ -x "$tool" ]] || { echo "sweep: $tool was not built (BUILD is $build)" >&2; exit 2; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
files=0 replays=0 runs=0 failed=0 skipped=0 unreadable=0
while IFS= read -r -d '' f; do
  files=$((files + 1))
  for key in src-ip flow click packet; do
    replays=$((replays + 1))
    timeout 60 "$build/tools/agebloom-replay" "$f" --key "$key" --seed 1 --truth --json >"$tmp/r.json" 2>"$tmp/r.err"
    rc=$?
    if [[ $rc -ne 0 && $rc -ne 1 ]]; then
      echo "FAIL replay --key $key $f: exit $rc: $(head -c 300 "$tmp/r.err")"
      failed=$((failed + 1))
    fi
  done
  runs=$((runs + 1))
  timeout 60 "$build/dpdk_app/dedup_fwd" --no-huge --no-pci -m 256 --log-level=lib.eal:error \
    --file-prefix "sweep$$" -l 0 --vdev "net_pcap0,rx_pcap=$f,tx_pcap=/dev/null" -- \
    --key flow --seed 1 --exit-on-idle 100 --stats-interval 0 --stats-json "$tmp/s.json" >"$tmp/d.out" 2>&1
  rc=$?
  if [[ $rc -eq 2 ]] && grep -q "not Ethernet" "$tmp/d.out"; then
    skipped=$((skipped + 1))  # a capture of another link type: refused, as a port carries Ethernet
  elif [[ $rc -eq 2 ]] && grep -q "rx_pcap must name a readable pcap" "$tmp/d.out"; then
    unreadable=$((unreadable + 1))  # no capture at all to libpcap (empty, garbage): net_pcap refuses the device
  elif [[ $rc -ne 0 && $rc -ne 3 ]]; then
    echo "FAIL dedup_fwd $f: exit $rc: $(tail -c 300 "$tmp/d.out")"
    failed=$((failed + 1))
  elif ! python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); sys.exit(0 if j["invariant_holds"] and j["mempool"]["in_use_at_exit"]==0 else 1)' "$tmp/s.json"; then
    echo "FAIL dedup_fwd $f: packets unaccounted or mbufs in use at exit"
    failed=$((failed + 1))
  fi
  rm -rf "/var/run/dpdk/sweep$$"
done < <(find "$dir" -type f \( -name '*.pcap' -o -name '*.pcapng' -o -name '*.cap' \) -print0 | sort -z)
echo "sweep: $files captures, $replays replays, $runs dedup_fwd runs ($skipped refused as not Ethernet, $unreadable as no capture libpcap can open), $failed failures"
[[ $files -gt 0 ]] || { echo "sweep: no .pcap, .pcapng or .cap file under $dir" >&2; exit 2; }
[[ $failed -eq 0 ]]
