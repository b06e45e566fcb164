// agebloom-replay: replays a pcap/pcapng trace through a sliding-window
// filter with dedup_fwd's semantics, packet by packet, and reports what it
// suppressed; --truth adds exact ground truth to measure the filter against.
//
//   agebloom-replay TRACE [--key src-ip|dst-ip|flow|click] [--filter NAME]
//                   [--window N | --ttl DURATION] [--fpr P] [--seed HEX]
//                   [--policy insert-always|insert-on-miss] [--truth] [--json]
//                   [--verdicts FILE] [--backend cpu|gpu|auto]
//
// Exit codes: 0 done, 1 the trace could not be read to its end, 2 bad options.
#include <getopt.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "agebloom/agebloom.hpp"
#include "agebloom/dedup/dedup_filter.hpp"
#include "agebloom/dedup/key_mode.hpp"
#include "agebloom/dedup/spec_options.hpp"
#include "agebloom/packet/key_extract.hpp"
#include "agebloom/trace/pcap_trace.hpp"
#include "replay.hpp"  // gpu/: the CUDA backend (a stub when built without nvcc)

namespace {

using namespace agebloom;
namespace pk = agebloom::packet;

struct Options {
  std::string trace;
  pk::KeyMode mode = pk::KeyMode::src_ip;
  dedup::FilterSpec spec;
  dedup::Policy policy = dedup::Policy::insert_always;
  bool policy_set = false;
  uint64_t seed = 0;
  bool seed_set = false;
  bool truth = false, json = false;
  std::string verdicts;
  std::string click_param;
  bool click_host = false;
  std::string backend = "cpu";
};

void usage(FILE* out) {
  std::fprintf(out,
               "usage: agebloom-replay TRACE [options]\n"
               "  --key src-ip|dst-ip|flow|click   what identifies a duplicate (default src-ip)\n"
               "  --filter NAME                    %s (default auto)\n"
               "  --window N                       count window: the last N insertions\n"
               "  --ttl DURATION                   time window from packet timestamps (500ms, 60s, 10m)\n"
               "  --capacity N                     expected insertions per --ttl (default 1000000)\n"
               "  --fpr P                          target false-positive rate (default 0.01)\n"
               "  --policy insert-always|insert-on-miss\n"
               "                                   default: insert-on-miss for click, else insert-always\n"
               "  --seed HEX                       hash secret (default: random)\n"
               "  --click-param NAME               click: key on this query parameter only\n"
               "  --click-host                     click: include the Host header\n"
               "  --truth                          exact ground truth: live FNR, FPR, expired positives\n"
               "  --verdicts FILE                  one bit per packet (1 = suppressed), LSB first\n"
               "  --json                           one JSON object on stdout\n"
               "  --backend cpu|gpu|auto           gpu: CUDA exact replay (guarded epoch filters: flat,\n"
               "                                   blocked, ring, interleaved; APBF, APBBF);\n"
               "                                   auto: gpu when it can (default cpu)\n"
               "  --help\n",
               dedup::filter_names());
}

[[noreturn]] void bad(const std::string& msg) {
  std::fprintf(stderr, "agebloom-replay: %s\n", msg.c_str());
  std::fprintf(stderr, "try 'agebloom-replay --help'\n");
  std::exit(2);
}

// A shared option parser's answer (agebloom/dedup/spec_options.hpp): fine, or
// the message to exit with.
void must(const std::string& error) {
  if (!error.empty()) bad(error);
}


Options parse(int argc, char** argv) {
  Options o;
  uint64_t capacity = 1'000'000;
  bool have_window = false, have_ttl = false;
  enum { kKey = 1, kFilter, kWindow, kTtl, kCapacity, kFpr, kPolicy, kSeed, kTruth, kJson, kVerdicts,
         kBackend, kClickParam, kClickHost, kHelp };
  static const option longopts[] = {
      {"key", required_argument, nullptr, kKey},         {"filter", required_argument, nullptr, kFilter},
      {"window", required_argument, nullptr, kWindow},   {"ttl", required_argument, nullptr, kTtl},
      {"capacity", required_argument, nullptr, kCapacity}, {"fpr", required_argument, nullptr, kFpr},
      {"policy", required_argument, nullptr, kPolicy},   {"seed", required_argument, nullptr, kSeed},
      {"truth", no_argument, nullptr, kTruth},           {"json", no_argument, nullptr, kJson},
      {"verdicts", required_argument, nullptr, kVerdicts}, {"backend", required_argument, nullptr, kBackend},
      {"click-param", required_argument, nullptr, kClickParam},
      {"click-host", no_argument, nullptr, kClickHost},  {"help", no_argument, nullptr, kHelp},
      {nullptr, 0, nullptr, 0}};
  opterr = 0;
  int c;
  while ((c = getopt_long(argc, argv, "", longopts, nullptr)) != -1) {
    const std::string arg = optarg ? optarg : "";
    switch (c) {
      case kKey:
        if (!dedup::parse_key_mode(arg, o.mode)) bad("--key must be src-ip, dst-ip, flow or click, not '" + arg + "'");
        break;
      case kFilter: o.spec.name = arg; break;
      case kWindow:
        must(dedup::parse_window_option(arg, o.spec.window));
        have_window = true;
        break;
      case kTtl:
        must(dedup::parse_ttl_option(arg, o.spec.window));
        have_ttl = true;
        break;
      case kCapacity: must(dedup::parse_capacity_option(arg, capacity)); break;
      case kFpr: must(dedup::parse_fpr_option(arg, o.spec.fpr)); break;
      case kPolicy:
        if (!dedup::parse_policy(arg, o.policy)) bad("--policy must be insert-always or insert-on-miss");
        o.policy_set = true;
        break;
      case kSeed:
        must(dedup::parse_seed_option(arg, o.seed));
        o.seed_set = true;
        break;
      case kTruth: o.truth = true; break;
      case kJson: o.json = true; break;
      case kVerdicts: o.verdicts = arg; break;
      case kBackend:
        if (arg != "cpu" && arg != "gpu" && arg != "auto") bad("--backend must be cpu, gpu or auto");
        o.backend = arg;
        break;
      case kClickParam: o.click_param = arg; break;
      case kClickHost: o.click_host = true; break;
      case kHelp: usage(stdout); std::exit(0);
      default:
        bad(std::string("unknown or incomplete option '") + argv[optind - 1] + "'");
    }
  }
  if (have_window && have_ttl) bad("--window and --ttl exclude each other");
  if (!have_window && !have_ttl) o.spec.window = Window::count(1'000'000);
  if (have_ttl) o.spec.capacity = capacity;
  if (!o.policy_set) o.policy = dedup::default_policy(o.mode);
  if (optind + 1 != argc) bad(optind == argc ? "no TRACE given" : "more than one TRACE given");
  o.trace = argv[optind];
  return o;
}

// Exact ground truth: the last insertion of every key, in insertions (count
// windows) or nanoseconds (time windows).
struct Truth {
  std::unordered_map<std::string, uint64_t> last;
  uint64_t insertions = 0;
  uint64_t duplicates = 0, live_misses = 0;
  uint64_t firsts = 0, first_positives = 0;
  uint64_t expired = 0, expired_positives = 0;

  void record(std::string k, uint64_t now, const Window& w, bool verdict, bool inserted) {
    auto it = last.find(k);
    const uint64_t at = w.is_time() ? now : insertions;
    if (it == last.end()) {
      ++firsts;
      first_positives += verdict;
    } else if (at - it->second <= w.span) {
      ++duplicates;
      live_misses += !verdict;
    } else {
      ++expired;
      expired_positives += verdict;
    }
    if (inserted) {
      if (it == last.end()) last.emplace(std::move(k), at);
      else it->second = at;
      ++insertions;
    }
  }
};

double ratio(uint64_t a, uint64_t b) { return b ? static_cast<double>(a) / b : 0.0; }

}  // namespace

int main(int argc, char** argv) {
  Options o = parse(argc, argv);
  if (!o.seed_set) o.seed = std::random_device{}() | (uint64_t{std::random_device{}()} << 32);

  auto planned = dedup::DedupFilter::plan(o.spec);
  if (auto* err = std::get_if<std::string>(&planned)) bad("filter: " + *err);
  auto& filter = std::get<dedup::DedupFilter>(planned);
  const size_t bytes = filter.bytes_needed();
  // 64-byte aligned: the GPU backend takes this arena as the filter's image.
  std::unique_ptr<unsigned char, decltype(&std::free)> memory(
      static_cast<unsigned char*>(std::aligned_alloc(kCacheLine, align_up(bytes, kCacheLine))), &std::free);
  if (!memory) bad("filter: cannot allocate " + std::to_string(bytes) + " bytes");
  Arena arena(memory.get(), bytes);
  if (std::string err = filter.create(arena); !err.empty()) bad("filter: " + err);

  // The GPU replays the guarded epoch filters (flat, blocked, ring, and the
  // one-line layout with 64-bit lanes) and APBF/APBBF (up to 64 slices) over
  // count and time windows under both policies (gpu/replay.hpp); "auto" uses
  // it when it can, "gpu" insists.
  const GuardedEpochConfig* gpu_ge = filter.guarded_epoch_config();
  const InterleavedEpochConfig* gpu_il = filter.interleaved_epoch_config();
  if (gpu_il != nullptr && gpu_il->lane_bits != 64) gpu_il = nullptr;
  const ApbfConfig* gpu_apbf = filter.apbf_config();
  if (gpu_apbf != nullptr && (gpu_apbf->slices() > 64 || gpu_apbf->bits_per_block > 64)) gpu_apbf = nullptr;
  std::string gpu_why;
  const bool gpu_fits = gpu_ge || gpu_il || gpu_apbf;
  bool use_gpu = false;
  if (o.backend != "cpu") {
    const bool available = gpu::gpu_available(gpu_why);
    use_gpu = available && gpu_fits;
    if (o.backend == "gpu" && !available) bad("--backend gpu: " + gpu_why);
    if (o.backend == "gpu" && !gpu_fits)
      bad("--backend gpu does not replay this filter (it takes guarded-epoch, blocked, ring, interleaved with 64-bit "
          "lanes, and APBF/APBBF up to 64 slices)");
  }

  auto opened = trace::PcapReader::open(o.trace);
  if (!opened.ok()) {
    std::fprintf(stderr, "agebloom-replay: %s\n", opened.error.c_str());
    return 1;
  }
  trace::PcapReader& reader = opened.reader;

  pk::ClickOptions click;
  if (!o.click_param.empty()) click.param = o.click_param.c_str();
  click.include_host = o.click_host;

  std::vector<uint8_t> verdict_bits;
  const Hasher hasher(o.seed);
  Truth truth;
  pk::Key key;
  trace::Packet pkt;
  uint64_t packets = 0, keyed = 0, suppressed = 0, time_regressions = 0, now = 0;
  std::array<uint64_t, pk::kReasonCount> reasons{};
  const bool progress = !o.json && isatty(STDERR_FILENO);

  // What a verdict changes, wherever it was computed.
  auto apply = [&](uint64_t packet, bool dup, std::string key_bytes, uint64_t at) {
    suppressed += dup;
    if (o.truth)
      truth.record(std::move(key_bytes), at, o.spec.window, dup, o.policy == dedup::Policy::insert_always || !dup);
    if (dup && !o.verdicts.empty()) verdict_bits[packet / 8] |= static_cast<uint8_t>(1u << (packet % 8));
  };

  // GPU: keyed packets wait in chunks (bounded memory), each replayed from the
  // filter state the previous chunk left in the arena.
  constexpr size_t kGpuChunk = size_t{1} << 22;
  std::vector<KeyHash> pending_hash;
  std::vector<uint64_t> pending_packet;
  std::vector<uint64_t> pending_time;  // each keyed packet's clock (time windows)
  std::vector<std::string> pending_key;
  std::vector<uint8_t> gpu_bits;
  gpu::ReplayStats gpu_stats;
  std::string gpu_error;
  auto flush_gpu = [&]() {
    if (pending_hash.empty()) return true;
    gpu_bits.assign((pending_hash.size() + 7) / 8, 0);
    gpu::ReplayStats chunk_stats;
    gpu::ReplayOptions opt;
    opt.times = pending_time.data();
    if (o.policy == dedup::Policy::insert_on_miss) opt.policy = gpu::ReplayPolicy::insert_on_miss;
    const KeyHash* k = pending_hash.data();
    const size_t n = pending_hash.size();
    const gpu::GpuStatus gs =
        gpu_ge   ? gpu::replay_guarded_epoch(*gpu_ge, k, n, opt, gpu_bits.data(), memory.get(), bytes, &chunk_stats)
        : gpu_il ? gpu::replay_interleaved_epoch(*gpu_il, k, n, opt, gpu_bits.data(), memory.get(), bytes,
                                                 &chunk_stats)
                 : gpu::replay_apbf(*gpu_apbf, k, n, opt, gpu_bits.data(), memory.get(), bytes, &chunk_stats);
    if (!gs) {
      gpu_error = gs.message();
      return false;
    }
    gpu_stats.chunks += chunk_stats.chunks;
    gpu_stats.batches += chunk_stats.batches;
    gpu_stats.device_seconds += chunk_stats.device_seconds;
    for (size_t i = 0; i < pending_hash.size(); ++i)
      apply(pending_packet[i], (gpu_bits[i / 8] >> (i % 8)) & 1, o.truth ? std::move(pending_key[i]) : std::string(),
            pending_time[i]);
    pending_hash.clear();
    pending_packet.clear();
    pending_time.clear();
    pending_key.clear();
    return true;
  };

  const auto start = std::chrono::steady_clock::now();
  trace::PcapReader::Status st;
  while ((st = reader.next(pkt)) == trace::PcapReader::Status::ok) {
    if (!o.verdicts.empty() && packets % 8 == 0) verdict_bits.push_back(0);
    const pk::Result r = pk::extract_key(pkt.linktype, pkt.data, pkt.caplen, o.mode, click, key);
    ++reasons[static_cast<size_t>(r.reason)];
    if (r.ok()) {
      ++keyed;
      // Captures can step back in time (merged files); replay holds the clock
      // at the latest stamp rather than failing, and counts each step back.
      if (pkt.timestamp_ns < now) ++time_regressions;
      else now = pkt.timestamp_ns;
      const KeyHash h = hasher(key.bytes, key.length);
      std::string key_bytes = o.truth ? std::string(reinterpret_cast<const char*>(key.bytes), key.length) : std::string();
      if (use_gpu) {
        pending_hash.push_back(h);
        pending_packet.push_back(packets);
        pending_time.push_back(now);
        if (o.truth) pending_key.push_back(std::move(key_bytes));
        if (pending_hash.size() == kGpuChunk && !flush_gpu()) break;
      } else {
        (void)filter.advance(now);  // cannot fail: now never decreases
        apply(packets, filter.is_duplicate(h, o.policy), std::move(key_bytes), now);
      }
    }
    ++packets;
    if (progress && packets % (1 << 20) == 0)
      std::fprintf(stderr, "\r%llu packets, %llu suppressed", static_cast<unsigned long long>(packets),
                   static_cast<unsigned long long>(suppressed));
  }
  if (use_gpu && gpu_error.empty()) flush_gpu();
  if (!gpu_error.empty()) {
    std::fprintf(stderr, "agebloom-replay: GPU replay failed: %s\n", gpu_error.c_str());
    return 1;
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (progress && packets >= (1 << 20)) std::fprintf(stderr, "\n");
  if (st == trace::PcapReader::Status::error) {
    std::fprintf(stderr, "agebloom-replay: %s: read error after %llu packets: %s\n", o.trace.c_str(),
                 static_cast<unsigned long long>(packets), reader.error().c_str());
    return 1;
  }
  if (!o.verdicts.empty()) {
    std::ofstream out(o.verdicts, std::ios::binary);
    out.write(reinterpret_cast<const char*>(verdict_bits.data()), static_cast<std::streamsize>(verdict_bits.size()));
    if (!out) {
      std::fprintf(stderr, "agebloom-replay: cannot write %s\n", o.verdicts.c_str());
      return 1;
    }
  }

  nlohmann::json j;
  j["trace"] = o.trace;
  j["packets"] = packets;
  j["keyed"] = keyed;
  j["unparsed"] = packets - keyed;
  j["suppressed"] = suppressed;
  j["passed"] = packets - suppressed;
  j["backend"] = use_gpu ? "gpu" : "cpu";
  if (use_gpu) {
    j["gpu"] = {{"device", gpu::gpu_description()},
                {"device_seconds", gpu_stats.device_seconds},
                {"batches", gpu_stats.batches}};
  } else if (o.backend == "auto") {
    j["gpu_not_used"] =
        gpu_fits ? gpu_why : "the GPU backend does not replay this filter";
  }
  j["seconds"] = seconds;
  j["keys_per_second"] = seconds > 0 ? keyed / seconds : 0.0;
  j["key"] = dedup::key_mode_name(o.mode);
  j["policy"] = dedup::policy_name(o.policy);
  j["seed"] = o.seed;
  j["time_regressions"] = time_regressions;
  j["filter"] = {{"name", filter.name()},
                 {"parameters", filter.parameters()},
                 {"bytes", bytes},
                 {"window", o.spec.window.span},
                 {"window_kind", o.spec.window.is_time() ? "time_ns" : "count"},
                 {"model_fpr", filter.model_fpr()},
                 {"bits_per_item", filter.bits_per_item()}};
  nlohmann::json rj = nlohmann::json::object();
  for (size_t i = 0; i < reasons.size(); ++i)
    if (reasons[i] && i != 0) rj[pk::reason_name(static_cast<pk::Reason>(i))] = reasons[i];
  j["unparsed_reasons"] = rj;
  if (o.truth) {
    j["truth_duplicates"] = truth.duplicates;
    j["live_fnr"] = ratio(truth.live_misses, truth.duplicates);
    j["fpr"] = ratio(truth.first_positives, truth.firsts);
    j["expired_positive_rate"] = ratio(truth.expired_positives, truth.expired);
    j["first_occurrences"] = truth.firsts;
    j["expired_occurrences"] = truth.expired;
    j["distinct_keys"] = truth.last.size();
  }
  if (o.json) {
    std::printf("%s\n", j.dump().c_str());
    return 0;
  }
  std::printf("%s: %llu packets, %llu keyed by %s, %llu suppressed, %llu passed (%llu unparsed)\n",
              o.trace.c_str(), static_cast<unsigned long long>(packets), static_cast<unsigned long long>(keyed),
              dedup::key_mode_name(o.mode), static_cast<unsigned long long>(suppressed),
              static_cast<unsigned long long>(packets - suppressed),
              static_cast<unsigned long long>(packets - keyed));
  std::printf("  filter %s (%s), %zu bytes, model FPR %.4g, policy %s\n", filter.name().c_str(),
              filter.parameters().c_str(), bytes, filter.model_fpr(), dedup::policy_name(o.policy));
  if (o.truth)
    std::printf("  truth: %llu duplicates in window, live FNR %.4g, FPR %.4g on %llu first sightings, "
                "expired positives %.4g\n",
                static_cast<unsigned long long>(truth.duplicates), j["live_fnr"].get<double>(),
                j["fpr"].get<double>(), static_cast<unsigned long long>(truth.firsts),
                j["expired_positive_rate"].get<double>());
  return 0;
}
