// Fuzz target: the snapshot loader (agebloom_filter_load in the C API) over
// arbitrary bytes, into a filter of every registered structure. An image that
// is not this filter's is refused with AGEBLOOM_EIMAGE or
// AGEBLOOM_EIMAGE_MISMATCH and leaves the filter usable; one that loads
// leaves it answering queries without fault, through several rotations.
// The checksum only catches damage by accident: a quarter of the inputs are
// patched images resealed with a valid checksum, as a crafted file would be,
// so that the filters' own state (counters, indices, line headers) is what
// the mutations reach.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "agebloom/agebloom.h"
#include "../tests/common/snapshot_reseal.h"

namespace {

void reseal(std::vector<unsigned char>& image) { reseal_snapshot(image.data(), image.size()); }

struct Slot {
  std::vector<unsigned char> memory;
  agebloom_filter* f = nullptr;
  std::vector<unsigned char> image;  // a valid image of it, to mutate from
};

std::vector<Slot>& slots() {
  static std::vector<Slot> all = [] {
    std::vector<Slot> v;
    for (unsigned i = 0;; ++i) {
      const char* name = agebloom_structure_name(i);
      if (name == nullptr) break;
      agebloom_spec spec;
      agebloom_spec_init(&spec);
      spec.structure = name;
      spec.window = 64;
      spec.fpr = 0.05;
      spec.seed = 7;
      size_t n = 0;
      if (agebloom_filter_bytes(&spec, &n) != AGEBLOOM_OK) continue;
      Slot s;
      s.memory.resize(n + AGEBLOOM_ALIGN);
      void* mem = s.memory.data();
      size_t room = s.memory.size();
      if (!std::align(AGEBLOOM_ALIGN, n, mem, room)) continue;
      if (agebloom_filter_init(&spec, mem, n, &s.f) != AGEBLOOM_OK) continue;
      s.image.resize(agebloom_filter_save_bytes(s.f));
      if (agebloom_filter_save(s.f, s.image.data(), s.image.size(), nullptr) != AGEBLOOM_OK) continue;
      // Resealing a valid image must leave it as it was, or this target's
      // idea of the header is stale and its resealed inputs test nothing.
      std::vector<unsigned char> again = s.image;
      reseal(again);
      if (again != s.image) std::abort();
      v.push_back(std::move(s));
    }
    return v;
  }();
  return all;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto& all = slots();
  if (all.empty() || size < 1) return 0;
  Slot& s = all[(data[0] & 0x3f) % all.size()];
  // Half the inputs are the fuzzer's bytes as they are; the other half patch
  // them over a valid image, so the mutations reach past the header checks,
  // and half of those are resealed, so they reach past the checksum too.
  std::vector<unsigned char> image(data + 1, data + size);
  if (data[0] & 0x80) {
    image = s.image;
    for (size_t i = 1; i + 2 < size; i += 3) image[(data[i] | data[i + 1] << 8) % image.size()] = data[i + 2];
    if (data[0] & 0x40) reseal(image);
  }
  const int rc = agebloom_filter_load(s.f, image.data(), image.size());
  if (rc != AGEBLOOM_OK && rc != AGEBLOOM_EIMAGE && rc != AGEBLOOM_EIMAGE_MISMATCH && rc != AGEBLOOM_EINVAL) std::abort();
  // Four windows of insertions: every segment's rotation runs on what loaded.
  for (uint64_t k = 1; k <= 4 * 64; ++k) {
    (void)agebloom_test_and_insert_key(s.f, &k, sizeof k);
    (void)agebloom_contains_key(s.f, &k, sizeof k);
  }
  // And the bulk forms, whose line requests index the state their own way.
  uint64_t bulk[32];
  const void* ptrs[32];
  size_t lens[32];
  uint8_t out[32];
  for (unsigned i = 0; i < 32; ++i) {
    bulk[i] = 1000 + i;
    ptrs[i] = &bulk[i];
    lens[i] = sizeof bulk[i];
  }
  agebloom_test_and_insert_keys_bulk(s.f, ptrs, lens, 32, out);
  agebloom_contains_keys_bulk(s.f, ptrs, lens, 32, out);
  // Refused or not, the filter must still take its own image, which also
  // starts the next input from it (a crash is then one input's).
  if (agebloom_filter_load(s.f, s.image.data(), s.image.size()) != AGEBLOOM_OK) std::abort();
  return 0;
}
