// dedup_fwd against hostile command lines and damaged inputs, run as a user
// would (net_pcap virtual devices, no NIC, no hugepages): what a mistake must
// never do (truncate an existing capture, report a missing input as an empty
// one, leave the EAL's runtime directory behind) and what it must say instead.
// Every capture is crafted here byte by byte. Exit code 77 (skip) with the
// reason when the EAL cannot start here.
#include <gtest/gtest.h>
#include <pcap/pcap.h>
#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "../common/capture_bytes.hpp"
#include "../common/shell.hpp"
#include "../common/test_paths.hpp"
#include "captures.hpp"
#include "suite_main.hpp"
#include "three_lcores.hpp"

namespace fs = std::filesystem;
using agebloom::testing::Bytes;
using agebloom::testing::Outcome;
using agebloom::testing::shell;

namespace {

fs::path temp_dir() { return agebloom::testing::process_temp_dir("dedup-fwd-hostile"); }

// A file prefix of our own per run, so runs never share EAL state and each
// runtime directory can be looked for afterwards.
std::string next_prefix() {
  static std::atomic<int> n{0};
  return "agebloom-h" + std::to_string(getpid()) + "-" + std::to_string(n++);
}

std::string eal(const std::string& vdevs, const std::string& prefix = next_prefix()) {
  return "--no-huge --no-pci -m 512 --log-level=lib.eal:error --file-prefix " + prefix + " -l 0 " + vdevs;
}

std::string pcap_vdev(int i, const fs::path& in, const fs::path& out) {
  return "--vdev net_pcap" + std::to_string(i) + ",rx_pcap=" + in.string() + ",tx_pcap=" + out.string();
}

Outcome dedup_fwd(const std::string& eal_args, const std::string& app_args) {
  return shell(std::string(DEDUP_FWD) + " " + eal_args + " -- " + app_args);
}

// Where the EAL puts PREFIX's runtime directory: /var/run/dpdk for root,
// $XDG_RUNTIME_DIR/dpdk (or /tmp/dpdk) otherwise.
std::vector<fs::path> runtime_dirs(const std::string& prefix) {
  const char* xdg = std::getenv("XDG_RUNTIME_DIR");
  return {fs::path("/var/run/dpdk") / prefix, fs::path(xdg != nullptr ? xdg : "/tmp") / "dpdk" / prefix};
}

bool runtime_dir_left(const std::string& prefix) {
  std::error_code ec;
  for (const fs::path& d : runtime_dirs(prefix))
    if (fs::exists(d, ec)) return true;
  return false;
}

void remove_runtime_dir(const std::string& prefix) {
  std::error_code ec;
  for (const fs::path& d : runtime_dirs(prefix)) fs::remove_all(d, ec);
}

Bytes read_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// ---------------------------------------------------------------- captures

using agebloom::testing::write_bytes;

// Ethernet + IPv4 + UDP from 10.0.0.`src`.
Bytes frame(uint8_t src) {
  Bytes b = {0x02, 0, 0, 0, 0, 1, 0x02, 0, 0, 0, 0, 2, 0x08, 0x00,
             0x45, 0, 0, 29, 0, 1, 0x40, 0, 64, 17, 0, 0, 10, 0, 0, src, 10, 0, 0, 2,
             0, 1, 0, 2, 0, 9, 0, 0, 'x'};
  return b;
}

// A classic microsecond pcap file header (little-endian, Ethernet).
Bytes pcap_header(uint32_t snaplen = 65535) {
  return agebloom::testing::pcap_file_header(agebloom::testing::kPcapMicroMagic, snaplen);
}

// One record; caplen defaults to the data's length (a lie when given).
void pcap_record(Bytes& file, const Bytes& data, uint32_t usec, int64_t caplen = -1) {
  const auto len = static_cast<uint32_t>(data.size());
  agebloom::testing::pcap_record(file, 1'700'000'000, usec, caplen < 0 ? len : static_cast<uint32_t>(caplen), len,
                                 data);
}

// `n` distinct frames, 10 us apart.
Bytes good_pcap(unsigned n) {
  Bytes f = pcap_header();
  for (unsigned i = 0; i < n; ++i) pcap_record(f, frame(static_cast<uint8_t>(i + 1)), i * 10);
  return f;
}

// pcapng: section header, one Ethernet interface (microseconds), and
// enhanced packet blocks; `length_lie` replaces the block's leading total
// length (its trailing one stays true).
Bytes pcapng_header() {
  namespace t = agebloom::testing;
  Bytes b;
  t::pcapng_block(b, t::kPcapngSection, t::pcapng_section_body());
  Bytes idb;
  t::le16(idb, 1);  // LINKTYPE_ETHERNET
  t::le16(idb, 0);
  t::le32(idb, 0);  // snaplen: none
  t::pcapng_block(b, t::kPcapngInterface, idb);
  return b;
}

void pcapng_packet(Bytes& file, const Bytes& data, uint64_t ts_us, int64_t length_lie = -1) {
  namespace t = agebloom::testing;
  t::pcapng_block(file, t::kPcapngPacket, t::pcapng_packet_body(ts_us, data),
                  length_lie < 0 ? std::nullopt : std::optional<uint32_t>(static_cast<uint32_t>(length_lie)));
}


size_t count_pcap(const fs::path& p, size_t* empty_frames = nullptr) {
  char err[PCAP_ERRBUF_SIZE];
  pcap_t* h = pcap_open_offline(p.c_str(), err);
  if (h == nullptr) return SIZE_MAX;
  pcap_pkthdr* hdr;
  const u_char* data;
  size_t n = 0;
  if (empty_frames) *empty_frames = 0;
  while (pcap_next_ex(h, &hdr, &data) == 1) {
    ++n;
    if (empty_frames && hdr->caplen == 0) ++*empty_frames;
  }
  pcap_close(h);
  return n;
}

nlohmann::json read_json(const fs::path& p) {
  std::ifstream in(p);
  return nlohmann::json::parse(in, nullptr, false);
}

// Runs dedup_fwd over `capture` as a finite input (--exit-on-idle), with the
// closing stats line (--stats-interval 1 prints one at exit) and the JSON.
struct CaptureRun {
  Outcome outcome;
  nlohmann::json stats;
  fs::path out;
};
CaptureRun run_capture(const std::string& name, const Bytes& capture, const std::string& lcores = "",
                const std::string& extra = "") {
  const fs::path in = temp_dir() / (name + ".in"), out = temp_dir() / (name + ".out.pcap"),
                 js = temp_dir() / (name + ".json");
  write_bytes(in, capture);
  fs::remove(js);
  std::string e = eal(pcap_vdev(0, in, out));
  if (!lcores.empty()) e.replace(e.find(" -l 0 "), 6, " " + lcores + " ");
  CaptureRun r;
  // --key src-ip unless `extra` gives its own (a repeated option is refused).
  const std::string key = extra.find("--key ") == std::string::npos ? "--key src-ip " : "";
  r.outcome = dedup_fwd(e, key + "--window 1000 --seed 1 --exit-on-idle 200 --stats-interval 1 "
                           "--stats-json " + js.string() + " " + extra);
  r.stats = read_json(js);
  r.out = out;
  return r;
}

}  // namespace

// ---------------------------------------------------------------- tests

// rte_eal_init probes the devices, and net_pcap truncates a tx_pcap as it
// opens it: dedup_fwd must refuse its own bad options, and answer --help,
// before that, leaving an existing capture byte for byte as it was.
TEST(HostileCommandLine, ExistingTxCaptureSurvivesBadOptionsAndHelp) {
  const fs::path in = temp_dir() / "keep.in.pcap", out = temp_dir() / "keep.out.pcap";
  write_bytes(in, good_pcap(3));
  const Bytes precious = good_pcap(40);  // yesterday's results, say
  write_bytes(out, precious);
  const char* bad[] = {"--bogus", "--window 0", "--key nonsense", "--action mirror:64 --portmask 1", "--fpr 2",
                       "stray", "--window 10 --ttl 1s", "--window",
                       // a filter that cannot be planned or does not fit --mem: also before the EAL
                       "--fpr 1e-200", "--filter apbf --fpr 1e-50", "--window 100000000 --mem 1",
                       "--filter guarded-epoch-blocked --fpr 1e-300", "--stats-interval 0.5"};
  for (const char* args : bad) {
    const Outcome r = dedup_fwd(eal(pcap_vdev(0, in, out)), args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.out;
    EXPECT_NE(r.out.find("dedup_fwd: "), std::string::npos) << args << "\n" << r.out;
    if (std::string(args) == "--stats-interval 0.5") {  // in range, but not whole: the message says which rule
      EXPECT_NE(r.out.find("needs whole seconds"), std::string::npos) << r.out;
    }
    EXPECT_EQ(read_bytes(out), precious) << "'" << args << "' changed the tx_pcap file";
  }
  const Outcome help = dedup_fwd(eal(pcap_vdev(0, in, out)), "--help");
  EXPECT_EQ(help.code, 0) << help.out;
  EXPECT_NE(help.out.find("--key"), std::string::npos) << help.out;
  EXPECT_NE(help.out.find("Exit codes"), std::string::npos) << help.out;
  EXPECT_EQ(read_bytes(out), precious) << "--help changed the tx_pcap file";
  const Outcome list = dedup_fwd(eal(pcap_vdev(0, in, out)), "--list-filters");
  EXPECT_EQ(list.code, 0) << list.out;
  EXPECT_NE(list.out.find("interleaved-apbf"), std::string::npos) << list.out;
  EXPECT_EQ(read_bytes(out), precious) << "--list-filters changed the tx_pcap file";

  // --help among the EAL's options (no "--"): the EAL's usage, then ours.
  const Outcome eal_help = shell(std::string(DEDUP_FWD) + " " + eal(pcap_vdev(0, in, out)) + " --help");
  EXPECT_EQ(eal_help.code, 0) << eal_help.out;
  EXPECT_NE(eal_help.out.find("--vdev"), std::string::npos) << eal_help.out;
  EXPECT_NE(eal_help.out.find("--key src-ip|dst-ip|flow|click"), std::string::npos) << eal_help.out;
  EXPECT_EQ(read_bytes(out), precious) << "EAL --help changed the tx_pcap file";
}

// Options only the ports can judge (a port that does not exist, an odd
// number of ports) are found after the EAL probed the devices; the tx_pcap
// was written aside until then (capture_files.hpp), so the file is still as
// it was and nothing is left beside it.
TEST(HostileCommandLine, ExistingTxCaptureSurvivesPortErrors) {
  const fs::path dir = temp_dir() / "port-errors";
  fs::create_directories(dir);
  const fs::path in = dir / "in.pcap", out = dir / "out.pcap", out2 = dir / "out2.pcap";
  write_bytes(in, good_pcap(3));
  const Bytes precious = good_pcap(40);
  const struct {
    std::string vdevs, args, says;
  } cases[] = {
      {pcap_vdev(0, in, out), "--portmask 0x2", "does not exist"},
      {pcap_vdev(0, in, out), "--action mirror:1", "not one of the ports in use"},
      {pcap_vdev(0, in, out) + " " + pcap_vdev(1, in, out2) + " " + pcap_vdev(2, in, dir / "out3.pcap"), "",
       "odd number of ports"},
  };
  for (const auto& c : cases) {
    write_bytes(out, precious);
    write_bytes(out2, precious);
    const Outcome r = dedup_fwd(eal(c.vdevs), c.args + " --exit-on-idle 100 --stats-interval 0");
    EXPECT_EQ(r.code, 2) << c.args << "\n" << r.out;
    EXPECT_NE(r.out.find(c.says), std::string::npos) << r.out;
    EXPECT_EQ(read_bytes(out), precious) << "'" << c.args << "' changed the tx_pcap file";
    EXPECT_EQ(read_bytes(out2), precious) << "'" << c.args << "' changed the second tx_pcap file";
    EXPECT_FALSE(fs::exists(dir / "out3.pcap"));
    for (const auto& e : fs::directory_iterator(dir))
      EXPECT_EQ(e.path().filename().string().find(".dedup_fwd-"), std::string::npos) << e.path() << " left behind";
  }
  // A run that starts replaces the file with its capture: the packets it forwarded.
  write_bytes(out, precious);
  const Outcome ran = dedup_fwd(eal(pcap_vdev(0, in, out)), "--exit-on-idle 100 --stats-interval 0");
  EXPECT_EQ(ran.code, 0) << ran.out;
  // Its 3 distinct packets, in records of the same sizes (net_pcap writes its own stamps).
  EXPECT_EQ(read_bytes(out).size(), good_pcap(3).size()) << "the run's capture is not its input's 3 packets";
  for (const auto& e : fs::directory_iterator(dir))
    EXPECT_EQ(e.path().filename().string().find(".dedup_fwd-"), std::string::npos) << e.path() << " left behind";
}

// An rx_pcap of another link type (here Linux SLL, what tcpdump -i any
// writes) would be handed on as Ethernet frames and keyed from the wrong
// bytes: exit 2 before the EAL, naming the link type, the tx_pcap whole.
TEST(HostileInput, RxCaptureOfAnotherLinkTypeIsRefused) {
  const fs::path in = temp_dir() / "sll-labelled.pcap", out = temp_dir() / "sll-labelled.out.pcap";
  Bytes sll = good_pcap(3);
  sll[20] = 113;  // the file header's link type (little-endian): LINKTYPE_LINUX_SLL
  write_bytes(in, sll);
  const Bytes precious = good_pcap(7);
  write_bytes(out, precious);
  const Outcome r = dedup_fwd(eal(pcap_vdev(0, in, out)), "--exit-on-idle 100 --stats-interval 0");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("link type 113 (LINUX_SLL), not Ethernet"), std::string::npos) << r.out;
  EXPECT_EQ(read_bytes(out), precious);
  // The same records labelled Ethernet run.
  write_bytes(in, good_pcap(3));
  EXPECT_EQ(dedup_fwd(eal(pcap_vdev(0, in, out)), "--exit-on-idle 100 --stats-interval 0").code, 0);
}

// A tx_pcap that is an rx_pcap, another tx_pcap, --stats-json's or
// --snapshot's file under any spelling would destroy it: exit 2 before the
// EAL, the input whole.
TEST(HostileCommandLine, ACaptureThatIsAnotherFileIsRefused) {
  const fs::path dir = temp_dir() / "one-file";
  fs::create_directories(dir);
  const fs::path in = dir / "in.pcap", out = dir / "out.pcap";
  const Bytes input = good_pcap(5);
  const std::string dot = (dir / "." / "in.pcap").string();
  const struct {
    std::string vdevs, args;
  } cases[] = {
      {pcap_vdev(0, in, dot), ""},
      {pcap_vdev(0, in, out) + " " + pcap_vdev(1, in, dir / "." / "out.pcap"), "--same-port"},
      {pcap_vdev(0, in, out), "--stats-json " + dot},
      {pcap_vdev(0, in, out), "--snapshot " + (dir / "." / "out.pcap").string()},
      {pcap_vdev(0, in, out), "--stats-json " + (dir / "s.json").string() + " --snapshot " + (dir / "." / "s.json").string()},
      {pcap_vdev(0, in, dir / "nodir" / "o.pcap"), ""},  // a folder that is not there: named as given
  };
  for (const auto& c : cases) {
    write_bytes(in, input);
    fs::remove(out);
    const Outcome r = dedup_fwd(eal(c.vdevs), c.args + " --exit-on-idle 100 --stats-interval 0");
    EXPECT_EQ(r.code, 2) << c.vdevs << " " << c.args << "\n" << r.out;
    EXPECT_NE(r.out.find("dedup_fwd: --"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find(".dedup_fwd-"), std::string::npos) << "an internal name in the message:\n" << r.out;
    EXPECT_EQ(r.out.find("packets in"), std::string::npos) << "it ran anyway:\n" << r.out;
    EXPECT_EQ(read_bytes(in), input) << c.vdevs << " " << c.args;
  }
  // Two rx_pcap files on one device are two Rx queues; with one polled, the
  // second capture would go unread: exit 2, the tx files untouched.
  const Bytes precious = good_pcap(9);
  write_bytes(out, precious);
  const Outcome two = dedup_fwd(eal("--vdev net_pcap0,rx_pcap=" + in.string() + ",rx_pcap=" + in.string() +
                                    ",tx_pcap=" + out.string() + ",tx_pcap=" + (dir / "out2.pcap").string()),
                                "--exit-on-idle 100 --stats-interval 0");
  EXPECT_EQ(two.code, 2) << two.out;
  EXPECT_NE(two.out.find("has 2 rx_pcap files"), std::string::npos) << two.out;
  EXPECT_EQ(read_bytes(out), precious);
  EXPECT_FALSE(fs::exists(dir / "out2.pcap"));
  // A tx_pcap that is a symbolic link is written through to its target.
  fs::create_directories(dir / "real");
  write_bytes(dir / "real" / "target.pcap", precious);
  fs::remove(dir / "link.pcap");
  fs::create_symlink(dir / "real" / "target.pcap", dir / "link.pcap");
  const Outcome linked = dedup_fwd(eal(pcap_vdev(0, in, dir / "link.pcap")), "--exit-on-idle 100 --stats-interval 0");
  EXPECT_EQ(linked.code, 0) << linked.out;
  EXPECT_TRUE(fs::is_symlink(dir / "link.pcap"));
  EXPECT_EQ(read_bytes(dir / "real" / "target.pcap").size(), good_pcap(5).size()) << "the target holds the run's capture";
}

// An option the EAL does not know: its usage and ours, then exit 2 (a bad
// option, as the exit codes say) with a hint, and still nothing opened (the
// EAL parses before it probes).
TEST(HostileCommandLine, InvalidEalOptionFailsWithAHint) {
  const fs::path in = temp_dir() / "eal.in.pcap", out = temp_dir() / "eal.out.pcap";
  write_bytes(in, good_pcap(3));
  const Bytes precious = good_pcap(7);
  write_bytes(out, precious);
  const std::string prefix = next_prefix();
  const Outcome r = shell(std::string(DEDUP_FWD) + " --no-such-eal-option " + eal(pcap_vdev(0, in, out), prefix) +
                          " -- --key flow");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("--key src-ip|dst-ip|flow|click"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("the DPDK EAL could not start"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--no-huge"), std::string::npos) << r.out;
  EXPECT_EQ(read_bytes(out), precious);
  remove_runtime_dir(prefix);
}

// One of dedup_fwd's own options before the "--" (forgotten): exit 2 naming
// it, before the EAL (whose answer would be its whole usage and exit 1), and
// nothing opened.
TEST(HostileCommandLine, OwnOptionBeforeTheDashesIsNamed) {
  const fs::path in = temp_dir() / "dashes.in.pcap", out = temp_dir() / "dashes.out.pcap";
  write_bytes(in, good_pcap(3));
  const Bytes precious = good_pcap(7);
  write_bytes(out, precious);
  for (const char* ours : {"--key flow", "--window=5", "--snapshot s.bin"}) {
    const Outcome r = shell(std::string(DEDUP_FWD) + " " + eal(pcap_vdev(0, in, out)) + " " + ours);
    EXPECT_EQ(r.code, 2) << ours << "\n" << r.out;
    EXPECT_NE(r.out.find("is dedup_fwd's own option: it goes after \"--\""), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("EAL common options"), std::string::npos) << "the EAL's usage: " << r.out;
    EXPECT_EQ(read_bytes(out), precious) << ours;
  }
}

// net_pcap arguments the driver mishandles, refused before the EAL with what
// to write: `infinite_rx` without a value was a segfault in the probe, an
// unknown key failed with no reason, infinite_rx=2 ran without end, a device
// without files failed as "could not be created". The tx_pcap is untouched.
TEST(HostileCommandLine, NetPcapArgumentsAreCheckedBeforeTheEal) {
  const fs::path in = temp_dir() / "vdevargs.in.pcap", out = temp_dir() / "vdevargs.out.pcap";
  write_bytes(in, good_pcap(3));
  const Bytes precious = good_pcap(7);
  const std::string files = "net_pcap0,rx_pcap=" + in.string() + ",tx_pcap=" + out.string();
  struct Case {
    std::string vdev, says;
  };
  for (const Case& c : {Case{files + ",infinite_rx", "infinite_rx needs a value (infinite_rx=0|1)"},
                        Case{files + ",infinite_rx=2", "infinite_rx takes 0 or 1, not '2'"},
                        Case{files + ",phy_mac", "phy_mac needs a value"},
                        Case{files + ",bogus=1", "net_pcap has no argument 'bogus' (it takes rx_pcap, tx_pcap"},
                        Case{files + ",rx_pcap", "rx_pcap needs a value (rx_pcap=FILE)"},
                        Case{"net_pcap0,tx_pcap=" + out.string() + ",iface=", "iface needs a value (iface=IFACE)"},
                        Case{"net_pcap0", "net_pcap0 names no capture or interface"},
                        Case{"net_pcap0,infinite_rx=1", "net_pcap0 names no capture or interface"},
                        Case{files + ",infinite_rx=1,infinite_rx=0", "infinite_rx given twice"},
                        // A folder for a tx_pcap: named before the EAL (the driver's refusal
                        // came with a hint about rx_pcap).
                        Case{"net_pcap0,rx_pcap=" + in.string() + ",tx_pcap=" + temp_dir().string(), "is a folder"}}) {
    SCOPED_TRACE(c.vdev);
    write_bytes(out, precious);
    const Outcome r = dedup_fwd(eal("--vdev '" + c.vdev + "'"), "--exit-on-idle 100 --stats-interval 0");
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_NE(r.out.find("dedup_fwd: --vdev net_pcap0"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(c.says), std::string::npos) << r.out;
    EXPECT_EQ(read_bytes(out), precious) << "the EAL started (net_pcap truncates a tx_pcap as it opens it)";
  }
  // Two devices of one name: the EAL dropped the second, whose file then read as the first's second queue.
  write_bytes(out, precious);
  const Outcome twice = dedup_fwd(eal("--vdev net_pcap0,rx_pcap=" + in.string() + " --vdev " + files),
                                  "--exit-on-idle 100 --stats-interval 0");
  EXPECT_EQ(twice.code, 2) << twice.out;
  EXPECT_NE(twice.out.find("--vdev net_pcap0 given twice: each device needs a name of its own"), std::string::npos)
      << twice.out;
  EXPECT_EQ(read_bytes(out), precious);
  // What the driver takes passes: empty pairs (kvargs skips them), infinite_rx=0.
  write_bytes(out, precious);
  const Outcome ok = dedup_fwd(eal("--vdev '" + files + ",,infinite_rx=0,'"), "--exit-on-idle 100 --stats-interval 0");
  EXPECT_EQ(ok.code, 0) << ok.out;
  EXPECT_NE(ok.out.find("packets in 3"), std::string::npos) << ok.out;
}

// Output files that are not plain files. --snapshot is written beside its
// name and renamed over it: a device there was replaced by a regular file
// (/dev/null, as root) and a FIFO blocked the restore, so anything but a
// regular file is refused, and a link is followed to the file it names (the
// link itself was replaced, its target never written). A --stats-json FIFO
// that nobody reads blocked the exit for good, deaf to SIGTERM: now exit 1
// saying so, the run's other outputs written.
TEST(HostileCommandLine, OutputsThatAreNotPlainFiles) {
  const fs::path dir = temp_dir() / "not-plain";
  fs::create_directories(dir);
  const fs::path in = dir / "in.pcap", out = dir / "out.pcap", fifo = dir / "fifo", link = dir / "snap.link",
                 target = dir / "snap.target";
  write_bytes(in, good_pcap(5));
  fs::remove(fifo);
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const Outcome r = dedup_fwd(eal(pcap_vdev(0, in, out)), "--exit-on-idle 100 --stats-interval 0 --snapshot " +
                                                              fifo.string());
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("--snapshot " + fifo.string() + ": not a regular file"), std::string::npos) << r.out;
  EXPECT_EQ(fs::status(fifo).type(), fs::file_type::fifo);
  // A link, dangling until the run writes its target.
  fs::remove(link);
  fs::remove(target);
  fs::create_symlink(target.filename(), link);
  Outcome linked = dedup_fwd(eal(pcap_vdev(0, in, out)), "--exit-on-idle 100 --stats-interval 0 --seed 5 --snapshot " +
                                                           link.string());
  EXPECT_EQ(linked.code, 0) << linked.out;
  EXPECT_TRUE(fs::is_symlink(link)) << "the link was replaced";
  EXPECT_TRUE(fs::is_regular_file(target)) << linked.out;
  linked = dedup_fwd(eal(pcap_vdev(0, in, out)), "--exit-on-idle 100 --stats-interval 0 --seed 5 --require-snapshot "
                                                 "--snapshot " + link.string());
  EXPECT_EQ(linked.code, 0) << linked.out;
  EXPECT_NE(linked.out.find("restored"), std::string::npos) << linked.out;
  // --stats-json into a FIFO nobody reads: bounded (timeout would say 124), exit 1, said.
  const Outcome unread = shell("timeout -s KILL 60 " + std::string(DEDUP_FWD) + " " + eal(pcap_vdev(0, in, out)) +
                               " -- --exit-on-idle 100 --stats-interval 0 --stats-json " + fifo.string());
  EXPECT_EQ(unread.code, 1) << unread.out;
  EXPECT_NE(unread.out.find("cannot write " + fifo.string() + ": a FIFO that no process is reading"), std::string::npos)
      << unread.out;
  EXPECT_EQ(count_pcap(out), 5u) << "the capture written all the same";
}

// SIGHUP (a closed terminal or SSH session) stops the run as SIGTERM does,
// its JSON written, where it killed it with its results; SIGPIPE (a reader of
// standard output gone) does not stop it.
TEST(HostileInput, HangupStopsCleanly) {
  const fs::path in = temp_dir() / "hup.in.pcap", js = temp_dir() / "hup.json";
  write_bytes(in, good_pcap(4));
  fs::remove(js);
  const std::string cmd = std::string(DEDUP_FWD) + " " + eal("--vdev net_pcap0,rx_pcap=" + in.string() +
                                                             ",infinite_rx=1") +
                          " -- --stats-interval 1 --stats-json " + js.string();
  // dedup_fwd keeps an ignored SIGHUP (nohup's choice), and a child inherits
  // the disposition: a test run under nohup would send a hangup nobody hears.
  // The run is started with the default, whoever started the tests.
  const auto previous = std::signal(SIGHUP, SIG_DFL);
  // The hangup comes once a stats line counts packets (up to 60 s: under
  // the sanitizers on a busy machine, three seconds had not seen the EAL up);
  // a run still there 60 s after it is killed (exit 137), not waited for.
  const fs::path log = temp_dir() / "hup.log";
  const Outcome r = shell("(" + cmd + " > " + log.string() + " 2>&1 & p=$!; for i in $(seq 600); do grep -q ' rx [1-9]' " +
                          log.string() + " && break; sleep 0.1; done; kill -HUP $p; for i in $(seq 600); do " +
                          "kill -0 $p 2>/dev/null || break; sleep 0.1; done; kill -KILL $p 2>/dev/null; wait $p; s=$?; cat " +
                          log.string() + "; exit $s)");
  std::signal(SIGHUP, previous);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("signal 1 received, shutting down"), std::string::npos) << r.out;
  const nlohmann::json j = read_json(js);
  ASSERT_FALSE(j.is_discarded()) << r.out;
  EXPECT_GT(j["rx"].get<uint64_t>(), 0u) << r.out;
  // Standard output's reader gone before the first line (`true` reads
  // nothing and exits at once): every write fails, the run goes on to its
  // end (every packet counted), and the exit says what was lost (1).
  fs::remove(js);
  const Outcome piped = shell("((" + std::string(DEDUP_FWD) + " " + eal("--vdev net_pcap0,rx_pcap=" + in.string()) +
                              " -- --exit-on-idle 300 --stats-interval 0 --stats-json " + js.string() +
                              "; echo dedup_fwd-exit=$? >&2) | true)");
  EXPECT_NE(piped.out.find("dedup_fwd: cannot write to standard output"), std::string::npos) << piped.out;
  EXPECT_NE(piped.out.find("dedup_fwd-exit=1"), std::string::npos) << piped.out;
  EXPECT_EQ(read_json(js)["rx"], 4) << piped.out;
}

// --exit-on-idle counts a poller's own empty polls: a worker still starting,
// or descheduled after a burst, cannot end a finite capture early (1 ms on
// two lcores forwarded 0 of 4631 packets in 2 runs of 4).
TEST(HostileInput, ShortIdlePeriodReadsTheWholeCapture) {
  const fs::path in = temp_dir() / "idle.in.pcap", out = temp_dir() / "idle.out.pcap", js = temp_dir() / "idle.json";
  write_bytes(in, good_pcap(2000));
  for (int i = 0; i < 3; ++i) {
    std::string e = eal(pcap_vdev(0, in, out));
    e.replace(e.find(" -l 0 "), 6, " -l 0-1 ");
    const Outcome r = dedup_fwd(e, "--exit-on-idle 1 --stats-interval 0 --stats-json " + js.string());
    EXPECT_EQ(r.code, 0) << r.out;
    EXPECT_EQ(read_json(js)["rx"], 2000) << r.out;
  }
  // Beside a port with nothing to read: its empty polls are no idle streak
  // while the other port still brings packets (the streak is per round of
  // polls over all of a poller's queues).
  const fs::path empty = temp_dir() / "idle.empty.pcap", out1 = temp_dir() / "idle.out1.pcap";
  write_bytes(empty, good_pcap(0));
  for (int i = 0; i < 3; ++i) {
    const Outcome r = dedup_fwd(eal(pcap_vdev(0, in, out) + " " + pcap_vdev(1, empty, out1)),
                                "--same-port --exit-on-idle 1 --stats-interval 0 --stats-json " + js.string());
    EXPECT_EQ(r.code, 0) << r.out;
    EXPECT_EQ(read_json(js)["rx"], 2000) << r.out;
  }
}

// A --vdev whose driver refuses it must stop the run with its name, not leave
// dedup_fwd running on the other ports with "0 packets" and exit 0.
TEST(HostileInput, RxCaptureThatCannotBeOpenedIsAnError) {
  const fs::path good = temp_dir() / "probe-good.pcap", empty = temp_dir() / "probe-empty.pcap",
                 random = temp_dir() / "probe-random.pcap", dir = temp_dir() / "probe-dir";
  write_bytes(good, good_pcap(4));
  write_bytes(empty, {});
  Bytes noise;
  uint32_t x = 12345;
  for (int i = 0; i < 600; ++i) noise.push_back(static_cast<uint8_t>((x = x * 1103515245 + 12345) >> 16));
  write_bytes(random, noise);
  fs::create_directories(dir);
  for (const fs::path& bad : {fs::path("/nonexistent/agebloom.pcap"), empty, random, dir}) {
    SCOPED_TRACE(bad.string());
    // Two ports, the second unusable: port 0 alone could have run.
    const fs::path o0 = temp_dir() / "probe0.out.pcap", o1 = temp_dir() / "probe1.out.pcap";
    Outcome r = dedup_fwd(eal(pcap_vdev(0, good, o0) + " " + pcap_vdev(1, bad, o1)),
                          "--same-port --exit-on-idle 100 --stats-interval 0");
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_NE(r.out.find("net_pcap1"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("could not be created"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(bad.string()), std::string::npos) << r.out;
    // The device named with the user's tx_pcap, not the file it is written aside as.
    EXPECT_NE(r.out.find("tx_pcap=" + o1.string() + ": the device could not be created"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find(".dedup_fwd-"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("packets in"), std::string::npos) << "it ran anyway:\n" << r.out;
    // The only port.
    r = dedup_fwd(eal(pcap_vdev(0, bad, o1)), "--exit-on-idle 100 --stats-interval 0");
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_NE(r.out.find("net_pcap0"), std::string::npos) << r.out;
  }
}

// DPDK 22.11 keeps /var/run/dpdk/PREFIX (config, fbarray files) even after
// rte_eal_cleanup; dedup_fwd removes it on every way out after the EAL started.
TEST(HostileCommandLine, RuntimeDirectoryIsRemovedOnEveryExit) {
  const fs::path in = temp_dir() / "rt.in.pcap", out = temp_dir() / "rt.out.pcap";
  write_bytes(in, good_pcap(5));
  struct Case {
    std::string vdevs, args;
    int code;
  } cases[] = {
      {pcap_vdev(0, in, out), "--portmask 0x4", 2},                                // plan_ports
      {pcap_vdev(0, in, out), "--window 100000000 --fpr 0.0001 --mem 1", 2},      // filter planning
      {pcap_vdev(0, fs::path("/nonexistent.pcap"), out), "--stats-interval 0", 2},  // probe failed
      {pcap_vdev(0, in, out), "--exit-on-idle 100 --stats-interval 0", 0},         // a normal run
  };
  for (const Case& c : cases) {
    const std::string prefix = next_prefix();
    const Outcome r = dedup_fwd(eal(c.vdevs, prefix), c.args);
    EXPECT_EQ(r.code, c.code) << c.args << "\n" << r.out;
    EXPECT_FALSE(runtime_dir_left(prefix)) << c.args << ": runtime directory of " << prefix << " left behind";
    remove_runtime_dir(prefix);
  }
}

// --action mirror:64 once shifted a 64-bit mask by 64 (undefined behaviour).
TEST(HostileCommandLine, MirrorPortIsValidated) {
  const fs::path in = temp_dir() / "mirror.in.pcap", out = temp_dir() / "mirror.out.pcap";
  write_bytes(in, good_pcap(3));
  for (const char* args : {"--action mirror:64 --portmask 1", "--action mirror:63 --portmask 1",
                           "--action mirror:32", "--action mirror:65535", "--action mirror:99999999999"}) {
    const Outcome r = dedup_fwd(eal(pcap_vdev(0, in, out)), args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.out;
    EXPECT_NE(r.out.find("--action mirror:"), std::string::npos) << args << "\n" << r.out;
  }
  Outcome r = dedup_fwd(eal(pcap_vdev(0, in, out)), "--action mirror:64 --portmask 1");
  EXPECT_NE(r.out.find("from 0 to"), std::string::npos) << r.out;
  // In range, but no such port (only port 0 exists).
  r = dedup_fwd(eal(pcap_vdev(0, in, out)), "--action mirror:5");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("not one of the ports in use (0)"), std::string::npos) << r.out;
  r = dedup_fwd(eal(pcap_vdev(0, in, out)), "--action mirror:1 --portmask 1");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("outside --portmask"), std::string::npos) << r.out;
}

// A capture damaged in the middle used to end like a clean one: exit 0, the
// damage only in the port's ierrors inside the JSON. Now the stats line warns
// and, on a finite input (--exit-on-idle), the exit code is 3.
TEST(HostileInput, DamagedCaptureWarnsAndExits3) {
  std::vector<std::pair<std::string, Bytes>> damaged;
  {
    Bytes f = good_pcap(6);
    f.resize(f.size() - 10);  // cut inside the last record's data
    damaged.emplace_back("truncated-mid-record", f);
  }
  {
    Bytes f = pcap_header();
    pcap_record(f, frame(1), 0);
    pcap_record(f, frame(2), 10);
    pcap_record(f, frame(3), 20, 0xFFFFFFFF);  // record length 0xFFFFFFFF
    pcap_record(f, frame(4), 30);
    damaged.emplace_back("record-length-ffffffff", f);
  }
  for (int64_t lie : {12, 36, 0x7ffffff0}) {  // pcapng block lengths that are not the block's
    Bytes f = pcapng_header();
    for (uint8_t i = 1; i <= 3; ++i) pcapng_packet(f, frame(i), 1'700'000'000'000'000ull + i);
    pcapng_packet(f, frame(9), 1'700'000'000'000'009ull, lie);
    for (uint8_t i = 4; i <= 6; ++i) pcapng_packet(f, frame(i), 1'700'000'000'000'010ull + i);
    damaged.emplace_back("pcapng-block-length-" + std::to_string(lie), f);
  }
  for (const auto& [name, capture] : damaged) {
    SCOPED_TRACE(name);
    const CaptureRun r = run_capture(name, capture);
    EXPECT_EQ(r.outcome.code, 3) << r.outcome.out;
    EXPECT_NE(r.outcome.out.find("| WARNING input errors: port 0 ierrors"), std::string::npos) << r.outcome.out;
    EXPECT_NE(r.outcome.out.find("dedup_fwd: warning: "), std::string::npos) << r.outcome.out;
    ASSERT_FALSE(r.stats.is_discarded()) << r.outcome.out;
    EXPECT_GT(r.stats["input_errors"].get<uint64_t>(), 0u);
    EXPECT_GT(r.stats["ports"][0]["ierrors"].get<uint64_t>(), 0u);
    EXPECT_TRUE(r.stats["invariant_holds"].get<bool>());
    EXPECT_EQ(r.stats["mempool"]["in_use_at_exit"], 0);
  }

  // The same reader over an undamaged capture: no warning, exit 0.
  const CaptureRun clean = run_capture("undamaged", good_pcap(6));
  EXPECT_EQ(clean.outcome.code, 0) << clean.outcome.out;
  EXPECT_EQ(clean.outcome.out.find("WARNING"), std::string::npos) << clean.outcome.out;
  EXPECT_EQ(clean.outcome.out.find("warning"), std::string::npos) << clean.outcome.out;
  EXPECT_EQ(clean.stats["input_errors"], 0);
  Bytes ng = pcapng_header();
  for (uint8_t i = 1; i <= 6; ++i) pcapng_packet(ng, frame(i), 1'700'000'000'000'000ull + i);
  const CaptureRun clean_ng = run_capture("undamaged-pcapng", ng);
  EXPECT_EQ(clean_ng.outcome.code, 0) << clean_ng.outcome.out;
  EXPECT_EQ(clean_ng.stats["tx"], 6);
}

// One record longer than libpcap's maximum (262144 bytes for Ethernet) used
// to come out as 18750 empty frames, all forwarded: libpcap refuses the
// record and leaves the file just past its header; net_pcap counts an ierror
// and reads on, taking each 16 zero bytes of the refused data for a record of
// length 0. Those are dropped and counted now (malformed), on one lcore and
// through the software dispatcher.
TEST(HostileInput, OversizedRecordIsNotForwardedAsEmptyFrames) {
  Bytes f = pcap_header();
  pcap_record(f, frame(1), 0);
  pcap_record(f, Bytes(300000, 0), 10);
  pcap_record(f, frame(2), 20);
  for (const std::string& lcores : {std::string(), "--lcores '" + three_lcores() + "'"}) {
    SCOPED_TRACE(lcores.empty() ? "one lcore" : "dispatcher");
    const CaptureRun r = run_capture(lcores.empty() ? "oversized" : "oversized-dispatch", f, lcores);
    EXPECT_EQ(r.outcome.code, 3) << r.outcome.out;
    ASSERT_FALSE(r.stats.is_discarded()) << r.outcome.out;
    EXPECT_EQ(r.stats["malformed"], 300000 / 16);
    EXPECT_EQ(r.stats["tx"], 2);
    EXPECT_EQ(r.stats["rx"], 2 + 300000 / 16);
    EXPECT_EQ(r.stats["dropped_error"], 300000 / 16);
    EXPECT_TRUE(r.stats["invariant_holds"].get<bool>());
    EXPECT_EQ(r.stats["mempool"]["in_use_at_exit"], 0);
    size_t empty = 0;
    EXPECT_EQ(count_pcap(r.out, &empty), 2u);
    EXPECT_EQ(empty, 0u);
    EXPECT_NE(r.outcome.out.find("malformed frames 18750"), std::string::npos) << r.outcome.out;
  }
}

// A record of 200000 bytes in a capture whose snap length allows it: net_pcap
// keeps jumbo lengths in 16 bits, so the mbuf chain held 3392 bytes under a
// pkt_len of 200000, and reading the frame ran off the chain (SIGSEGV).
TEST(HostileInput, RecordOver64KiBIsDroppedNotACrash) {
  Bytes f = pcap_header(262144);
  pcap_record(f, frame(1), 0);
  pcap_record(f, Bytes(200000, 0x55), 10);
  pcap_record(f, frame(2), 20);
  const CaptureRun r = run_capture("over64k", f);
  EXPECT_EQ(r.outcome.code, 3) << r.outcome.out;
  ASSERT_FALSE(r.stats.is_discarded()) << r.outcome.out;
  EXPECT_EQ(r.stats["malformed"], 1);
  EXPECT_EQ(r.stats["tx"], 2);
  EXPECT_TRUE(r.stats["invariant_holds"].get<bool>());
  EXPECT_EQ(r.stats["mempool"]["in_use_at_exit"], 0);
  EXPECT_EQ(count_pcap(r.out), 2u);
}

// Malformed mbufs are taken out of a burst by stage 1, which then closes the
// gaps: the verdicts of the packets around them must stay with their own
// packets. An unparsed frame in the same burst keeps the keyed packets'
// indices from lining up with the burst's by chance. Expected: the first of
// each source forwarded, in order, the unparsed frame with them, the copies
// suppressed, both over-64 KiB records dropped as malformed (in order on one
// lcore; with two workers behind the dispatcher, as a set).
TEST(HostileInput, MalformedFramesAmongDuplicatesKeepEachVerdictWithItsPacket) {
  Bytes cut = frame(9);
  cut.resize(13);  // no ethertype: unparsed, forwarded untouched
  const std::vector<Bytes> in = {frame(1), Bytes(200000, 0x55), frame(1), cut, frame(2),
                                 Bytes(200000, 0x66), frame(3), frame(2), frame(3)};
  Bytes f = pcap_header(262144);
  for (size_t i = 0; i < in.size(); ++i) pcap_record(f, in[i], static_cast<uint32_t>(i * 10));
  const std::vector<Bytes> expected = {frame(1), cut, frame(2), frame(3)};
  for (const std::string& lcores : {std::string(), "--lcores '" + three_lcores() + "'"}) {
    SCOPED_TRACE(lcores.empty() ? "one lcore" : "dispatcher");
    const CaptureRun r = run_capture(lcores.empty() ? "malformed-amid" : "malformed-amid-dispatch", f, lcores);
    EXPECT_EQ(r.outcome.code, 3) << r.outcome.out;  // malformed input
    ASSERT_FALSE(r.stats.is_discarded()) << r.outcome.out;
    EXPECT_EQ(r.stats["malformed"], 2);
    EXPECT_EQ(r.stats["suppressed"], 3);
    EXPECT_EQ(r.stats["tx"], 4);
    EXPECT_TRUE(r.stats["invariant_holds"].get<bool>());
    EXPECT_EQ(r.stats["mempool"]["in_use_at_exit"], 0);
    const std::vector<Bytes> out = agebloom::testing::read_pcap(r.out);
    if (lcores.empty()) {
      EXPECT_EQ(out, expected);
    } else {
      // Two workers send at once, so their frames interleave in any order.
      EXPECT_EQ(agebloom::testing::sorted_frames(out), agebloom::testing::sorted_frames(expected));
    }
  }
}

// The per-packet key modes that read the most of a frame: --key packet
// copies the whole IP packet into the key, --vlan-in-key walks the tags. A
// jumbo record (longer than any key), a record over 64 KiB and frames cut at
// every layer pass through them without a crash, counted, nothing leaked.
TEST(HostileInput, PacketKeyAndVlanKeyOverHostileRecords) {
  Bytes f = pcap_header(262144);
  pcap_record(f, frame(1), 0);
  pcap_record(f, Bytes(9000, 0x45), 10);  // "IPv4" all the way: a jumbo nonsense frame
  Bytes jumbo = frame(2);
  jumbo.resize(9014, 0x5A);
  pcap_record(f, jumbo, 20);
  for (std::size_t cut : {1u, 13u, 15u, 33u, 40u}) {
    Bytes c = frame(3);
    c.resize(std::min(cut, c.size()));
    pcap_record(f, c, 30 + cut);
  }
  pcap_record(f, Bytes(200000, 0x55), 100);
  pcap_record(f, frame(1), 110);  // a copy of the first: suppressed
  int i = 0;
  for (const char* opts : {"--key packet", "--key packet --ignore-l2 --packet-bytes 64", "--key flow --vlan-in-key"}) {
    SCOPED_TRACE(opts);
    const CaptureRun r = run_capture("packet-key-" + std::to_string(i++), f, "", opts);
    EXPECT_EQ(r.outcome.code, 3) << r.outcome.out;  // the >64 KiB record is malformed input
    ASSERT_FALSE(r.stats.is_discarded()) << r.outcome.out;
    EXPECT_EQ(r.stats["malformed"], 1);
    EXPECT_GE(r.stats["suppressed"].get<uint64_t>(), 1u);
    EXPECT_TRUE(r.stats["invariant_holds"].get<bool>());
    EXPECT_EQ(r.stats["mempool"]["in_use_at_exit"], 0);
  }
}

int main(int argc, char** argv) {
  return agebloom::testing::dpdk_suite_main(argc, argv, temp_dir(), "agebloom-h" + std::to_string(getpid()) + "-",
                                            [](const fs::path& in, const fs::path& out) {
                                              return dedup_fwd(eal(pcap_vdev(0, in, out)),
                                                               "--exit-on-idle 10 --stats-interval 0");
                                            });
}
