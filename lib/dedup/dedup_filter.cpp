#include "agebloom/dedup/dedup_filter.hpp"

#include "agebloom/model/planner.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <string>
#include <type_traits>

namespace agebloom::dedup {

const char* policy_name(Policy p) noexcept {
  return p == Policy::insert_always ? "insert-always" : "insert-on-miss";
}

bool parse_policy(std::string_view s, Policy& out) noexcept {
  if (s == "insert-always") out = Policy::insert_always;
  else if (s == "insert-on-miss") out = Policy::insert_on_miss;
  else return false;
  return true;
}

const char* spec_name(const FilterSpec& spec) noexcept {
  return spec.structure ? agebloom::name(*spec.structure) : "auto";
}

std::variant<DedupFilter, std::string> DedupFilter::plan(const FilterSpec& spec) {
  model::PlanRequest req;
  req.window = spec.window;
  req.capacity = spec.capacity;
  req.fpr = spec.fpr;
  req.structure = spec.structure;
  req.memory_bytes = spec.mem_bytes;
  // --ttl without --capacity: "auto" plans a rate-adaptive structure (the
  // planner's rule); a named one that needs a capacity assumes the default.
  if (spec.window.is_time() && spec.capacity == 0 && spec.structure && !info(*spec.structure).rate_adaptive)
    req.capacity = kDefaultTtlCapacity;
  // "auto": a dataplane pays per packet, so the fewest bits per item among
  // the layouts measured fastest per packet (the registry's auto_candidate
  // rows; docs/PERFORMANCE.md has the cycles). The most compact structure is
  // one --filter away (guarded-epoch).
  if (!spec.structure) req.auto_candidates = true;
  auto result = model::plan(req);
  if (auto* err = std::get_if<model::PlanError>(&result)) return err->message;
  FilterConfig planned = std::get<model::Plan>(result).config;
  if (spec.on_flood == FloodPolicy::keep_fpr && spec.window.is_time()) {
    // The capacity trigger: an epoch also ends once it holds its design load.
    bool set = false;
    std::visit(
        [&](auto& c) {
          if constexpr (requires { c.epoch_capacity; c.r; }) {
            if (c.epoch_capacity == 0) c.epoch_capacity = math::ceil_div(c.capacity ? c.capacity : 1, c.r);
            set = true;
          }
        },
        planned.config);
    if (!set && !info(planned.structure).rate_adaptive)
      return std::string("--on-flood keep-fpr: ") + agebloom::name(planned.structure) +
             " cannot end an epoch early; use guarded-epoch, guarded-epoch-blocked, ring or interleaved (or tlbf, "
             "which keeps its FPR by design)";
  }
  DedupFilter d(planned);
  if (spec.mem_bytes && d.bytes_needed() > spec.mem_bytes) {
    // Exact bytes beside the MiB (--mem counts 2^20-byte units): a rounded
    // "needs 3 MB, more than --mem 3 MB" reads as a contradiction.
    char buf[200];
    std::snprintf(buf, sizeof buf,
                  " needs %llu bytes (%.2f MiB), more than --mem %.2f MiB (%llu bytes); raise --mem, shorten the "
                  "window or relax --fpr",
                  static_cast<unsigned long long>(d.bytes_needed()), d.bytes_needed() / 1048576.0,
                  spec.mem_bytes / 1048576.0, static_cast<unsigned long long>(spec.mem_bytes));
    return "filter " + d.name() + " (" + d.parameters() + ")" + buf;
  }
  return d;
}

std::string DedupFilter::auto_note(const FilterSpec& spec, const DedupFilter& chosen) {
  if (spec.structure) return {};
  model::PlanRequest req;
  req.window = spec.window;
  req.capacity = spec.capacity;
  req.fpr = spec.fpr;
  req.memory_bytes = spec.mem_bytes;
  auto result = model::plan(req);  // every structure, not only the auto candidates
  const auto* p = std::get_if<model::Plan>(&result);
  if (p == nullptr || p->structure == chosen.structure()) return {};
  const DedupFilter best(p->config);
  const double mine = static_cast<double>(chosen.bytes_needed()), theirs = static_cast<double>(best.bytes_needed());
  if (!(theirs < 0.8 * mine)) return {};
  char buf[400];
  std::snprintf(buf, sizeof buf,
                "--filter auto chose %s (%.2f MiB, %.1f bits per item): the fewest bits among the layouts fastest per "
                "packet; the most compact for this window and FPR is %s at %.2f MiB (%.1f bits per item, more memory "
                "accesses per packet): --filter %s",
                chosen.name().c_str(), mine / 1048576.0, chosen.bits_per_item(), best.name().c_str(),
                theirs / 1048576.0, best.bits_per_item(), best.name().c_str());
  return buf;
}

std::string DedupFilter::create(Arena& arena) {
  return config_.visit([&](const auto& c) -> std::string {
    auto f = FilterFor<std::decay_t<decltype(c)>>::create(c, arena);
    if (!f) return f.what();
    filter_ = *f;
    // Time windows of the epoch filters: watch each epoch's load.
    flood_ = {};
    if constexpr (requires { c.epoch_capacity; c.r; }) {
      if (c.window.is_time() && c.r) {
        flood_.design = math::ceil_div(c.capacity ? c.capacity : 1, c.r);
        flood_.epoch_length = c.epoch_length();
        flood_.r = c.r < 64 ? c.r : 63;
      }
    }
    return {};
  });
}

void DedupFilter::watch_flood(uint64_t inserted) noexcept {
  std::visit(
      [&](const auto& f) {
        if constexpr (requires { f.epoch_schedule(); }) {
          const EpochSchedule& s = f.epoch_schedule();
          if (s.fill_cap) {
            // keep-fpr: the schedule counts the epoch's insertions itself and
            // restarts at 1 when the capacity trigger ends an epoch; an epoch
            // ended by time moves epoch_start a whole epoch on instead.
            const bool timed = s.epoch_start - flood_.epoch_start >= flood_.epoch_length;
            if (s.fill < flood_.last_fill && !timed) ++flood_.early;
            flood_.last_fill = s.fill;
            // Epoch starts for effective_window(). Primed at the first look,
            // not at create(): a restored snapshot's segment is not 0.
            const uint32_t segs = flood_.r + 1, seg = f.current_segment();
            uint32_t n = flood_.known ? (seg + segs - flood_.segment) % segs : 0;
            if (flood_.known && n == 0 && s.epoch_start != flood_.epoch_start) n = segs;  // a whole turn or more
            if (!flood_.known) n = 1;
            // Only the last rotation's start is seen. The others began after
            // the previous look and at most an epoch apart: exact for epochs
            // ended by time, within one look's interval for early ones.
            for (uint32_t j = n; j-- > 0;) {
              const uint64_t back = j * flood_.epoch_length;
              uint64_t t = s.epoch_start > back ? s.epoch_start - back : 0;
              if (j && t < flood_.last_now) t = flood_.last_now;
              flood_.newest = (flood_.newest + 1) % 64;
              flood_.starts[flood_.newest] = t;
              if (flood_.known < 64) ++flood_.known;
            }
            flood_.segment = seg;
            flood_.last_now = s.last_now;
            flood_.epoch_start = s.epoch_start;
            return;
          }
          // keep-window: epochs end by time alone; count what each one took.
          if (s.epoch_start != flood_.epoch_start) {
            flood_.epoch_start = s.epoch_start;
            flood_.inserted = 0;
            flood_.counted = false;
          }
          flood_.inserted += inserted;
          if (!flood_.counted && flood_.inserted > flood_.design) {
            flood_.counted = true;
            ++flood_.overloaded;
          }
        }
      },
      filter_);
}

std::string DedupFilter::posterior_support(const FilterConfig& config) {
  const auto* c = std::get_if<BlockTimingConfig>(&config.config);
  if (c == nullptr)
    return std::string("--decide penalties needs a filter that keeps timestamps to infer from (tbf or btbf), not ") +
           agebloom::name(config.structure);
  if (c->window.is_time())
    return "--decide penalties needs a count window (--window N): the posteriors count insertions, and a --ttl "
           "window's blocks are ticks";
  return {};
}

std::string DedupFilter::enable_posteriors(const inference::DistinctItems& distinct) {
  if (std::string why = posterior_support(config_); !why.empty()) return why;
  auto p = inference::BlockTimingPosterior::make(std::get<BlockTimingConfig>(config_.config), distinct);
  if (!p) return p.what();
  posterior_ = *p;
  return {};
}

double DedupFilter::posterior(KeyHash h, double prior) const noexcept {
  const auto& f = std::get<BlockTimingFilter>(filter_);
  return posterior_->posterior(f.observe(h), prior);
}

PenaltyVerdict DedupFilter::decide_with_penalties(KeyHash h, Policy policy, double prior,
                                                  inference::Penalties pen) noexcept {
  auto& f = std::get<BlockTimingFilter>(filter_);
  PenaltyVerdict v;
  const TimerObservation o = f.observe(h);
  v.standard = !o.expired();
  v.posterior = posterior_->posterior(o, prior);
  const inference::Decision d = inference::decide(v.posterior, pen);
  v.duplicate = d.seen;
  v.expected_penalty = d.expected_penalty;
  if (policy == Policy::insert_always || !v.duplicate) f.insert(h);
  return v;
}

namespace {
std::string describe(const GuardedEpochConfig& g) {
  char buf[200];
  std::snprintf(buf, sizeof buf, "r=%u k=%u segment_bits=%llu block_bits=%u epoch=%llu%s", g.r, g.k,
                static_cast<unsigned long long>(g.segment_bits), g.block_bits,
                static_cast<unsigned long long>(g.epoch_length()),
                g.epoch_capacity ? (" epoch_capacity=" + std::to_string(g.epoch_capacity)).c_str() : "");
  return buf;
}
std::string describe(const ApbfConfig& a) {
  char buf[200];
  std::snprintf(buf, sizeof buf, "k=%u l=%u slice_bits=%llu block_bits=%u bits_per_block=%u generation=%llu", a.k,
                a.l, static_cast<unsigned long long>(a.slice_bits), a.block_bits, a.bits_per_block,
                static_cast<unsigned long long>(a.generation_length()));
  return buf;
}
std::string describe(const InterleavedEpochConfig& i) {
  char buf[240];
  std::snprintf(buf, sizeof buf, "r=%u k=%u lines=%llu lane_bits=%u epoch=%llu%s", i.r, i.k,
                static_cast<unsigned long long>(i.lines), i.lane_bits,
                static_cast<unsigned long long>(i.epoch_length()),
                i.epoch_capacity ? (" epoch_capacity=" + std::to_string(i.epoch_capacity)).c_str() : "");
  return buf;
}
std::string describe(const TimeLimitedConfig& t) {
  char buf[200];
  std::snprintf(buf, sizeof buf, "k=%u l=%u capacity=%llu budget_bits=%llu max_slices=%u", t.k, t.l,
                static_cast<unsigned long long>(t.capacity), static_cast<unsigned long long>(t.budget_bits),
                t.max_slices);
  return buf;
}
std::string describe(const BlockTimingConfig& c) {
  char buf[200];
  std::snprintf(buf, sizeof buf, "k=%u timers=%llu bpt=%u block=%llu padding=%llu", c.k,
                static_cast<unsigned long long>(c.timers), c.bpt, static_cast<unsigned long long>(c.block),
                static_cast<unsigned long long>(c.padding));
  return buf;
}
std::string describe(const ClockConfig& c) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "k=%u cells=%llu divisor=%u tick=%llu", c.k, static_cast<unsigned long long>(c.cells),
                c.divisor, static_cast<unsigned long long>(c.tick_length()));
  return buf;
}
std::string describe(const CountingConfig& c) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "k=%u cells=%llu ring=%llu", c.k, static_cast<unsigned long long>(c.cells),
                static_cast<unsigned long long>(c.ring_slots()));
  return buf;
}
std::string describe(const StableConfig& c) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "k=%u cells=%llu cell_bits=%u decrements=%llu", c.k,
                static_cast<unsigned long long>(c.cells), c.cell_bits, static_cast<unsigned long long>(c.decrements));
  return buf;
}
std::string describe(const InterleavedApbfConfig& i) {
  char buf[200];
  std::snprintf(buf, sizeof buf, "k=%u l=%u b=%u lines=%llu lane_bits=%u generation=%llu", i.k, i.l, i.b,
                static_cast<unsigned long long>(i.lines), i.lane_bits,
                static_cast<unsigned long long>(i.generation_length()));
  return buf;
}
}  // namespace

std::string DedupFilter::parameters() const {
  return config_.visit([](const auto& c) { return describe(c); });
}

std::vector<std::pair<std::string, double>> DedupFilter::stats() const {
  std::vector<std::pair<std::string, double>> out;
  if (flood_.design) {
    out.emplace_back("design_insertions_per_epoch", static_cast<double>(flood_.design));
    out.emplace_back("overloaded_epochs", static_cast<double>(flood_.overloaded));
    out.emplace_back("early_rotations", static_cast<double>(flood_.early));
  }
  std::visit(
      [&](const auto& f) {
        auto add = [&](const char* name, double v) { out.emplace_back(name, v); };
        if constexpr (requires { f.slices(); }) {
          add("slices", f.slices());
          add("bits_in_use", static_cast<double>(f.bits_in_use()));
          add("generation_target", static_cast<double>(f.generation_target()));
          add("measured_rate_per_tick", f.measured_rate());
          add("shifts", static_cast<double>(f.shifts()));
          add("budget_saturations", static_cast<double>(f.saturations()));
        }
        if constexpr (requires { f.ring_overflows(); }) {
          add("ring_overflows", static_cast<double>(f.ring_overflows()));
          add("saturated_insertions", static_cast<double>(f.saturated_insertions()));
        }
      },
      filter_);
  return out;
}

uint64_t DedupFilter::effective_window() const noexcept {
  const uint64_t span = config_.window().span;
  // A key is dropped when the segment of its epoch is cleared, r rotations
  // after the next epoch began: the shortest time a key was kept is the span
  // of the last r epochs. Before r rotations nothing was dropped yet.
  if (flood_.known <= flood_.r) return span;
  const uint64_t kept = flood_.starts[flood_.newest] - flood_.starts[(flood_.newest + 64 - flood_.r) % 64];
  return kept < span ? kept : span;
}

uint64_t DedupFilter::saturations() const noexcept {
  return std::visit(
      [](const auto& f) -> uint64_t {
        if constexpr (requires { f.saturations(); }) return f.saturations();
        else return 0;
      },
      filter_);
}

double DedupFilter::fill_ratio() const noexcept {
  return std::visit([](const auto& f) { return f.fill_ratio(); }, filter_);
}

bool parse_duration_ns(std::string_view s, uint64_t& out) noexcept {
  size_t unit_at = 0;
  while (unit_at < s.size() && ((s[unit_at] >= '0' && s[unit_at] <= '9') || s[unit_at] == '.'))
    ++unit_at;
  if (unit_at == 0) return false;
  double value = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + unit_at, value);
  if (ec != std::errc() || end != s.data() + unit_at || !(value > 0)) return false;
  const std::string_view unit = s.substr(unit_at);
  double scale;
  if (unit == "ns") scale = 1;
  else if (unit == "us") scale = 1e3;
  else if (unit == "ms") scale = 1e6;
  else if (unit == "s") scale = 1e9;
  else if (unit == "m") scale = 60e9;
  else if (unit == "h") scale = 3600e9;
  else return false;
  const double ns = std::round(value * scale);
  if (!(ns >= 1) || ns > 1.8e19) return false;
  out = static_cast<uint64_t>(ns);
  return true;
}

}  // namespace agebloom::dedup
