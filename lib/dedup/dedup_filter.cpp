#include "agebloom/dedup/dedup_filter.hpp"

#include "agebloom/model/planner.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

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

namespace {

model::PlanRequest request_of(const FilterSpec& spec) {
  model::PlanRequest req;
  req.window = spec.window;
  req.capacity = spec.capacity;
  req.fpr = spec.fpr;
  req.structure = spec.structure;
  req.memory_bytes = spec.mem_bytes;
  req.max_npws = spec.max_npws;
  req.max_bits_per_item = spec.max_bits_per_item;
  req.max_accesses_per_query = spec.max_accesses;
  req.block_bits = spec.block_bits;
  // --ttl without --capacity: "auto" plans a rate-adaptive structure (the
  // planner's rule); a named one that needs a capacity assumes the default.
  if (spec.window.is_time() && spec.capacity == 0 && spec.structure && !info(*spec.structure).rate_adaptive)
    req.capacity = kDefaultTtlCapacity;
  return req;
}

// "filter X (...) needs N bytes (M MiB), more than --mem ...": exact bytes
// beside the MiB (--mem counts 2^20-byte units), since a rounded "needs
// 3 MB, more than --mem 3 MB" reads as a contradiction.
std::string over_memory(const model::Plan& p, uint64_t mem_bytes) {
  const DedupFilter d(p.config);
  // --mem in MiB as given (3.00, or 0.001 where two decimals would read 0.00).
  char mib[32];
  std::snprintf(mib, sizeof mib, mem_bytes >= 10485.76 ? "%.2f" : "%.3g", mem_bytes / 1048576.0);
  char buf[240];
  std::snprintf(buf, sizeof buf,
                " needs %llu bytes (%.2f MiB), more than --mem %s MiB (%llu bytes); raise --mem, shorten the "
                "window or relax --fpr",
                static_cast<unsigned long long>(d.bytes_needed()), d.bytes_needed() / 1048576.0, mib,
                static_cast<unsigned long long>(mem_bytes));
  // No "filter" in front: the tools say "filter:" before a plan's refusal.
  return d.name() + " (" + d.parameters() + ")" + buf;
}

// 3.24 MiB, 16.8 KiB or 512 bytes: the note compares sizes, so neither
// rounds to 0.00.
std::string human_bytes(double bytes) {
  char buf[32];
  if (bytes >= 1048576.0) std::snprintf(buf, sizeof buf, "%.2f MiB", bytes / 1048576.0);
  else if (bytes >= 1024.0) std::snprintf(buf, sizeof buf, "%.1f KiB", bytes / 1024.0);
  else std::snprintf(buf, sizeof buf, "%.0f bytes", bytes);
  return buf;
}

// A --max-accesses limit tightened to `most` memory accesses per packet.
std::optional<double> within_accesses(std::optional<double> limit, double most) {
  return limit ? std::min(*limit, most) : most;
}
// A config whose epochs can end early: it has the capacity trigger
// (epoch_capacity) that --on-flood keep-fpr sets.
template <class C>
concept EndsEpochsEarly = requires(const C& c) {
  c.epoch_capacity;
  c.r;
};

// Whether plan p can keep the spec's flood policy: --on-flood keep-fpr over a
// time window needs epochs that can end early (a capacity trigger), or a
// rate-adaptive structure.
bool keeps_flood_policy(const FilterSpec& spec, const model::Plan& p) {
  if (spec.on_flood != FloodPolicy::keep_fpr || !spec.window.is_time() || info(p.structure).rate_adaptive) return true;
  return p.config.visit([](const auto& c) {
    return EndsEpochsEarly<std::decay_t<decltype(c)>>;
  });
}
// Which registered structures can end an epoch early, in table order.
template <size_t... I>
constexpr std::array<bool, kStructureCount> epochs_end_early(std::index_sequence<I...>) {
  return {EndsEpochsEarly<typename StructureTraits<static_cast<Structure>(I)>::Config>...};
}
constexpr auto kEndsEpochsEarly = epochs_end_early(std::make_index_sequence<kStructureCount>());

// "a, b or c".
std::string one_of(const std::vector<const char*>& names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i)
    out += std::string(i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  return out;
}

// --on-flood keep-fpr's refusal, from the registry: the structures that end
// epochs early, and the rate-adaptive ones, which keep their FPR by design.
std::string flood_policy_advice() {
  std::vector<const char*> early, adaptive;
  for (const StructureInfo& s : kStructures)
    if (s.rate_adaptive) adaptive.push_back(s.name);
    else if (kEndsEpochsEarly[static_cast<size_t>(s.id)]) early.push_back(s.name);
  return "use " + one_of(early) + " (or " + one_of(adaptive) +
         (adaptive.size() == 1 ? ", which keeps its" : ", which keep their") + " FPR by design)";
}

// How auto_note names the steps of plan_spec's fallback.
const char* accesses_phrase(double most) {
  return most == 1.0 ? "at one memory access per packet" : "at two memory accesses per packet";
}

}  // namespace

bool mem_is_budget(const FilterSpec& spec) noexcept { return model::spends_budget(request_of(spec)); }

// The request plan_spec plans: the spec's, with --mem a limit on every
// structure but the rate-adaptive one, whose budget it is (memory_bytes).
model::PlanRequest limited_request(const FilterSpec& spec) {
  model::PlanRequest req = request_of(spec);
  if (spec.mem_bytes && !mem_is_budget(spec)) req.max_total_bytes = spec.mem_bytes;
  return req;
}

model::PlanResult plan_spec(const FilterSpec& spec) {
  model::PlanRequest req = limited_request(spec);
  // "auto": a dataplane pays per packet, so the fewest bits per item among
  // the layouts measured fastest per packet (the registry's auto_candidate
  // rows; docs/PERFORMANCE.md has the cycles). The most compact structure is
  // one --filter away (auto_note says which).
  if (!spec.structure) req.auto_candidates = true;
  auto plan = [&] { return spec.fpr == 0.0 ? model::plan_lowest_fpr(req) : model::plan(req); };
  auto result = plan();
  if (const auto* err = std::get_if<model::PlanError>(&result); err && req.auto_candidates &&
                                                                  err->code != model::PlanErrc::invalid_request) {
    // No fast layout reaches the target within the limits: auto takes the
    // most compact structure that does at one memory access per packet
    // (interleaved-128 at 1%: 21.0 bits per item against 27.2), then at two
    // (two-line: 17.9), and only then the most compact of all, rather than
    // refusing. A count window too short for the fast layouts' segments
    // goes the same way: a structure of fewer segments may keep it.
    // A step's plan that cannot keep the flood policy counts as none (the
    // next step may: two-line ends epochs early, interleaved-apbf does not).
    // The steps by accesses take the layouts whose accesses say their cost
    // (the registry's auto_fallback rows: not pocket-epoch or queue-epoch,
    // whose 1.04-1.06 lines per packet cost more cycles than two-line's two).
    req.auto_candidates = false;
    req.auto_fallback = true;
    const auto limit = req.max_accesses_per_query;
    bool found = false;
    std::optional<double> tried;
    for (const double most : {1.0, 2.0}) {
      req.max_accesses_per_query = within_accesses(limit, most);
      if (req.max_accesses_per_query == tried) continue;  // --max-accesses under 2: one step
      tried = req.max_accesses_per_query;
      result = plan();
      const auto* p = std::get_if<model::Plan>(&result);
      if ((found = p != nullptr && keeps_flood_policy(spec, *p))) break;
    }
    if (!found) {
      req.max_accesses_per_query = limit;
      req.auto_fallback = false;  // the last step: the most compact of all
      result = plan();
    }
  }
  if (const auto* p = std::get_if<model::Plan>(&result); p != nullptr && !spec.structure && spec.fpr != 0.0) {
    // The registry's size rule (StructureInfo::auto_over_bytes): past a few
    // MiB the one-line layout's epoch rotation, a lane cleared in every line
    // inside one burst, outlasts an Rx ring at line rate (docs/PERFORMANCE.md,
    // "Rotation stalls"): auto takes the row that spreads that clear over the
    // epoch, when it fits the same limits. Not when sized by memory (--fpr 0):
    // the lowest FPR in that memory is what was asked for.
    if (const StructureInfo* over = auto_over(p->structure, p->total_bytes)) {
      model::PlanRequest instead = req;
      instead.auto_candidates = instead.auto_fallback = false;
      instead.structure = over->id;
      auto s = model::plan(instead);
      if (const auto* q = std::get_if<model::Plan>(&s); q != nullptr && keeps_flood_policy(spec, *q))
        result = std::move(s);
    }
  }
  if (auto* err = std::get_if<model::PlanError>(&result)) {
    // Over --mem alone: name the plan that does not fit, and by how much.
    if (err->code == model::PlanErrc::over_limits && req.max_total_bytes && spec.fpr != 0.0) {
      model::PlanRequest free = req;
      free.max_total_bytes.reset();
      auto unlimited = model::plan(free);
      if (const auto* p = std::get_if<model::Plan>(&unlimited)) err->message = over_memory(*p, spec.mem_bytes);
    }
    return result;
  }
  model::Plan& planned = std::get<model::Plan>(result);
  if (spec.on_flood == FloodPolicy::keep_fpr && spec.window.is_time()) {
    // The capacity trigger: an epoch also ends once it holds its design load.
    bool set = false;
    std::visit(
        [&](auto& c) {
          if constexpr (EndsEpochsEarly<std::decay_t<decltype(c)>>) {
            if (c.epoch_capacity == 0) c.epoch_capacity = math::ceil_div(c.capacity ? c.capacity : 1, c.r);
            set = true;
          }
        },
        planned.config.config);
    if (!set && !info(planned.structure).rate_adaptive)
      return model::PlanError{model::PlanErrc::invalid_request,
                              std::string("--on-flood keep-fpr: ") + agebloom::name(planned.structure) +
                                  " cannot end an epoch early; " + flood_policy_advice()};
  }
  return result;
}

std::variant<DedupFilter, std::string> DedupFilter::plan(const FilterSpec& spec) {
  auto result = plan_spec(spec);
  if (auto* err = std::get_if<model::PlanError>(&result)) return err->message;
  DedupFilter d(std::get<model::Plan>(result).config);
  // The rate-adaptive budget is a limit too: its header and table on top.
  if (spec.mem_bytes && d.bytes_needed() > spec.mem_bytes)
    return over_memory(std::get<model::Plan>(result), spec.mem_bytes);
  return d;
}

std::string DedupFilter::auto_note(const FilterSpec& spec, const DedupFilter& chosen) {
  if (spec.structure) return {};
  model::PlanRequest req = request_of(spec);  // every structure, not only the auto candidates
  char buf[1600];
  if (spec.fpr == 0.0 && spec.mem_bytes) {
    // Sized by memory: the trade shows as FPR within the same memory.
    req.max_total_bytes = spec.mem_bytes;
    auto result = model::plan_lowest_fpr(req);
    const auto* p = std::get_if<model::Plan>(&result);
    if (p == nullptr || p->structure == chosen.structure() || !(p->expected_fpr < 0.5 * chosen.model_fpr())) return {};
    std::snprintf(buf, sizeof buf,
                  "--filter auto chose %s (model FPR %.3g in %s): the lowest FPR among the layouts fastest per "
                  "packet; the lowest in the same memory is %s at FPR %.3g (more memory accesses per packet): "
                  "--filter %s",
                  chosen.name().c_str(), chosen.model_fpr(),
                  human_bytes(static_cast<double>(chosen.bytes_needed())).c_str(),
                  agebloom::name(p->structure), p->expected_fpr, agebloom::name(p->structure));
    return buf;
  }
  if (spec.window.is_time() && spec.capacity == 0 && info(chosen.structure()).rate_adaptive) {
    // No rate given: only the rate-adaptive structure can promise the window.
    std::snprintf(buf, sizeof buf,
                  "--filter auto chose %s (%s): no --capacity was given, and %s is the one structure that keeps a "
                  "time window at a rate not known in advance, within its memory budget (--mem); give --capacity, "
                  "the keys expected per --ttl, for the layouts fastest per packet",
                  chosen.name().c_str(), human_bytes(static_cast<double>(chosen.bytes_needed())).c_str(),
                  chosen.name().c_str());
    return buf;
  }
  // plan_spec's size rule (the registry's auto_over_bytes): why not the row it replaced.
  std::string lead = "the fewest bits among the layouts fastest per packet";
  const StructureInfo& row = info(chosen.structure());
  const bool over = row.auto_over_bytes != 0;
  if (over) {
    model::PlanRequest plain = limited_request(spec);
    plain.structure = row.auto_in_place_of;
    const auto at = model::plan(plain);
    if (const auto* p = std::get_if<model::Plan>(&at)) {
      const DedupFilter one(p->config);
      // Keys stay up to W/r past the window (an epoch's slack): r of each.
      const auto r_of = [](const DedupFilter& d) {
        return d.config().visit([](const auto& c) -> uint32_t {
          if constexpr (requires { c.r; }) return c.r; else return 0;
        });
      };
      char slack[96] = "";
      if (r_of(chosen) && r_of(one))
        std::snprintf(slack, sizeof slack, "; it keeps keys up to W/%u past the window against W/%u", r_of(chosen),
                      r_of(one));
      std::snprintf(buf, sizeof buf, "%s (%s, %.1f bits per item) %s (auto avoids it above %s); %s is %s%s: --filter %s for the fewer bytes",
                    one.name().c_str(), human_bytes(static_cast<double>(one.bytes_needed())).c_str(),
                    one.bits_per_item(), row.auto_over_why, human_bytes(static_cast<double>(row.auto_over_bytes)).c_str(),
                    chosen.name().c_str(), row.summary, slack, one.name().c_str());
      lead = buf;
    }
  }
  char head[200];
  std::snprintf(head, sizeof head, "--filter auto chose %s (%s, %.1f bits per item): ", chosen.name().c_str(),
                human_bytes(static_cast<double>(chosen.bytes_needed())).c_str(), chosen.bits_per_item());
  const std::string alone = over ? head + lead : std::string();  // the note when nothing more compact is named
  if (!row.auto_candidate && !over) {
    // plan_spec's fallback: the fast layouts did not fit the limits.
    std::string fast;
    for (const StructureInfo& s : kStructures)
      if (s.auto_candidate) fast += std::string(fast.empty() ? "" : ", ") + s.name;
    // Which step of plan_spec's fallback chose it: one access, two, or any.
    const char* how = "(more memory accesses per packet)";
    for (const double most : {1.0, 2.0}) {
      model::PlanRequest within = limited_request(spec);
      within.max_accesses_per_query = within_accesses(within.max_accesses_per_query, most);
      within.auto_fallback = true;
      const auto at = spec.fpr == 0.0 ? model::plan_lowest_fpr(within) : model::plan(within);
      if (const auto* m = std::get_if<model::Plan>(&at); m != nullptr && keeps_flood_policy(spec, *m)) {
        if (m->structure == chosen.structure()) how = accesses_phrase(most);
        break;
      }
    }
    // Why the fast layouts were passed over: a window too short for their
    // segments, or the limits.
    model::PlanRequest fastest = limited_request(spec);
    fastest.auto_candidates = true;
    const auto why = spec.fpr == 0.0 ? model::plan_lowest_fpr(fastest) : model::plan(fastest);
    const auto* refused = std::get_if<model::PlanError>(&why);
    const bool too_short = refused != nullptr && refused->code == model::PlanErrc::window_too_short;
    std::snprintf(buf, sizeof buf,
                  "--filter auto chose %s (%s, %.1f bits per item): the layouts fastest per packet (%s) %s; %s is "
                  "the most compact layout that %s %s",
                  chosen.name().c_str(), human_bytes(static_cast<double>(chosen.bytes_needed())).c_str(),
                  chosen.bits_per_item(), fast.c_str(),
                  too_short ? "cannot keep a window this short (it is shorter than their segments)"
                            : "do not fit the limits given",
                  chosen.name().c_str(), too_short ? "keeps it" : "fits", how);
    return buf;
  }
  auto result = model::plan(req);
  const auto* p = std::get_if<model::Plan>(&result);
  if (p == nullptr || p->structure == chosen.structure()) return alone;
  const DedupFilter best(p->config);
  const double mine = static_cast<double>(chosen.bytes_needed()), theirs = static_cast<double>(best.bytes_needed());
  if (!(theirs < 0.8 * mine)) return alone;
  // Between the two: the most compact plans that still read at most one
  // line, and at most two, per packet (interleaved-128 and two-line at 1%),
  // each named when it saves a fifth.
  std::string middle;
  std::optional<Structure> named;  // a structure named at one access is not named again at two
  for (const double most : {1.0, 2.0}) {
    model::PlanRequest within = req;
    within.max_accesses_per_query = within_accesses(req.max_accesses_per_query, most);
    within.auto_fallback = true;  // the layouts plan_spec's fallback steps take
    auto near_plan = model::plan(within);
    const auto* m = std::get_if<model::Plan>(&near_plan);
    if (m == nullptr || m->structure == chosen.structure() || m->structure == p->structure || m->structure == named)
      continue;
    named = m->structure;
    const DedupFilter near(m->config);
    const double bytes = static_cast<double>(near.bytes_needed());
    if (bytes < 0.8 * mine && bytes > theirs) {
      char part[200];
      std::snprintf(part, sizeof part, "; %s, %s takes %s (%.1f bits per item): --filter %s", accesses_phrase(most),
                    near.name().c_str(), human_bytes(bytes).c_str(), near.bits_per_item(), near.name().c_str());
      middle += part;
    }
  }
  std::snprintf(buf, sizeof buf,
                "%s%s%s; the most compact for this window and FPR is %s at %s (%.1f bits per item, more memory "
                "accesses per packet): --filter %s",
                head, lead.c_str(), middle.c_str(), best.name().c_str(), human_bytes(theirs).c_str(),
                best.bits_per_item(), best.name().c_str());
  return buf;
}

std::string DedupFilter::create(Arena& arena) {
  return config_.visit([&](const auto& c) -> std::string {
    auto f = FilterFor<std::decay_t<decltype(c)>>::create(c, arena);
    if (!f) return f.what();
    filter_ = *f;
    // Time windows of the epoch filters: watch each epoch's load.
    flood_ = {};
    if constexpr (EndsEpochsEarly<std::decay_t<decltype(c)>>) {
      if (c.window.is_time() && c.r) {
        flood_.design = math::ceil_div(c.capacity ? c.capacity : 1, c.r);
        flood_.epoch_length = c.epoch_length();
        flood_.r = c.r < 64 ? c.r : 63;
        // The lanes the current one cycles through: r + 1, or the
        // config's own ring (the swept layout's spare makes r + 2).
        if constexpr (requires { c.ring(); }) flood_.ring = c.ring(); else flood_.ring = flood_.r + 1;
      }
    }
    return {};
  });
}

void DedupFilter::watch_epochs(const EpochSchedule& s, uint32_t seg, uint64_t inserted,
                               uint64_t fill_before) noexcept {
  if (s.fill_cap) {
    // keep-fpr: the schedule counts the epoch's insertions itself and
    // restarts at 1 when the capacity trigger ends an epoch; an epoch
    // ended by time moves epoch_start a whole epoch on instead.
    flood_.early += (fill_before + inserted - s.fill) / s.fill_cap;
    // Epoch starts for effective_window(). Primed at the first look,
    // not at create(): a restored snapshot's segment is not 0.
    const uint32_t segs = flood_.ring;
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
// " epoch_capacity=N" where a time window's epochs also end at a fill (--on-flood keep-fpr), else "".
std::string epoch_capacity_suffix(uint64_t epoch_capacity) {
  return epoch_capacity ? " epoch_capacity=" + std::to_string(epoch_capacity) : "";
}
std::string describe(const GuardedEpochConfig& g) {
  char buf[200];
  std::snprintf(buf, sizeof buf, "r=%u k=%u segment_bits=%llu block_bits=%u epoch=%llu%s", g.r, g.k,
                static_cast<unsigned long long>(g.segment_bits), g.block_bits,
                static_cast<unsigned long long>(g.epoch_length()),
                epoch_capacity_suffix(g.epoch_capacity).c_str());
  return buf;
}
std::string describe(const ApbfConfig& a) {
  char buf[200];
  std::snprintf(buf, sizeof buf, "k=%u l=%u slice_bits=%llu block_bits=%u bits_per_block=%u generation=%llu", a.k,
                a.l, static_cast<unsigned long long>(a.slice_bits), a.block_bits, a.bits_per_block,
                static_cast<unsigned long long>(a.generation_length()));
  return buf;
}
// The line layouts' parameters, named alike for both.
std::string describe_lines(uint32_t r, uint32_t k, uint64_t lines, uint32_t lane_bits, uint64_t epoch,
                           uint64_t epoch_capacity) {
  char buf[240];
  std::snprintf(buf, sizeof buf, "r=%u k=%u lines=%llu lane_bits=%u epoch=%llu%s", r, k,
                static_cast<unsigned long long>(lines), lane_bits, static_cast<unsigned long long>(epoch),
                epoch_capacity_suffix(epoch_capacity).c_str());
  return buf;
}
std::string describe(const InterleavedEpochConfig& i) {
  return describe_lines(i.r, i.k, i.lines, i.lane_bits, i.epoch_length(), i.epoch_capacity);
}
std::string describe(const TwoLineEpochConfig& i) {
  return describe_lines(i.r, i.k(), i.lines, TwoLineEpochConfig::kLaneBits, i.epoch_length(), i.epoch_capacity);
}
std::string describe(const PocketEpochConfig& c) {
  char buf[240];
  std::snprintf(buf, sizeof buf, "r=%u lines=%llu spare_lines=%llu fingerprint_bits=12 epoch=%llu%s", c.r,
                static_cast<unsigned long long>(c.lines), static_cast<unsigned long long>(c.spare_lines),
                static_cast<unsigned long long>(c.epoch_length()),
                epoch_capacity_suffix(c.epoch_capacity).c_str());
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

DedupFilter::Sticky DedupFilter::sticky() const noexcept {
  return std::visit(
      [](const auto& f) -> Sticky {
        if constexpr (requires { f.ring_overflows(); f.saturated_insertions(); })
          return {f.saturated_insertions(), f.ring_overflows(), f.config().ring_slots()};
        else return {};
      },
      filter_);
}

uint64_t DedupFilter::slack() const {
  const model::Plan p = model::describe(config_);
  const Window w = config_.window();
  if (!w.is_time()) return static_cast<uint64_t>(std::ceil(p.slack_items));
  // Time epochs are ticks: a key outlives the span by r + 1 epochs less it.
  const uint64_t epochs = config_.visit([&](const auto& c) -> uint64_t {
    if constexpr (requires { c.epoch_length(); c.r; }) return (c.r + 1) * c.epoch_length() - w.span;
    return 0;
  });
  if (epochs) return epochs;
  // Otherwise a time window's slack items are its load's: the same share of its span.
  const uint64_t items = config_.visit([](const auto& c) { return c.capacity; });
  if (items == 0) return 0;
  return static_cast<uint64_t>(std::ceil(p.slack_items / static_cast<double>(items) * static_cast<double>(w.span)));
}

std::string DedupFilter::guarantee(Policy policy) const {
  const Window w = config_.window();
  char fpr[32];
  std::snprintf(fpr, sizeof fpr, "%.3g", model_fpr());
  if (info(config_.structure).false_negatives)
    return "no window guarantee: " + name() + " forgets keys at random (false negatives by design); model FPR " + fpr;
  const uint64_t slack_span = slack();
  auto span = [&](uint64_t v) {
    return w.is_time() ? format_duration(v, true) : std::to_string(v) + (v == 1 ? " insertion" : " insertions");
  };
  const char* since = policy == Policy::insert_always ? "its previous sighting" : "the last copy passed";
  // --on-flood keep-fpr (and the ring, which rotates at capacity by design):
  // an epoch also ends at its design load, so the promise holds up to the
  // rate the filter was sized for.
  const uint64_t epoch_capacity = config_.visit([](const auto& c) -> uint64_t {
    if constexpr (requires { c.epoch_capacity; }) return c.epoch_capacity;
    return 0;
  });
  std::string s = "every repeat within " + span(w.span) + " of " + since + " is suppressed (no false negatives)";
  if (w.is_time() && epoch_capacity) {
    const uint64_t items = config_.visit([](const auto& c) { return c.capacity; });
    s += " while at most " + std::to_string(items) + " keys arrive per " + format_duration(w.span, true) +
         "; a flood past that ends epochs early (--on-flood keep-fpr): the FPR stays at the model, the window "
         "shrinks, and repeats older than it pass (counted as early rotations)";
  }
  if (slack_span) s += "; a key may be remembered for up to " + span(w.span + slack_span) + " (slack " + span(slack_span) + ")";
  else if (config_.structure == Structure::counting)
    // Exact deletion, but a counter that saturates (a key repeated past the
    // cell's range) is never decremented again: its keys can outlive the
    // window, and stats() counts those counters.
    s += std::string("; nothing is remembered past the window unless a counter saturates") +
         (w.is_time() ? " or the hash ring overflows (a rate above the capacity; counted as saturated insertions "
                        "and ring overflows)"
                      : " (counted as saturated insertions)");
  else s += "; nothing is remembered past the window";
  s += std::string("; a new key is wrongly suppressed with probability ") + fpr + " (model";
  if (w.is_time()) {
    const uint64_t items = config_.visit([](const auto& c) { return c.capacity; });
    if (items) s += " at " + std::to_string(items) + " insertions per " + format_duration(w.span, true);
  }
  return s + ")";
}

double DedupFilter::fill_ratio() const noexcept {
  return std::visit([](const auto& f) { return f.fill_ratio(); }, filter_);
}

std::string format_duration(uint64_t ns, bool round) {
  // Seconds at most: "1m" reads as a million as easily as a minute.
  static constexpr struct { uint64_t scale; const char* unit; } kUnits[] = {
      {1'000'000'000, "s"}, {1'000'000, "ms"}, {1'000, "us"}, {1, "ns"}};
  char buf[48];
  for (const auto& u : kUnits) {
    if (ns < u.scale) continue;
    if (ns % u.scale == 0) {
      std::snprintf(buf, sizeof buf, "%llu%s", static_cast<unsigned long long>(ns / u.scale), u.unit);
      return buf;
    }
    if (round) {
      std::snprintf(buf, sizeof buf, "%.4g%s", static_cast<double>(ns) / static_cast<double>(u.scale), u.unit);
      return buf;
    }
  }
  std::snprintf(buf, sizeof buf, "%lluns", static_cast<unsigned long long>(ns));
  return buf;
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
