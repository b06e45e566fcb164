/* agebloom C API: sliding-window Bloom filters for C programs (DPDK apps).
 *
 * C99, usable from C and C++. One opaque handle (agebloom_filter) holds one
 * filter of any registered structure, planned from an agebloom_spec the way
 * dedup_fwd and agebloom-replay plan theirs, so a C program gets the same
 * filter, the same keys and the same verdicts as the tools.
 *
 * Life cycle:
 *   agebloom_spec spec;  agebloom_spec_init(&spec);   // defaults, and spec.size
 *   spec.window = 1000000;  spec.fpr = 0.001;
 *   size_t n;  agebloom_filter_bytes(&spec, &n);       // the caller's memory, or
 *   agebloom_filter_init(&spec, mem, n, &f);           // agebloom_filter_create()
 *   ... agebloom_test_and_insert_bulk(f, hashes, burst, dup) ...
 *   agebloom_filter_destroy(f);
 *
 * Errors: every function that can fail returns an agebloom_status (0 = OK,
 * negative = error; agebloom_strerror() names it). No C++ exception crosses
 * this boundary: the library catches them and answers AGEBLOOM_ENOMEM or
 * AGEBLOOM_EINTERNAL.
 *
 * Memory: the filter's state lives in memory the caller gives
 * (agebloom_filter_init) or the caller's allocator returns
 * (agebloom_filter_create), aligned to AGEBLOOM_ALIGN. The calls a burst
 * loop makes (insert, contains, test_and_insert, their bulk and key-byte
 * forms, agebloom_hash_key, agebloom_advance, agebloom_extract_key) never
 * allocate and never lock, and only the last two can fail (time going back,
 * a frame without a key). agebloom_filter_init_plan, save, load and destroy
 * do not allocate either. Planning (agebloom_plan_spec, agebloom_filter_bytes,
 * agebloom_filter_init, agebloom_filter_create) and agebloom_filter_stats are
 * control-plane work: they may use the heap while they run and free it
 * before returning.
 *
 * Threads: a handle is not synchronised; use one per lcore (or lock around
 * it). Distinct handles are independent.
 *
 * ABI: every struct that crosses the boundary starts with a `size` field the
 * caller sets to sizeof the struct it was compiled with (the *_init
 * functions below do); the library reads and writes only that many bytes,
 * so a program built against this header keeps working with a later
 * libagebloom.so.1 whose structs grew at the end. (A program built against
 * a later header than the library's: the library ignores the fields it does
 * not know, and an output struct's `size` comes back as what it filled.)
 * AGEBLOOM_ABI_VERSION changes, with the soname, only when that promise has
 * to be broken.
 */
#ifndef AGEBLOOM_AGEBLOOM_H
#define AGEBLOOM_AGEBLOOM_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "agebloom/core/export.h"

#ifdef __cplusplus
/* No exception leaves these functions; C++ callers see it in their types. */
#define AGEBLOOM_NOEXCEPT noexcept
extern "C" {
#else
#define AGEBLOOM_NOEXCEPT
#endif

/** The version of this interface's ABI; the shared library's soname is
 *  libagebloom.so.AGEBLOOM_ABI_VERSION. */
#define AGEBLOOM_ABI_VERSION 1

/** Alignment the caller's memory must have (one cache line). */
#define AGEBLOOM_ALIGN 64

/** The longest key agebloom_extract_key() writes, in bytes. */
#define AGEBLOOM_KEY_MAX 2048

/** Status codes. 0 is success; every error is negative. */
typedef enum agebloom_status {
  AGEBLOOM_OK = 0,               /**< success */
  AGEBLOOM_EINVAL = -1,          /**< a null pointer or a value out of range (window, fpr, capacity,
                                      a window the structure cannot keep: agebloom_plan_error says which) */
  AGEBLOOM_ENOSTRUCT = -2,       /**< spec.structure names no registered structure */
  AGEBLOOM_ENOPLAN = -3,         /**< no shape meets the spec (fpr out of reach, memory limit too tight:
                                      agebloom_plan_error says which) */
  AGEBLOOM_ENOMEM = -4,          /**< the memory given is too small, or an allocation failed */
  AGEBLOOM_EALIGN = -5,          /**< the memory given is not aligned to AGEBLOOM_ALIGN */
  AGEBLOOM_ETIME = -6,           /**< agebloom_advance: time went backwards */
  AGEBLOOM_EIMAGE = -7,          /**< agebloom_filter_load: not a saved image (magic, version, truncated, checksum, state) */
  AGEBLOOM_EIMAGE_MISMATCH = -8, /**< agebloom_filter_load: an image of another filter (structure,
                                      parameters, window or seed differ) */
  AGEBLOOM_EVERSION = -9,        /**< a struct's size field is smaller than any this library knows */
  AGEBLOOM_ENOKEY = -10,         /**< agebloom_extract_key: the frame has no key (see the reason) */
  AGEBLOOM_ERANGE = -11,         /**< an output buffer is too small for the result */
  AGEBLOOM_EINTERNAL = -12       /**< an unexpected failure inside the library (a bug: please report) */
} agebloom_status;

/** A static, never-null English description of `status` ("invalid argument", ...). */
AGEBLOOM_API const char* agebloom_strerror(int status) AGEBLOOM_NOEXCEPT;

/** The library's version, "MAJOR.MINOR.PATCH" (static string). */
AGEBLOOM_API const char* agebloom_version(void) AGEBLOOM_NOEXCEPT;

/** The ABI version of the library loaded at run time; equal to the
 *  AGEBLOOM_ABI_VERSION a program was built with unless it was linked
 *  against a different major version. */
AGEBLOOM_API unsigned agebloom_abi_version(void) AGEBLOOM_NOEXCEPT;

/* ---------------------------------------------------------------------- */
/* Specs and plans                                                          */

/** The window kinds. */
typedef enum agebloom_window_kind {
  AGEBLOOM_WINDOW_COUNT = 0, /**< the last `window` insertions */
  AGEBLOOM_WINDOW_TIME = 1   /**< the last `window` nanoseconds (see agebloom_advance) */
} agebloom_window_kind;

/** What a filter is asked to keep: dedup_fwd's --filter, --window/--ttl,
 *  --fpr, --capacity, --mem and --seed. Fill with agebloom_spec_init(). */
typedef struct agebloom_spec {
  uint32_t size;         /**< sizeof(agebloom_spec) as compiled by the caller (agebloom_spec_init sets it) */
  uint32_t window_kind;  /**< an agebloom_window_kind */
  const char* structure; /**< a registry name ("interleaved", "apbf", ... see agebloom_structure_name),
                              or "auto"/NULL: the planner picks among the dataplane's fastest layouts */
  uint64_t window;       /**< insertions (count window) or nanoseconds (time window); > 0 */
  double fpr;            /**< target false-positive rate, in (0, 1) */
  uint64_t capacity;     /**< time windows: insertions expected per window; 0 = unknown (auto plans a
                              rate-adaptive structure; a named one assumes 1,000,000). Count
                              windows: must be 0 (EINVAL otherwise, as --capacity with --window) */
  uint64_t mem_bytes;    /**< the filter's memory at most (tlbf: its budget); 0 = no limit */
  uint64_t seed;         /**< hash seed of the key-byte functions; draw it at random per process so
                              that nobody can grind colliding keys */
} agebloom_spec;

/** Sets `spec` to the defaults (count window of 0 - which must be set -,
 *  fpr 0.01, "auto", seed 0) and spec->size. Inline: it records the size
 *  this program was compiled with. */
static inline void agebloom_spec_init(agebloom_spec* spec) {
  memset(spec, 0, sizeof *spec);
  spec->size = (uint32_t)sizeof(agebloom_spec);
  spec->window_kind = AGEBLOOM_WINDOW_COUNT;
  spec->fpr = 0.01;
}

/** The planner's choice for a spec, readable (agebloom-plan's answer). */
typedef struct agebloom_plan {
  uint32_t size;            /**< sizeof(agebloom_plan) as compiled by the caller (agebloom_plan_init) */
  uint32_t window_kind;     /**< an agebloom_window_kind */
  uint64_t window;          /**< insertions or nanoseconds */
  char structure[32];       /**< the registry name chosen, NUL-terminated */
  char parameters[224];     /**< its shape, e.g. "r=8 k=10 lines=...", NUL-terminated (may be cut) */
  double bits_per_item;     /**< memory per window item (per capacity item for time windows) */
  double model_fpr;         /**< the structure's model false-positive rate (worst case) */
  uint64_t state_bytes;     /**< the structure's arena */
  uint64_t filter_bytes;    /**< what agebloom_filter_bytes() answers: state plus the handle */
  uint64_t seed;            /**< the spec's seed: agebloom_filter_init_plan() hashes keys with it */
  uint64_t opaque[32];      /**< the planned configuration, for agebloom_filter_init_plan(): not to
                                 be read or changed (checksummed), and meant for the library that
                                 made it: keep the spec, not the plan, across upgrades */
} agebloom_plan;

/** Zeroes `plan` and sets plan->size (inline, like agebloom_spec_init). */
static inline void agebloom_plan_init(agebloom_plan* plan) {
  memset(plan, 0, sizeof *plan);
  plan->size = (uint32_t)sizeof(agebloom_plan);
}

/** Plans `spec` without building anything: which structure, its shape, its
 *  bits per item, model FPR and memory. plan->size must be set
 *  (agebloom_plan_init). Errors: EINVAL, ENOSTRUCT, ENOPLAN, EVERSION. */
AGEBLOOM_API int agebloom_plan_spec(const agebloom_spec* spec, agebloom_plan* plan) AGEBLOOM_NOEXCEPT;

/** Why the calling thread's last planning call (agebloom_plan_spec,
 *  agebloom_filter_bytes, agebloom_filter_init, agebloom_filter_create) was
 *  refused (EINVAL, ENOSTRUCT, ENOPLAN), in the words dedup_fwd and
 *  agebloom-replay print ("window 3 is shorter than the segments ...",
 *  "fpr 1e-300 is out of reach ..."), their options named as the spec
 *  fields that set them (spec.mem_bytes, spec.fpr, spec.window, ...);
 *  "" after a plan that succeeded, or a
 *  null pointer or size field refused before the spec was read. Never NULL;
 *  valid until the thread's next planning call. */
AGEBLOOM_API const char* agebloom_plan_error(void) AGEBLOOM_NOEXCEPT;

/** The number of registered structures. */
AGEBLOOM_API unsigned agebloom_structure_count(void) AGEBLOOM_NOEXCEPT;

/** The registry name of structure `i` (0 <= i < agebloom_structure_count()),
 *  or NULL. These are the names agebloom_spec.structure takes. */
AGEBLOOM_API const char* agebloom_structure_name(unsigned i) AGEBLOOM_NOEXCEPT;

/* ---------------------------------------------------------------------- */
/* Filters                                                                  */

/** A filter: opaque; it lives at the start of the memory it was made in. */
typedef struct agebloom_filter agebloom_filter;

/** Bytes of AGEBLOOM_ALIGN-aligned memory agebloom_filter_init() needs for
 *  `spec` (the handle and the filter's state). Errors as agebloom_plan_spec. */
AGEBLOOM_API int agebloom_filter_bytes(const agebloom_spec* spec, size_t* bytes) AGEBLOOM_NOEXCEPT;

/** Builds the filter of `spec` in the caller's `mem` (`len` bytes, at least
 *  agebloom_filter_bytes(), aligned to AGEBLOOM_ALIGN; e.g. rte_zmalloc_socket
 *  with align 64 on the lcore's socket). The filter starts empty. Nothing
 *  is allocated for the filter: `mem` is all of it, and *out points into it
 *  (planning the spec may use the heap meanwhile and frees it before
 *  returning; agebloom_filter_init_plan() does not plan).
 *  The caller keeps `mem` alive until agebloom_filter_destroy() and frees it
 *  after. Errors: EINVAL, ENOSTRUCT, ENOPLAN, ENOMEM (len too small),
 *  EALIGN, EVERSION. */
AGEBLOOM_API int agebloom_filter_init(const agebloom_spec* spec, void* mem, size_t len, agebloom_filter** out) AGEBLOOM_NOEXCEPT;

/** The caller's allocator: `size` bytes aligned to `align` (a power of two),
 *  or NULL. `ctx` is the pointer given to agebloom_filter_create(). */
typedef void* (*agebloom_alloc_fn)(size_t size, size_t align, void* ctx);
/** Frees what the matching agebloom_alloc_fn returned. */
typedef void (*agebloom_free_fn)(void* ptr, void* ctx);

/** Builds the filter a plan describes (from agebloom_plan_spec() or
 *  agebloom_filter_plan()) in the caller's `mem`, like agebloom_filter_init()
 *  but without planning: it allocates nothing at all, so a dataplane can
 *  plan at start-up and build (or rebuild) filters later on any thread.
 *  len >= plan->filter_bytes. Keys are hashed with plan->seed. Errors: EINVAL
 *  (a plan not made by this library, or changed: its opaque words, or a
 *  window, structure, parameters or size that no longer says what they hold), ENOMEM,
 *  EALIGN, EVERSION. */
AGEBLOOM_API int agebloom_filter_init_plan(const agebloom_plan* plan, void* mem, size_t len, agebloom_filter** out) AGEBLOOM_NOEXCEPT;

/** Like agebloom_filter_init(), with the memory from `alloc` (one call) -
 *  or from aligned_alloc() when `alloc` is NULL - given back to `free_fn`
 *  (or free()) by agebloom_filter_destroy(). `alloc` and `free_fn` are both
 *  NULL or both set. Errors as agebloom_filter_init. */
AGEBLOOM_API int agebloom_filter_create(const agebloom_spec* spec, agebloom_alloc_fn alloc, agebloom_free_fn free_fn,
                                        void* ctx, agebloom_filter** out) AGEBLOOM_NOEXCEPT;

/** Ends the filter: frees its memory if agebloom_filter_create() allocated
 *  it; after agebloom_filter_init() it only invalidates the handle, and the
 *  caller frees `mem`. NULL is a no-op. */
AGEBLOOM_API void agebloom_filter_destroy(agebloom_filter* f) AGEBLOOM_NOEXCEPT;

/** The plan the filter was built from (plan->size must be set). */
AGEBLOOM_API int agebloom_filter_plan(const agebloom_filter* f, agebloom_plan* plan) AGEBLOOM_NOEXCEPT;

/* ---------------------------------------------------------------------- */
/* Keys, hashes, queries                                                    */

/** A key hashed once under the filter's seed: four AES rounds for keys of at
 *  most 16 bytes, XXH3-128 for longer ones (docs/ALGORITHMS.md). Every
 *  probe of every structure derives from these two halves. A value type of
 *  fixed layout (it has no size field and will never grow). */
typedef struct agebloom_hash {
  uint64_t h1; /**< low half: picks blocks, lines and first positions */
  uint64_t h2; /**< high half: the probe step and in-block bits */
} agebloom_hash;

/** Hashes `len` bytes of `key` with the filter's seed (agebloom-replay's
 *  and dedup_fwd's hash of the same key and seed). */
AGEBLOOM_API agebloom_hash agebloom_hash_key(const agebloom_filter* f, const void* key, size_t len) AGEBLOOM_NOEXCEPT;

/** Hashes n keys: keys[i] of lens[i] bytes into out[i]. */
AGEBLOOM_API void agebloom_hash_keys(const agebloom_filter* f, const void* const* keys, const size_t* lens, size_t n,
                                     agebloom_hash* out) AGEBLOOM_NOEXCEPT;

/** Inserts a pre-hashed key. */
AGEBLOOM_API void agebloom_insert(agebloom_filter* f, agebloom_hash h) AGEBLOOM_NOEXCEPT;
/** 1 if the key was inserted within the window (or is a false positive), else 0. */
AGEBLOOM_API int agebloom_contains(const agebloom_filter* f, agebloom_hash h) AGEBLOOM_NOEXCEPT;
/** The dedup primitive: agebloom_contains() then agebloom_insert(), in one
 *  pass. 1 = seen within the window (a duplicate), 0 = new. */
AGEBLOOM_API int agebloom_test_and_insert(agebloom_filter* f, agebloom_hash h) AGEBLOOM_NOEXCEPT;

/** Inserts h[0..n) in order; the lines of later keys are prefetched while
 *  earlier ones are probed, which is why a burst should take this form. */
AGEBLOOM_API void agebloom_insert_bulk(agebloom_filter* f, const agebloom_hash* h, size_t n) AGEBLOOM_NOEXCEPT;
/** out[i] = agebloom_contains(h[i]) (0 or 1) for i in [0, n). */
AGEBLOOM_API void agebloom_contains_bulk(const agebloom_filter* f, const agebloom_hash* h, size_t n, uint8_t* out) AGEBLOOM_NOEXCEPT;
/** out[i] = agebloom_test_and_insert(h[i]) in order: the verdicts of n
 *  scalar calls, prefetched. */
AGEBLOOM_API void agebloom_test_and_insert_bulk(agebloom_filter* f, const agebloom_hash* h, size_t n, uint8_t* out) AGEBLOOM_NOEXCEPT;

/** agebloom_insert() of the key's bytes (hashed with the filter's seed). */
AGEBLOOM_API void agebloom_insert_key(agebloom_filter* f, const void* key, size_t len) AGEBLOOM_NOEXCEPT;
/** agebloom_contains() of the key's bytes. */
AGEBLOOM_API int agebloom_contains_key(const agebloom_filter* f, const void* key, size_t len) AGEBLOOM_NOEXCEPT;
/** agebloom_test_and_insert() of the key's bytes. */
AGEBLOOM_API int agebloom_test_and_insert_key(agebloom_filter* f, const void* key, size_t len) AGEBLOOM_NOEXCEPT;

/** agebloom_insert_bulk() of n keys given as bytes (keys[i], lens[i]). */
AGEBLOOM_API void agebloom_insert_keys_bulk(agebloom_filter* f, const void* const* keys, const size_t* lens,
                                            size_t n) AGEBLOOM_NOEXCEPT;
/** agebloom_contains_bulk() of n keys given as bytes. */
AGEBLOOM_API void agebloom_contains_keys_bulk(const agebloom_filter* f, const void* const* keys, const size_t* lens,
                                              size_t n, uint8_t* out) AGEBLOOM_NOEXCEPT;
/** agebloom_test_and_insert_bulk() of n keys given as bytes. */
AGEBLOOM_API void agebloom_test_and_insert_keys_bulk(agebloom_filter* f, const void* const* keys, const size_t* lens,
                                                     size_t n, uint8_t* out) AGEBLOOM_NOEXCEPT;

/** How a dedup verdict updates the filter (dedup_fwd's --policy). */
typedef enum agebloom_policy {
  AGEBLOOM_INSERT_ALWAYS = 0, /**< every key is inserted; a duplicate = seen within the window of its
                                   previous sighting (agebloom_test_and_insert) */
  AGEBLOOM_INSERT_ON_MISS = 1 /**< only keys that pass are inserted: at most one per window (click fraud) */
} agebloom_policy;

/** dedup_fwd's verdicts for a burst: dup[i] = 1 when key i is a duplicate
 *  under `policy`, exactly as n scalar calls in order would decide (a key
 *  repeated inside the burst included), with the filter's lines prefetched
 *  ahead. `now`: per-key times for a time window (agebloom_advance(now[i])
 *  before key i; they should not decrease, and a time before the filter's
 *  clock leaves the clock where it is, as agebloom-replay holds it), or NULL
 *  when the caller advanced the filter for the whole burst. A `policy` other
 *  than AGEBLOOM_INSERT_ON_MISS is insert-always (no status: a hot path). */
AGEBLOOM_API void agebloom_dedup_bulk(agebloom_filter* f, const agebloom_hash* h, size_t n, const uint64_t* now,
                                      agebloom_policy policy, uint8_t* dup) AGEBLOOM_NOEXCEPT;

/** Requests the filter lines that n keys will touch, and changes nothing:
 *  call it as soon as a burst's hashes are known and decide that burst a
 *  little later (after receiving and hashing the next one, say), so the
 *  lines arrive meanwhile instead of stalling the bulk call. dedup_fwd keeps
 *  one burst in flight this way (docs/PERFORMANCE.md, "One burst in flight");
 *  the verdicts are those of the same calls without it. */
AGEBLOOM_API void agebloom_prefetch_bulk(const agebloom_filter* f, const agebloom_hash* h,
                                         size_t n) AGEBLOOM_NOEXCEPT;

/** Time windows: expires what ended by `now` (nanoseconds on the caller's
 *  clock, e.g. rte_get_tsc_cycles() scaled, or packet timestamps); call it
 *  once per burst before the burst's operations. Count windows: a no-op.
 *  Errors: ETIME when `now` is before a `now` already given (the filter is
 *  unchanged). */
AGEBLOOM_API int agebloom_advance(agebloom_filter* f, uint64_t now) AGEBLOOM_NOEXCEPT;

/* ---------------------------------------------------------------------- */
/* Stats                                                                    */

/** A filter's figures. Fill with agebloom_stats_init() then agebloom_filter_stats(). */
typedef struct agebloom_stats {
  uint32_t size;           /**< sizeof(agebloom_stats) as compiled by the caller */
  uint32_t extra_count;    /**< valid entries of extra[] */
  char structure[32];      /**< registry name */
  uint64_t filter_bytes;   /**< the handle and state */
  double model_fpr;        /**< the structure's model false-positive rate */
  double bits_per_item;    /**< memory per window item */
  double fill_ratio;       /**< set bits (or non-zero cells) over all of them; O(memory) to compute */
  uint64_t saturations;    /**< tlbf: memory-budget saturations (its FPR ran above the model); else 0 */
  struct {
    char name[32];         /**< e.g. "slices", "ring_overflows", NUL-terminated */
    double value;          /**< its value */
  } extra[8];              /**< what a structure keeps about itself (tlbf: slices, shifts, ...;
                                counting: ring_overflows, ...), as agebloom-replay's JSON "stats" */
} agebloom_stats;

/** Zeroes `stats` and sets stats->size. */
static inline void agebloom_stats_init(agebloom_stats* stats) {
  memset(stats, 0, sizeof *stats);
  stats->size = (uint32_t)sizeof(agebloom_stats);
}

/** Fills `stats` (stats->size must be set). Control plane: it reads the
 *  whole filter for fill_ratio. Errors: EINVAL, EVERSION. */
AGEBLOOM_API int agebloom_filter_stats(const agebloom_filter* f, agebloom_stats* stats) AGEBLOOM_NOEXCEPT;

/* ---------------------------------------------------------------------- */
/* Save and load                                                            */

/** Bytes agebloom_filter_save() writes for this filter: a header (magic,
 *  format version, structure, parameters, window, seed, checksum) and the
 *  state. It is the image format of agebloom/dedup/snapshot.hpp, which
 *  dedup_fwd's --snapshot file holds one of per worker lcore, behind a file
 *  header of its own; dedup_fwd's images also name its key mode and policy
 *  and carry its arena, so the two do not load each other's. */
AGEBLOOM_API size_t agebloom_filter_save_bytes(const agebloom_filter* f) AGEBLOOM_NOEXCEPT;

/** Writes the filter's state to buf[0..len) (len >= agebloom_filter_save_bytes);
 *  *written (if not NULL) receives the size. The image is plain bytes: store it,
 *  send it, load it into a filter of the same spec on this or another process
 *  of the same architecture. Errors: EINVAL, ERANGE (len too small). */
AGEBLOOM_API int agebloom_filter_save(const agebloom_filter* f, void* buf, size_t len, size_t* written) AGEBLOOM_NOEXCEPT;

/** Replaces the filter's state by a saved image's. The filter must have been
 *  built from the same spec (same structure and shape, window and seed).
 *  `len` is the image's exact size (agebloom_filter_save's *written): a
 *  buffer with bytes after the image is refused as damaged, as is a short one.
 *  Errors: EINVAL, EIMAGE (not an image, another format version, or a
 *  damaged one: truncated, or its checksum does not match; or one whose
 *  saved state this structure cannot be in, as a crafted image resealed past
 *  the checksum would be), EIMAGE_MISMATCH (an image of another filter); on
 *  any error the filter is unchanged. */
AGEBLOOM_API int agebloom_filter_load(agebloom_filter* f, const void* buf, size_t len) AGEBLOOM_NOEXCEPT;

/* ---------------------------------------------------------------------- */
/* Key extraction from packet bytes                                         */

/** What a key is made of (dedup_fwd's and agebloom-replay's --key). */
typedef enum agebloom_key_mode {
  AGEBLOOM_KEY_SRC_IP = 0, /**< source address (every IP packet, fragments included) */
  AGEBLOOM_KEY_DST_IP = 1, /**< destination address */
  AGEBLOOM_KEY_FLOW = 2,   /**< 5-tuple (ports 0 for protocols without them); a later fragment
                                (offset != 0) has no ports: ENOKEY, reason "non_first_fragment" */
  AGEBLOOM_KEY_CLICK = 3,  /**< client address + HTTP/1.x method and request target (later
                                fragments: ENOKEY, as for FLOW) */
  AGEBLOOM_KEY_PACKET = 4  /**< the whole frame (SPAN/TAP copies): the IP packet with TTL/hop limit and
                                the IPv4 checksum masked, plus MACs and VLAN IDs, as --key packet */
} agebloom_key_mode;

/** Link types agebloom_extract_key() takes (libpcap's DLT_ values). */
#define AGEBLOOM_LINKTYPE_ETHERNET 1u /**< DLT_EN10MB: a DPDK mbuf's frame */
#define AGEBLOOM_LINKTYPE_RAW 12u     /**< DLT_RAW: IPv4 or IPv6 without a link layer */

/** Click-mode options; NULL means the defaults (ports 80 and 8080, whole target). */
typedef struct agebloom_click_options {
  uint32_t size;        /**< sizeof(agebloom_click_options) as compiled by the caller */
  uint32_t port_count;  /**< valid entries of ports[] (at most 8: more is EINVAL) */
  uint16_t ports[8];    /**< TCP destination ports that carry HTTP requests */
  int any_port;         /**< nonzero: look for a request on every TCP destination port */
  int include_host;     /**< nonzero: append the Host header to the key */
  const char* param;    /**< key on this query parameter's value only (NULL: whole target) */
} agebloom_click_options;

/** Sets the click defaults and options->size. */
static inline void agebloom_click_options_init(agebloom_click_options* options) {
  memset(options, 0, sizeof *options);
  options->size = (uint32_t)sizeof(agebloom_click_options);
  options->port_count = 2;
  options->ports[0] = 80;
  options->ports[1] = 8080;
}

/** Extracts the key of `mode` from one frame (`frame_len` captured bytes,
 *  link type `linktype`) into key[0..key_cap), the bytes dedup_fwd and
 *  agebloom-replay hash for the same frame; *key_len gets their number. Pure,
 *  allocation-free, bounds-checked: a hostile frame yields ENOKEY, never a
 *  read outside it. `reason` (may be NULL) gets 0 or why there is no key
 *  (agebloom_key_reason_name). `click` may be NULL. Errors: EINVAL, ENOKEY,
 *  ERANGE (key_cap too small; AGEBLOOM_KEY_MAX always suffices). */
AGEBLOOM_API int agebloom_extract_key(uint32_t linktype, const void* frame, size_t frame_len, agebloom_key_mode mode,
                                      const agebloom_click_options* click, void* key, size_t key_cap,
                                      size_t* key_len, unsigned* reason) AGEBLOOM_NOEXCEPT;

/** Everything that shapes a key besides the mode: dedup_fwd's and
 *  agebloom-replay's keying options, and the frame's length on the wire. */
typedef struct agebloom_key_options {
  uint32_t size;              /**< sizeof(agebloom_key_options) as compiled by the caller */
  int vlan_in_key;            /**< nonzero: every mode but packet appends the frame's VLAN IDs, so one
                                   address or 5-tuple in two VLANs is two keys (--vlan-in-key) */
  int ignore_vlan;            /**< packet: leave the VLAN IDs out of the key (--ignore-vlan) */
  int ignore_l2;              /**< packet: leave the MACs and VLAN IDs out (--ignore-l2) */
  uint32_t packet_bytes;      /**< packet: hash at most this many bytes from the IP header on, 20 to
                                   AGEBLOOM_KEY_MAX - 19, 2029 (--packet-bytes): what a key holds
                                   with MACs and two VLAN IDs; 0 = all of it */
  uint64_t wire_len;          /**< the frame's length on the wire when frame_len bytes are only its start
                                   (a snap length, or the first segment of a chained mbuf: its
                                   pkt_len); the IP and TCP length fields are then checked against it,
                                   and a key whose bytes all lie within frame_len is kept. 0 = the frame
                                   is whole. Packet keys need the whole packet. */
  agebloom_click_options click; /**< click mode's options (its size set by agebloom_key_options_init) */
} agebloom_key_options;

/** Sets the defaults (no VLAN IDs in address and flow keys, packet keys
 *  whole with MACs and VLAN IDs, a whole frame, click's defaults) and the
 *  sizes. */
static inline void agebloom_key_options_init(agebloom_key_options* options) {
  memset(options, 0, sizeof *options);
  options->size = (uint32_t)sizeof(agebloom_key_options);
  agebloom_click_options_init(&options->click);
}

/** agebloom_extract_key with every keying option (`options` may be NULL:
 *  the defaults). Errors as agebloom_extract_key, and EINVAL for a
 *  packet-only option in another mode, vlan_in_key in packet mode (as the
 *  tools refuse them), a packet_bytes out of range, or wire_len below
 *  frame_len. */
AGEBLOOM_API int agebloom_extract_key_with(uint32_t linktype, const void* frame, size_t frame_len,
                                           agebloom_key_mode mode, const agebloom_key_options* options, void* key,
                                           size_t key_cap, size_t* key_len, unsigned* reason) AGEBLOOM_NOEXCEPT;

/** The stable name of a no-key reason ("ok", "truncated_l2", "unsupported_l2",
 *  ...), as in agebloom-replay's "unparsed_reasons"; "unknown" past the last. */
AGEBLOOM_API const char* agebloom_key_reason_name(unsigned reason) AGEBLOOM_NOEXCEPT;

/** The policy dedup_fwd and agebloom-replay use for a key mode by default:
 *  insert-on-miss for click, insert-always for the others. (Packet keys: the
 *  tools also default to --fpr 1e-6 there, since every packet is a key.) */
AGEBLOOM_API agebloom_policy agebloom_default_policy(agebloom_key_mode mode) AGEBLOOM_NOEXCEPT;

/** The command-line word of a key mode ("src-ip", "dst-ip", "flow", "click",
 *  "packet"), or NULL. */
AGEBLOOM_API const char* agebloom_key_mode_name(agebloom_key_mode mode) AGEBLOOM_NOEXCEPT;

#ifdef __cplusplus
}  /* extern "C" */
#endif

#endif /* AGEBLOOM_AGEBLOOM_H */
