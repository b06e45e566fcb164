// The C API's allocation-free paths: with every heap call trapped (malloc,
// calloc, realloc, the aligned forms, free, and operator new through them),
// building a filter from a plan in caller memory, every per-key call, the
// clock, key extraction, save, load and destroy make none. Planning may
// allocate and is done before the trap is armed. Exit 1 on any allocation.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include "agebloom/agebloom.h"

#include "../common/heap_trap.hpp"

namespace {
int failures = 0;
void expect(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "no_alloc: %s\n", what);
    ++failures;
  }
}

// Runs `body` with the trap armed; fails `what` if it allocated.
template <class Body>
void without_heap(const char* what, Body&& body) {
  long calls;
  {
    agebloom::testing::HeapTrap trap;
    body();
    calls = trap.count();
  }
  if (calls) {
    std::fprintf(stderr, "no_alloc: %s: %ld heap calls\n", what, calls);
    ++failures;
  }
}

// One structure's whole data path, from a plan made beforehand.
void data_path(const char* structure, bool time_window) {
  agebloom_spec spec;
  agebloom_spec_init(&spec);
  spec.structure = structure;
  spec.window = time_window ? 1'000'000'000 : 10'000;
  spec.window_kind = time_window ? AGEBLOOM_WINDOW_TIME : AGEBLOOM_WINDOW_COUNT;
  spec.capacity = time_window ? 10'000 : 0;
  spec.fpr = 0.01;
  spec.seed = 3;
  agebloom_plan plan;
  agebloom_plan_init(&plan);
  if (agebloom_plan_spec(&spec, &plan) != AGEBLOOM_OK) {
    expect(false, structure);
    return;
  }
  const size_t bytes = plan.filter_bytes;
  void* mem_a = std::aligned_alloc(AGEBLOOM_ALIGN, (bytes + 63) / 64 * 64);
  void* mem_b = std::aligned_alloc(AGEBLOOM_ALIGN, (bytes + 63) / 64 * 64);
  const size_t image_bytes = bytes + 4096;
  void* image = std::malloc(image_bytes);

  static unsigned char frame[34];
  frame[12] = 0x08, frame[14] = 0x45, frame[17] = 20, frame[26] = 10, frame[29] = 1;
  static uint32_t keys[64];
  static const void* kp[64];
  static size_t lens[64];
  static agebloom_hash h[64];
  static uint8_t out[64];
  for (int i = 0; i < 64; ++i) keys[i] = i % 20, kp[i] = &keys[i], lens[i] = sizeof keys[i];

  without_heap(structure, [&] {
    agebloom_filter *a = nullptr, *b = nullptr;
    expect(agebloom_filter_init_plan(&plan, mem_a, bytes, &a) == AGEBLOOM_OK, "init_plan");
    expect(agebloom_filter_init_plan(&plan, mem_b, bytes, &b) == AGEBLOOM_OK, "init_plan");
    if (!a || !b) return;
    uint64_t now = 1000;
    for (int burst = 0; burst < 50; ++burst, now += 1'000'000) {
      expect(agebloom_advance(a, now) == AGEBLOOM_OK, "advance");
      unsigned char key[AGEBLOOM_KEY_MAX];
      size_t len = 0;
      expect(agebloom_extract_key(AGEBLOOM_LINKTYPE_ETHERNET, frame, sizeof frame, AGEBLOOM_KEY_FLOW, nullptr, key,
                                  sizeof key, &len, nullptr) == AGEBLOOM_OK, "extract_key");
      agebloom_key_options ko;
      agebloom_key_options_init(&ko);
      ko.vlan_in_key = 1;
      ko.wire_len = sizeof frame;
      expect(agebloom_extract_key_with(AGEBLOOM_LINKTYPE_ETHERNET, frame, sizeof frame, AGEBLOOM_KEY_FLOW, &ko, key,
                                       sizeof key, &len, nullptr) == AGEBLOOM_OK, "extract_key_with");
      (void)agebloom_test_and_insert_key(a, key, len);
      agebloom_hash_keys(a, kp, lens, 64, h);
      agebloom_prefetch_bulk(a, h, 64);
      agebloom_test_and_insert_bulk(a, h, 64, out);
      agebloom_dedup_bulk(a, h, 64, nullptr, AGEBLOOM_INSERT_ON_MISS, out);
      agebloom_contains_bulk(a, h, 64, out);
      agebloom_insert_bulk(a, h, 64);
      agebloom_test_and_insert_keys_bulk(a, kp, lens, 64, out);
      agebloom_contains_keys_bulk(a, kp, lens, 64, out);
      agebloom_insert_keys_bulk(a, kp, lens, 64);
      agebloom_insert(a, h[0]);
      (void)agebloom_contains(a, h[1]);
      (void)agebloom_test_and_insert(a, h[2]);
      agebloom_insert_key(a, kp[3], lens[3]);
      (void)agebloom_contains_key(a, kp[4], lens[4]);
    }
    size_t written = 0;
    expect(agebloom_filter_save_bytes(a) <= image_bytes, "save_bytes");
    expect(agebloom_filter_save(a, image, image_bytes, &written) == AGEBLOOM_OK, "save");
    expect(agebloom_filter_load(b, image, written) == AGEBLOOM_OK, "load");
    expect(agebloom_contains(b, h[0]) == 1, "load: the state came along");
    agebloom_plan again;
    agebloom_plan_init(&again);
    expect(agebloom_filter_plan(b, &again) == AGEBLOOM_OK, "filter_plan");
    (void)agebloom_strerror(AGEBLOOM_EIMAGE);
    agebloom_filter_destroy(a);
    agebloom_filter_destroy(b);
  });
  std::free(mem_a);
  std::free(mem_b);
  std::free(image);
}
}  // namespace

int main() {
  // The trap must be able to fail.
  long calls;
  {
    agebloom::testing::HeapTrap trap;
    delete new int(1);
    calls = trap.count();
  }
  expect(calls >= 2, "the trap did not see operator new and delete");

  for (unsigned i = 0; i < agebloom_structure_count(); ++i) {
    data_path(agebloom_structure_name(i), false);
    if (std::strcmp(agebloom_structure_name(i), "tbf") != 0) data_path(agebloom_structure_name(i), true);
  }
  data_path("auto", false);

  // A plan that is not one is refused, and nothing is built.
  agebloom_spec spec;
  agebloom_spec_init(&spec);
  spec.window = 1000;
  agebloom_plan plan;
  agebloom_plan_init(&plan);
  expect(agebloom_plan_spec(&spec, &plan) == AGEBLOOM_OK, "plan");
  void* mem = std::aligned_alloc(AGEBLOOM_ALIGN, (plan.filter_bytes + 63) / 64 * 64);
  agebloom_filter* f = nullptr;
  agebloom_plan forged = plan;
  forged.opaque[6] ^= 1;
  expect(agebloom_filter_init_plan(&forged, mem, plan.filter_bytes, &f) == AGEBLOOM_EINVAL, "a changed plan");
  forged = plan;
  std::memset(forged.opaque, 0, sizeof forged.opaque);
  expect(agebloom_filter_init_plan(&forged, mem, plan.filter_bytes, &f) == AGEBLOOM_EINVAL, "an empty plan");
  expect(agebloom_filter_init_plan(&plan, mem, plan.filter_bytes - 1, &f) == AGEBLOOM_ENOMEM, "too little memory");
  std::free(mem);

  if (failures) return 1;
  std::printf("no_alloc: the C API's data path made no heap call for any structure\n");
  return 0;
}
