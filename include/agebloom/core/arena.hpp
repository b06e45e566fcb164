// Arena: a span of memory the caller owns (rte_malloc_socket on the lcore's
// NUMA node, cudaMalloc, a static array). Structures carve their header and
// bit arrays from it and never allocate, so a filter's footprint is fixed at
// creation and its state can be snapshotted or copied as plain bytes.
#pragma once

#include <cstddef>
#include <cstdint>

#include "agebloom/core/error.hpp"

namespace agebloom {

// One cache line: the default carving alignment, so no two parts of a
// structure (or two lcores' structures) share a line.
inline constexpr size_t kCacheLine = 64;

// The largest structure the core builds: 2^50 bits (128 TiB). Every sizing
// function refuses more (Errc::too_large), so no size computation overflows
// uint64_t or size_t (a segment count of at most 1088 times this stays below 2^61).
inline constexpr uint64_t kMaxStructureBits = uint64_t{1} << 50;

// True for 1, 2, 4, ...; false for 0.
constexpr bool is_pow2(uint64_t x) noexcept { return x != 0 && (x & (x - 1)) == 0; }
// x rounded up to a multiple of `align` (a power of two).
constexpr uint64_t align_up(uint64_t x, uint64_t align) noexcept {
  return (x + align - 1) & ~(align - 1);
}

// Sizes an arena: mirrors Arena::carve's arithmetic so bytes_needed(config)
// equals what create(config, arena) consumes from any base address.
class ArenaLayout {
 public:
  // Every carve rounds its size up to its alignment; the base of an arbitrary
  // caller buffer may need up to (kCacheLine - 1) bytes of padding first.
  constexpr ArenaLayout& add(size_t bytes, size_t align = kCacheLine) noexcept {
    bytes_ += align_up(bytes, align);
    if (align > max_align_) max_align_ = align;
    return *this;
  }
  // What an arena must hold for every add() so far, from any base address.
  constexpr size_t bytes() const noexcept { return bytes_ + (max_align_ - 1); }

 private:
  size_t bytes_ = 0;
  size_t max_align_ = kCacheLine;
};

// The caller's memory, carved front to back by create(); never freed piecemeal
// (rewind() undoes a failed create). Holds no ownership: the caller frees the span.
class Arena {
 public:
  // An empty arena: every carve fails.
  constexpr Arena() noexcept = default;
  // The span [base, base + size); a null base is an empty arena.
  constexpr Arena(void* base, size_t size) noexcept
      : base_(static_cast<unsigned char*>(base)), size_(base ? size : 0) {}

  constexpr size_t capacity() const noexcept { return size_; }  // the span's size
  constexpr size_t used() const noexcept { return used_; }  // carved so far, padding included
  constexpr size_t remaining() const noexcept { return size_ - used_; }  // capacity() - used()
  constexpr const void* base() const noexcept { return base_; }  // the span's start

  // Carves `bytes` (rounded up to `align`) aligned to `align`. Exhaustion is
  // an error value; the arena is left unchanged on failure.
  Expected<void*> carve(size_t bytes, size_t align = kCacheLine) noexcept {
    if (!is_pow2(align)) return Errc::arena_misaligned;
    const uintptr_t start = reinterpret_cast<uintptr_t>(base_) + used_;
    const uintptr_t aligned = static_cast<uintptr_t>(align_up(start, align));
    const size_t pad = aligned - start;
    const size_t rounded = align_up(bytes, align);
    if (rounded < bytes || pad > remaining() || rounded > remaining() - pad)
      return Errc::arena_too_small;
    used_ += pad + rounded;
    return reinterpret_cast<void*>(aligned);
  }

  // count objects of T (uninitialised), aligned to the larger of `align`
  // and alignof(T). arena_too_small when they do not fit or count * sizeof(T) overflows.
  template <class T>
  Expected<T*> carve_array(size_t count, size_t align = kCacheLine) noexcept {
    if (count > SIZE_MAX / sizeof(T)) return Errc::arena_too_small;
    auto p = carve(count * sizeof(T), align < alignof(T) ? alignof(T) : align);
    if (!p) return p.error();
    return static_cast<T*>(*p);
  }

  // Gives back everything carved after `mark` (a value of used()); lets a
  // create() that fails half-way leave the arena as it found it.
  constexpr void rewind(size_t mark) noexcept {
    if (mark <= used_) used_ = mark;
  }

 private:
  unsigned char* base_ = nullptr;
  size_t size_ = 0;
  size_t used_ = 0;
};

// A saved copy of an arena (a snapshot's state bytes), read through the
// pointers of the filter that lives in the arena: read(p) is the copy's
// object at p's offset from the arena's base. A structure checks such a copy
// before it is loaded over its own state (accepts_image()), since a crafted
// image passes the snapshot's checksum. Copied out, so the saved bytes need no
// alignment; a read outside the copy fails.
class ArenaImage {
 public:
  // `bytes` saved from the arena whose base is `live_base`, at `saved`.
  constexpr ArenaImage(const void* saved, const void* live_base, size_t bytes) noexcept
      : saved_(static_cast<const unsigned char*>(saved)), base_(static_cast<const unsigned char*>(live_base)),
        bytes_(bytes) {}

  // The saved object of `live` (element i of the array `live` starts), into out.
  template <class T>
  bool read(const T* live, T& out, size_t i = 0) const noexcept {
    const uintptr_t at = reinterpret_cast<uintptr_t>(live) - reinterpret_cast<uintptr_t>(base_);
    if (reinterpret_cast<uintptr_t>(live) < reinterpret_cast<uintptr_t>(base_) || at > bytes_ ||
        i > (bytes_ - at) / sizeof(T) || (bytes_ - at) / sizeof(T) - i < 1)
      return false;
    __builtin_memcpy(&out, saved_ + at + i * sizeof(T), sizeof(T));
    return true;
  }

 private:
  const unsigned char* saved_;
  const unsigned char* base_;
  size_t bytes_;
};

// A bool read from saved bytes holds 0 or 1 (any other byte is no bool: a
// load of it is undefined). Reads the byte, not the bool.
inline bool is_flag(const bool& b) noexcept {
  unsigned char c;
  __builtin_memcpy(&c, &b, 1);
  return c <= 1;
}

}  // namespace agebloom
