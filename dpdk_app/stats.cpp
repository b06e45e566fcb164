#include "stats.hpp"

#include <algorithm>

#include <fcntl.h>
#include <rte_cycles.h>
#include <rte_pause.h>
#include <rte_telemetry.h>

#include <bit>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <atomic>
#include <cerrno>
#include <thread>

#include <unistd.h>

#include "agebloom/dedup/key_mode.hpp"

namespace dedup_fwd {

namespace pk = agebloom::packet;

namespace {

void add(Totals& t, const LcoreStats& s) {
  t.rx += s.rx.get() + s.malformed.get();
  t.malformed += s.malformed.get();
  t.tx += s.tx.get();
  t.keyed += s.keyed.get();
  t.duplicates += s.duplicates.get();
  t.suppressed += s.suppressed.get();
  t.mirrored += s.mirrored.get();
  t.dropped_error += s.dropped_error.get() + s.malformed.get();
  t.time_regressions += s.time_regressions.get();
  t.no_timestamp += s.no_timestamp.get();
  t.bursts += s.bursts.get();
  t.busy_cycles += s.busy_cycles.get();
  t.expected_penalty_micro += s.expected_penalty_micro.get();
  t.penalty_from_param += s.penalty_from_param.get();
  t.bpf_unmatched += s.bpf_unmatched.get();
  for (size_t r = 1; r < t.reasons.size(); ++r) t.reasons[r] += s.reasons[r].get();
}

// The dispatcher's share: what it counts on the packets it keys (unparsed
// reasons, clock anomalies) and its cycles. Not rx: every packet it receives
// is counted by the worker it hands it to, so the totals add up once. The
// malformed mbufs it dropped reach no worker, so those count here.
void add_dispatcher(Totals& t, const LcoreStats& s) {
  t.rx += s.malformed.get();
  t.dropped_error += s.malformed.get();
  t.malformed += s.malformed.get();
  t.time_regressions += s.time_regressions.get();
  t.no_timestamp += s.no_timestamp.get();
  t.bursts += s.bursts.get();
  t.busy_cycles += s.busy_cycles.get();
  t.penalty_from_param += s.penalty_from_param.get();  // the dispatcher keys (and reads $FN) in dispatch mode
  t.bpf_unmatched += s.bpf_unmatched.get();  // and runs --bpf
  for (size_t r = 1; r < t.reasons.size(); ++r) t.reasons[r] += s.reasons[r].get();
}

void finish(Totals& t) {
  t.unparsed = 0;
  for (size_t r = 1; r < t.reasons.size(); ++r) t.unparsed += t.reasons[r];
}

// Repeats among the packets the filter judged (keyed ones; unparsed and
// --bpf-unmatched frames pass untouched and are not in it). Duplicates, not
// suppressed, so that --action count and mirror show what drop would remove.
double suppression_ratio(const Totals& t) {
  return t.keyed ? static_cast<double>(t.duplicates) / static_cast<double>(t.keyed) : 0.0;
}

// The window every key is kept for, over all lcores (each filter holds its
// own keys, so the shortest is what holds for every key).
uint64_t shortest_window(const std::vector<uint64_t>& per_lcore) {
  uint64_t w = g_app.opt.spec.window.span;
  for (uint64_t x : per_lcore) w = std::min(w, x);
  return w;
}

// "60 s" or "1000000 insertions": a window in the user's units.
std::string window_text(uint64_t span) {
  char buf[64];
  if (g_app.opt.spec.window.is_time()) std::snprintf(buf, sizeof buf, "%.6g s", span / 1e9);
  else std::snprintf(buf, sizeof buf, "%llu insertions", static_cast<unsigned long long>(span));
  return buf;
}

// The JSON's effective window, in the user's units (the key names them).
void put_effective_window(nlohmann::json& j, uint64_t span) {
  if (g_app.opt.spec.window.is_time()) j["effective_window_s"] = span / 1e9;
  else j["effective_window_insertions"] = span;
}

nlohmann::json to_json(const Totals& t) {
  nlohmann::json j{{"rx", t.rx},
                   {"tx", t.tx},
                   {"keyed", t.keyed},
                   {"unparsed", t.unparsed},
                   {"duplicates", t.duplicates},
                   {"suppressed", t.suppressed},
                   {"mirrored", t.mirrored},
                   {"dropped_error", t.dropped_error},
                   {"malformed", t.malformed},
                   {"time_regressions", t.time_regressions},
                   {"no_timestamp", t.no_timestamp},
                   {"bursts", t.bursts},
                   {"suppression_ratio", suppression_ratio(t)},
                   {"cycles_per_packet", t.rx ? static_cast<double>(t.busy_cycles) / t.rx : 0.0}};
  nlohmann::json reasons = nlohmann::json::object();
  for (size_t r = 1; r < t.reasons.size(); ++r)
    if (t.reasons[r]) reasons[pk::reason_name(static_cast<pk::Reason>(r))] = t.reasons[r];
  j["unparsed_reasons"] = reasons;
  if (!g_app.opt.bpf.empty()) j["bpf"] = {{"expression", g_app.opt.bpf}, {"unmatched", t.bpf_unmatched}};
  if (g_app.opt.decide == agebloom::dedup::Decide::penalties) {
    const Options& o = g_app.opt;
    j["penalties"] = {{"decide", "penalties"},
                      {"penalty_fp", o.penalties.fp},
                      {"penalty_fn", o.penalties.fn},
                      {"prior", o.prior},
                      {"expected_penalty", t.expected_penalty_micro / 1e6}};
    if (!o.penalty_param.empty()) {
      j["penalties"]["penalty_param"] = o.penalty_param;
      j["penalties"]["fn_from_param"] = t.penalty_from_param;
    }
  }
  return j;
}

// The structures' own figures (App::filter_stat_names) summed over lcores,
// each lcore's values in that order; a rate per tick is given per second in
// a time window (dedup_fwd's ticks are ns). Telemetry's and the stats JSON's
// filter.stats.
std::vector<std::pair<std::string, double>> summed_filter_stats(const std::vector<std::vector<double>>& lcores) {
  const bool time = g_app.opt.spec.window.is_time();
  const std::vector<std::string>& names = g_app.filter_stat_names;
  std::vector<std::pair<std::string, double>> out;
  for (size_t i = 0; i < names.size() && i < kFilterStats; ++i) {
    double sum = 0;
    for (const std::vector<double>& v : lcores) sum += i < v.size() ? v[i] : 0.0;
    std::string name = names[i];
    if (const size_t at = name.rfind("_per_tick"); at != std::string::npos && time) {
      name.replace(at, std::string::npos, "_per_s");
      sum *= 1e9;
    }
    out.emplace_back(std::move(name), sum);
  }
  return out;
}

nlohmann::json filter_json() {
  const Worker& w = g_app.workers.front();  // every shard has the same shape
  const auto& win = g_app.opt.spec.window;
  std::vector<uint64_t> windows;  // the workers have stopped: each filter read directly
  for (const Worker& x : g_app.workers) windows.push_back(x.filter.effective_window());
  nlohmann::json j{{"name", w.filter.name()},
                   {"parameters", w.filter.parameters()},
                   {"bytes_per_lcore", w.arena_bytes},
                   {"lcores", g_app.workers.size()},
                   {"window", win.span},
                   {"window_kind", win.is_time() ? "time_ns" : "count"},
                   // --mem alone sized the filter: no target, the lowest FPR that fit.
                   {"fpr_target", g_app.opt.spec.fpr == 0.0 ? nlohmann::json(nullptr) : nlohmann::json(g_app.opt.spec.fpr)},
                   {"mem_bytes", g_app.opt.spec.mem_bytes},
                   {"model_fpr", w.filter.model_fpr()},
                   {"bits_per_item", w.filter.bits_per_item()}};
  put_effective_window(j, shortest_window(windows));
  // The filters' own counts in total (per lcore under lcores[].filter_stats),
  // as agebloom-replay's filter.stats: the flood counters, tlbf's budget.
  std::vector<std::vector<double>> per_lcore;
  for (const Worker& x : g_app.workers) {
    per_lcore.emplace_back();
    for (const auto& stat : x.filter.stats()) per_lcore.back().push_back(stat.second);
  }
  j["stats"] = nlohmann::json::object();
  for (const auto& [name, value] : summed_filter_stats(per_lcore)) j["stats"][name] = value;
  return j;
}

// --- telemetry: runs on the telemetry thread. It reads counters, the
// immutable filter description, and the figures the workers publish
// (refresh_figures); never a live filter.

// Asks every worker to publish its figures and waits for publications that
// began after the ask: at most 100 ms, since a worker that has stopped (at
// shutdown) answers no more, and then the last published ones stand.
void refresh_figures() {
  std::vector<uint64_t> want;
  for (const Worker& w : g_app.workers) {
    const uint64_t seq = w.stats->figures_seq.load(std::memory_order_acquire);
    // An odd sequence is a publication under way that may have read its ask
    // before ours: wait for the one after it.
    want.push_back(seq + 2 + (seq & 1));
    w.stats->figures_request.fetch_or(kAskFigures, std::memory_order_relaxed);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(100);
  for (size_t i = 0; i < want.size();) {
    if (g_app.workers[i].stats->figures_seq.load(std::memory_order_acquire) >= want[i]) ++i;
    else if (std::chrono::steady_clock::now() > deadline) break;
    else std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

// A fraction as a JSON number: telemetry in 22.11 has no floating point.
uint64_t scaled(double v, double scale) { return v > 0 ? static_cast<uint64_t>(std::llround(v * scale)) : 0; }

// The telemetry thread answers from rte_eal_init until rte_eal_cleanup
// stops it, but the workers exist only in between: set up before
// register_telemetry(), and their LcoreStats freed before cleanup (with the
// rest of their rte_malloc memory, which cleanup would invalidate). A
// handler enters the gate before it reads any worker and leaves it after.
// Opening the gate (release) after setup, and the handler's load of it
// (acquire), order the setup before every read in our own code, not only
// through librte_telemetry's lock, which ThreadSanitizer cannot see.
// close_telemetry() shuts the gate and waits for the handlers inside. Both
// sides are seq_cst: either the handler sees it closed and reads nothing, or
// close_telemetry sees it in `inside` and waits (the store-load pairs cannot
// both miss).
enum TelemetryPhase : int { kTelNotOpen, kTelOpen, kTelClosed };
std::atomic<int> g_tel_phase{kTelNotOpen};
std::atomic<int> g_tel_inside{0};

struct TelemetryGate {
  bool open;
  TelemetryGate() {
    g_tel_inside.fetch_add(1);
    open = g_tel_phase.load() == kTelOpen;
  }
  ~TelemetryGate() { g_tel_inside.fetch_sub(1); }
};

int tel_stats_body(rte_tel_data* d);
int tel_filter_body(rte_tel_data* d);

// -ENODEV, DPDK's answer for a command with nothing behind it: dedup_fwd is closing.
int tel_stats(const char*, const char*, rte_tel_data* d) {
  const TelemetryGate gate;
  return gate.open ? tel_stats_body(d) : -ENODEV;
}
int tel_filter(const char*, const char*, rte_tel_data* d) {
  const TelemetryGate gate;
  return gate.open ? tel_filter_body(d) : -ENODEV;
}

int tel_stats_body(rte_tel_data* d) {
  Totals t = totals();
  rte_tel_data_start_dict(d);
  rte_tel_data_add_dict_u64(d, "rx", t.rx);
  rte_tel_data_add_dict_u64(d, "tx", t.tx);
  rte_tel_data_add_dict_u64(d, "keyed", t.keyed);
  rte_tel_data_add_dict_u64(d, "unparsed", t.unparsed);
  rte_tel_data_add_dict_u64(d, "bpf_unmatched", t.bpf_unmatched);
  rte_tel_data_add_dict_u64(d, "duplicates", t.duplicates);
  rte_tel_data_add_dict_u64(d, "suppressed", t.suppressed);
  rte_tel_data_add_dict_u64(d, "suppression_ratio_ppm", scaled(suppression_ratio(t), 1e6));
  rte_tel_data_add_dict_u64(d, "mirrored", t.mirrored);
  rte_tel_data_add_dict_u64(d, "dropped_error", t.dropped_error);
  rte_tel_data_add_dict_u64(d, "malformed", t.malformed);
  rte_tel_data_add_dict_u64(d, "lcores", g_app.workers.size());
  if (g_app.opt.decide == agebloom::dedup::Decide::penalties)
    rte_tel_data_add_dict_u64(d, "expected_penalty_micro", t.expected_penalty_micro);
  // Per port, as DPDK counts them (rte_eth_stats_get) and names them (as
  // /ethdev/stats and the stats JSON do): a dict per port.
  for (uint16_t p : g_app.ports) {
    rte_eth_stats s{};
    if (rte_eth_stats_get(p, &s) != 0) continue;
    rte_tel_data* port = rte_tel_data_alloc();
    if (port == nullptr) break;
    rte_tel_data_start_dict(port);
    rte_tel_data_add_dict_u64(port, "ipackets", s.ipackets);
    rte_tel_data_add_dict_u64(port, "opackets", s.opackets);
    rte_tel_data_add_dict_u64(port, "imissed", s.imissed);
    rte_tel_data_add_dict_u64(port, "rx_nombuf", s.rx_nombuf);
    rte_tel_data_add_dict_u64(port, "ierrors", s.ierrors);
    rte_tel_data_add_dict_u64(port, "oerrors", s.oerrors);
    const std::string name = "port" + std::to_string(p);
    if (rte_tel_data_add_dict_container(d, name.c_str(), port, 0) != 0) rte_tel_data_free(port);
  }
  return 0;
}

int tel_filter_body(rte_tel_data* d) {
  const Worker& w = g_app.workers.front();
  const bool time = g_app.opt.spec.window.is_time();
  rte_tel_data_start_dict(d);
  rte_tel_data_add_dict_string(d, "name", w.filter.name().c_str());
  rte_tel_data_add_dict_string(d, "parameters", w.filter.parameters().c_str());
  rte_tel_data_add_dict_string(d, "key", agebloom::dedup::key_mode_name(g_app.opt.mode));
  rte_tel_data_add_dict_string(d, "policy", agebloom::dedup::policy_name(g_app.opt.policy));
  rte_tel_data_add_dict_u64(d, "lcores", g_app.workers.size());
  rte_tel_data_add_dict_u64(d, "bytes_per_lcore", w.arena_bytes);
  rte_tel_data_add_dict_string(d, "window_kind", time ? "time_ns" : "count");
  rte_tel_data_add_dict_u64(d, time ? "window_ns" : "window_insertions", g_app.opt.spec.window.span);
  rte_tel_data_add_dict_u64(d, "fpr_target_ppb", scaled(g_app.opt.spec.fpr, 1e9));
  rte_tel_data_add_dict_u64(d, "model_fpr_ppb", scaled(w.filter.model_fpr(), 1e9));

  refresh_figures();
  std::vector<FilterFigures> figs;
  for (const Worker& x : g_app.workers) figs.push_back(read_filter_figures(*x.stats));
  std::vector<uint64_t> windows;
  for (const FilterFigures& f : figs) windows.push_back(f.effective_window);
  rte_tel_data_add_dict_u64(d, time ? "effective_window_ns" : "effective_window_insertions", shortest_window(windows));
  // The structure's own figures, summed over lcores (the time-limited
  // filter's budget saturations: FPR above the model while non-zero).
  std::vector<std::vector<double>> per_lcore;
  for (const FilterFigures& f : figs) per_lcore.emplace_back(f.stats.begin(), f.stats.end());
  for (const auto& [name, sum] : summed_filter_stats(per_lcore))
    rte_tel_data_add_dict_u64(d, name.c_str(), scaled(sum, 1));
  return 0;
}

}  // namespace

Totals totals() {
  Totals t;
  for (const Worker& w : g_app.workers) add(t, *w.stats);
  if (g_app.dispatch) add_dispatcher(t, *g_app.dispatcher.stats);
  finish(t);
  return t;
}

void request_fill() {
  for (const Worker& w : g_app.workers)
    w.stats->figures_request.fetch_or(kAskFigures | kAskFill, std::memory_order_relaxed);
}

// A seqlock with one writer (H. Boehm, "Can seqlocks get along with
// programming language memory models?", 2012). The writer makes the sequence
// odd, then a release fence, then stores the figures, then makes it even with
// a release store. A reader loads the sequence with acquire, the figures,
// then an acquire fence, then the sequence again: if a figure it loaded came
// from a store after the writer's fence, the fences synchronise and the
// second load sees the odd sequence (or later), so the read is retried; if
// both loads give the same even number, every figure is from the publication
// that number ended, which the first (acquire) load made visible. Each figure
// is an atomic, so a reader racing the writer is no data race, only a retry.
void publish_filter_figures(const Worker& w, bool with_fill) {
  LcoreStats& s = *w.stats;
  // Everything is read from the filter before the sequence turns odd, so a
  // reader never waits on the fill's scan of the whole filter.
  const uint64_t fill = with_fill ? static_cast<uint64_t>(w.filter.fill_ratio() * 1e6) : s.fill_ppm.get();
  const std::vector<std::pair<std::string, double>> stats = w.filter.stats();
  const uint64_t seq = s.figures_seq.load(std::memory_order_relaxed);  // its only writer
  s.figures_seq.store(seq + 1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  s.fill_ppm.set(fill);
  s.effective_window.set(w.filter.effective_window());
  s.budget_saturations.set(w.filter.saturations());
  s.overloaded_epochs.set(w.filter.overloaded_epochs());
  s.early_rotations.set(w.filter.early_rotations());
  for (size_t i = 0; i < stats.size() && i < kFilterStats; ++i) s.filter_stats[i].set(std::bit_cast<uint64_t>(stats[i].second));
  s.figures_seq.store(seq + 2, std::memory_order_release);
}

FilterFigures read_filter_figures(const LcoreStats& s) {
  for (;;) {
    const uint64_t before = s.figures_seq.load(std::memory_order_acquire);
    if (before & 1) {  // a publication is under way: it takes nanoseconds
      rte_pause();
      continue;
    }
    FilterFigures f;
    f.fill_ppm = s.fill_ppm.get();
    f.effective_window = s.effective_window.get();
    f.budget_saturations = s.budget_saturations.get();
    f.overloaded_epochs = s.overloaded_epochs.get();
    f.early_rotations = s.early_rotations.get();
    for (size_t i = 0; i < kFilterStats; ++i) f.stats[i] = std::bit_cast<double>(s.filter_stats[i].get());
    std::atomic_thread_fence(std::memory_order_acquire);
    if (s.figures_seq.load(std::memory_order_relaxed) == before) return f;
  }
}

void publish_all_figures(bool with_fill) {
  for (const Worker& w : g_app.workers) publish_filter_figures(w, with_fill);
}

void print_stats_line(uint64_t now) {
  static uint64_t last_tsc = 0, last_rx = 0;
  if (last_tsc == 0) last_tsc = g_app.start_tsc;
  // The figures the workers published since request_fill() (housekeeping
  // asks shortly before each line; at exit publish_all_figures()).
  uint64_t fill_sum = 0;
  std::vector<uint64_t> windows;
  for (const Worker& w : g_app.workers) {
    const FilterFigures f = read_filter_figures(*w.stats);
    fill_sum += f.fill_ppm;
    windows.push_back(f.effective_window);
  }
  const Totals t = totals();
  const double secs = static_cast<double>(now - last_tsc) / g_app.tsc_hz;
  const double mpps = secs > 0 ? (t.rx - last_rx) / secs / 1e6 : 0.0;
  const uint64_t window = shortest_window(windows);
  std::string filter = "window " + window_text(window);
  if (window < g_app.opt.spec.window.span)
    filter += " (epochs ending early: " + window_text(g_app.opt.spec.window.span) + " configured)";
  std::string ports;
  for (uint16_t p : g_app.ports) {
    rte_eth_stats s{};
    if (rte_eth_stats_get(p, &s) != 0) continue;
    char buf[160];
    std::snprintf(buf, sizeof buf, " | port %u rx %lu tx %lu imissed %lu rx_nombuf %lu", p, s.ipackets, s.opackets,
                  s.imissed, s.rx_nombuf);
    ports += buf;
  }
  std::string damage;
  const uint64_t bad = input_errors(&damage);
  if (g_app.opt.decide == agebloom::dedup::Decide::penalties) {
    char buf[64];
    std::snprintf(buf, sizeof buf, " | expected penalty %.6g", t.expected_penalty_micro / 1e6);
    damage += buf;
  }
  damage += filter_health().text();
  std::printf("dedup_fwd: rx %lu tx %lu suppressed %lu mirrored %lu unparsed %lu errors %lu | suppression ratio %.4f | "
              "%.3f Mpps %.0f cycles/pkt | filter %s fill %.4f %s%s%s%s\n",
              t.rx, t.tx, t.suppressed, t.mirrored, t.unparsed, t.dropped_error, suppression_ratio(t), mpps,
              t.rx ? static_cast<double>(t.busy_cycles) / t.rx : 0.0, g_app.workers.front().filter.name().c_str(),
              fill_sum / 1e6 / g_app.workers.size(), filter.c_str(), ports.c_str(),
              bad ? " | WARNING input errors: " : "", damage.c_str());
  std::fflush(stdout);
  last_tsc = now;
  last_rx = t.rx;
}

std::string FilterHealth::text(bool stats_line) const {
  std::string t;
  // Each part after " | ": on the stats line every one, at exit between them.
  auto add = [&](const std::string& part) { t += (stats_line || !t.empty() ? " | " : "") + part; };
  if (overloaded)
    add("FLOOD: " + std::to_string(overloaded) +
        " epochs over their design load (window kept, FPR above the model; --on-flood keep-fpr keeps the FPR)");
  if (early) add("flood: " + std::to_string(early) + " epochs ended early (FPR kept, window shortened)");
  // The stats line marks it; at exit "warning:" says so.
  if (saturated)
    add(std::string(stats_line ? "WARNING " : "") + "filter budget exhausted " + std::to_string(saturated) +
        " times: FPR above the model, raise --mem");
  return t;
}

FilterHealth filter_health() {
  FilterHealth h;
  for (const Worker& w : g_app.workers) {
    const FilterFigures f = read_filter_figures(*w.stats);
    h.overloaded += f.overloaded_epochs;
    h.early += f.early_rotations;
    h.saturated += f.budget_saturations;
  }
  return h;
}

uint64_t input_errors(std::string* detail) {
  uint64_t sum = 0;
  std::string text;
  for (uint16_t p : g_app.ports) {
    rte_eth_stats s{};
    if (rte_eth_stats_get(p, &s) != 0 || s.ierrors == 0) continue;
    sum += s.ierrors;
    if (!text.empty()) text += ", ";
    text += "port " + std::to_string(p) + " ierrors " + std::to_string(s.ierrors);
  }
  const uint64_t malformed = totals().malformed;
  if (malformed) {
    sum += malformed;
    if (!text.empty()) text += ", ";
    text += "malformed frames " + std::to_string(malformed);
  }
  if (detail) *detail = text;
  return sum;
}

void close_telemetry() {
  g_tel_phase.store(kTelClosed);
  while (g_tel_inside.load() != 0) std::this_thread::sleep_for(std::chrono::microseconds(100));
}

bool register_telemetry() {
  g_tel_phase.store(kTelOpen);  // the workers are set up: see TelemetryGate
  // 22.11 accepts only [A-Za-z0-9_/] in command names and says so with -EINVAL.
  bool ok = true;
  if (int rc = rte_telemetry_register_cmd("/dedup_fwd/stats", tel_stats, "Totals of dedup_fwd's counters"); rc != 0) {
    std::fprintf(stderr, "dedup_fwd: telemetry /dedup_fwd/stats not registered (%d)\n", rc);
    ok = false;
  }
  if (int rc = rte_telemetry_register_cmd("/dedup_fwd/filter", tel_filter, "dedup_fwd's filter and parameters"); rc != 0) {
    std::fprintf(stderr, "dedup_fwd: telemetry /dedup_fwd/filter not registered (%d)\n", rc);
    ok = false;
  }
  return ok;
}

std::string port_stats_json() {
  nlohmann::json a = nlohmann::json::array();
  for (uint16_t p : g_app.ports) {
    rte_eth_stats s{};
    rte_eth_dev_info info{};
    rte_eth_dev_info_get(p, &info);
    if (rte_eth_stats_get(p, &s) != 0) continue;
    a.push_back({{"port", p},
                 {"driver", info.driver_name ? info.driver_name : ""},
                 {"ipackets", s.ipackets},
                 {"opackets", s.opackets},
                 {"imissed", s.imissed},
                 {"ierrors", s.ierrors},
                 {"oerrors", s.oerrors},
                 {"rx_nombuf", s.rx_nombuf}});
  }
  return a.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);  // names are bytes, not UTF-8
}

bool write_stats_json(const std::string& path, const ExitFacts& f) {
  const Options& o = g_app.opt;
  const Totals t = totals();
  nlohmann::json j = to_json(t);
  j["invariant_holds"] = t.rx == t.tx + t.suppressed + t.mirrored + t.dropped_error;
  j["input_errors"] = f.input_errors;
  j["seconds"] = f.seconds;
  j["key"] = agebloom::dedup::key_mode_name(o.mode);
  j["policy"] = agebloom::dedup::policy_name(o.policy);
  j["action"] = action_name(o.action);
  if (o.action == Action::mirror) j["mirror_port"] = o.mirror_port;
  j["time_source"] = o.time_source == TimeSource::tsc ? "tsc" : "rx-timestamp";
  // Only a seed the user gave (--seed): a random one is the filter's secret.
  // Hexadecimal, as --seed takes it and the start-up line prints it.
  j["seed_given"] = o.seed_set;
  if (o.seed_set) {
    char seed[24];
    std::snprintf(seed, sizeof seed, "%llx", static_cast<unsigned long long>(g_app.seed));
    j["seed"] = seed;
  }
  j["filter"] = filter_json();
  j["mempool"] = {{"size", f.mempool_size}, {"in_use_at_exit", f.mempool_in_use}};
  j["ports"] = nlohmann::json::parse(f.port_stats_json.empty() ? "[]" : f.port_stats_json);
  nlohmann::json lc = nlohmann::json::array();
  for (const Worker& w : g_app.workers) {
    Totals one;
    add(one, *w.stats);
    finish(one);
    nlohmann::json e = to_json(one);
    e["lcore"] = w.lcore_id;
    e["socket"] = w.socket;
    e["fill_ratio"] = w.filter.fill_ratio();  // workers have stopped: no race
    put_effective_window(e, w.filter.effective_window());
    for (const auto& [name, value] : w.filter.stats()) e["filter_stats"][name] = value;
    lc.push_back(e);
  }
  j["lcores"] = lc;
  if (g_app.dispatch) {
    // Workers' "rx" above is what each was handed; the dispatcher's is what
    // it received from the ports (equal in sum).
    const LcoreStats& s = *g_app.dispatcher.stats;
    Totals one;
    add_dispatcher(one, s);
    finish(one);
    nlohmann::json reasons = nlohmann::json::object();
    for (size_t r = 1; r < one.reasons.size(); ++r)
      if (one.reasons[r]) reasons[pk::reason_name(static_cast<pk::Reason>(r))] = one.reasons[r];
    j["dispatcher"] = {{"lcore", g_app.dispatcher.lcore_id},
                       {"rx", s.rx.get() + s.malformed.get()},
                       {"malformed", s.malformed.get()},
                       {"unparsed", one.unparsed},
                       {"unparsed_reasons", reasons},
                       {"ring_full_waits", s.ring_full.get()},
                       {"bursts", one.bursts},
                       {"cycles_per_packet", s.rx.get() ? static_cast<double>(one.busy_cycles) / s.rx.get() : 0.0}};
  } else {
    j["dispatcher"] = nullptr;
  }

  const std::string text = j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";  // names are bytes
  // O_NONBLOCK for the open alone: a FIFO nobody reads fails at once (ENXIO)
  // instead of blocking the exit for good, deaf to SIGINT and SIGTERM (the
  // open is restarted after each). A FIFO with a reader, or a file, is
  // written as usual, blocking.
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NONBLOCK | O_CLOEXEC, 0666);  // less umask
  if (fd < 0) {
    std::fprintf(stderr, "dedup_fwd: cannot write %s: %s\n", path.c_str(),
                 errno == ENXIO ? "a FIFO that no process is reading" : std::strerror(errno));
    return false;
  }
  int err = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) == 0 ? 0 : errno;
  for (size_t at = 0; err == 0 && at < text.size();) {
    const ssize_t n = write(fd, text.data() + at, text.size() - at);
    if (n > 0) at += static_cast<size_t>(n);
    else if (n == 0) err = EIO;  // no progress: not looped on
    else if (errno != EINTR) err = errno;  // a full disk's ENOSPC, a reader gone (EPIPE)
  }
  if (close(fd) != 0 && err == 0 && errno != EINTR) err = errno;
  if (err != 0) {
    std::fprintf(stderr, "dedup_fwd: cannot write %s: %s\n", path.c_str(), std::strerror(err));
    return false;
  }
  return true;
}

}  // namespace dedup_fwd
