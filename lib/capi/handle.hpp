// The C API's handle (include/agebloom/agebloom.h): what lives at the start
// of the memory a filter is made in, and the guard every entry point runs
// its body under so that no C++ exception reaches a C caller.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <new>
#include <type_traits>

#include "agebloom/agebloom.h"
#include "agebloom/dedup/dedup_filter.hpp"

namespace agebloom::capi {

// The handle, placed at the caller's AGEBLOOM_ALIGN-aligned base; the
// filter's arena starts at the next cache line after it. Plain data: it is
// never destroyed, only forgotten (agebloom_filter_destroy), so the memory
// can be freed by whoever owns it.
struct Handle {
  static constexpr uint64_t kMagic = 0x61676562'6c6f6f6dULL;  // "ageb" "loom": a live handle
  uint64_t magic = kMagic;
  agebloom_free_fn free_fn = nullptr;  // set when agebloom_filter_create allocated the memory
  void* free_ctx = nullptr;
  uint64_t seed = 0;
  Hasher hasher;
  dedup::DedupFilter filter;
  unsigned char* state = nullptr;  // the arena's base: 64-byte aligned, so an image's bytes fit any handle
  size_t state_bytes = 0;          // what the structure carved from it
  uint64_t filter_bytes = 0;       // the handle and the arena (agebloom_filter_bytes)
  char parameters[224] = {};       // DedupFilter::parameters(), kept so save/stats need no heap
};
static_assert(std::is_trivially_destructible_v<Handle>, "a handle is forgotten, never destroyed");

// Bytes before the arena.
inline constexpr size_t kHandleBytes = (sizeof(Handle) + kCacheLine - 1) / kCacheLine * kCacheLine;

// A valid handle pointer (the C type is an incomplete struct; this is its only definition).
inline Handle* handle(agebloom_filter* f) noexcept { return reinterpret_cast<Handle*>(f); }
inline const Handle* handle(const agebloom_filter* f) noexcept { return reinterpret_cast<const Handle*>(f); }
inline bool live(const agebloom_filter* f) noexcept { return f && handle(f)->magic == Handle::kMagic; }

inline KeyHash to_cpp(agebloom_hash h) noexcept { return KeyHash{h.h1, h.h2}; }
inline agebloom_hash to_c(KeyHash h) noexcept { return agebloom_hash{h.h1, h.h2}; }
// agebloom_hash and KeyHash are the same two words, so arrays are passed through.
static_assert(sizeof(agebloom_hash) == sizeof(KeyHash) && alignof(agebloom_hash) == alignof(KeyHash));
inline const KeyHash* to_cpp(const agebloom_hash* h) noexcept { return reinterpret_cast<const KeyHash*>(h); }
// Verdict arrays: the C side reads uint8_t 0/1, the bulk forms write bool.
static_assert(sizeof(bool) == 1);
inline bool* as_bools(uint8_t* out) noexcept { return reinterpret_cast<bool*>(out); }

// Runs body() and turns any exception into a status: the C boundary.
template <class Body>
int guarded(Body&& body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return AGEBLOOM_ENOMEM;
  } catch (...) {
    return AGEBLOOM_EINTERNAL;
  }
}

// Copies a NUL-terminated string into a fixed field, cut to fit.
template <size_t N>
void copy_cstr(char (&dst)[N], const char* src) noexcept {
  size_t i = 0;
  for (; src && src[i] && i + 1 < N; ++i) dst[i] = src[i];
  dst[i] = '\0';
}

// The structs whose `size` field says how much of them the caller has: the
// library reads and writes only that prefix. kMinSize is the size of the
// first version (ABI 1); fields appended later get their defaults from a
// caller built before them.
template <class T>
inline constexpr size_t kMinSize = sizeof(T);

// A caller's input struct, in full: its prefix over `defaults`.
template <class T>
int read_in(const T* in, T& out) noexcept {
  if (!in) return AGEBLOOM_EINVAL;
  if (in->size < kMinSize<T>) return AGEBLOOM_EVERSION;
  std::memcpy(&out, in, in->size < sizeof(T) ? in->size : sizeof(T));
  out.size = sizeof(T);
  return AGEBLOOM_OK;
}

// Writes `full` into the caller's output struct, as much of it as it has.
template <class T>
int write_out(T full, T* out) noexcept {
  if (!out) return AGEBLOOM_EINVAL;
  if (out->size < kMinSize<T>) return AGEBLOOM_EVERSION;
  const uint32_t size = out->size;
  full.size = size < sizeof(T) ? size : static_cast<uint32_t>(sizeof(T));
  std::memcpy(out, &full, full.size);
  return AGEBLOOM_OK;
}

}  // namespace agebloom::capi
