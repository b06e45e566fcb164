// The lab's key streams: seeded synthetic workloads, real captures keyed by
// the same extraction code as dedup_fwd, and a web access log keyed as in
// the Guarded Epoch paper's real-log experiment. Keys are 64-bit ids; an
// experiment hashes them with the library's Hasher.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "agebloom/packet/key_extract.hpp"

namespace agebloom::lab {

// Synthetic workloads (Guarded Epoch Bloom Filters, Sec. 4: "uniform,
// Zipf-like, and bursty"; the paper does not define them further, so:)
//   uniform  ids uniform over 2^40: in effect every insertion a new key;
//   zipf     Zipf-like, p(x) ∝ 1/x over 16n ids: a hot head of repeats, a long tail;
//   bursty   calm phases of new keys (mean 1800 insertions), then bursts (mean 40) that
//            replay keys from the last 64 insertions (retransmission-like, ~2% of the stream).
enum class Workload { uniform, zipf, bursty };
inline constexpr Workload kWorkloads[] = {Workload::uniform, Workload::zipf, Workload::bursty};
const char* workload_name(Workload w) noexcept;
std::vector<uint64_t> synthetic_stream(Workload w, uint64_t n, uint64_t seed);

// The keys of every packet of a capture that has one (dedup_fwd's extraction
// and key bytes, folded to 64-bit ids), in capture order. Empty with a
// message in `error` when the file cannot be read.
std::vector<uint64_t> capture_stream(const std::string& path, packet::KeyMode mode, std::string& error);

// An Apache combined-format access log, keyed by client IP + method + path
// (the query string dropped), in timestamp order: the Guarded Epoch paper's
// real-log keying (Sec. 4). Unparseable lines are skipped and counted.
std::vector<uint64_t> access_log_stream(const std::string& path, uint64_t& skipped, std::string& error);

// Where the real data lives: $AGEBLOOM_DATA, else the repository's data/,
// else ../shared/data beside the source tree ("" when none has `relative`).
std::string find_data(const std::string& relative);

}  // namespace agebloom::lab
