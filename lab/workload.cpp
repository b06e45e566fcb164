#include "workload.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <string_view>
#include <utility>

#include "agebloom/core/hash.hpp"
#include "agebloom/trace/pcap_trace.hpp"

namespace agebloom::lab {

const char* workload_name(Workload w) noexcept {
  switch (w) {
    case Workload::uniform: return "uniform";
    case Workload::zipf: return "zipf";
    case Workload::bursty: return "bursty";
  }
  return "?";
}

std::vector<uint64_t> synthetic_stream(Workload w, uint64_t n, uint64_t seed) {
  std::mt19937_64 rng(seed * 0x9e3779b97f4a7c15ULL + static_cast<uint64_t>(w));
  std::vector<uint64_t> out;
  out.reserve(n);
  switch (w) {
    case Workload::uniform:  // over 2^40 ids: in effect every insertion a new key
      while (out.size() < n) out.push_back(rng() & ((uint64_t{1} << 40) - 1));
      break;
    case Workload::zipf: {
      // Inverse CDF of p(x) ∝ 1/x over [1, 16n]: a hot head, a long tail.
      const uint64_t universe = 16 * n;
      std::vector<double> cdf(universe);
      double acc = 0;
      for (uint64_t x = 1; x <= universe; ++x) cdf[x - 1] = acc += 1.0 / static_cast<double>(x);
      std::uniform_real_distribution<double> u(0.0, acc);
      while (out.size() < n)
        out.push_back(static_cast<uint64_t>(std::upper_bound(cdf.begin(), cdf.end(), u(rng)) - cdf.begin()));
      break;
    }
    case Workload::bursty: {
      // Calm phases of new keys (mean 1800 insertions), then a burst (mean
      // 40) that replays keys from the last 64 insertions: retransmission-like
      // repeats, about 2% of the stream.
      std::geometric_distribution<uint64_t> calm(1.0 / 1800), burst(1.0 / 40);
      while (out.size() < n) {
        for (uint64_t r = calm(rng) + 1; r > 0 && out.size() < n; --r) out.push_back(rng() & ((uint64_t{1} << 40) - 1));
        for (uint64_t r = burst(rng) + 1; r > 0 && out.size() < n; --r)
          out.push_back(out[out.size() - 1 - rng() % std::min<size_t>(64, out.size())]);
      }
      break;
    }
  }
  // Distinct ids per workload and seed: keys never collide across them.
  for (auto& id : out) id = id ^ (uint64_t{static_cast<uint64_t>(w) + 1} << 56);
  return out;
}

std::vector<uint64_t> capture_stream(const std::string& path, packet::KeyMode mode, std::string& error) {
  std::vector<uint64_t> out;
  auto opened = trace::PcapReader::open(path);
  if (!opened.ok()) {
    error = opened.error;
    return out;
  }
  const Hasher fold(0x1ab);
  packet::ClickOptions click;
  packet::Key key;
  trace::Packet pkt;
  trace::PcapReader::Status st;
  while ((st = opened.reader.next(pkt)) == trace::PcapReader::Status::ok)
    if (packet::extract_key(pkt.linktype, pkt.data, pkt.caplen, mode, click, key, pkt.wirelen).ok())
      out.push_back(fold(key.bytes, key.length).h1);
  if (st == trace::PcapReader::Status::error) error = path + ": " + opened.reader.error();
  return out;
}

std::vector<uint64_t> access_log_stream(const std::string& path, uint64_t& skipped, std::string& error) {
  // A folder opens and reads as empty through ifstream: said as what it is,
  // not as a log without records.
  struct stat st;
  if (stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    error = path + " is a folder, not a log";
    return {};
  }
  std::ifstream in(path);
  if (!in) {
    error = "cannot open " + path + ": " + std::strerror(errno);
    return {};
  }
  // 83.149.9.216 - - [17/May/2015:10:05:03 +0000] "GET /presentations/x.html HTTP/1.1" 200 ...
  static const char* kMonths = "JanFebMarAprMayJunJulAugSepOctNovDec";
  std::vector<std::pair<uint64_t, uint64_t>> stamped;  // (seconds, key)
  const Hasher fold(0x10c);
  std::string line;
  skipped = 0;
  uint64_t order = 0;
  while (std::getline(in, line)) {
    const size_t sp = line.find(' '), lb = line.find('['), q1 = line.find('"');
    const size_t q2 = q1 == std::string::npos ? q1 : line.find('"', q1 + 1);
    if (sp == std::string::npos || lb == std::string::npos || q2 == std::string::npos || lb + 21 > line.size()) {
      ++skipped;
      continue;
    }
    const std::string_view t(line.data() + lb + 1, 20);  // 17/May/2015:10:05:03
    const char* mon = std::strstr(kMonths, std::string(t.substr(3, 3)).c_str());
    if (mon == nullptr || t[2] != '/' || t[6] != '/' || t[11] != ':') {
      ++skipped;
      continue;
    }
    auto num = [&](size_t at, size_t len) { return std::strtoull(std::string(t.substr(at, len)).c_str(), nullptr, 10); };
    const uint64_t secs = ((((num(7, 4) * 12 + static_cast<uint64_t>(mon - kMonths) / 3) * 31 + num(0, 2)) * 24 +
                            num(12, 2)) * 60 + num(15, 2)) * 60 + num(18, 2);
    std::string request = line.substr(q1 + 1, q2 - q1 - 1);  // METHOD PATH PROTO
    const size_t m_end = request.find(' ');
    if (m_end == std::string::npos) {
      ++skipped;
      continue;
    }
    size_t p_end = request.find(' ', m_end + 1);
    std::string path_only = request.substr(m_end + 1, p_end == std::string::npos ? std::string::npos : p_end - m_end - 1);
    path_only = path_only.substr(0, path_only.find('?'));
    const std::string k = line.substr(0, sp) + ' ' + request.substr(0, m_end) + ' ' + path_only;
    stamped.emplace_back(secs << 20 | (order++ & 0xfffff), fold(k.data(), k.size()).h1);
  }
  std::stable_sort(stamped.begin(), stamped.end());  // timestamp order, lines in file order within a second
  std::vector<uint64_t> out;
  out.reserve(stamped.size());
  for (const auto& s : stamped) out.push_back(s.second);
  return out;
}

std::string find_data(const std::string& relative) {
  std::vector<std::string> roots;
  if (const char* env = std::getenv("AGEBLOOM_DATA")) roots.emplace_back(env);
  roots.emplace_back(AGEBLOOM_LAB_SOURCE "/../data");  // what the repository ships (data/)
  roots.emplace_back(AGEBLOOM_LAB_SOURCE "/../../shared/data");
  for (const auto& r : roots) {
    struct stat st;
    if (stat((r + "/" + relative).c_str(), &st) == 0) return r + "/" + relative;
  }
  return {};
}

}  // namespace agebloom::lab
