// The C API's planning and filter life cycle: a spec planned as DedupFilter
// plans dedup_fwd's options, built in the caller's memory behind a handle.
#include <cstdlib>
#include <cstring>
#include <string>
#include <variant>

#include "agebloom/registry/structure.hpp"
#include "handle.hpp"

namespace agebloom::capi {
namespace {

// The spec as DedupFilter takes it, or the status naming what is wrong.
// Checked here, before the planner, so each mistake gets its own code.
int to_filter_spec(const agebloom_spec* in, dedup::FilterSpec& out, uint64_t& seed) {
  agebloom_spec s;
  if (int st = read_in(in, s); st != AGEBLOOM_OK) return st;
  if (s.window == 0 || !(s.fpr > 0 && s.fpr < 1)) return AGEBLOOM_EINVAL;
  if (s.window_kind != AGEBLOOM_WINDOW_COUNT && s.window_kind != AGEBLOOM_WINDOW_TIME) return AGEBLOOM_EINVAL;
  if (s.structure && std::strcmp(s.structure, "auto") != 0) {
    const StructureInfo* row = find_structure(s.structure, std::strlen(s.structure));
    if (!row) return AGEBLOOM_ENOSTRUCT;
    out.structure = row->id;
  }
  out.window = s.window_kind == AGEBLOOM_WINDOW_TIME ? Window::time(s.window) : Window::count(s.window);
  out.fpr = s.fpr;
  out.capacity = s.capacity;
  out.mem_bytes = s.mem_bytes;
  seed = s.seed;
  return AGEBLOOM_OK;
}

// Plans `in` into `out`; a planner refusal is ENOPLAN (the arguments passed
// the checks above, so what remains is a target no shape meets).
int plan_spec(const agebloom_spec* in, dedup::DedupFilter& out, uint64_t& seed) {
  dedup::FilterSpec spec;
  if (int st = to_filter_spec(in, spec, seed); st != AGEBLOOM_OK) return st;
  auto planned = dedup::DedupFilter::plan(spec);
  if (std::holds_alternative<std::string>(planned)) return AGEBLOOM_ENOPLAN;
  out = std::get<dedup::DedupFilter>(planned);
  return AGEBLOOM_OK;
}

uint64_t filter_bytes(const dedup::DedupFilter& d) noexcept { return kHandleBytes + d.bytes_needed(); }

agebloom_plan describe(const dedup::DedupFilter& d, const char* parameters) {
  agebloom_plan p;
  std::memset(&p, 0, sizeof p);
  const Window w = d.config().window();
  p.window_kind = w.is_time() ? AGEBLOOM_WINDOW_TIME : AGEBLOOM_WINDOW_COUNT;
  p.window = w.span;
  copy_cstr(p.structure, agebloom::name(d.structure()));
  copy_cstr(p.parameters, parameters);
  p.bits_per_item = d.bits_per_item();
  p.model_fpr = d.model_fpr();
  p.state_bytes = d.bytes_needed();
  p.filter_bytes = filter_bytes(d);
  return p;
}

// Builds the planned filter in mem[0..len): the handle first, the arena after.
int build(const dedup::DedupFilter& planned, uint64_t seed, void* mem, size_t len, agebloom_filter** out) {
  if (!mem || !out) return AGEBLOOM_EINVAL;
  if (reinterpret_cast<uintptr_t>(mem) % AGEBLOOM_ALIGN) return AGEBLOOM_EALIGN;
  if (len < filter_bytes(planned)) return AGEBLOOM_ENOMEM;
  unsigned char* base = static_cast<unsigned char*>(mem);
  Handle* h = new (mem) Handle;
  h->seed = seed;
  h->hasher = Hasher(seed);
  h->filter = planned;
  h->state = base + kHandleBytes;
  Arena arena(h->state, len - kHandleBytes);
  if (!h->filter.create(arena).empty()) {  // cannot happen: bytes_needed() was checked
    h->magic = 0;
    return AGEBLOOM_EINTERNAL;
  }
  h->state_bytes = arena.used();
  h->filter_bytes = filter_bytes(planned);
  copy_cstr(h->parameters, planned.parameters().c_str());
  *out = reinterpret_cast<agebloom_filter*>(h);
  return AGEBLOOM_OK;
}

void* default_alloc(size_t size, size_t align, void*) {
  return std::aligned_alloc(align, (size + align - 1) / align * align);
}
void default_free(void* p, void*) { std::free(p); }

}  // namespace
}  // namespace agebloom::capi

using namespace agebloom;
using namespace agebloom::capi;

extern "C" {

int agebloom_plan_spec(const agebloom_spec* spec, agebloom_plan* plan) {
  return guarded([&]() -> int {
    if (!plan) return AGEBLOOM_EINVAL;
    dedup::DedupFilter d;
    uint64_t seed;
    if (int st = plan_spec(spec, d, seed); st != AGEBLOOM_OK) return st;
    return write_out(describe(d, d.parameters().c_str()), plan);
  });
}

unsigned agebloom_structure_count(void) { return static_cast<unsigned>(kStructureCount); }

const char* agebloom_structure_name(unsigned i) { return i < kStructureCount ? kStructures[i].name : nullptr; }

int agebloom_filter_bytes(const agebloom_spec* spec, size_t* bytes) {
  return guarded([&]() -> int {
    if (!bytes) return AGEBLOOM_EINVAL;
    dedup::DedupFilter d;
    uint64_t seed;
    if (int st = plan_spec(spec, d, seed); st != AGEBLOOM_OK) return st;
    *bytes = filter_bytes(d);
    return AGEBLOOM_OK;
  });
}

int agebloom_filter_init(const agebloom_spec* spec, void* mem, size_t len, agebloom_filter** out) {
  return guarded([&]() -> int {
    if (!mem || !out) return AGEBLOOM_EINVAL;
    dedup::DedupFilter d;
    uint64_t seed;
    if (int st = plan_spec(spec, d, seed); st != AGEBLOOM_OK) return st;
    return build(d, seed, mem, len, out);
  });
}

int agebloom_filter_create(const agebloom_spec* spec, agebloom_alloc_fn alloc, agebloom_free_fn free_fn, void* ctx,
                           agebloom_filter** out) {
  return guarded([&]() -> int {
    if (!out || (alloc == nullptr) != (free_fn == nullptr)) return AGEBLOOM_EINVAL;
    if (!alloc) alloc = default_alloc, free_fn = default_free;
    dedup::DedupFilter d;
    uint64_t seed;
    if (int st = plan_spec(spec, d, seed); st != AGEBLOOM_OK) return st;
    const size_t bytes = filter_bytes(d);
    void* mem = alloc(bytes, AGEBLOOM_ALIGN, ctx);
    if (!mem) return AGEBLOOM_ENOMEM;
    const int st = build(d, seed, mem, bytes, out);
    if (st != AGEBLOOM_OK) {
      free_fn(mem, ctx);
      return st;
    }
    handle(*out)->free_fn = free_fn;
    handle(*out)->free_ctx = ctx;
    return AGEBLOOM_OK;
  });
}

void agebloom_filter_destroy(agebloom_filter* f) {
  if (!live(f)) return;
  Handle* h = handle(f);
  h->magic = 0;  // a stale handle is refused by the functions that check
  if (h->free_fn) h->free_fn(h, h->free_ctx);
}

int agebloom_filter_plan(const agebloom_filter* f, agebloom_plan* plan) {
  return guarded([&]() -> int {
    if (!live(f)) return AGEBLOOM_EINVAL;
    const Handle* h = handle(f);
    return write_out(describe(h->filter, h->parameters), plan);
  });
}

int agebloom_filter_stats(const agebloom_filter* f, agebloom_stats* stats) {
  return guarded([&]() -> int {
    if (!live(f)) return AGEBLOOM_EINVAL;
    const Handle* h = handle(f);
    agebloom_stats s;
    std::memset(&s, 0, sizeof s);
    copy_cstr(s.structure, agebloom::name(h->filter.structure()));
    s.filter_bytes = h->filter_bytes;
    s.model_fpr = h->filter.model_fpr();
    s.bits_per_item = h->filter.bits_per_item();
    s.fill_ratio = h->filter.fill_ratio();
    s.saturations = h->filter.saturations();
    for (const auto& [name, value] : h->filter.stats()) {
      if (s.extra_count == sizeof s.extra / sizeof s.extra[0]) break;
      copy_cstr(s.extra[s.extra_count].name, name.c_str());
      s.extra[s.extra_count++].value = value;
    }
    return write_out(s, stats);
  });
}

}  // extern "C"
