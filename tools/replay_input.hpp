// What agebloom-replay reads before any filter sees a packet: several
// captures merged into one stream by timestamp, and the key shard a packet
// belongs to (--shard I/N).
//
// The shard is fixed by the key bytes alone, never by the filter's seed: the
// process that splits a trace into shards and the processes that replay the
// pieces run apart, each with its own (by default random) seed, and must
// still agree on where every key goes. A key's shard is
//
//     (XXH3-64(key bytes, seed 0x616765626c6f6f6d) * N) >> 64
//
// the seed being the ASCII bytes of "agebloom"; the key bytes are those
// extract_key gives under the run's --key and keying options (so the split
// and the replay must take the same ones). A packet without a key (unparsed,
// or not matched by --bpf) belongs to shard 0, so the N shards' packet counts
// add up to the whole stream's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <queue>
#include <string>
#include <utility>
#include <vector>

#include "agebloom/core/hash.hpp"  // XXH3, inlined, and reduce()
#include "agebloom/dedup/filter_options.hpp"  // parse_u64
#include "agebloom/trace/pcap_trace.hpp"

namespace agebloom::tools {

inline constexpr uint64_t kShardSeed = 0x616765626c6f6f6dull;  // "agebloom"

// The shard of a key among `count` (count >= 1): multiply-shift (core's
// reduce), as the filters map hashes to positions, so no shard is favoured
// when count is not a power of two.
inline uint32_t shard_of(const void* key, size_t length, uint32_t count) noexcept {
  return static_cast<uint32_t>(reduce(XXH3_64bits_withSeed(key, length, kShardSeed), count));
}

// --shard I/N: "" and the two numbers, or why the text is not a shard.
inline std::string parse_shard(const std::string& text, uint32_t& index, uint32_t& count) {
  const size_t slash = text.find('/');
  uint64_t i = 0, n = 0;
  if (slash == std::string::npos || !dedup::parse_u64(text.substr(0, slash), i) ||
      !dedup::parse_u64(text.substr(slash + 1), n))
    return "--shard needs I/N, two whole numbers (shard I of N, counted from 0), not '" + text + "'";
  if (n == 0 || n > UINT32_MAX) return "--shard " + text + ": N must be between 1 and 4294967295";
  if (i >= n) return "--shard " + text + ": I must be below N (shards are numbered 0 to N-1)";
  index = static_cast<uint32_t>(i);
  count = static_cast<uint32_t>(n);
  return "";
}

// Captures read as one stream in timestamp order, as mergecap merges them:
// each step hands out the earliest of the captures' next packets, the
// earlier capture on the command line first on equal stamps. Each capture's
// own order is kept, so one capture reads exactly as PcapReader reads it,
// steps back in time included. A Packet handed out stays valid until the
// next call to next(): only the capture it came from is read on.
class MergedTraces {
 public:
  // Takes an open reader; every capture must have the first one's link type
  // (the caller checks, naming both files).
  void add(std::string path, trace::PcapReader reader) {
    paths_.push_back(std::move(path));
    readers_.push_back(std::move(reader));
    heads_.emplace_back();
  }

  size_t size() const noexcept { return readers_.size(); }
  const std::string& path(size_t i) const { return paths_[i]; }
  uint32_t linktype() const noexcept { return readers_.empty() ? 0 : readers_.front().linktype(); }

  trace::PcapReader::Status next(trace::Packet& out) {
    using Status = trace::PcapReader::Status;
    if (done_ != Status::ok) return done_;
    if (!primed_) {
      primed_ = true;
      for (size_t i = 0; i < readers_.size(); ++i)
        if (!advance(i)) return done_ = Status::error;
    } else if (!advance(last_)) {
      return done_ = Status::error;
    }
    if (queue_.empty()) return done_ = Status::end;
    last_ = queue_.top().second;
    queue_.pop();
    out = heads_[last_];
    return Status::ok;
  }

  // The reader's message for Status::error (it names the file).
  const std::string& error() const noexcept { return error_; }
  // Records skipped by every reader so far (PcapReader::bad_timestamps()).
  uint64_t bad_timestamps() const noexcept {
    uint64_t n = 0;
    for (const trace::PcapReader& r : readers_) n += r.bad_timestamps();
    return n;
  }

 private:
  // Reads capture i's next packet into its head; false on a read error.
  bool advance(size_t i) {
    switch (readers_[i].next(heads_[i])) {
      case trace::PcapReader::Status::ok: queue_.emplace(heads_[i].timestamp_ns, i); return true;
      case trace::PcapReader::Status::end: return true;
      case trace::PcapReader::Status::error: error_ = readers_[i].error(); return false;
    }
    return false;
  }

  std::vector<std::string> paths_;
  std::vector<trace::PcapReader> readers_;
  std::vector<trace::Packet> heads_;  // each capture's next packet, into its reader's buffer
  // (stamp, capture) of every capture with a packet waiting: the least first.
  using Entry = std::pair<uint64_t, size_t>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> queue_;
  size_t last_ = 0;  // the capture of the packet handed out last
  bool primed_ = false;
  trace::PcapReader::Status done_ = trace::PcapReader::Status::ok;  // sticky end/error
  std::string error_;
};

}  // namespace agebloom::tools
