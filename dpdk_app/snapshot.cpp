#include "snapshot.hpp"

#include <fcntl.h>
#include <rte_cycles.h>
#include <rte_malloc.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include <xxhash.h>

#include "agebloom/dedup/key_mode.hpp"
#include "agebloom/dedup/snapshot.hpp"
#include "app.hpp"

namespace dedup_fwd {

namespace ab = agebloom;
namespace dd = agebloom::dedup;
namespace pk = agebloom::packet;

namespace {

constexpr char kMagic[8] = {'D', 'E', 'D', 'U', 'P', 'S', 'N', 'P'};
// 2: the images name the key mode, its options and the policy (parameters_text);
// a version-1 file is refused as another format, not as another filter.
constexpr uint32_t kVersion = 2;

struct FileHeader {
  char magic[8];
  uint32_t version;
  uint32_t workers;  // images that follow, each as uint64 length + bytes
};

uint64_t wall_ns() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ULL + static_cast<uint64_t>(ts.tv_nsec);
}

// What names the filter in a snapshot's header: the plan's parameters, and
// what its keys are and which were inserted (the key mode and its options,
// the policy). The same plan under --key dst-ip would read the src-ip keys of
// a snapshot as its own (wrong verdicts, then the snapshot saved over): that
// is a mismatch, refused and kept aside like any other. The key options go
// in as a hash, so a long --click-param cannot overflow the header's field.
std::string parameters_text() {
  const Options& o = g_app.opt;
  const pk::KeyOptions k = o.key_options();
  std::string key = std::string(dd::key_mode_name(o.mode)) + " vlan_in_key=" + (k.vlan_in_key ? "1" : "0");
  if (o.mode == pk::KeyMode::click) {
    // The ports as a set: their order shapes no key.
    std::vector<uint16_t> ports(k.click.ports.begin(),
                                k.click.ports.begin() + std::min<size_t>(k.click.port_count, pk::ClickOptions::kMaxPorts));
    std::sort(ports.begin(), ports.end());
    key += " ports=" + std::string(k.click.any_port ? "any" : "");
    for (size_t i = 0; !k.click.any_port && i < ports.size(); ++i) key += std::to_string(ports[i]) + ",";
    key += std::string(" host=") + (k.click.include_host ? "1" : "0") + " param=" + (k.click.param ? k.click.param : "");
  }
  if (o.mode == pk::KeyMode::packet)
    // --ignore-l2 leaves the VLAN IDs out too: with it, --ignore-vlan changes no key.
    key += std::string(" ignore_vlan=") + (k.packet.ignore_vlan || k.packet.ignore_l2 ? "1" : "0") + " ignore_l2=" +
           (k.packet.ignore_l2 ? "1" : "0") + " bytes=" + std::to_string(k.packet.max_bytes);
  char keys[96];
  std::snprintf(keys, sizeof keys, " key=%s policy=%s keys=%016llx", dd::key_mode_name(o.mode),
                dd::policy_name(o.policy), static_cast<unsigned long long>(XXH3_64bits(key.data(), key.size())));
  return g_app.shape.parameters() + keys;
}

// Writes `bytes` to path atomically: a temporary beside it, fsync, rename, fsync of the folder.
bool write_atomically(const std::string& path, const std::vector<unsigned char>& bytes, std::string& error) {
  const std::string tmp = path + ".tmp";
  const int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    error = tmp + ": " + std::strerror(errno);
    return false;
  }
  size_t off = 0;
  while (off < bytes.size()) {
    const ssize_t w = write(fd, bytes.data() + off, bytes.size() - off);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      error = tmp + ": " + std::strerror(errno);
      close(fd);
      unlink(tmp.c_str());
      return false;
    }
    off += static_cast<size_t>(w);
  }
  if (fsync(fd) != 0 || close(fd) != 0) {
    error = tmp + ": " + std::strerror(errno);
    unlink(tmp.c_str());
    return false;
  }
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    error = path + ": " + std::strerror(errno);
    unlink(tmp.c_str());
    return false;
  }
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  if (const int dfd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); dfd >= 0) {
    (void)fsync(dfd);  // the rename itself made durable
    close(dfd);
  }
  return true;
}

// The file of every worker's image: state[i] and clock[i] per worker.
bool write_file(const std::vector<const void*>& state, const std::vector<uint64_t>& clock) {
  const std::string params = parameters_text();
  const uint64_t now_wall = wall_ns();
  std::vector<unsigned char> out(sizeof(FileHeader));
  FileHeader fh{};
  std::memcpy(fh.magic, kMagic, sizeof kMagic);
  fh.version = kVersion;
  fh.workers = static_cast<uint32_t>(g_app.workers.size());
  std::memcpy(out.data(), &fh, sizeof fh);
  // Dispatch mode: the dispatcher keeps the clock the workers' filters run on.
  const uint64_t dispatcher_clock = g_app.dispatch ? g_app.dispatcher.stats->last_clock_ns.get() : 0;
  for (size_t i = 0; i < g_app.workers.size(); ++i) {
    const Worker& w = g_app.workers[i];
    const uint64_t n = dd::snapshot_bytes(w.arena_bytes);
    const size_t at = out.size();
    out.resize(at + sizeof n + n);
    std::memcpy(out.data() + at, &n, sizeof n);
    dd::write_snapshot({&w.filter, g_app.seed, params}, state[i], w.arena_bytes,
                       {std::max(clock[i], dispatcher_clock), now_wall},
                       out.data() + at + sizeof n);
  }
  std::string error;
  if (!write_atomically(g_app.opt.snapshot, out, error)) {
    std::fprintf(stderr, "dedup_fwd: snapshot not written: %s\n", error.c_str());
    return false;
  }
  return true;
}

enum class Tick { idle, asked };
Tick g_tick = Tick::idle;
uint64_t g_next_tsc = 0;

}  // namespace

bool restore_snapshot() {
  const Options& o = g_app.opt;
  if (o.snapshot.empty()) return true;
  const uint64_t drawn_seed = g_app.seed;
  auto refuse = [&](const std::string& why) {
    // A seed taken from the snapshot before it was refused goes back to the
    // run's own drawn one: the run starts empty, nothing of the snapshot's.
    if (g_app.seed_from_snapshot) {
      g_app.seed = drawn_seed;
      g_app.seed_from_snapshot = false;
    }
    // The run goes on and will save over FILE: the refused one is kept
    // beside it (one copy, the latest refused), in case the options were wrong.
    std::string kept;
    if (!o.require_snapshot) {
      // FILE.refused, or FILE.refused.N past those kept before: a second
      // refusal (the options corrected twice) does not lose the first.
      std::string aside = o.snapshot + ".refused";
      for (int n = 1; n < 1000 && access(aside.c_str(), F_OK) == 0; ++n)
        aside = o.snapshot + ".refused." + std::to_string(n);
      kept = std::rename(o.snapshot.c_str(), aside.c_str()) == 0
                 ? " (kept as " + aside + ")"
                 : " (it could not be kept aside: " + std::string(std::strerror(errno)) + "; the next save replaces it)";
    }
    std::fprintf(stderr, "dedup_fwd: snapshot %s refused: %s; %s%s\n", o.snapshot.c_str(), why.c_str(),
                 o.require_snapshot ? "--require-snapshot: stopping" : "starting with empty filters", kept.c_str());
    return !o.require_snapshot;
  };
  FILE* f = std::fopen(o.snapshot.c_str(), "rb");
  if (f == nullptr) {
    if (errno == ENOENT && !o.require_snapshot) {
      std::printf("dedup_fwd: no snapshot at %s yet: starting with empty filters\n", o.snapshot.c_str());
      return true;
    }
    return refuse(std::strerror(errno));
  }
  std::vector<unsigned char> bytes;
  unsigned char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) bytes.insert(bytes.end(), buf, buf + n);
  const bool read_error = std::ferror(f);
  std::fclose(f);
  if (read_error) return refuse("read error");
  FileHeader fh{};
  if (bytes.size() < sizeof fh) return refuse(dd::message(dd::SnapshotErrc::not_a_snapshot));
  std::memcpy(&fh, bytes.data(), sizeof fh);
  if (std::memcmp(fh.magic, kMagic, sizeof kMagic) != 0) return refuse(dd::message(dd::SnapshotErrc::not_a_snapshot));
  if (fh.version != kVersion) return refuse(dd::message(dd::SnapshotErrc::foreign_format));
  if (fh.workers != g_app.workers.size())
    return refuse("it holds the filters of " + std::to_string(fh.workers) + " worker lcore" +
                  (fh.workers == 1 ? "" : "s") + ", this run has " + std::to_string(g_app.workers.size()));
  // A seed drawn at random (no --seed) gives way to the one the snapshot was
  // taken under, before anything is hashed: otherwise no restart could
  // restore it. The first image says; every image is checked against it below.
  if (!o.seed_set && bytes.size() - sizeof fh > sizeof(uint64_t)) {
    uint64_t len = 0, seed = 0;
    std::memcpy(&len, bytes.data() + sizeof fh, sizeof len);
    if (len <= bytes.size() - sizeof fh - sizeof len &&
        dd::snapshot_seed(bytes.data() + sizeof fh + sizeof len, len, seed) == dd::SnapshotErrc::ok) {
      g_app.seed = seed;
      g_app.seed_from_snapshot = true;
    }
  }
  // Every image checked into a scratch copy first: either all workers are
  // restored, or none is.
  const std::string params = parameters_text();
  std::vector<std::vector<unsigned char>> states(g_app.workers.size());
  std::vector<dd::SnapshotClock> clocks(g_app.workers.size());
  size_t at = sizeof fh;
  for (size_t i = 0; i < g_app.workers.size(); ++i) {
    const Worker& w = g_app.workers[i];
    uint64_t len = 0;
    if (bytes.size() - at < sizeof len) return refuse(dd::message(dd::SnapshotErrc::damaged));
    std::memcpy(&len, bytes.data() + at, sizeof len);
    at += sizeof len;
    if (len > bytes.size() - at) return refuse(dd::message(dd::SnapshotErrc::damaged));
    states[i].resize(w.arena_bytes);
    // Checked against the filter in its arena, copied to the scratch copy.
    const dd::SnapshotErrc e = dd::read_snapshot({&w.filter, g_app.seed, params, w.arena_mem}, states[i].data(),
                                                 w.arena_bytes, bytes.data() + at, len, &clocks[i]);
    if (e != dd::SnapshotErrc::ok) {
      std::string why = dd::message(e);
      if (e == dd::SnapshotErrc::mismatch)
        why += "; dedup_fwd's snapshots also name the key (--key and its options) and the --policy";
      if (e == dd::SnapshotErrc::mismatch && !o.seed_set && !g_app.seed_from_snapshot)
        why += " (this run's seed is random: give both runs the same --seed)";
      return refuse(why);
    }
    at += len;
  }
  if (at != bytes.size()) return refuse(dd::message(dd::SnapshotErrc::damaged));
  uint64_t saved_clock = 0, saved_wall = 0;
  for (size_t i = 0; i < g_app.workers.size(); ++i) {
    std::memcpy(g_app.workers[i].arena_mem, states[i].data(), states[i].size());
    saved_clock = std::max(saved_clock, clocks[i].filter_ns);
    saved_wall = std::max(saved_wall, clocks[i].wall_ns);
  }
  // Time windows on the TSC: go on from the saved clock plus the time that passed.
  const uint64_t now_wall = wall_ns();
  const uint64_t down = now_wall > saved_wall ? now_wall - saved_wall : 0;
  // On Rx timestamps the stamps are the clock: they go on from the saved one
  // (a stamp behind it is held at it and counted, as within one run).
  if (o.spec.window.is_time() && o.time_source == TimeSource::tsc) g_app.clock_offset_ns = saved_clock + down;
  g_app.filters_restored = true;
  if (o.spec.window.is_time() && o.time_source == TimeSource::rx_timestamp) g_app.restored_clock_ns = saved_clock;
  std::printf("dedup_fwd: snapshot %s restored: the filters of %zu worker lcore%s, saved %.1f s ago%s\n",
              o.snapshot.c_str(), g_app.workers.size(), g_app.workers.size() == 1 ? "" : "s", static_cast<double>(down) / 1e9,
              g_app.seed_from_snapshot ? ", with the secret seed it was taken under" : "");
  return true;
}

void snapshot_tick(uint64_t now) {
  const Options& o = g_app.opt;
  if (o.snapshot.empty() || o.snapshot_interval_s == 0) return;
  if (g_next_tsc == 0) g_next_tsc = g_app.start_tsc + o.snapshot_interval_s * g_app.tsc_hz;
  if (g_tick == Tick::idle) {
    if (now < g_next_tsc) return;
    for (Worker& w : g_app.workers) {
      if (w.snapshot_copy == nullptr)
        w.snapshot_copy = static_cast<unsigned char*>(rte_malloc_socket("dedup_snapshot", w.arena_bytes,
                                                                        RTE_CACHE_LINE_SIZE, w.socket));
      if (w.snapshot_copy == nullptr) {
        std::fprintf(stderr, "dedup_fwd: no memory for a snapshot copy: snapshots at exit only\n");
        g_next_tsc = ~uint64_t{0};
        return;
      }
      w.stats->snapshot_ready.store(false, std::memory_order_relaxed);
      w.stats->snapshot_request.store(true, std::memory_order_release);
    }
    g_tick = Tick::asked;
    return;
  }
  for (const Worker& w : g_app.workers)
    if (!w.stats->snapshot_ready.load(std::memory_order_acquire)) return;  // not every worker has answered yet
  std::vector<const void*> state;
  std::vector<uint64_t> clock;
  for (const Worker& w : g_app.workers) {
    state.push_back(w.snapshot_copy);
    clock.push_back(w.stats->snapshot_clock_ns.get());
  }
  (void)write_file(state, clock);
  g_tick = Tick::idle;
  g_next_tsc = now + o.snapshot_interval_s * g_app.tsc_hz;
}

bool save_final_snapshot() {
  if (g_app.opt.snapshot.empty()) return true;
  std::vector<const void*> state;
  std::vector<uint64_t> clock;
  for (const Worker& w : g_app.workers) {
    state.push_back(w.arena_mem);
    clock.push_back(w.stats->last_clock_ns.get());
  }
  if (!write_file(state, clock)) return false;
  // A time window's clock as saved: the next restore goes on from it.
  char at[64] = "";
  if (g_app.opt.spec.window.is_time())
    std::snprintf(at, sizeof at, " (its time window's clock at %.3f s)",
                  static_cast<double>(*std::max_element(clock.begin(), clock.end())) / 1e9);
  std::printf("dedup_fwd: snapshot written to %s%s\n", g_app.opt.snapshot.c_str(), at);
  return true;
}

}  // namespace dedup_fwd
