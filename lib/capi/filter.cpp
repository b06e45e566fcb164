// The C API's planning and filter life cycle: a spec planned as DedupFilter
// plans dedup_fwd's options, built in the caller's memory behind a handle.
#include <cstdlib>
#include <cctype>
#include <cstring>
#include <new>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>

#include "agebloom/registry/structure.hpp"
#include "handle.hpp"

namespace agebloom::capi {
namespace {

// The calling thread's last planning refusal, in the tools' words
// (agebloom_plan_error); "" after a plan that succeeded.
thread_local std::string t_plan_error;

// The planner's message in a C caller's words: the tools' option names
// become the agebloom_spec fields they set (the planner speaks the tools'
// command lines, which a C caller never typed).
std::string in_spec_terms(std::string message) {
  static const std::pair<const char*, const char*> kTerms[] = {
      {"--mem", "spec.mem_bytes"}, {"--fpr", "spec.fpr"}, {"--capacity", "spec.capacity"},
      {"--window", "spec.window"}, {"--ttl", "spec.window (time)"}, {"--filter", "spec.structure"}};
  for (const auto& [option, field] : kTerms)
    for (size_t at = message.find(option); at != std::string::npos; at = message.find(option, at)) {
      const size_t end = at + std::strlen(option);
      if (end < message.size() && (std::isalnum(static_cast<unsigned char>(message[end])) || message[end] == '-')) {
        at = end;  // a longer option (--window-kind), not this one
        continue;
      }
      message.replace(at, end - at, field);
      at += std::strlen(field);
    }
  return message;
}

// The spec as DedupFilter takes it, or the status naming what is wrong.
// Checked here, before the planner, so each mistake gets its own code.
int to_filter_spec(const agebloom_spec* in, dedup::FilterSpec& out, uint64_t& seed) {
  agebloom_spec s;
  if (int st = read_in(in, s); st != AGEBLOOM_OK) return st;
  auto invalid = [](const char* why) {
    t_plan_error = why;
    return AGEBLOOM_EINVAL;
  };
  if (s.window == 0) return invalid("spec.window must be at least 1 (insertions, or ticks of a time window)");
  if (!(s.fpr > 0 && s.fpr < 1)) return invalid("spec.fpr must be above 0 and below 1");
  if (s.window_kind != AGEBLOOM_WINDOW_COUNT && s.window_kind != AGEBLOOM_WINDOW_TIME)
    return invalid("spec.window_kind must be AGEBLOOM_WINDOW_COUNT or AGEBLOOM_WINDOW_TIME");
  // The tools' rule (--capacity with --window is refused): a count window
  // holds spec.window insertions by definition, and a capacity set there is
  // a caller who meant a time window.
  if (s.capacity != 0 && s.window_kind == AGEBLOOM_WINDOW_COUNT)
    return invalid("spec.capacity applies to time windows only (a count window holds spec.window insertions)");
  if (s.structure && std::strcmp(s.structure, "auto") != 0) {
    const StructureInfo* row = find_structure(s.structure, std::strlen(s.structure));
    if (!row) {
      t_plan_error = std::string("spec.structure '") + s.structure + "' is no registered structure (agebloom_structure_name lists them)";
      return AGEBLOOM_ENOSTRUCT;
    }
    out.structure = row->id;
  }
  out.window = s.window_kind == AGEBLOOM_WINDOW_TIME ? Window::time(s.window) : Window::count(s.window);
  out.fpr = s.fpr;
  out.capacity = s.capacity;
  out.mem_bytes = s.mem_bytes;
  seed = s.seed;
  return AGEBLOOM_OK;
}

// Plans `in` into `out`. The planner's refusal keeps its kind: a value out
// of range (a window past 2^48, a window shorter than the segments a
// structure needs, a time window for a count-only structure) is EINVAL, a
// target no shape meets ENOPLAN; its message is kept for agebloom_plan_error.
int plan_spec(const agebloom_spec* in, dedup::DedupFilter& out, uint64_t& seed) {
  t_plan_error.clear();
  dedup::FilterSpec spec;
  if (int st = to_filter_spec(in, spec, seed); st != AGEBLOOM_OK) return st;
  const model::PlanResult result = dedup::plan_spec(spec);
  if (const auto* err = std::get_if<model::PlanError>(&result)) {
    t_plan_error = in_spec_terms(err->message);
    return err->code == model::PlanErrc::invalid_request || err->code == model::PlanErrc::window_too_short
               ? AGEBLOOM_EINVAL
               : AGEBLOOM_ENOPLAN;
  }
  dedup::DedupFilter d(std::get<model::Plan>(result).config);
  // The rate-adaptive budget is a limit too (DedupFilter::plan's check).
  if (spec.mem_bytes && d.bytes_needed() > spec.mem_bytes) {
    t_plan_error = "the filter takes " + std::to_string(d.bytes_needed()) + " bytes, more than mem_bytes " +
                   std::to_string(spec.mem_bytes);
    return AGEBLOOM_ENOPLAN;
  }
  out = d;
  return AGEBLOOM_OK;
}

uint64_t filter_bytes(const dedup::DedupFilter& d) noexcept { return kHandleBytes + d.bytes_needed(); }

// The planned configuration in agebloom_plan::opaque: a tag, the structure
// and the config's size, a checksum, then the config's bytes (FilterConfig
// is trivially copyable). What agebloom_filter_init_plan takes back.
constexpr uint64_t kPlanTag = 0x414250'4c414e'3031ULL;  // "ABPLAN01"
constexpr size_t kPlanConfigAt = 4;                    // opaque[] words before the config
static_assert(std::is_trivially_copyable_v<FilterConfig>);
static_assert(sizeof(FilterConfig) <= sizeof(agebloom_plan::opaque) - kPlanConfigAt * sizeof(uint64_t),
              "agebloom_plan::opaque must hold a FilterConfig: grow it with the ABI version");

uint64_t checksum(const void* bytes, size_t n) noexcept { return XXH3_64bits_withSeed(bytes, n, kPlanTag); }

// The configuration's checksum, chained over the plan's parameters field (all
// of it, NUL padding included): the filter's identity in saved images is made
// of both (image.cpp), so a plan whose parameters were edited is refused
// like one whose configuration was (it built a filter whose images no filter
// of the same spec would take).
uint64_t plan_checksum(const agebloom_plan& p, size_t config_bytes) noexcept {
  return XXH3_64bits_withSeed(p.parameters, sizeof p.parameters, checksum(&p.opaque[kPlanConfigAt], config_bytes));
}

// The layout of the configs a plan carries, as far as sizes tell: the
// registry's size and every config type's size and alignment. A plan from a
// library whose configs differ (another build) is refused, not misread.
template <size_t... I>
constexpr uint64_t fingerprint(std::index_sequence<I...>) noexcept {
  uint64_t h = kStructureCount;
  ((h = h * 1000003 + sizeof(std::variant_alternative_t<I, AnyConfig>) * 64 +
        alignof(std::variant_alternative_t<I, AnyConfig>)),
   ...);
  return h;
}
constexpr uint64_t kConfigLayout = fingerprint(std::make_index_sequence<std::variant_size_v<AnyConfig>>{});

void store_config(const FilterConfig& c, agebloom_plan& p) noexcept {
  p.opaque[0] = kPlanTag;
  p.opaque[1] = static_cast<uint64_t>(c.structure) << 32 | sizeof(FilterConfig);
  // Rebuilt in zeroed storage: the variant's bytes past its alternative
  // (most of them for a small config) are zero in the plan, not whatever
  // the stack held where the planner built it.
  alignas(FilterConfig) unsigned char canonical[sizeof(FilterConfig)] = {};
  c.visit([&](const auto& alt) { ::new (static_cast<void*>(canonical)) FilterConfig{c.structure, AnyConfig(alt)}; });
  std::memcpy(&p.opaque[kPlanConfigAt], canonical, sizeof c);
  p.opaque[2] = plan_checksum(p, sizeof c);  // p.parameters is written first (describe)
  p.opaque[3] = kConfigLayout;
}

// The configuration a plan carries, if it is one this library wrote, unchanged.
bool load_config(const agebloom_plan& p, FilterConfig& c) noexcept {
  if (p.opaque[0] != kPlanTag || (p.opaque[1] & 0xffffffffu) != sizeof(FilterConfig) ||
      (p.opaque[1] >> 32) >= kStructureCount || p.opaque[2] != plan_checksum(p, sizeof c) ||
      p.opaque[3] != kConfigLayout)
    return false;
  std::memcpy(static_cast<void*>(&c), &p.opaque[kPlanConfigAt], sizeof c);  // trivially copyable
  return static_cast<uint64_t>(c.structure) == p.opaque[1] >> 32;
}

agebloom_plan describe(const dedup::DedupFilter& d, const char* parameters, uint64_t seed) {
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
  p.seed = seed;
  store_config(d.config(), p);
  return p;
}

// Builds the planned filter in mem[0..len): the handle first, the arena after.
// `parameters`: the shape's description when the caller has it (a plan's),
// else it is written here (which allocates: DedupFilter::parameters).
int build(const dedup::DedupFilter& planned, uint64_t seed, const char* parameters, void* mem, size_t len,
          agebloom_filter** out) {
  if (!mem || !out) return AGEBLOOM_EINVAL;
  if (reinterpret_cast<uintptr_t>(mem) % AGEBLOOM_ALIGN) return AGEBLOOM_EALIGN;
  if (len < filter_bytes(planned)) return AGEBLOOM_ENOMEM;
  unsigned char* base = static_cast<unsigned char*>(mem);
  Handle* h = new (mem) Handle;
  h->seed = seed;
  h->hasher = Hasher(seed);
  h->filter = planned;
  h->state = base + kHandleBytes;
  // The caller's memory may hold anything (a reused buffer, rte_malloc'd
  // memory): a structure leaves parts of its state unwritten until used (a
  // ring not yet filled, slices not yet grown), and agebloom_filter_save
  // copies the state byte for byte. Zeroed first, an image holds nothing of
  // the caller's.
  std::memset(h->state, 0, filter_bytes(planned) - kHandleBytes);  // all the arena needs (len may be more)
  Arena arena(h->state, len - kHandleBytes);
  if (!h->filter.create(arena).empty()) {  // the config is invalid: only a forged plan's can be
    h->magic = 0;
    return AGEBLOOM_EINVAL;
  }
  h->state_bytes = arena.used();
  h->filter_bytes = filter_bytes(planned);
  if (parameters) copy_cstr(h->parameters, parameters);
  else copy_cstr(h->parameters, planned.parameters().c_str());
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

const char* agebloom_plan_error(void) noexcept { return t_plan_error.c_str(); }

int agebloom_plan_spec(const agebloom_spec* spec, agebloom_plan* plan) noexcept {
  return guarded([&]() -> int {
    t_plan_error.clear();  // a refusal before the spec is read leaves "" (agebloom.h)
    if (!plan) return AGEBLOOM_EINVAL;
    dedup::DedupFilter d;
    uint64_t seed;
    if (int st = plan_spec(spec, d, seed); st != AGEBLOOM_OK) return st;
    return write_out(describe(d, d.parameters().c_str(), seed), plan);
  });
}

unsigned agebloom_structure_count(void) noexcept { return static_cast<unsigned>(kStructureCount); }

const char* agebloom_structure_name(unsigned i) noexcept { return i < kStructureCount ? kStructures[i].name : nullptr; }

int agebloom_filter_bytes(const agebloom_spec* spec, size_t* bytes) noexcept {
  return guarded([&]() -> int {
    t_plan_error.clear();  // a refusal before the spec is read leaves "" (agebloom.h)
    if (!bytes) return AGEBLOOM_EINVAL;
    dedup::DedupFilter d;
    uint64_t seed;
    if (int st = plan_spec(spec, d, seed); st != AGEBLOOM_OK) return st;
    *bytes = filter_bytes(d);
    return AGEBLOOM_OK;
  });
}

int agebloom_filter_init(const agebloom_spec* spec, void* mem, size_t len, agebloom_filter** out) noexcept {
  return guarded([&]() -> int {
    t_plan_error.clear();  // a refusal before the spec is read leaves "" (agebloom.h)
    if (!mem || !out) return AGEBLOOM_EINVAL;
    dedup::DedupFilter d;
    uint64_t seed;
    if (int st = plan_spec(spec, d, seed); st != AGEBLOOM_OK) return st;
    return build(d, seed, nullptr, mem, len, out);
  });
}

int agebloom_filter_init_plan(const agebloom_plan* plan, void* mem, size_t len, agebloom_filter** out) noexcept {
  if (!plan || !mem || !out) return AGEBLOOM_EINVAL;
  if (plan->size < kMinSize<agebloom_plan>) return AGEBLOOM_EVERSION;
  FilterConfig config;
  if (!load_config(*plan, config)) return AGEBLOOM_EINVAL;
  // The readable fields still say what the configuration holds: a plan whose
  // window or structure was edited by hand is refused (its parameters are
  // checksummed with the configuration, above), not built as it was
  // planned while it says otherwise (nothing here allocates).
  const dedup::DedupFilter planned(config);
  const Window w = config.window();
  if (plan->window_kind != (w.is_time() ? AGEBLOOM_WINDOW_TIME : AGEBLOOM_WINDOW_COUNT) || plan->window != w.span ||
      std::strncmp(plan->structure, agebloom::name(config.structure), sizeof plan->structure) != 0 ||
      plan->state_bytes != planned.bytes_needed() || plan->filter_bytes != filter_bytes(planned))
    return AGEBLOOM_EINVAL;
  // build() is given the parameters, so it formats nothing: on success this
  // allocates nothing (tests/capi/no_alloc_test.cpp). Only a refused config's
  // message is a string, hence the guard.
  char parameters[sizeof plan->parameters];
  std::memcpy(parameters, plan->parameters, sizeof parameters);
  parameters[sizeof parameters - 1] = '\0';
  return guarded([&]() -> int { return build(planned, plan->seed, parameters, mem, len, out); });
}

int agebloom_filter_create(const agebloom_spec* spec, agebloom_alloc_fn alloc, agebloom_free_fn free_fn, void* ctx,
                           agebloom_filter** out) noexcept {
  return guarded([&]() -> int {
    t_plan_error.clear();  // a refusal before the spec is read leaves "" (agebloom.h)
    if (!out || (alloc == nullptr) != (free_fn == nullptr)) return AGEBLOOM_EINVAL;
    if (!alloc) alloc = default_alloc, free_fn = default_free;
    dedup::DedupFilter d;
    uint64_t seed;
    if (int st = plan_spec(spec, d, seed); st != AGEBLOOM_OK) return st;
    const size_t bytes = filter_bytes(d);
    void* mem = alloc(bytes, AGEBLOOM_ALIGN, ctx);
    if (!mem) return AGEBLOOM_ENOMEM;
    const int st = build(d, seed, nullptr, mem, bytes, out);
    if (st != AGEBLOOM_OK) {
      free_fn(mem, ctx);
      return st;
    }
    handle(*out)->free_fn = free_fn;
    handle(*out)->free_ctx = ctx;
    return AGEBLOOM_OK;
  });
}

void agebloom_filter_destroy(agebloom_filter* f) noexcept {
  if (!live(f)) return;
  Handle* h = handle(f);
  h->magic = 0;  // a stale handle is refused by the functions that check
  if (h->free_fn) h->free_fn(h, h->free_ctx);
}

int agebloom_filter_plan(const agebloom_filter* f, agebloom_plan* plan) noexcept {
  return guarded([&]() -> int {
    if (!live(f)) return AGEBLOOM_EINVAL;
    const Handle* h = handle(f);
    return write_out(describe(h->filter, h->parameters, h->seed), plan);
  });
}

int agebloom_filter_stats(const agebloom_filter* f, agebloom_stats* stats) noexcept {
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
