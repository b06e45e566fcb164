// Snapshot images whose checksum holds but whose state is impossible: the
// checksum is unkeyed, so a crafted image can be resealed, and read_snapshot
// must then refuse it on the state itself (DedupFilter::accepts_state, each
// structure's accepts_image) before any byte reaches the filter. Checked
// both ways: every state a structure reaches through its own operations is
// accepted (a false refusal would lose a user's filter at a restart), and
// crafted ones are refused or, when accepted, run without fault (the
// sanitizer builds of this suite make that last part a real check; the
// snapshot_load fuzzer searches further).
#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

#include "agebloom/dedup/dedup_filter.hpp"
#include "agebloom/dedup/filter_options.hpp"
#include "agebloom/dedup/snapshot.hpp"

namespace ab = agebloom;
namespace dd = agebloom::dedup;

namespace {

constexpr uint64_t kSeed = 11;

ab::KeyHash key(uint64_t i) { return ab::Hasher(kSeed)(&i, sizeof i); }

// A filter of `name` over a count window of `w` insertions, or a time window
// of `w` ticks sized for `w / 10` insertions, in its own arena.
struct Made {
  dd::DedupFilter d;
  std::vector<unsigned char> memory;
  std::string parameters;
  dd::SnapshotId id() const { return {&d, kSeed, parameters, memory.data()}; }
  bool accepts(const unsigned char* saved) const {
    return d.accepts_state(ab::ArenaImage(saved, memory.data(), memory.size()));
  }
};

bool make(const std::string& name, bool time, uint64_t w, Made& m) {
  dd::FilterSpec spec;
  EXPECT_EQ(dd::parse_filter_option(name, spec), "");
  spec.window = time ? ab::Window::time(w) : ab::Window::count(w);
  if (time) spec.capacity = w / 10;
  spec.fpr = 0.01;
  auto planned = dd::DedupFilter::plan(spec);
  if (std::get_if<std::string>(&planned)) return false;  // tbf: count windows only
  m.d = std::get<dd::DedupFilter>(planned);
  m.memory.assign(m.d.bytes_needed(), 0);
  ab::Arena arena(m.memory.data(), m.memory.size());
  EXPECT_EQ(m.d.create(arena), "") << name;
  m.parameters = m.d.parameters();
  return true;
}

// Operations with a changing rate: runs of fresh keys, repeats, bursts at
// one tick and idle gaps (a time window's tlbf grows, shrinks and wraps its
// slab; rings rotate by count and by time), scalar and in bursts.
template <class Check>
void workload(Made& m, bool time, uint64_t w, Check&& check) {
  uint64_t now = 0, next = 0;
  ab::KeyHash burst[32];
  bool dup[32];
  for (uint64_t step = 0; step < 400; ++step) {
    const uint64_t phase = step / 50 % 4;  // slow, fast, bursty, idle
    const uint64_t n = phase == 0 ? 20 : phase == 1 ? 200 : phase == 2 ? 32 : 2;
    for (uint64_t i = 0; i < n; ++i) {
      if (time) now += phase == 0 ? w / 40 : phase == 1 ? w / 2000 + 1 : phase == 2 ? 0 : w / 3;
      if (time) {
        ASSERT_TRUE(m.d.advance(now));
      }
      (void)m.d.is_duplicate(key(i % 3 == 0 && next > 5 ? next - 5 : next), step % 2 ? dd::Policy::insert_always
                                                                                   : dd::Policy::insert_on_miss);
      ++next;
    }
    for (auto& h : burst) h = key(next++);
    m.d.decide_burst(burst, nullptr, 32, dd::Policy::insert_always, dup);
    check(step);
  }
}

}  // namespace

TEST(SnapshotState, EveryStateAStructureReachesIsAccepted) {
  for (const ab::StructureInfo& s : ab::kStructures)
    for (bool time : {false, true}) {
      const uint64_t w = time ? 1'000'000 : 2000;
      Made m;
      if (!make(s.name, time, w, m)) continue;
      uint64_t refused = 0;
      workload(m, time, w, [&](uint64_t) { refused += !m.accepts(m.memory.data()); });
      EXPECT_EQ(refused, 0u) << s.name << (time ? " (time window)" : " (count window)");
      // And through read_snapshot, the image dedup_fwd and the C API write.
      std::vector<unsigned char> image(dd::snapshot_bytes(m.memory.size()));
      dd::write_snapshot(m.id(), m.memory.data(), m.memory.size(), {}, image.data());
      std::vector<unsigned char> scratch(m.memory.size());
      EXPECT_EQ(dd::read_snapshot(m.id(), scratch.data(), scratch.size(), image.data(), image.size()),
                dd::SnapshotErrc::ok)
          << s.name;
      EXPECT_EQ(scratch, m.memory) << s.name;
    }
}

// Every 8-byte word of the headers (the arena's first 512 bytes) set to
// values no index or count reaches, each image resealed as a crafted file
// would be: the structures with an index there refuse some, and what any
// structure accepts loads and runs two windows without fault.
TEST(SnapshotState, CraftedStatesAreRefusedOrRunSafely) {
  for (const ab::StructureInfo& s : ab::kStructures)
    for (bool time : {false, true}) {
      const uint64_t w = time ? 1'000'000 : 1000;
      Made m;
      if (!make(s.name, time, w, m)) continue;
      workload(m, time, w, [](uint64_t) {});
      const std::vector<unsigned char> valid = m.memory;
      uint64_t refused = 0;
      for (size_t at = 0; at + 8 <= valid.size() && at < 512; at += 8)
        for (uint64_t value : {~uint64_t{0}, uint64_t{0x7fff'ffff}, uint64_t{2}}) {
          std::vector<unsigned char> crafted = valid;
          std::memcpy(crafted.data() + at, &value, sizeof value);
          std::vector<unsigned char> image(dd::snapshot_bytes(crafted.size()));
          dd::write_snapshot(m.id(), crafted.data(), crafted.size(), {}, image.data());  // sealed
          const dd::SnapshotErrc e =
              dd::read_snapshot(m.id(), m.memory.data(), m.memory.size(), image.data(), image.size());
          if (e == dd::SnapshotErrc::inconsistent) {
            ++refused;
            ASSERT_EQ(m.memory, valid) << s.name << ": a refused image changed the filter";
            continue;
          }
          ASSERT_EQ(e, dd::SnapshotErrc::ok) << s.name;
          uint64_t now = 3 * w;
          for (uint64_t i = 0; i < 2 * 1000; ++i) {
            if (time) (void)m.d.advance(now += w / 500);
            (void)m.d.is_duplicate(key(i), dd::Policy::insert_always);
          }
          ab::KeyHash burst[32];
          bool dup[32];
          for (uint64_t i = 0; i < 32; ++i) burst[i] = key(5000 + i);
          m.d.decide_burst(burst, nullptr, 32, dd::Policy::insert_always, dup);
          m.memory = valid;
        }
      // Every structure keeps an index, count or schedule in its header
      // that no operation takes out of range: some of these were refused.
      EXPECT_GT(refused, 0u) << s.name << (time ? " (time window)" : " (count window)");
    }
}

// The crash that found this gap: a time-limited filter's slice offset moved
// past its slab (bits::set then wrote outside the arena). Refused, with its
// own message, the filter untouched.
TEST(SnapshotState, ATimeLimitedSliceOutsideItsSlabIsRefused) {
  Made m;
  ASSERT_TRUE(make("tlbf", false, 2000, m));
  workload(m, false, 2000, [](uint64_t) {});
  const std::vector<unsigned char> valid = m.memory;
  // The slice table follows the header; find a slice by its shape (offset,
  // words, ...) rather than by the private layout: patch every word that
  // holds a plausible offset to one past the arena, and check each.
  uint64_t tried = 0;
  for (size_t at = 0; at + 8 <= valid.size() && at < 4096; at += 8) {
    std::vector<unsigned char> crafted = valid;
    const uint64_t far = uint64_t{1} << 40;
    std::memcpy(crafted.data() + at, &far, sizeof far);
    if (m.accepts(crafted.data())) continue;  // not an offset, or one no operation reads
    ++tried;
    std::vector<unsigned char> image(dd::snapshot_bytes(crafted.size()));
    dd::write_snapshot(m.id(), crafted.data(), crafted.size(), {}, image.data());
    ASSERT_EQ(dd::read_snapshot(m.id(), m.memory.data(), m.memory.size(), image.data(), image.size()),
              dd::SnapshotErrc::inconsistent);
    ASSERT_EQ(m.memory, valid);
  }
  EXPECT_GT(tried, 4u);  // the header's fields and the slices' offsets and sizes
  EXPECT_NE(std::string(dd::message(dd::SnapshotErrc::inconsistent)).find("impossible"), std::string::npos);
}

// The fields the public headers name (core/window.hpp's EpochRingHeader,
// CountingHeader, StableHeader), each set out of range in turn.
TEST(SnapshotState, EachRingHeaderFieldOutOfRangeIsRefused) {
  for (const char* name : {"guarded-epoch", "apbf", "ring", "interleaved", "interleaved-apbf", "two-line",
                           "pocket-epoch", "queue-epoch", "interleaved-swept"}) {
    Made m;
    ASSERT_TRUE(make(name, false, 2000, m));
    workload(m, false, 2000, [](uint64_t) {});
    // The ring header is the arena's first carve, on its first cache line.
    const size_t base = static_cast<size_t>(ab::align_up(reinterpret_cast<uintptr_t>(m.memory.data()), 64) -
                                            reinterpret_cast<uintptr_t>(m.memory.data()));
    auto refuses = [&](size_t field, const void* value, size_t n) {
      std::vector<unsigned char> crafted = m.memory;
      std::memcpy(crafted.data() + base + field, value, n);
      return !m.accepts(crafted.data());
    };
    const uint32_t segment = 99;
    const uint64_t fill = 5000;  // past the epoch's length (W / r)
    const unsigned char two = 2, time_kind = static_cast<unsigned char>(ab::WindowKind::time);
    EXPECT_TRUE(refuses(offsetof(ab::EpochRingHeader, current), &segment, sizeof segment)) << name;
    EXPECT_TRUE(refuses(offsetof(ab::EpochSchedule, fill), &fill, sizeof fill)) << name;
    EXPECT_TRUE(refuses(offsetof(ab::EpochSchedule, started), &two, 1)) << name;
    EXPECT_TRUE(refuses(offsetof(ab::EpochSchedule, kind), &time_kind, 1)) << name;
    EXPECT_TRUE(refuses(offsetof(ab::EpochSchedule, length), &fill, sizeof fill)) << name;
    const uint64_t many = uint64_t{1} << 62;  // a statistic (the swept layout's epoch began at or before it)
    EXPECT_FALSE(refuses(offsetof(ab::EpochRingHeader, insertions), &many, sizeof many)) << name;
  }
  {
    Made m;
    ASSERT_TRUE(make("counting", false, 2000, m));
    workload(m, false, 2000, [](uint64_t) {});
    const size_t base = static_cast<size_t>(ab::align_up(reinterpret_cast<uintptr_t>(m.memory.data()), 64) -
                                            reinterpret_cast<uintptr_t>(m.memory.data()));
    for (size_t field : {offsetof(ab::CountingHeader, head), offsetof(ab::CountingHeader, size)}) {
      std::vector<unsigned char> crafted = m.memory;
      const uint64_t slots = 2001;
      std::memcpy(crafted.data() + base + field, &slots, sizeof slots);
      EXPECT_FALSE(m.accepts(crafted.data())) << "counting field at " << field;
    }
  }
  {
    Made m;
    ASSERT_TRUE(make("stable", true, 1'000'000, m));
    workload(m, true, 1'000'000, [](uint64_t) {});
    const size_t base = static_cast<size_t>(ab::align_up(reinterpret_cast<uintptr_t>(m.memory.data()), 64) -
                                            reinterpret_cast<uintptr_t>(m.memory.data()));
    std::vector<unsigned char> crafted = m.memory;
    crafted[base + offsetof(ab::StableHeader, started)] = 7;  // no bool
    EXPECT_FALSE(m.accepts(crafted.data()));
  }
}
