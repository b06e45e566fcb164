#include "capture_files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <string>
#include <vector>

#include <pcap/pcap.h>
#include <rte_eal.h>
#include <rte_ethdev.h>

#include "agebloom/trace/pcap_trace.hpp"
#include "agebloom/trace/same_file.hpp"

namespace dedup_fwd {

namespace {

// The most bytes of a frame net_pcap writes into a tx_pcap (its snap length,
// RTE_ETH_PCAP_SNAPLEN in DPDK 22.11's drivers/net/pcap).
constexpr uint32_t kPcapTxSnap = 16128;

// A tx_pcap written aside: `aside` is moved over `path` at exit, or removed.
// `device` and `queue` say whose Tx it is (net_pcap: a device's n-th tx_pcap
// is its Tx queue n); `sent` is what that queue sent (note_tx_counts), and
// `failed` keeps `path` as it was when the capture does not hold it all.
struct Diverted {
  std::string path, aside;
  std::string device;
  unsigned queue = 0;
  std::string given;  // tx_pcap's value as the user wrote it (path is a link's target)
  uint64_t sent = 0;
  bool counted = false, failed = false;
  bool unused = false;  // a port outside --portmask, or a queue no worker sends on: path is left alone
  bool as_given = false;  // not a regular file (/dev/null, a FIFO): net_pcap writes `path` itself, unchecked
};
std::vector<Diverted> g_diverted;
std::vector<std::pair<std::string, unsigned>> g_rx_files;  // net_pcap devices and their rx_pcap count
uint64_t g_bad_timestamps = 0;  // rx_bad_timestamps()
std::deque<std::string> g_rewritten;  // the --vdev arguments argv now points at
bool g_keep = false;

void finish_captures() {
  for (const Diverted& d : g_diverted) {
    if (d.failed || d.as_given) continue;  // check_tx_captures said where the partial capture is
    if (!g_keep || d.unused) {
      std::remove(d.aside.c_str());
    } else if (std::rename(d.aside.c_str(), d.path.c_str()) != 0 && errno != ENOENT) {
      std::fprintf(stderr, "dedup_fwd: tx_pcap %s: cannot move the capture written as %s into place: %s\n",
                   d.path.c_str(), d.aside.c_str(), std::strerror(errno));
    }
  }
}

// One capture file of a net_pcap --vdev: its argument (rx_pcap, tx_pcap), the
// file, and where in argv it sits.
struct CaptureArg {
  std::string device, key, path;
  int argv_index;
  size_t value_pos;  // where the path starts in argv[argv_index]
};

bool is_pcap_vdev(const std::string& name) {
  return name.rfind("net_pcap", 0) == 0 || name.rfind("eth_pcap", 0) == 0;
}

[[noreturn]] void refuse(const std::string& msg) {
  std::fprintf(stderr, "dedup_fwd: %s\ntry 'dedup_fwd [EAL options] -- --help'\n", msg.c_str());
  std::exit(2);
}

// net_pcap's arguments (DPDK 22.11, drivers/net/pcap), checked before the
// EAL: the driver refuses an unknown key without a word ("failed to
// initialize"), reads a key given without "=value" as a null string (a
// segfault for infinite_rx, a "(null)" file name for rx_pcap), and takes any
// infinite_rx but 0 as 1 (an endless run). Returns the key.
std::string check_pcap_arg(const std::string& device, const std::string& pair) {
  static const char* const kKeys[] = {"rx_pcap", "tx_pcap", "rx_iface", "rx_iface_in",
                                      "tx_iface", "iface", "phy_mac", "infinite_rx"};
  const size_t eq = pair.find('=');
  const std::string key = pair.substr(0, eq);
  if (std::find(std::begin(kKeys), std::end(kKeys), key) == std::end(kKeys)) {
    std::string keys;
    for (const char* k : kKeys) keys += (keys.empty() ? "" : ", ") + std::string(k);
    refuse("--vdev " + device + ": net_pcap has no argument '" + key + "' (it takes " + keys + ")");
  }
  const bool flag = key == "infinite_rx" || key == "phy_mac";
  if (eq == std::string::npos || eq + 1 == pair.size()) {
    const char* what = flag ? "0|1" : key.ends_with("_pcap") ? "FILE" : "IFACE";
    refuse("--vdev " + device + ": " + key + " needs a value (" + key + "=" + what + ")");
  }
  const std::string value = pair.substr(eq + 1);
  if (flag && value != "0" && value != "1")
    refuse("--vdev " + device + ": " + key + " takes 0 or 1, not '" + value + "'");
  return key;
}

// Every rx_pcap and tx_pcap of the net_pcap devices in argv[1, eal_argc),
// given as "--vdev ARGS" or "--vdev=ARGS".
std::vector<CaptureArg> capture_args(int eal_argc, char** argv) {
  std::vector<CaptureArg> found;
  std::vector<std::string> devices;  // the net_pcap devices named so far
  for (int i = 1; i < eal_argc; ++i) {
    int at = -1;
    size_t offset = 0;
    if (std::strcmp(argv[i], "--vdev") == 0 && i + 1 < eal_argc) {
      at = ++i;
    } else if (std::strncmp(argv[i], "--vdev=", 7) == 0) {
      at = i;
      offset = 7;
    }
    if (at < 0) continue;
    const std::string spec = argv[at] + offset;
    const size_t comma = spec.find(',');
    const std::string device = spec.substr(0, comma);
    if (!is_pcap_vdev(device)) continue;
    // Two devices of one name: the EAL makes the first and drops the second
    // (its files then read as the first's queues).
    if (std::find(devices.begin(), devices.end(), device) != devices.end())
      refuse("--vdev " + device + " given twice: each device needs a name of its own (" + device.substr(0, 8) +
             "0, " + device.substr(0, 8) + "1, ...)");
    devices.push_back(device);
    // DPDK's kvargs: key=value pairs separated by commas (empty ones skipped).
    bool has_port = false;
    std::vector<std::string> keys;  // the one-per-device keys seen (a file key is a queue each time)
    for (size_t start = comma == std::string::npos ? spec.size() + 1 : comma + 1; start <= spec.size();) {
      size_t end = spec.find(',', start);
      if (end == std::string::npos) end = spec.size();
      const std::string pair = spec.substr(start, end - start);
      start = end + 1;
      if (pair.empty()) continue;
      const std::string key = check_pcap_arg(device, pair);
      if (key == "infinite_rx" || key == "phy_mac" || key == "iface") {
        if (std::find(keys.begin(), keys.end(), key) != keys.end())
          refuse("--vdev " + device + ": " + key + " given twice: give it once");
        keys.push_back(key);
      }
      has_port |= key != "phy_mac" && key != "infinite_rx";
      if (key == "rx_pcap" || key == "tx_pcap")
        found.push_back({device, key, pair.substr(key.size() + 1), at, offset + start - pair.size() + key.size()});
    }
    if (!has_port)
      refuse("--vdev " + device + " names no capture or interface: give rx_pcap=FILE (and tx_pcap=FILE), or "
             "iface=IFACE, e.g. --vdev " + device + ",rx_pcap=in.pcap,tx_pcap=out.pcap");
  }
  return found;
}

std::string where(const CaptureArg& a) { return "--vdev " + a.device + " " + a.key + "=" + a.path; }

// A capture over 256 MiB takes seconds to read through: said before, with
// what the read is for, rather than a silent pause.
void say_long_read(const std::string& path, const std::string& what) {
  struct stat st;
  if (stat(path.c_str(), &st) == 0 && st.st_size > (off_t{256} << 20))
    std::printf("dedup_fwd: %s, %lld MiB\n", what.c_str(), static_cast<long long>(st.st_size >> 20));
}

// rx_bad_timestamps() for one rx_pcap: read through once (a regular file
// only: a FIFO would be consumed). A file the reader refuses or cannot read
// to its end is left to net_pcap, which reports it.
void count_bad_timestamps(const CaptureArg& a) {
  struct stat st;
  if (stat(a.path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return;
  say_long_read(a.path, "reading " + a.path + "'s timestamps first (--time-source rx-timestamp)");
  auto opened = agebloom::trace::PcapReader::open(a.path);
  if (!opened.ok()) return;
  agebloom::trace::Packet p;
  while (opened.reader.next(p) == agebloom::trace::PcapReader::Status::ok) {
  }
  if (const uint64_t bad = opened.reader.bad_timestamps()) {
    g_bad_timestamps += bad;
    std::fprintf(stderr, "dedup_fwd: warning: %s: %llu record%s timestamp fields out of range; agebloom-replay "
                 "skips such records, but net_pcap hands each on with a clock far ahead, which holds every later packet of "
                 "the time window at it (verdicts then differ from agebloom-replay's; exit 3 at the end of a "
                 "finite run). Repair the capture (editcap) or replay it with agebloom-replay\n",
                 where(a).c_str(), static_cast<unsigned long long>(bad), bad == 1 ? " has its" : "s have their");
  }
}

// An rx_pcap whose link type is not Ethernet: net_pcap hands its records on
// as Ethernet frames all the same, so their keys are read from the wrong
// bytes (a Linux SLL capture, tcpdump -i any's, keys nearly every packet,
// wrongly: verdicts unlike agebloom-replay's, which reads the link type, and
// a tx_pcap labelled Ethernet). A regular file only (a FIFO would be
// consumed); one libpcap cannot open is net_pcap's to refuse, and say why.
void refuse_other_link_types(const CaptureArg& a) {
  struct stat st;
  if (stat(a.path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return;
  char errbuf[PCAP_ERRBUF_SIZE] = {};
  pcap_t* p = pcap_open_offline(a.path.c_str(), errbuf);
  if (p == nullptr) return;
  const int dlt = pcap_datalink(p);
  pcap_close(p);
  if (dlt == DLT_EN10MB) return;
  const char* name = dlt >= 0 ? pcap_datalink_val_to_name(dlt) : nullptr;
  refuse(where(a) + " is a capture of link type " + std::to_string(dlt) + " (" + (name ? name : "unknown") +
         "), not Ethernet: net_pcap would hand its records on as Ethernet frames, keyed from the wrong bytes. "
         "Replay it with agebloom-replay, which reads its link type");
}

}  // namespace

void guard_capture_files(int eal_argc, char** argv, const Options& o) {
  const std::vector<CaptureArg> args = capture_args(eal_argc, argv);
  if (!o.stats_json.empty() && !o.snapshot.empty() && agebloom::trace::same_file(o.stats_json, o.snapshot))
    refuse("--stats-json " + o.stats_json + " and --snapshot " + o.snapshot + " are one file: each would replace the other");
  for (size_t i = 0; i < args.size(); ++i) {
    const CaptureArg& a = args[i];
    if (a.key == "rx_pcap") {
      auto it = std::find_if(g_rx_files.begin(), g_rx_files.end(), [&](const auto& d) { return d.first == a.device; });
      if (it == g_rx_files.end()) g_rx_files.emplace_back(a.device, 1);
      else ++it->second;
      refuse_other_link_types(a);
      if (o.spec.window.is_time() && o.time_source == TimeSource::rx_timestamp) count_bad_timestamps(a);
    }
    for (size_t k = 0; k < i; ++k)
      if ((a.key == "tx_pcap" || args[k].key == "tx_pcap") && agebloom::trace::same_file(a.path, args[k].path))
        refuse(where(a) + " and " + where(args[k]) + " are one file: writing it would destroy " +
               (a.key == args[k].key ? "the other's capture" : "the input"));
    for (const auto& [option, file] : {std::pair{"--stats-json", &o.stats_json}, std::pair{"--snapshot", &o.snapshot}})
      if (!file->empty() && agebloom::trace::same_file(a.path, *file))
        refuse(where(a) + " is also " + option + "'s file");
  }
  std::atexit(finish_captures);
  // Each tx_pcap's Tx queue: its place among its device's tx_pcap arguments.
  std::vector<unsigned> queue_of(args.size(), 0);
  for (size_t i = 0; i < args.size(); ++i)
    for (size_t k = 0; k < i; ++k) queue_of[i] += args[k].key == "tx_pcap" && args[k].device == args[i].device;
  // Right to left: a device with several queues has several tx_pcap in one
  // argument, and rewriting one moves only what stands to its right.
  for (auto it = args.rbegin(); it != args.rend(); ++it) {
    const CaptureArg& a = *it;
    if (a.key != "tx_pcap") continue;
    struct stat st;
    if (stat(a.path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
      if (S_ISDIR(st.st_mode)) refuse(where(a) + ": is a folder");
      // /dev/null, a FIFO: written as given (its reader may be live), so
      // there is no capture to read back; the exit says so, with its count.
      Diverted d{a.path, "", a.device, queue_of[static_cast<size_t>(std::distance(args.begin(), it.base()) - 1)], a.path};
      d.as_given = true;
      g_diverted.push_back(std::move(d));
      continue;
    }
    // A symbolic link is written through: the capture replaces its target
    // (link_target follows a link to a file not made yet too).
    std::error_code ec;
    const std::string path =
        std::filesystem::is_symlink(a.path, ec) ? agebloom::trace::link_target(a.path).string() : a.path;
    const size_t slash = path.rfind('/');
    const std::string dir = slash == std::string::npos ? "" : path.substr(0, slash + 1);
    const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
    Diverted d{path, dir + "." + name + ".dedup_fwd-" + std::to_string(getpid()), a.device,
               queue_of[static_cast<size_t>(std::distance(args.begin(), it.base()) - 1)], a.path};
    // Made here, so a folder that takes no file is the user's path in the
    // message, before the EAL (net_pcap would name the file beside it).
    const int fd = name.empty() ? -1 : open(d.aside.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
      refuse(where(a) + ": cannot write into " + (dir.empty() ? std::string(".") : dir) + ": " +
             std::strerror(name.empty() ? EISDIR : errno));
    close(fd);
    std::string arg = argv[a.argv_index];
    arg.replace(a.value_pos, a.path.size(), d.aside);
    g_rewritten.push_back(std::move(arg));
    argv[a.argv_index] = g_rewritten.back().data();
    g_diverted.push_back(std::move(d));
  }
}

std::string with_user_paths(const std::string& device, std::string args) {
  // Whole tx_pcap values of this device only: one aside name can sit inside
  // another's ("1.pcap" in "b.1.pcap").
  for (const Diverted& d : g_diverted) {
    if (d.device != device || d.as_given) continue;
    const std::string was = "tx_pcap=" + d.aside, now = "tx_pcap=" + d.given;
    for (size_t at = args.find(was); at != std::string::npos; at = args.find(was, at + 1)) {
      const size_t end = at + was.size();
      if ((at != 0 && args[at - 1] != ',') || (end != args.size() && args[end] != ',')) continue;
      args.replace(at, was.size(), now);
    }
  }
  return args;
}

void keep_tx_captures() { g_keep = true; }

void note_tx_counts(const std::vector<uint16_t>& ports_in_use) {
  for (Diverted& d : g_diverted) {
    uint16_t port = 0;
    rte_eth_dev_info info{};
    rte_eth_stats st{};
    // Only the Tx queues dedup_fwd set up: net_pcap closes (and so finishes)
    // those alone when the port closes; a device outside --portmask, or a
    // tx_pcap past the queues the workers use, is not read back.
    if (rte_eth_dev_get_port_by_name(d.device.c_str(), &port) != 0) continue;
    const bool known = rte_eth_dev_info_get(port, &info) == 0;
    // Nothing was ever sent there: the user's file stays as it was.
    if (std::find(ports_in_use.begin(), ports_in_use.end(), port) == ports_in_use.end() ||
        (known && d.queue >= info.nb_tx_queues)) {
      d.unused = true;
      continue;
    }
    if (!known || d.queue >= RTE_ETHDEV_QUEUE_STAT_CNTRS || rte_eth_stats_get(port, &st) != 0) continue;
    d.sent = st.q_opackets[d.queue];
    d.counted = true;
  }
}

int check_tx_captures() {
  int failures = 0;
  for (Diverted& d : g_diverted) {
    if (!g_keep || !d.counted) continue;
    if (d.as_given) {
      // net_pcap's writes are unchecked: a device that refuses them
      // (/dev/full) loses the packets without a word, so say what was sent.
      if (d.sent)
        std::fprintf(stderr, "dedup_fwd: note: tx_pcap %s is not a regular file: the %llu packets sent to it were "
                     "written as given and not read back (net_pcap does not say whether a write failed)\n",
                     d.path.c_str(), static_cast<unsigned long long>(d.sent));
      continue;
    }
    say_long_read(d.aside, "reading " + d.path + " back to check it");
    uint64_t records = 0, cut = 0;
    std::string why;
    auto opened = agebloom::trace::PcapReader::open(d.aside);
    if (opened.ok()) {
      agebloom::trace::Packet p;
      agebloom::trace::PcapReader::Status s;
      while ((s = opened.reader.next(p)) == agebloom::trace::PcapReader::Status::ok) {
        ++records;
        cut += p.caplen == kPcapTxSnap && p.wirelen > kPcapTxSnap;
      }
      if (s == agebloom::trace::PcapReader::Status::error) why = opened.reader.error();
    } else {
      why = opened.error;
    }
    if (records < d.sent || !why.empty()) {
      // The disk filled, or the file could not be written: net_pcap does not
      // say (its writes go through stdio unchecked), so the file is read back.
      std::fprintf(stderr, "dedup_fwd: tx_pcap %s: the capture holds %llu of the %llu packets sent to it%s%s (a full "
                   "disk, or a file that could not be written); %s was left as it was, the partial capture is %s\n",
                   d.path.c_str(), static_cast<unsigned long long>(records), static_cast<unsigned long long>(d.sent),
                   why.empty() ? "" : ": ", why.c_str(), d.path.c_str(), d.aside.c_str());
      d.failed = true;
      ++failures;
    }
    if (cut)
      std::fprintf(stderr, "dedup_fwd: warning: tx_pcap %s: %llu frame%s longer than %u bytes, written cut to "
                   "%u (net_pcap's limit; the record keeps the frame's length)\n", d.path.c_str(),
                   static_cast<unsigned long long>(cut), cut == 1 ? " was" : "s were", kPcapTxSnap, kPcapTxSnap);
  }
  return failures;
}

void check_rx_captures(unsigned rx_queues) {
  for (const auto& [device, files] : g_rx_files)
    if (files > rx_queues) {
      rte_eal_cleanup();
      refuse("--vdev " + device + " has " + std::to_string(files) + " rx_pcap files, one per Rx queue, but dedup_fwd " +
             "polls " + std::to_string(rx_queues) + " Rx queue" + (rx_queues == 1 ? "" : "s") +
             " per port (one per worker lcore; one when the main lcore dispatches): give each capture a --vdev "
             "of its own, or agebloom-replay several traces");
    }
}

uint64_t rx_bad_timestamps() { return g_bad_timestamps; }

}  // namespace dedup_fwd
