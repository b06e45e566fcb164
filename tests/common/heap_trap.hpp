// A trap on every heap call, for the tests that prove a path allocation-free:
// malloc, calloc, realloc, the aligned forms and free are interposed (and so
// operator new and delete, which go through them). While a HeapTrap is alive,
// each call is counted. Include it in exactly one translation unit of a test
// program: it defines the C library's allocation functions.
#pragma once

#include <atomic>
#include <cstddef>

extern "C" {
void* __libc_malloc(size_t);
void* __libc_calloc(size_t, size_t);
void* __libc_realloc(void*, size_t);
void* __libc_memalign(size_t, size_t);
void __libc_free(void*);
}

namespace agebloom::testing {
inline std::atomic<bool> g_heap_armed{false};
inline std::atomic<long> g_heap_calls{0};
inline void note_heap_call() {
  if (g_heap_armed.load(std::memory_order_relaxed)) g_heap_calls.fetch_add(1, std::memory_order_relaxed);
}

// Armed while alive; count() is the heap calls since it was made.
struct HeapTrap {
  HeapTrap() {
    g_heap_calls = 0;
    g_heap_armed = true;
  }
  ~HeapTrap() { g_heap_armed = false; }
  HeapTrap(const HeapTrap&) = delete;
  HeapTrap& operator=(const HeapTrap&) = delete;
  long count() const { return g_heap_calls.load(); }
};
}  // namespace agebloom::testing

extern "C" {
void* malloc(size_t n) {
  agebloom::testing::note_heap_call();
  return __libc_malloc(n);
}
void* calloc(size_t a, size_t b) {
  agebloom::testing::note_heap_call();
  return __libc_calloc(a, b);
}
void* realloc(void* p, size_t n) {
  agebloom::testing::note_heap_call();
  return __libc_realloc(p, n);
}
void* aligned_alloc(size_t align, size_t n) {
  agebloom::testing::note_heap_call();
  return __libc_memalign(align, n);
}
void* memalign(size_t align, size_t n) {
  agebloom::testing::note_heap_call();
  return __libc_memalign(align, n);
}
int posix_memalign(void** out, size_t align, size_t n) {
  agebloom::testing::note_heap_call();
  *out = __libc_memalign(align, n);
  return *out ? 0 : 12;  // ENOMEM
}
void free(void* p) {
  agebloom::testing::note_heap_call();
  __libc_free(p);
}
}
