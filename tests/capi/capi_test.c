/* The C API from C: built as C99 against include/agebloom/agebloom.h and
 * linked with the shared library, so it is also the check that a program
 * built against the header runs against libagebloom.so (ABI). Every check
 * that fails prints its line; exit 1 if any did. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agebloom/agebloom.h"
#include "../common/snapshot_reseal.h"

static int failures;
#define CHECK(cond)                                              \
  do {                                                           \
    if (!(cond)) {                                               \
      fprintf(stderr, "%s:%d: CHECK(%s)\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                \
    }                                                            \
  } while (0)

static agebloom_spec count_spec(const char* structure, uint64_t window) {
  agebloom_spec s;
  agebloom_spec_init(&s);
  s.structure = structure;
  s.window = window;
  s.fpr = 0.001;
  s.seed = 0x1234;
  return s;
}

/* `s` as the rate-adaptive tlbf over a 1 s time window. */
static agebloom_spec tlbf_over_one_second(agebloom_spec s) {
  s.structure = "tlbf";
  s.window_kind = AGEBLOOM_WINDOW_TIME;
  s.window = 1000000000;
  return s;
}

/* The allocator callback: counts what it hands out and takes back. */
static int allocs, frees;
static void* counting_alloc(size_t size, size_t align, void* ctx) {
  (void)ctx;
  ++allocs;
  return aligned_alloc(align, (size + align - 1) / align * align);
}
static void counting_free(void* p, void* ctx) {
  (void)ctx;
  ++frees;
  free(p);
}

static void test_versions_and_errors(void) {
  CHECK(agebloom_abi_version() == AGEBLOOM_ABI_VERSION);
  CHECK(strlen(agebloom_version()) >= 5);
  CHECK(strcmp(agebloom_strerror(AGEBLOOM_OK), "success") == 0);
  for (int st = AGEBLOOM_EINTERNAL; st < 0; ++st) CHECK(strcmp(agebloom_strerror(st), "unknown status") != 0);
  CHECK(strcmp(agebloom_strerror(-1000), "unknown status") == 0);
  CHECK(agebloom_structure_count() == 18);
  CHECK(strcmp(agebloom_structure_name(17), "interleaved-swept") == 0);
  CHECK(agebloom_structure_name(agebloom_structure_count()) == NULL);
  CHECK(strcmp(agebloom_key_mode_name(AGEBLOOM_KEY_FLOW), "flow") == 0);
}

static void test_plan(void) {
  agebloom_spec s = count_spec(NULL, 100000);
  agebloom_plan p;
  agebloom_plan_init(&p);
  CHECK(agebloom_plan_spec(&s, &p) == AGEBLOOM_OK);
  CHECK(p.structure[0] != '\0' && p.parameters[0] != '\0');
  CHECK(p.model_fpr > 0 && p.model_fpr <= 0.001);
  CHECK(p.bits_per_item > 1 && p.state_bytes > 0 && p.filter_bytes > p.state_bytes);
  CHECK(p.window_kind == AGEBLOOM_WINDOW_COUNT && p.window == 100000);
  size_t bytes = 0;
  CHECK(agebloom_filter_bytes(&s, &bytes) == AGEBLOOM_OK && bytes == p.filter_bytes);

  /* Every registered name plans under its own name (a count window; tlbf
   * and the others that keep one take it). */
  for (unsigned i = 0; i < agebloom_structure_count(); ++i) {
    agebloom_spec n = count_spec(agebloom_structure_name(i), 4096);
    n.fpr = 0.01;
    agebloom_plan_init(&p);
    int st = agebloom_plan_spec(&n, &p);
    CHECK(st == AGEBLOOM_OK);
    if (st == AGEBLOOM_OK) CHECK(strcmp(p.structure, agebloom_structure_name(i)) == 0);
  }

  /* Each mistake has its code. */
  agebloom_spec bad = s;
  bad.fpr = 1.5;
  CHECK(agebloom_plan_spec(&bad, &p) == AGEBLOOM_EINVAL);
  bad = s;
  bad.window = 0;
  CHECK(agebloom_plan_spec(&bad, &p) == AGEBLOOM_EINVAL);
  CHECK(strstr(agebloom_plan_error(), "window must be at least 1") != NULL);
  bad = s;
  bad.structure = "no-such-filter";
  CHECK(agebloom_plan_spec(&bad, &p) == AGEBLOOM_ENOSTRUCT);
  CHECK(strstr(agebloom_plan_error(), "no-such-filter") != NULL);
  bad = s;
  bad.fpr = 1e-300;
  CHECK(agebloom_plan_spec(&bad, &p) == AGEBLOOM_ENOPLAN);
  CHECK(strstr(agebloom_plan_error(), "out of reach") != NULL);
  bad = s;
  bad.mem_bytes = 64;
  CHECK(agebloom_plan_spec(&bad, &p) == AGEBLOOM_ENOPLAN);
  CHECK(strstr(agebloom_plan_error(), "bytes") != NULL);
  /* tlbf's budget too small is the same refusal: a limit, not a usage error. */
  bad = tlbf_over_one_second(s);
  bad.mem_bytes = 64;
  CHECK(agebloom_plan_spec(&bad, &p) == AGEBLOOM_ENOPLAN);
  CHECK(strstr(agebloom_plan_error(), "64 bytes") != NULL);
  /* In a C caller's words: the spec's field, not the tools' option. */
  CHECK(strstr(agebloom_plan_error(), "spec.mem_bytes") != NULL && strstr(agebloom_plan_error(), "--mem") == NULL);
  /* A budget past 2^50 bits (UINT64_MAX as "no limit") is said as that, not
     as an FPR out of reach or a window shorter than tlbf's segments. */
  bad.mem_bytes = UINT64_MAX;
  CHECK(agebloom_plan_spec(&bad, &p) == AGEBLOOM_EINVAL);
  CHECK(strstr(agebloom_plan_error(), "a budget of 18446744073709551615 bytes (spec.mem_bytes) is past 2^50 bits") != NULL);
  bad.window_kind = AGEBLOOM_WINDOW_COUNT;
  bad.window = 100000;
  bad.mem_bytes = (uint64_t)1 << 48;
  CHECK(agebloom_plan_spec(&bad, &p) == AGEBLOOM_EINVAL);
  CHECK(strstr(agebloom_plan_error(), "past 2^50 bits") != NULL);
  bad.mem_bytes = (uint64_t)1 << 20;  /* a budget within reach still plans */
  CHECK(agebloom_plan_spec(&bad, &p) == AGEBLOOM_OK);
  /* A capacity under tlbf's minimum names the field to raise. */
  bad = tlbf_over_one_second(s);
  bad.capacity = 2;
  CHECK(agebloom_plan_spec(&bad, &p) == AGEBLOOM_EINVAL);
  CHECK(strstr(agebloom_plan_error(), "spec.capacity 2 is too few") != NULL);
  /* The planner's usage errors are EINVAL, each with the planner's reason. */
  bad = s;
  bad.window = 3;  /* shorter than the segments of the fast layouts */
  bad.structure = "interleaved";
  CHECK(agebloom_plan_spec(&bad, &p) == AGEBLOOM_EINVAL);
  CHECK(strstr(agebloom_plan_error(), "shorter than the segments") != NULL);
  /* "auto" then takes a structure of fewer segments, as it does for any limit the fast layouts miss. */
  bad.structure = NULL;
  CHECK(agebloom_plan_spec(&bad, &p) == AGEBLOOM_OK && p.window == 3);
  bad = s;
  bad.window = (uint64_t)1 << 50;
  CHECK(agebloom_plan_spec(&bad, &p) == AGEBLOOM_EINVAL);
  CHECK(strstr(agebloom_plan_error(), "2^48") != NULL);
  bad = s;
  bad.structure = "tbf";
  bad.window_kind = AGEBLOOM_WINDOW_TIME;
  bad.window = 1000000000;
  CHECK(agebloom_plan_spec(&bad, &p) == AGEBLOOM_EINVAL);
  CHECK(strstr(agebloom_plan_error(), "count windows only") != NULL);
  /* A capacity is a time window's (as --capacity is refused with --window). */
  bad = s;
  bad.capacity = 5;
  CHECK(agebloom_plan_spec(&bad, &p) == AGEBLOOM_EINVAL);
  CHECK(strstr(agebloom_plan_error(), "spec.capacity applies to time windows only") != NULL);
  CHECK(agebloom_plan_spec(&s, &p) == AGEBLOOM_OK);
  CHECK(strcmp(agebloom_plan_error(), "") == 0);  /* cleared by a plan that succeeded */
  CHECK(agebloom_plan_spec(NULL, &p) == AGEBLOOM_EINVAL);
  CHECK(agebloom_plan_spec(&s, NULL) == AGEBLOOM_EINVAL);

  /* ABI: a size field below the first version's is refused; a caller built
   * with a longer struct (a later header) gets the fields this library knows. */
  bad = s;
  bad.size = 8;
  CHECK(agebloom_plan_spec(&bad, &p) == AGEBLOOM_EVERSION);
  agebloom_plan small = p;
  small.size = 4;
  CHECK(agebloom_plan_spec(&s, &small) == AGEBLOOM_EVERSION);
  struct {
    agebloom_plan plan;
    unsigned char later_fields[64];
  } longer;
  memset(&longer, 0xAB, sizeof longer);
  longer.plan.size = (uint32_t)sizeof longer;
  CHECK(agebloom_plan_spec(&s, &longer.plan) == AGEBLOOM_OK);
  CHECK(longer.plan.size == sizeof(agebloom_plan)); /* says how much it wrote */
  CHECK(longer.later_fields[0] == 0xAB);              /* and wrote no further */
}

/* Scalar and bulk forms, hashes and key bytes, give the same verdicts. */
static void test_operations(void) {
  agebloom_spec s = count_spec("interleaved", 1000);
  size_t bytes = 0;
  CHECK(agebloom_filter_bytes(&s, &bytes) == AGEBLOOM_OK);
  void* mem_a = aligned_alloc(AGEBLOOM_ALIGN, (bytes + 63) / 64 * 64);
  agebloom_filter* a = NULL;
  CHECK(agebloom_filter_init(&s, mem_a, bytes - 1, &a) == AGEBLOOM_ENOMEM);
  CHECK(agebloom_filter_init(&s, (char*)mem_a + 8, bytes, &a) == AGEBLOOM_EALIGN);
  CHECK(agebloom_filter_init(&s, mem_a, bytes, &a) == AGEBLOOM_OK);
  CHECK((void*)a == mem_a); /* the handle is the start of the caller's memory */

  allocs = frees = 0;
  agebloom_filter* b = NULL;
  CHECK(agebloom_filter_create(&s, counting_alloc, counting_free, NULL, &b) == AGEBLOOM_OK);
  CHECK(allocs == 1);
  agebloom_filter* c = NULL;
  CHECK(agebloom_filter_create(&s, NULL, NULL, NULL, &c) == AGEBLOOM_OK);
  CHECK(agebloom_filter_create(&s, counting_alloc, NULL, NULL, &c) == AGEBLOOM_EINVAL);

  enum { N = 3000 };
  static uint32_t keys[N];
  static const void* kp[N];
  static size_t lens[N];
  static agebloom_hash h[N];
  for (int i = 0; i < N; ++i) {
    keys[i] = (uint32_t)(i % 700) * 2654435761u; /* repeats within the window */
    kp[i] = &keys[i];
    lens[i] = sizeof keys[i];
  }
  agebloom_hash_keys(a, kp, lens, N, h);
  agebloom_hash one = agebloom_hash_key(a, &keys[5], sizeof keys[5]);
  CHECK(one.h1 == h[5].h1 && one.h2 == h[5].h2);

  static uint8_t bulk[N], bulk_keys[N];
  agebloom_test_and_insert_bulk(a, h, N, bulk);
  agebloom_test_and_insert_keys_bulk(b, kp, lens, N, bulk_keys);
  int same = 1, dups = 0;
  for (int i = 0; i < N; ++i) {
    const int v = agebloom_test_and_insert_key(c, kp[i], lens[i]);
    same &= v == bulk[i] && v == bulk_keys[i];
    dups += v;
  }
  CHECK(same);
  CHECK(dups >= N - 700); /* every repeat within 1000 insertions is caught */

  static uint8_t in[N], in_keys[N];
  agebloom_contains_bulk(a, h, N, in);
  agebloom_contains_keys_bulk(b, kp, lens, N, in_keys);
  same = 1;
  for (int i = 0; i < N; ++i)
    same &= in[i] == (uint8_t)agebloom_contains(a, h[i]) && in_keys[i] == in[i] &&
            in[i] == (uint8_t)agebloom_contains_key(c, kp[i], lens[i]);
  CHECK(same);
  /* dedup_bulk: insert-always is test_and_insert; insert-on-miss decides
   * keys repeated inside one burst as scalar calls would. */
  {
    agebloom_filter *d = NULL, *e = NULL;
    static uint8_t dup[N];
    CHECK(agebloom_filter_create(&s, NULL, NULL, NULL, &d) == AGEBLOOM_OK);
    CHECK(agebloom_filter_create(&s, NULL, NULL, NULL, &e) == AGEBLOOM_OK);
    agebloom_dedup_bulk(d, h, N, NULL, AGEBLOOM_INSERT_ALWAYS, dup);
    same = 1;
    for (int i = 0; i < N; ++i) same &= dup[i] == bulk[i];
    CHECK(same);
    agebloom_dedup_bulk(e, h, N, NULL, AGEBLOOM_INSERT_ON_MISS, dup);
    agebloom_filter_destroy(d);
    CHECK(agebloom_filter_create(&s, NULL, NULL, NULL, &d) == AGEBLOOM_OK);
    same = 1;
    for (int i = 0; i < N; ++i) {
      const int seen = agebloom_contains(d, h[i]);
      if (!seen) agebloom_insert(d, h[i]);
      same &= dup[i] == seen;
    }
    CHECK(same);
    /* prefetch_bulk changes nothing: the saved image is the same before
     * and after it, and the verdicts that follow are those without it. */
    {
      agebloom_filter *p = NULL, *q = NULL;
      static uint8_t with[N], without[N];
      CHECK(agebloom_filter_create(&s, NULL, NULL, NULL, &p) == AGEBLOOM_OK);
      CHECK(agebloom_filter_create(&s, NULL, NULL, NULL, &q) == AGEBLOOM_OK);
      agebloom_insert_bulk(p, h, N / 2);
      agebloom_insert_bulk(q, h, N / 2);
      const size_t bytes = agebloom_filter_save_bytes(p);
      unsigned char *before = malloc(bytes), *after = malloc(bytes);
      size_t wb = 0, wa = 0;
      CHECK(before && after && agebloom_filter_save(p, before, bytes, &wb) == AGEBLOOM_OK);
      agebloom_prefetch_bulk(p, h, N);
      agebloom_prefetch_bulk(p, h, 0);
      CHECK(agebloom_filter_save(p, after, bytes, &wa) == AGEBLOOM_OK && wa == wb && memcmp(before, after, wb) == 0);
      agebloom_dedup_bulk(p, h, N, NULL, AGEBLOOM_INSERT_ALWAYS, with);
      agebloom_dedup_bulk(q, h, N, NULL, AGEBLOOM_INSERT_ALWAYS, without);
      CHECK(memcmp(with, without, N) == 0);
      free(before);
      free(after);
      agebloom_filter_destroy(p);
      agebloom_filter_destroy(q);
    }
    CHECK(agebloom_default_policy(AGEBLOOM_KEY_CLICK) == AGEBLOOM_INSERT_ON_MISS);
    CHECK(agebloom_default_policy(AGEBLOOM_KEY_SRC_IP) == AGEBLOOM_INSERT_ALWAYS);
    agebloom_filter_destroy(d);
    agebloom_filter_destroy(e);
  }
  agebloom_insert_bulk(a, h, 10);
  agebloom_insert_keys_bulk(b, kp, lens, 10);
  agebloom_insert(c, h[0]);
  agebloom_insert_key(c, kp[1], lens[1]);
  CHECK(agebloom_contains(a, h[0]) && agebloom_contains(b, h[1]) && agebloom_contains(c, h[1]));
  CHECK(agebloom_advance(a, 123) == AGEBLOOM_OK); /* count window: a no-op */

  agebloom_stats st;
  agebloom_stats_init(&st);
  CHECK(agebloom_filter_stats(a, &st) == AGEBLOOM_OK);
  CHECK(strcmp(st.structure, "interleaved") == 0 && st.filter_bytes == bytes);
  CHECK(st.fill_ratio > 0 && st.fill_ratio < 1 && st.model_fpr > 0);
  agebloom_plan p;
  agebloom_plan_init(&p);
  CHECK(agebloom_filter_plan(a, &p) == AGEBLOOM_OK && p.filter_bytes == bytes);

  agebloom_filter_destroy(a);
  agebloom_filter_destroy(b);
  agebloom_filter_destroy(c);
  agebloom_filter_destroy(NULL);
  CHECK(frees == 1);
  CHECK(agebloom_filter_stats(a, &st) == AGEBLOOM_EINVAL); /* a destroyed handle is refused */
  free(mem_a);
}

/* A time window forgets what ended; time may not go back. */
static void test_time_window(void) {
  agebloom_spec s = count_spec(NULL, 1000000000ull); /* 1 s */
  s.window_kind = AGEBLOOM_WINDOW_TIME;
  s.capacity = 10000;
  agebloom_filter* f = NULL;
  CHECK(agebloom_filter_create(&s, NULL, NULL, NULL, &f) == AGEBLOOM_OK);
  if (!f) return;
  CHECK(agebloom_advance(f, 1000) == AGEBLOOM_OK);
  CHECK(agebloom_test_and_insert_key(f, "k", 1) == 0);
  CHECK(agebloom_advance(f, 500000000ull) == AGEBLOOM_OK);
  CHECK(agebloom_test_and_insert_key(f, "k", 1) == 1);
  CHECK(agebloom_advance(f, 400000000ull) == AGEBLOOM_ETIME);
  CHECK(agebloom_advance(f, 10000000000ull) == AGEBLOOM_OK); /* 10 s later: expired */
  CHECK(agebloom_contains_key(f, "k", 1) == 0);
  {
    /* per-key times in dedup_bulk: 0.5 s apart, then 5 s later */
    const agebloom_hash k = agebloom_hash_key(f, "t", 1);
    const agebloom_hash hs[3] = {k, k, k};
    const uint64_t at[3] = {11000000000ull, 11500000000ull, 16500000000ull};
    uint8_t dup[3];
    agebloom_dedup_bulk(f, hs, 3, at, AGEBLOOM_INSERT_ALWAYS, dup);
    CHECK(dup[0] == 0 && dup[1] == 1 && dup[2] == 0);
  }
  /* Without a capacity, auto plans a rate-adaptive structure. */
  s.capacity = 0;
  s.structure = "auto";
  agebloom_plan p;
  agebloom_plan_init(&p);
  CHECK(agebloom_plan_spec(&s, &p) == AGEBLOOM_OK && strcmp(p.structure, "tlbf") == 0);
  agebloom_filter_destroy(f);
}

/* Save, load into a fresh filter of the same spec, refuse other images. */
static void test_save_load(void) {
  agebloom_spec s = count_spec("guarded-epoch", 5000);
  agebloom_filter *f = NULL, *g = NULL, *other = NULL;
  CHECK(agebloom_filter_create(&s, NULL, NULL, NULL, &f) == AGEBLOOM_OK);
  CHECK(agebloom_filter_create(&s, NULL, NULL, NULL, &g) == AGEBLOOM_OK);
  agebloom_spec s2 = s;
  s2.seed = 99;
  CHECK(agebloom_filter_create(&s2, NULL, NULL, NULL, &other) == AGEBLOOM_OK);
  if (!f || !g || !other) return;
  for (uint32_t i = 0; i < 3000; ++i) agebloom_insert_key(f, &i, sizeof i);

  const size_t n = agebloom_filter_save_bytes(f);
  unsigned char* img = malloc(n);
  size_t written = 0;
  CHECK(agebloom_filter_save(f, img, n - 1, &written) == AGEBLOOM_ERANGE);
  CHECK(agebloom_filter_save(f, img, n, &written) == AGEBLOOM_OK && written == n);
  CHECK(agebloom_filter_load(g, img, n) == AGEBLOOM_OK);
  int same = 1;
  for (uint32_t i = 0; i < 6000; ++i) same &= agebloom_contains_key(f, &i, sizeof i) == agebloom_contains_key(g, &i, sizeof i);
  CHECK(same);
  /* the loaded filter goes on as the saved one would */
  for (uint32_t i = 3000; i < 9000; ++i) same &= agebloom_test_and_insert_key(f, &i, sizeof i) == agebloom_test_and_insert_key(g, &i, sizeof i);
  CHECK(same);

  /* A filter built from the plan, not the spec, is the same filter: it takes the image. */
  agebloom_plan p;
  agebloom_plan_init(&p);
  CHECK(agebloom_filter_plan(f, &p) == AGEBLOOM_OK && p.seed == s.seed);
  void* mem = aligned_alloc(AGEBLOOM_ALIGN, (p.filter_bytes + 63) / 64 * 64);
  agebloom_filter* from_plan = NULL;
  CHECK(agebloom_filter_init_plan(&p, mem, p.filter_bytes, &from_plan) == AGEBLOOM_OK);
  if (from_plan) {
    /* f and g went on after the save: g goes back to the image, beside from_plan */
    CHECK(agebloom_filter_load(from_plan, img, n) == AGEBLOOM_OK && agebloom_filter_load(g, img, n) == AGEBLOOM_OK);
    for (uint32_t i = 0; i < 9000; ++i) same &= agebloom_test_and_insert_key(g, &i, sizeof i) == agebloom_test_and_insert_key(from_plan, &i, sizeof i);
    CHECK(same);
    agebloom_filter_destroy(from_plan);
  }
  /* A plan whose readable fields were edited is refused, not built as planned. */
  agebloom_plan edited = p;
  edited.window = 5;
  CHECK(agebloom_filter_init_plan(&edited, mem, p.filter_bytes, &from_plan) == AGEBLOOM_EINVAL);
  edited = p;
  edited.window_kind = edited.window_kind == AGEBLOOM_WINDOW_TIME ? AGEBLOOM_WINDOW_COUNT : AGEBLOOM_WINDOW_TIME;
  CHECK(agebloom_filter_init_plan(&edited, mem, p.filter_bytes, &from_plan) == AGEBLOOM_EINVAL);
  edited = p;
  strcpy(edited.structure, strcmp(p.structure, "apbf") == 0 ? "ring" : "apbf");
  CHECK(agebloom_filter_init_plan(&edited, mem, p.filter_bytes, &from_plan) == AGEBLOOM_EINVAL);
  edited = p;
  edited.filter_bytes -= 64;
  CHECK(agebloom_filter_init_plan(&edited, mem, p.filter_bytes, &from_plan) == AGEBLOOM_EINVAL);
  /* The parameters are part of the filter's identity in its images: edited,
     they built a filter that no image of this spec would load into. */
  edited = p;
  strcpy(edited.parameters, "forged");
  CHECK(agebloom_filter_init_plan(&edited, mem, p.filter_bytes, &from_plan) == AGEBLOOM_EINVAL);
  edited = p;
  edited.parameters[sizeof edited.parameters - 1] = 'x'; /* past the NUL too */
  CHECK(agebloom_filter_init_plan(&edited, mem, p.filter_bytes, &from_plan) == AGEBLOOM_EINVAL);
  free(mem);

  CHECK(agebloom_filter_load(other, img, n) == AGEBLOOM_EIMAGE_MISMATCH); /* another seed */
  CHECK(agebloom_filter_load(g, img, n - 1) == AGEBLOOM_EIMAGE);
  CHECK(agebloom_filter_load(g, img, 10) == AGEBLOOM_EIMAGE);
  img[0] ^= 1;
  CHECK(agebloom_filter_load(g, img, n) == AGEBLOOM_EIMAGE);
  free(img);
  agebloom_filter_destroy(f);
  agebloom_filter_destroy(g);
  agebloom_filter_destroy(other);
}

/* Every structure: an image crafted past its checksum (the filter's state
 * all ones, resealed: the checksum is unkeyed) is refused on its state with
 * AGEBLOOM_EIMAGE, and the filter is left as it was. */
static void test_crafted_image_refused(void) {
  for (unsigned i = 0; i < agebloom_structure_count(); ++i) {
    agebloom_spec s = count_spec(agebloom_structure_name(i), 2000);
    agebloom_filter* f = NULL;
    unsigned char *img, *crafted;
    uint8_t before[6000];
    uint64_t state = 0;
    size_t n;
    int same = 1;
    CHECK(agebloom_filter_create(&s, NULL, NULL, NULL, &f) == AGEBLOOM_OK);
    if (!f) continue;
    for (uint32_t k = 0; k < 3000; ++k) agebloom_insert_key(f, &k, sizeof k);
    n = agebloom_filter_save_bytes(f);
    img = malloc(n);
    crafted = malloc(n);
    CHECK(img && crafted && agebloom_filter_save(f, img, n, NULL) == AGEBLOOM_OK);
    memcpy(&state, img + SNAPSHOT_STATE_BYTES_AT, sizeof state);
    CHECK(n == SNAPSHOT_HEADER_BYTES + state); /* else this test's idea of the header is stale */
    memcpy(crafted, img, n);
    reseal_snapshot(crafted, n);
    CHECK(memcmp(crafted, img, n) == 0); /* resealing a valid image changes nothing */
    memset(crafted + SNAPSHOT_HEADER_BYTES, 0xff, (size_t)state);
    reseal_snapshot(crafted, n);
    for (uint32_t k = 0; k < 6000; ++k) before[k] = agebloom_contains_key(f, &k, sizeof k);
    if (agebloom_filter_load(f, crafted, n) != AGEBLOOM_EIMAGE) {
      fprintf(stderr, "crafted image: %s took a state of all ones\n", s.structure);
      CHECK(0);
    }
    for (uint32_t k = 0; k < 6000; ++k) same &= before[k] == agebloom_contains_key(f, &k, sizeof k);
    CHECK(same); /* a refused image leaves the filter unchanged */
    free(img);
    free(crafted);
    agebloom_filter_destroy(f);
  }
}

/* Every structure, count and time windows: a filter loaded from another's
 * image goes on exactly as the saved one (the arena holds all state, no
 * pointers). */
static void test_save_load_every_structure(void) {
  for (unsigned i = 0; i < agebloom_structure_count(); ++i) {
    for (int time = 0; time <= 1; ++time) {
      agebloom_spec s = count_spec(agebloom_structure_name(i), 2000);
      agebloom_filter *f = NULL, *g = NULL;
      uint64_t now = 0;
      int same = 1;
      if (time) {
        s.window_kind = AGEBLOOM_WINDOW_TIME;
        s.window = 1000000; /* 1 ms of 1 us ticks between keys: ~1000 keys live */
        s.capacity = 1000;
      }
      if (agebloom_filter_create(&s, NULL, NULL, NULL, &f) != AGEBLOOM_OK) {
        CHECK(time && strcmp(agebloom_structure_name(i), "tbf") == 0); /* tbf keeps count windows only */
        continue;
      }
      CHECK(agebloom_filter_create(&s, NULL, NULL, NULL, &g) == AGEBLOOM_OK);
      for (uint32_t k = 0; k < 3000; ++k, now += 1000) {
        agebloom_advance(f, now);
        agebloom_insert_key(f, &k, sizeof k);
      }
      const size_t n = agebloom_filter_save_bytes(f);
      void* img = malloc(n);
      CHECK(agebloom_filter_save(f, img, n, NULL) == AGEBLOOM_OK);
      CHECK(agebloom_filter_load(g, img, n) == AGEBLOOM_OK);
      for (uint32_t k = 1500; k < 6000; ++k, now += 1000) {
        const uint32_t key = k % 4000;
        agebloom_advance(f, now);
        agebloom_advance(g, now);
        same &= agebloom_test_and_insert_key(f, &key, sizeof key) == agebloom_test_and_insert_key(g, &key, sizeof key);
      }
      if (!same) fprintf(stderr, "save/load: %s (%s window) diverged\n", s.structure, time ? "time" : "count");
      CHECK(same);
      free(img);
      agebloom_filter_destroy(f);
      agebloom_filter_destroy(g);
    }
  }
}

/* Keys from frames: an Ethernet + IPv4 + UDP frame, and a frame without one. */
static void test_keys(void) {
  unsigned char frame[14 + 20 + 8] = {0};
  frame[12] = 0x08; /* IPv4 */
  unsigned char* ip = frame + 14;
  ip[0] = 0x45;
  ip[3] = 28; /* total length */
  ip[8] = 64;
  ip[9] = 17; /* UDP */
  ip[12] = 10, ip[13] = 1, ip[14] = 2, ip[15] = 3;
  ip[16] = 192, ip[17] = 168, ip[18] = 0, ip[19] = 1;
  unsigned char* udp = ip + 20;
  udp[1] = 53, udp[3] = 80, udp[5] = 8;

  unsigned char key[AGEBLOOM_KEY_MAX];
  size_t len = 0;
  unsigned reason = 99;
  CHECK(agebloom_extract_key(AGEBLOOM_LINKTYPE_ETHERNET, frame, sizeof frame, AGEBLOOM_KEY_SRC_IP, NULL, key,
                             sizeof key, &len, &reason) == AGEBLOOM_OK);
  CHECK(reason == 0 && len == 5 && key[0] == 0x14 && key[1] == 10 && key[4] == 3);
  CHECK(agebloom_extract_key(AGEBLOOM_LINKTYPE_ETHERNET, frame, sizeof frame, AGEBLOOM_KEY_FLOW, NULL, key,
                             sizeof key, &len, &reason) == AGEBLOOM_OK);
  CHECK(len == 1 + 4 + 4 + 1 + 2 + 2 && key[0] == 0x34);
  CHECK(agebloom_extract_key(AGEBLOOM_LINKTYPE_ETHERNET, frame, sizeof frame, AGEBLOOM_KEY_FLOW, NULL, key, 4,
                             &len, &reason) == AGEBLOOM_ERANGE);
  agebloom_click_options co;
  agebloom_click_options_init(&co);
  CHECK(agebloom_extract_key(AGEBLOOM_LINKTYPE_ETHERNET, frame, sizeof frame, AGEBLOOM_KEY_CLICK, &co, key,
                             sizeof key, &len, &reason) == AGEBLOOM_ENOKEY);
  CHECK(strcmp(agebloom_key_reason_name(reason), "no_http_request") == 0);
  CHECK(agebloom_extract_key(AGEBLOOM_LINKTYPE_ETHERNET, frame, 10, AGEBLOOM_KEY_SRC_IP, NULL, key, sizeof key, &len,
                             &reason) == AGEBLOOM_ENOKEY);
  CHECK(strcmp(agebloom_key_reason_name(reason), "truncated_l2") == 0);
  CHECK(strcmp(agebloom_key_reason_name(1000), "unknown") == 0);
  CHECK(agebloom_extract_key(AGEBLOOM_LINKTYPE_ETHERNET, NULL, 5, AGEBLOOM_KEY_SRC_IP, NULL, key, sizeof key, &len,
                             NULL) == AGEBLOOM_EINVAL);
  CHECK(agebloom_extract_key(AGEBLOOM_LINKTYPE_ETHERNET, frame, sizeof frame, (agebloom_key_mode)5, NULL, key,
                             sizeof key, &len, NULL) == AGEBLOOM_EINVAL);

  /* Packet keys (SPAN/TAP copies): the copy a router forwarded one hop on
   * (TTL one lower, its checksum changed) is the same key; another payload
   * byte is another key. */
  unsigned char first[AGEBLOOM_KEY_MAX], copy[AGEBLOOM_KEY_MAX];
  size_t first_len = 0, copy_len = 0;
  CHECK(strcmp(agebloom_key_mode_name(AGEBLOOM_KEY_PACKET), "packet") == 0);
  CHECK(agebloom_default_policy(AGEBLOOM_KEY_PACKET) == AGEBLOOM_INSERT_ALWAYS);
  CHECK(agebloom_extract_key(AGEBLOOM_LINKTYPE_ETHERNET, frame, sizeof frame, AGEBLOOM_KEY_PACKET, NULL, first,
                             sizeof first, &first_len, &reason) == AGEBLOOM_OK);
  CHECK(first_len > 28);
  ip[8] = 63, ip[10] = 0x12, ip[11] = 0x34;
  CHECK(agebloom_extract_key(AGEBLOOM_LINKTYPE_ETHERNET, frame, sizeof frame, AGEBLOOM_KEY_PACKET, NULL, copy,
                             sizeof copy, &copy_len, &reason) == AGEBLOOM_OK);
  CHECK(copy_len == first_len && memcmp(copy, first, first_len) == 0);
  udp[7] = 1;
  CHECK(agebloom_extract_key(AGEBLOOM_LINKTYPE_ETHERNET, frame, sizeof frame, AGEBLOOM_KEY_PACKET, NULL, copy,
                             sizeof copy, &copy_len, &reason) == AGEBLOOM_OK);
  CHECK(copy_len == first_len && memcmp(copy, first, first_len) != 0);
}

/* Every keying option (agebloom_extract_key_with): the frame's wire length,
 * VLAN IDs in the key, the packet key's options, and the combinations the
 * tools refuse. */
/* agebloom_extract_key_with on an Ethernet frame into a key buffer of
 * AGEBLOOM_KEY_MAX bytes (every buffer of test_key_options). */
static int key_with(const unsigned char* frame, size_t len, agebloom_key_mode mode, const agebloom_key_options* o,
                    unsigned char* key, size_t* key_len, unsigned* reason) {
  return agebloom_extract_key_with(AGEBLOOM_LINKTYPE_ETHERNET, frame, len, mode, o, key, AGEBLOOM_KEY_MAX, key_len,
                                   reason);
}

static void test_key_options(void) {
  /* Ethernet + 802.1Q (VLAN 10) + IPv4 + UDP. */
  unsigned char frame[14 + 4 + 20 + 8] = {0};
  frame[0] = 0x02, frame[6] = 0x02, frame[11] = 1;
  frame[12] = 0x81, frame[13] = 0x00, frame[15] = 10; /* TCI: VLAN 10 */
  frame[16] = 0x08;                                  /* IPv4 */
  unsigned char* ip = frame + 18;
  ip[0] = 0x45, ip[3] = 28, ip[8] = 64, ip[9] = 17;
  ip[12] = 10, ip[13] = 1, ip[14] = 2, ip[15] = 3;
  ip[16] = 192, ip[17] = 168, ip[18] = 0, ip[19] = 1;
  unsigned char* udp = ip + 20;
  udp[1] = 53, udp[3] = 80, udp[5] = 8;

  agebloom_key_options o;
  agebloom_key_options_init(&o);
  unsigned char a[AGEBLOOM_KEY_MAX], b[AGEBLOOM_KEY_MAX];
  size_t alen = 0, blen = 0;
  unsigned reason = 99;
  /* Defaults (and NULL) key as agebloom_extract_key does. */
  CHECK(key_with(frame, sizeof frame, AGEBLOOM_KEY_FLOW, &o, a, &alen, &reason) == AGEBLOOM_OK);
  CHECK(agebloom_extract_key(AGEBLOOM_LINKTYPE_ETHERNET, frame, sizeof frame, AGEBLOOM_KEY_FLOW, NULL, b, sizeof b,
                             &blen, NULL) == AGEBLOOM_OK);
  CHECK(alen == blen && memcmp(a, b, alen) == 0);
  CHECK(key_with(frame, sizeof frame, AGEBLOOM_KEY_FLOW, NULL, b, &blen, NULL) == AGEBLOOM_OK);
  CHECK(alen == blen && memcmp(a, b, alen) == 0);

  /* vlan_in_key: one 5-tuple in VLAN 10 and VLAN 20 is two keys, without it one. */
  o.vlan_in_key = 1;
  CHECK(key_with(frame, sizeof frame, AGEBLOOM_KEY_FLOW, &o, a, &alen, NULL) == AGEBLOOM_OK);
  CHECK(alen == 14 + 1 + 2); /* nvlan, one VLAN ID */
  frame[15] = 20;
  CHECK(key_with(frame, sizeof frame, AGEBLOOM_KEY_FLOW, &o, b, &blen, NULL) == AGEBLOOM_OK);
  CHECK(alen == blen && memcmp(a, b, alen) != 0);
  o.vlan_in_key = 0;
  CHECK(key_with(frame, sizeof frame, AGEBLOOM_KEY_FLOW, &o, b, &blen, NULL) == AGEBLOOM_OK);
  frame[15] = 10;
  CHECK(key_with(frame, sizeof frame, AGEBLOOM_KEY_FLOW, &o, a, &alen, NULL) == AGEBLOOM_OK);
  CHECK(alen == blen && memcmp(a, b, alen) == 0);

  /* wire_len: the headers alone (a chained mbuf's first segment, a snap
   * length) key by address once the wire length is given; not without it. */
  const size_t headers = 14 + 4 + 20;
  CHECK(key_with(frame, headers, AGEBLOOM_KEY_SRC_IP, &o, a, &alen, &reason) == AGEBLOOM_ENOKEY);
  CHECK(strcmp(agebloom_key_reason_name(reason), "truncated_l3") == 0);
  o.wire_len = sizeof frame;
  CHECK(key_with(frame, headers, AGEBLOOM_KEY_SRC_IP, &o, a, &alen, &reason) == AGEBLOOM_OK);
  CHECK(agebloom_extract_key(AGEBLOOM_LINKTYPE_ETHERNET, frame, sizeof frame, AGEBLOOM_KEY_SRC_IP, NULL, b,
                             sizeof b, &blen, NULL) == AGEBLOOM_OK);
  CHECK(alen == blen && memcmp(a, b, alen) == 0);
  /* ... but not by 5-tuple, whose ports were not captured. */
  CHECK(key_with(frame, headers, AGEBLOOM_KEY_FLOW, &o, a, &alen, &reason) == AGEBLOOM_ENOKEY);
  o.wire_len = headers - 1; /* shorter than what was captured */
  CHECK(key_with(frame, headers, AGEBLOOM_KEY_SRC_IP, &o, a, &alen, NULL) == AGEBLOOM_EINVAL);
  o.wire_len = 0;

  /* Packet keys: ignore_l2 makes copies with other MACs one key. */
  CHECK(key_with(frame, sizeof frame, AGEBLOOM_KEY_PACKET, &o, a, &alen, NULL) == AGEBLOOM_OK);
  frame[0] = 0x04;
  CHECK(key_with(frame, sizeof frame, AGEBLOOM_KEY_PACKET, &o, b, &blen, NULL) == AGEBLOOM_OK);
  CHECK(memcmp(a, b, alen < blen ? alen : blen) != 0);
  o.ignore_l2 = 1;
  CHECK(key_with(frame, sizeof frame, AGEBLOOM_KEY_PACKET, &o, a, &alen, NULL) == AGEBLOOM_OK);
  frame[0] = 0x02;
  CHECK(key_with(frame, sizeof frame, AGEBLOOM_KEY_PACKET, &o, b, &blen, NULL) == AGEBLOOM_OK);
  CHECK(alen == blen && memcmp(a, b, alen) == 0);
  /* packet_bytes bounds what is hashed. */
  o.ignore_l2 = 0;
  o.packet_bytes = 20;
  CHECK(key_with(frame, sizeof frame, AGEBLOOM_KEY_PACKET, &o, b, &blen, NULL) == AGEBLOOM_OK);
  CHECK(key_with(frame, sizeof frame, AGEBLOOM_KEY_PACKET, NULL, a, &alen, NULL) == AGEBLOOM_OK);
  CHECK(blen + 8 == alen); /* the UDP header left out */

  /* More click ports than the struct holds is refused, not cut short. */
  agebloom_key_options many;
  agebloom_key_options_init(&many);
  many.click.port_count = 9;
  CHECK(key_with(frame, sizeof frame, AGEBLOOM_KEY_CLICK, &many, a, &alen, NULL) == AGEBLOOM_EINVAL);
  /* What the tools refuse is EINVAL here. */
  agebloom_key_options bad;
  agebloom_key_options_init(&bad);
  bad.ignore_vlan = 1; /* a packet option in another mode */
  CHECK(key_with(frame, sizeof frame, AGEBLOOM_KEY_SRC_IP, &bad, a, &alen, NULL) == AGEBLOOM_EINVAL);
  agebloom_key_options_init(&bad);
  bad.vlan_in_key = 1; /* packet keys keep their VLAN IDs already */
  CHECK(key_with(frame, sizeof frame, AGEBLOOM_KEY_PACKET, &bad, a, &alen, NULL) == AGEBLOOM_EINVAL);
  agebloom_key_options_init(&bad);
  bad.packet_bytes = 19;
  CHECK(key_with(frame, sizeof frame, AGEBLOOM_KEY_PACKET, &bad, a, &alen, NULL) == AGEBLOOM_EINVAL);
  bad.packet_bytes = AGEBLOOM_KEY_MAX - 18; /* one more than a key holds behind two VLAN tags */
  CHECK(key_with(frame, sizeof frame, AGEBLOOM_KEY_PACKET, &bad, a, &alen, NULL) == AGEBLOOM_EINVAL);
  bad.packet_bytes = AGEBLOOM_KEY_MAX - 19;
  CHECK(key_with(frame, sizeof frame, AGEBLOOM_KEY_PACKET, &bad, a, &alen, NULL) == AGEBLOOM_OK);
  agebloom_key_options_init(&bad);
  bad.size = 4; /* older than any this library knows */
  CHECK(key_with(frame, sizeof frame, AGEBLOOM_KEY_SRC_IP, &bad, a, &alen, NULL) == AGEBLOOM_EVERSION);
}

/* Images hold nothing of the caller's memory: the state is zeroed at init, so
 * a buffer that held a secret before (a reused buffer, rte_malloc'd memory)
 * does not end up in what agebloom_filter_save writes, for any structure. */
static void test_image_holds_no_caller_bytes(void) {
  static const char pattern[] = "SECRET-PASSWORD!"; /* 16 bytes */
  for (unsigned i = 0; i < agebloom_structure_count(); ++i) {
    agebloom_spec s = count_spec(agebloom_structure_name(i), 1000);
    size_t n = 0;
    if (agebloom_filter_bytes(&s, &n) != AGEBLOOM_OK) continue; /* a structure that keeps time windows only */
    const size_t rounded = (n + 63) / 64 * 64;
    unsigned char* mem = aligned_alloc(AGEBLOOM_ALIGN, rounded);
    for (size_t b = 0; b < rounded; ++b) mem[b] = (unsigned char)pattern[b % 16];
    agebloom_filter* f = NULL;
    CHECK(agebloom_filter_init(&s, mem, n, &f) == AGEBLOOM_OK);
    if (!f) {
      free(mem);
      continue;
    }
    agebloom_insert_key(f, "k", 1);
    const size_t len = agebloom_filter_save_bytes(f);
    unsigned char* img = malloc(len);
    CHECK(agebloom_filter_save(f, img, len, NULL) == AGEBLOOM_OK);
    size_t copies = 0;
    for (size_t b = 0; b + 16 <= len; ++b) copies += memcmp(img + b, pattern, 16) == 0;
    if (copies) fprintf(stderr, "%s: the image holds %zu copies of the caller's old bytes\n", s.structure, copies);
    CHECK(copies == 0);
    free(img);
    free(mem);
  }
  /* After a refusal with a reason, a null pointer refused before the spec is read leaves "" (agebloom.h). */
  agebloom_spec bad;
  agebloom_spec_init(&bad);
  bad.window = 0;
  agebloom_plan p;
  agebloom_plan_init(&p);
  CHECK(agebloom_plan_spec(&bad, &p) == AGEBLOOM_EINVAL && agebloom_plan_error()[0] != '\0');
  CHECK(agebloom_plan_spec(&bad, NULL) == AGEBLOOM_EINVAL && agebloom_plan_error()[0] == '\0');
  CHECK(agebloom_plan_spec(&bad, &p) == AGEBLOOM_EINVAL);
  size_t bytes;
  CHECK(agebloom_filter_bytes(&bad, NULL) == AGEBLOOM_EINVAL && agebloom_plan_error()[0] == '\0');
  CHECK(agebloom_filter_bytes(&bad, &bytes) == AGEBLOOM_EINVAL);
  CHECK(agebloom_filter_init(&bad, NULL, 0, NULL) == AGEBLOOM_EINVAL && agebloom_plan_error()[0] == '\0');
  CHECK(agebloom_filter_bytes(&bad, &bytes) == AGEBLOOM_EINVAL);
  CHECK(agebloom_filter_create(&bad, NULL, NULL, NULL, NULL) == AGEBLOOM_EINVAL && agebloom_plan_error()[0] == '\0');
}

int main(void) {
  test_versions_and_errors();
  test_plan();
  test_operations();
  test_time_window();
  test_save_load();
  test_save_load_every_structure();
  test_crafted_image_refused();
  test_keys();
  test_key_options();
  test_image_holds_no_caller_bytes();
  if (failures) {
    fprintf(stderr, "%d checks failed\n", failures);
    return 1;
  }
  printf("capi: all checks passed (libagebloom %s, ABI %u)\n", agebloom_version(), agebloom_abi_version());
  return 0;
}
