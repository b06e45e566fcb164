// The C API's per-key operations: the burst loop's calls. Each forwards to
// the structure's own scalar or bulk form through DedupFilter::visit; none
// allocates or throws, so they need no guard (they are noexcept throughout).
// A null or destroyed handle is the caller's bug, as a null pointer is to
// memcpy: these paths do not check it.
#include "handle.hpp"

using namespace agebloom;
using namespace agebloom::capi;

namespace {

// Hashes n keys given as bytes in chunks, then runs `bulk` over each chunk's
// hashes, so the filter's prefetching sees a whole chunk ahead.
template <class Bulk>
void over_hashed_chunks(const Handle* h, const void* const* keys, const size_t* lens, size_t n, Bulk&& bulk) {
  constexpr size_t kChunk = 64;  // a DPDK burst is 32: one chunk in the common case
  KeyHash hashes[kChunk];
  for (size_t at = 0; at < n; at += kChunk) {
    const size_t m = n - at < kChunk ? n - at : kChunk;
    h->hasher.hash_bulk(keys + at, lens + at, m, hashes);
    bulk(hashes, m, at);
  }
}

// The structure behind a const handle; the bulk queries are const, visit is not.
dedup::DedupFilter& filter_of(const agebloom_filter* f) { return const_cast<Handle*>(handle(f))->filter; }

}  // namespace

extern "C" {

agebloom_hash agebloom_hash_key(const agebloom_filter* f, const void* key, size_t len) noexcept {
  return to_c(handle(f)->hasher(key, len));
}

void agebloom_hash_keys(const agebloom_filter* f, const void* const* keys, const size_t* lens, size_t n,
                        agebloom_hash* out) noexcept {
  handle(f)->hasher.hash_bulk(keys, lens, n, reinterpret_cast<KeyHash*>(out));
}

void agebloom_insert(agebloom_filter* f, agebloom_hash h) noexcept {
  handle(f)->filter.visit([&](auto& x) { x.insert(to_cpp(h)); });
}

int agebloom_contains(const agebloom_filter* f, agebloom_hash h) noexcept { return handle(f)->filter.contains(to_cpp(h)); }

int agebloom_test_and_insert(agebloom_filter* f, agebloom_hash h) noexcept {
  return handle(f)->filter.visit([&](auto& x) -> int { return x.test_and_insert(to_cpp(h)); });
}

void agebloom_insert_bulk(agebloom_filter* f, const agebloom_hash* h, size_t n) noexcept {
  handle(f)->filter.visit([&](auto& x) { x.insert_bulk(to_cpp(h), n); });
}

void agebloom_contains_bulk(const agebloom_filter* f, const agebloom_hash* h, size_t n, uint8_t* out) noexcept {
  filter_of(f).visit([&](const auto& x) { x.contains_bulk(to_cpp(h), n, as_bools(out)); });
}

void agebloom_test_and_insert_bulk(agebloom_filter* f, const agebloom_hash* h, size_t n, uint8_t* out) noexcept {
  handle(f)->filter.visit([&](auto& x) { x.test_and_insert_bulk(to_cpp(h), n, as_bools(out)); });
}

void agebloom_insert_key(agebloom_filter* f, const void* key, size_t len) noexcept {
  agebloom_insert(f, agebloom_hash_key(f, key, len));
}

int agebloom_contains_key(const agebloom_filter* f, const void* key, size_t len) noexcept {
  return agebloom_contains(f, agebloom_hash_key(f, key, len));
}

int agebloom_test_and_insert_key(agebloom_filter* f, const void* key, size_t len) noexcept {
  return agebloom_test_and_insert(f, agebloom_hash_key(f, key, len));
}

void agebloom_insert_keys_bulk(agebloom_filter* f, const void* const* keys, const size_t* lens, size_t n) noexcept {
  Handle* h = handle(f);
  over_hashed_chunks(h, keys, lens, n, [&](const KeyHash* hs, size_t m, size_t) {
    h->filter.visit([&](auto& x) { x.insert_bulk(hs, m); });
  });
}

void agebloom_contains_keys_bulk(const agebloom_filter* f, const void* const* keys, const size_t* lens, size_t n,
                                 uint8_t* out) noexcept {
  over_hashed_chunks(handle(f), keys, lens, n, [&](const KeyHash* hs, size_t m, size_t at) {
    filter_of(f).visit([&](const auto& x) { x.contains_bulk(hs, m, as_bools(out + at)); });
  });
}

void agebloom_test_and_insert_keys_bulk(agebloom_filter* f, const void* const* keys, const size_t* lens, size_t n,
                                        uint8_t* out) noexcept {
  Handle* h = handle(f);
  over_hashed_chunks(h, keys, lens, n, [&](const KeyHash* hs, size_t m, size_t at) {
    h->filter.visit([&](auto& x) { x.test_and_insert_bulk(hs, m, as_bools(out + at)); });
  });
}

void agebloom_dedup_bulk(agebloom_filter* f, const agebloom_hash* h, size_t n, const uint64_t* now,
                         agebloom_policy policy, uint8_t* dup) noexcept {
  handle(f)->filter.decide_burst(to_cpp(h), now, n,
                                 policy == AGEBLOOM_INSERT_ON_MISS ? dedup::Policy::insert_on_miss
                                                                   : dedup::Policy::insert_always,
                                 as_bools(dup));
}

void agebloom_prefetch_bulk(const agebloom_filter* f, const agebloom_hash* h, size_t n) noexcept {
  filter_of(f).prefetch_burst(to_cpp(h), n);
}

int agebloom_advance(agebloom_filter* f, uint64_t now) noexcept {
  if (!live(f)) return AGEBLOOM_EINVAL;
  const Status s = handle(f)->filter.advance(now);
  if (s) return AGEBLOOM_OK;
  return s.code() == Errc::time_went_backwards ? AGEBLOOM_ETIME : AGEBLOOM_EINTERNAL;
}

}  // extern "C"
