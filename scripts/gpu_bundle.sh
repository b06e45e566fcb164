#!/usr/bin/env bash
# Packs, on this (Debian) machine, everything a lent GPU machine needs to
# check and time the CUDA backend in one device call: the GPU test programs,
# agebloom-gpu-bench and agebloom-replay, every shared library they load but
# the CUDA driver (with Debian's own loader, so the device image's libc does
# not matter), real traces, and run.sh, the device-side script.
#
#   scripts/gpu_bundle.sh            # builds build-gpu (-Dgpu=enabled), writes .gpu-bundle/
#   AGEBLOOM_GPU_BASELINE=/path/to/older/agebloom-gpu-bench scripts/gpu_bundle.sh
#                                    # also packs an older build's benchmark, which run.sh
#                                    # times in the same call (ratios on one machine)
#
# Then, with the device tool: run(command=".gpu-bundle/run.sh", carry=[".gpu-bundle"]);
# its logs come back from $OUT. The device image has nvcc but not the Debian
# -dev packages this project builds against (xxhash, gtest, pcap), hence the
# bundle rather than a build there.
set -euo pipefail
[[ "${1:-}" == -h || "${1:-}" == --help ]] && { sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0; }
(($# == 0)) || { echo "gpu_bundle.sh: takes no arguments ('$1'); see --help" >&2; exit 2; }
# The baseline is the caller's path, checked before anything is built or the
# last bundle removed (a wrong one left .gpu-bundle/ half made).
baseline=${AGEBLOOM_GPU_BASELINE:-}
if [[ -n $baseline ]]; then
  [[ $baseline == /* ]] || baseline="$PWD/$baseline"
  [[ -f $baseline && -x $baseline ]] || { echo "gpu_bundle.sh: AGEBLOOM_GPU_BASELINE=$AGEBLOOM_GPU_BASELINE: no such program" >&2; exit 2; }
fi
cd "$(dirname "$0")/.."
scripts/setup.sh >/dev/null  # the packages (and the default build)
build=${AGEBLOOM_GPU_BUILD_DIR:-build-gpu}
[[ -f "$build/build.ninja" ]] || meson setup "$build" --buildtype=release -Dgpu=enabled >/dev/null
ninja -C "$build" >/dev/null

b=.gpu-bundle
rm -rf "$b"
mkdir -p "$b/bin" "$b/lib" "$b/traces"
cp "$build/tests/gpu/gpu_replay_test" "$build/tests/gpu/gpu_replay_emulation_test" \
   "$build/perf/agebloom-gpu-bench" "$build/tools/agebloom-replay" "$build/perf/agebloom-bench" "$b/bin/"
if [[ -n $baseline ]]; then cp "$baseline" "$b/bin/agebloom-gpu-bench-base"; fi
for exe in "$b"/bin/*; do ldd "$exe" | awk '/=> \// {print $3}'; done | sort -u | while read -r lib; do
  cp -L "$lib" "$b/lib/"
done
cp -L /lib64/ld-linux-x86-64.so.2 "$b/lib/"
# agebloom-bench's mbuf pools need DPDK's ring mempool driver, a plugin EAL
# loads from Debian's driver folder, which the device image lacks: run.sh
# preloads it from the bundle.
ring=$(ls /usr/lib/x86_64-linux-gnu/dpdk/pmds-*/librte_mempool_ring.so.* 2>/dev/null | head -1)
if [[ -n $ring ]]; then
  cp -L "$ring" "$b/lib/librte_mempool_ring.so"
  ldd "$ring" | awk '/=> \// {print $3}' | while read -r lib; do cp -L "$lib" "$b/lib/"; done
fi
cp data/traces/*.pcap "$b/traces/"
shared=../shared/data/pcap
if [[ -d "$shared" ]]; then
  for f in "$shared"/http/*.pcap "$shared"/http/*.pcapng "$shared"/ddos/*.pcap "$shared"/ddos/*.pcapng; do [[ -f "$f" ]] && cp "$f" "$b/traces/"; done
fi
cp scripts/gpu_run.sh "$b/run.sh"
chmod +x "$b/run.sh"
# .gpu-bundle/ is in .gitignore: the device tool carries ignored paths named in carry.
du -sh "$b"
