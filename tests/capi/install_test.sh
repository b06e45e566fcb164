#!/usr/bin/env bash
# The library as a user outside the tree gets it: `meson install` into a
# temporary root, then only pkg-config (agebloom.pc) to build against it.
#   consumers: pkg-config --cflags --libs agebloom works and the tools are
#     installed; a C++ consumer (consumer.cpp) and docs/API.md's examples
#     (cut out of the page) build and run, linked shared against the
#     installed libagebloom.so.1, and the C walkthrough linked static
#     (agebloom.pc's Requires.private and Libs.private are enough);
#   dpdk: examples/dedup_src_ip (C, DPDK) builds with
#     `pkg-config --cflags --libs agebloom libdpdk`, runs on a net_pcap port
#     over TRACE, and its counts equal agebloom-replay's for the same filter,
#     window and seed; its output capture holds what it passed. Exit 77
#     (meson: skip) without libdpdk or when the EAL cannot start here.
#   install_test.sh consumers|dpdk BUILD_ROOT SOURCE_ROOT TRACE
set -euo pipefail
mode=$1 build=$(realpath "$2") src=$(realpath "$3") trace=${4:+$(realpath "$4")}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/agebloom-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cc=${CC:-cc} cxx=${CXX:-c++}

meson install -C "$build" --destdir "$tmp/root" --no-rebuild --quiet >/dev/null
pc=$(find "$tmp/root" -name agebloom.pc -print -quit)
[[ -n "$pc" ]] || { echo "install: no agebloom.pc installed"; exit 1; }
# The .pc names the configured prefix; the files are under the destdir. Point
# it there, as if the prefix had been this directory.
prefix=$(sed -n 's/^prefix=//p' "$pc")
sed -i "s|^prefix=.*|prefix=$tmp/root$prefix|" "$pc"
export PKG_CONFIG_PATH=$(dirname "$pc")${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
libdir=$(pkg-config --variable=libdir agebloom)
export LD_LIBRARY_PATH=$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

echo "pkg-config --cflags --libs agebloom: $(pkg-config --cflags --libs agebloom)"
for f in "$libdir/libagebloom.a" "$libdir/libagebloom.so" "$libdir/libagebloom.so.1" \
         "$(pkg-config --variable=includedir agebloom)/agebloom/agebloom.h" \
         "$(pkg-config --variable=includedir agebloom)/agebloom/agebloom.hpp" \
         "$tmp/root$prefix/bin/agebloom-replay" "$tmp/root$prefix/bin/agebloom-plan" \
         "$tmp/root$prefix/bin/agebloom-cluster"; do
  [[ -e "$f" ]] || { echo "install: missing $f"; exit 1; }
done
# agebloom-cluster runs the agebloom-replay installed beside it: that one's
# --check refuses the FPR (exit 2) before any cluster would start.
refusal=$("$tmp/root$prefix/bin/agebloom-cluster" replay "$src/data/traces/pcapplusplus_example.pcap" \
          --shards 1 --key flow --ttl 1s --fpr 2 2>&1 || true)
[[ "$refusal" == *"--fpr must"* ]] ||
  { echo "install: agebloom-cluster does not run the agebloom-replay beside it: $refusal"; exit 1; }
if pkg-config --exists libdpdk && [[ ! -x "$tmp/root$prefix/bin/dedup_fwd" ]]; then
  echo "install: libdpdk is here but dedup_fwd was not installed"; exit 1
fi

consumers() {
  # The C++ consumer (it includes the C header too, so that compiles as C++).
  $cxx -std=c++20 -Wall -Wextra -Werror "$src/tests/capi/consumer.cpp" $(pkg-config --cflags --libs agebloom) \
    -o "$tmp/consumer"
  "$tmp/consumer"
  # ABI: built against the installed header, it runs against the installed libagebloom.so.1.
  # (ldd's output is read whole: `ldd | grep -q` can fail under pipefail when
  # grep exits first and ldd gets SIGPIPE.)
  loads=$(ldd "$tmp/consumer")
  [[ "$loads" == *"libagebloom.so.1 => $libdir/libagebloom.so.1"* ]] ||
    { echo "consumer does not load $libdir/libagebloom.so.1:"; echo "$loads"; exit 1; }

  # docs/API.md's examples: each `<!-- example: FILE -->` block, concatenated per FILE.
  mkdir "$tmp/doc"
  awk -v dir="$tmp/doc" '
    /^<!-- example: .* -->$/ { file = dir "/" $3; next }
    file != "" && /^```(c|cpp)$/ { copying = 1; next }
    copying && /^```$/ { copying = 0; file = ""; next }
    copying { print >> file }
  ' "$src/docs/API.md"
  [[ -s "$tmp/doc/walkthrough.c" && -s "$tmp/doc/walkthrough.cpp" ]] || { echo "API.md: examples not found"; exit 1; }
  $cc -std=c99 -D_ISOC11_SOURCE -Wall -Wextra -pedantic -Werror "$tmp/doc/walkthrough.c" \
    $(pkg-config --cflags --libs agebloom) -o "$tmp/walkthrough_c"
  $cxx -std=c++20 -Wall -Wextra -Werror "$tmp/doc/walkthrough.cpp" $(pkg-config --cflags --libs agebloom) \
    -o "$tmp/walkthrough_cpp"
  "$tmp/walkthrough_c" >/dev/null
  "$tmp/walkthrough_cpp"
  # Static: the archive, then what agebloom.pc says it needs (Libs.private and
  # the libraries of Requires.private), those linked as shared libraries: the
  # check is that agebloom.pc lists what libagebloom.a uses. (A fully static
  # `pkg-config --static` link would also need libpcap's own private
  # dependencies, dbus and systemd, as static archives: Debian's concern.)
  requires_private=$(pkg-config --print-requires-private agebloom | awk '{print $1}')
  libs_private=$(sed -n 's/^Libs.private://p' "$pc")
  $cc -std=c99 -D_ISOC11_SOURCE "$tmp/doc/walkthrough.c" $(pkg-config --cflags agebloom) \
    -L"$libdir" -l:libagebloom.a $libs_private $(pkg-config --libs $requires_private) -o "$tmp/walkthrough_static"
  if [[ "$(ldd "$tmp/walkthrough_static")" == *libagebloom* ]]; then echo "static link still uses libagebloom.so"; exit 1; fi
  "$tmp/walkthrough_static" >/dev/null
  echo "consumer, docs/API.md examples (shared and static): ok"

  # Every installed header compiles on its own (it includes what it uses, and
  # what it includes was installed). ethernet_ipv4_fast.hpp is the one piece
  # of another header (key_extract.hpp), not a header of its own.
  local inc
  inc=$(pkg-config --variable=includedir agebloom)
  (cd "$inc" && find agebloom -name '*.hpp' ! -name ethernet_ipv4_fast.hpp) |
    CXX=$cxx FLAGS="$(pkg-config --cflags agebloom)" xargs -P "$(nproc)" -I{} sh -c \
      'printf "#include <%s>\n" "{}" | $CXX -std=c++20 $FLAGS -fsyntax-only -x c++ - || { echo "not self-contained: {}"; exit 255; }'
  echo "installed headers, each on its own: ok"
}

dpdk_example() {
  if ! pkg-config --exists libdpdk; then
    echo "SKIP dedup_src_ip: libdpdk not found"
    exit 77
  fi
  $cc -O2 "$src/examples/dedup_src_ip/main.c" $(pkg-config --cflags --libs agebloom libdpdk) -o "$tmp/dedup_src_ip"
  # A window short enough that keys expire in the trace (97 of 4631 pass, not
  # 33), and no --fpr or --filter: the example's defaults must be the tools'.
  args="--window 20 --seed 5eed"
  eal="--no-huge --no-pci -m 512 --log-level=lib.eal:error --file-prefix agebloom-capi$$ -l 0"
  if ! out=$("$tmp/dedup_src_ip" $eal --vdev "net_pcap0,rx_pcap=$trace,tx_pcap=$tmp/out.pcap" -- $args \
             --idle-ms 300 2>&1); then
    rm -rf "/var/run/dpdk/agebloom-capi$$"
    if grep -q "cannot initialise the EAL" <<<"$out"; then
      echo "SKIP dedup_src_ip: the DPDK EAL cannot initialise here:"; echo "$out"; exit 77
    fi
    echo "dedup_src_ip failed:"; echo "$out"; exit 1
  fi
  rm -rf "/var/run/dpdk/agebloom-capi$$"
  echo "$out"
  counts=$(grep -E '^dedup_src_ip: rx ' <<<"$out")
  replay=$("$tmp/root$prefix/bin/agebloom-replay" "$trace" --key src-ip $args --json |
           python3 -c 'import json,sys; j=json.load(sys.stdin); print("dedup_src_ip: rx %d keyed %d suppressed %d passed %d" % (j["packets"], j["keyed"], j["suppressed"], j["passed"]))')
  passed_out=$("$tmp/root$prefix/bin/agebloom-replay" "$tmp/out.pcap" --key src-ip --json |
               python3 -c 'import json,sys; print(json.load(sys.stdin)["packets"])')
  echo "agebloom-replay: ${replay#dedup_src_ip: }; out.pcap: $passed_out packets"
  [[ "$counts" == "$replay" ]] || { echo "dedup_src_ip and agebloom-replay disagree"; exit 1; }
  [[ "$counts" == *" passed $passed_out" ]] || { echo "out.pcap does not hold what was passed"; exit 1; }
  echo "dedup_src_ip = agebloom-replay: ok"
  # Bad numbers are its usage and exit 2, never wrapped around ("-1" as 2^64 - 1);
  # a filter the planner refuses is exit 2 with the planner's reason. Both
  # before the EAL opens the devices: the tx_pcap file given (here the run's
  # own output) is left as it was, not truncated.
  cp "$tmp/out.pcap" "$tmp/kept.pcap"
  for bad in "--window -1" "--window 0" "--seed -5" "--idle-ms 99999999999" "--fpr x" "--fpr 0" "--filter nosuch"; do
    rc=0
    out=$("$tmp/dedup_src_ip" $eal --vdev "net_pcap0,rx_pcap=$trace,tx_pcap=$tmp/kept.pcap" -- $bad 2>&1) || rc=$?
    rm -rf "/var/run/dpdk/agebloom-capi$$"
    case "$bad" in
      "--fpr 0") says="spec.fpr" ;;
      "--filter nosuch") says="nosuch" ;;
      *) says="usage: " ;;
    esac
    [[ $rc == 2 && "$out" == *"$says"* ]] || { echo "dedup_src_ip $bad: exit $rc, not 2 saying '$says':"; echo "$out"; exit 1; }
    cmp -s "$tmp/out.pcap" "$tmp/kept.pcap" || { echo "dedup_src_ip $bad: its tx_pcap file was changed"; exit 1; }
  done
  echo "dedup_src_ip refuses bad options before the EAL: ok"
}

case "$mode" in
  consumers) consumers ;;
  dpdk) dpdk_example ;;
  *) echo "install_test.sh: unknown mode '$mode'"; exit 2 ;;
esac
