// agebloom-replay --plot FILE.png: a PNG and the CSV it is drawn from, whose
// bins add up to the totals the report prints; a path that cannot be written
// refused before the trace is read; without matplotlib (or python3) a
// message naming the package, the CSV still written, exit 1. And the bins
// themselves: at most 200 whatever the capture's length, nothing lost when
// they merge.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "../common/shell.hpp"
#include "../common/test_paths.hpp"
#include "replay_plot.hpp"

namespace fs = std::filesystem;

namespace {

using agebloom::testing::Outcome;

Outcome run(const std::string& args, const std::string& env = "") {
  return agebloom::testing::shell(env + " " + AGEBLOOM_REPLAY + " " + args);
}

using agebloom::testing::trace;

fs::path temp_dir(const char* what) {
  fs::path d = fs::temp_directory_path() / ("agebloom-plot-test-" + std::to_string(getpid()) + "-" + what);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

// The CSV as columns by name.
struct Csv {
  std::vector<std::string> header;
  std::vector<std::vector<double>> rows;
  double sum(const std::string& column) const {
    size_t c = 0;
    while (c < header.size() && header[c] != column) ++c;
    double s = 0;
    for (const auto& r : rows) s += r.at(c);
    return s;
  }
  bool has(const std::string& column) const {
    for (const auto& h : header)
      if (h == column) return true;
    return false;
  }
};

Csv read_csv(const fs::path& p) {
  Csv csv;
  std::istringstream in(slurp(p));
  std::string line, cell;
  std::getline(in, line);
  for (std::istringstream h(line); std::getline(h, cell, ',');) csv.header.push_back(cell);
  while (std::getline(in, line)) {
    std::vector<double> row;
    for (std::istringstream r(line); std::getline(r, cell, ',');) row.push_back(std::stod(cell));
    EXPECT_EQ(row.size(), csv.header.size()) << line;
    csv.rows.push_back(row);
  }
  return csv;
}

const std::string kPngSignature("\x89PNG\r\n\x1a\n", 8);

}  // namespace

// Count and time windows, both policies, with --truth: the bins add up to
// the report's packets, suppressions, false positives and slack.
TEST(ReplayPlot, PngAndCsvWhoseBinsAddUpToTheReport) {
  const fs::path d = temp_dir("sums");
  int n = 0;
  for (const char* window : {"--window 300", "--ttl 100ms --capacity 500"})
    for (const char* policy : {"insert-always", "insert-on-miss"}) {
      const fs::path png = d / ("run" + std::to_string(++n) + ".png");
      const fs::path csv = d / ("run" + std::to_string(n) + ".csv");
      const std::string args = trace("pcapplusplus_example.pcap") + " --truth --seed 5eed --fpr 0.3 --key flow " +
                               window + " --policy " + policy + " --plot " + png.string();
      const Outcome r = run(args + " --json");
      ASSERT_EQ(r.code, 0) << r.out;
      const auto j = nlohmann::json::parse(r.out);
      ASSERT_TRUE(fs::exists(png)) << args;
      EXPECT_EQ(slurp(png).substr(0, 8), kPngSignature);
      const Csv c = read_csv(csv);
      EXPECT_EQ(c.header, (std::vector<std::string>{"start_s", "end_s", "packets", "suppressed", "fill",
                                                    "false_positives", "slack_suppressed"}));
      EXPECT_GE(c.rows.size(), 2u);
      EXPECT_LE(c.rows.size(), 200u);
      EXPECT_EQ(j["plot"]["bins"], c.rows.size());
      EXPECT_EQ(j["plot"]["csv"], csv.string());
      EXPECT_EQ(c.sum("packets"), j["packets"].get<double>()) << args;
      EXPECT_EQ(c.sum("suppressed"), j["suppressed"].get<double>()) << args;
      EXPECT_EQ(c.sum("false_positives"), j["false_positives"].get<double>()) << args;
      EXPECT_EQ(c.sum("slack_suppressed"), j["slack_suppressed"].get<double>()) << args;
      EXPECT_GT(c.sum("false_positives") + c.sum("slack_suppressed"), 0.0) << args;  // FPR 0.3: not all zero
      // Bins in order, end to end, from the first packet; fill a ratio, and
      // not zero once keys were inserted.
      for (size_t i = 0; i < c.rows.size(); ++i) {
        EXPECT_DOUBLE_EQ(c.rows[i][0], i == 0 ? 0.0 : c.rows[i - 1][1]);
        EXPECT_GE(c.rows[i][4], 0.0);
        EXPECT_LE(c.rows[i][4], 1.0);
      }
      EXPECT_GT(c.rows.back()[4], 0.0);
      // The text report prints the same totals, and where the plot is (once:
      // each plot starts python3 and matplotlib).
      if (n > 1) continue;
      const Outcome text = run(args);
      ASSERT_EQ(text.code, 0) << text.out;
      for (const std::string& want :
           {std::to_string(j["suppressed"].get<uint64_t>()) + " suppressed",
            std::to_string(j["false_positives"].get<uint64_t>()) + " packets wrongly suppressed",
            std::to_string(j["slack_suppressed"].get<uint64_t>()) + " packets suppressed because of the slack",
            "plot: " + png.string() + ", " + std::to_string(c.rows.size()) + " bins of "})
        EXPECT_NE(text.out.find(want), std::string::npos) << want << "\n" << text.out;
    }
  fs::remove_all(d);
}

// Without --truth there is nothing to call false: no such columns.
TEST(ReplayPlot, WithoutTruthNoFalseSuppressionColumns) {
  const fs::path d = temp_dir("notruth");
  const Outcome r = run(trace("pcapplusplus_4KHttpRequests.pcap") + " --seed 1 --key click --ttl 60s --json --plot " +
                        (d / "clicks.png").string());
  ASSERT_EQ(r.code, 0) << r.out;
  const Csv c = read_csv(d / "clicks.csv");
  EXPECT_EQ(c.header, (std::vector<std::string>{"start_s", "end_s", "packets", "suppressed", "fill"}));
  EXPECT_EQ(c.sum("suppressed"), nlohmann::json::parse(r.out)["suppressed"].get<double>());
  EXPECT_EQ(slurp(d / "clicks.png").substr(0, 8), kPngSignature);
  fs::remove_all(d);
}

// Refused before the trace is opened: the trace here is a FIFO nobody
// writes, which a replay would wait on for ever.
TEST(ReplayPlot, BadPathExitsTwoBeforeAnyWork) {
  const fs::path d = temp_dir("bad");
  const fs::path fifo = d / "never-written.pcap";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  fs::create_directories(d / "sub.png");
  struct Case {
    std::string plot, says;
  };
  for (const Case& c : {Case{"/nonexistent-dir/r.png", "--plot /nonexistent-dir/r.png: cannot write into /nonexistent-dir"},
                        Case{(d / "r.svg").string(), "--plot needs a file name ending in .png"},
                        // A file (the FIFO) where the folder should be: not a permission.
                        Case{fifo.string() + "/r.png", "cannot write into " + fifo.string() + ": it is not a folder"},
                        Case{d.string() + "/", "--plot needs a file name ending in .png"},
                        Case{(d / "sub.png").string() + " --verdicts " + (d / "sub.csv").string(),
                             "--verdicts and --plot (its CSV) name the same file"}}) {
    const Outcome r = agebloom::testing::shell("timeout 20 " + std::string(AGEBLOOM_REPLAY) + " " + fifo.string() +
                                               " --seed 1 --plot " + c.plot);
    EXPECT_EQ(r.code, 2) << c.plot << "\n" << r.out;
    EXPECT_NE(r.out.find(c.says), std::string::npos) << c.plot << "\n" << r.out;
  }
  // A folder where the PNG would go is refused as well.
  const Outcome folder = agebloom::testing::shell("timeout 20 " + std::string(AGEBLOOM_REPLAY) + " " + fifo.string() +
                                                  " --seed 1 --plot " + (d / "sub.png").string());
  EXPECT_EQ(folder.code, 2) << folder.out;
  EXPECT_NE(folder.out.find("is a folder"), std::string::npos) << folder.out;
  // The fill is sampled as packets are read: not on the GPU.
  const Outcome gpu = run(trace("pcapplusplus_example.pcap") + " --backend gpu --plot " + (d / "g.png").string());
  EXPECT_EQ(gpu.code, 2) << gpu.out;
  EXPECT_NE(gpu.out.find("--plot"), std::string::npos) << gpu.out;
  const Outcome automatic = run(trace("pcapplusplus_example.pcap") + " --json --seed 1 --backend auto --plot " +
                                (d / "a.png").string());
  EXPECT_EQ(automatic.code, 0) << automatic.out;
  EXPECT_EQ(nlohmann::json::parse(automatic.out)["backend"], "cpu");
  fs::remove_all(d);
}

// No matplotlib (hidden behind a package that fails to import), or no
// python3 at all: the message names the Debian package, the CSV is there
// to draw later, the report is printed, exit 1.
TEST(ReplayPlot, WithoutMatplotlibTheCsvIsWrittenAndThePackageNamed) {
  const fs::path d = temp_dir("nompl");
  fs::create_directories(d / "fake" / "matplotlib");
  std::ofstream(d / "fake" / "matplotlib" / "__init__.py") << "raise ImportError('hidden by the test')\n";
  for (const std::string& env : {"PYTHONPATH=" + (d / "fake").string(), std::string("AGEBLOOM_PYTHON=/nonexistent/python3")}) {
    const fs::path png = d / "r.png";
    const Outcome r = run(trace("pcapplusplus_example.pcap") + " --seed 1 --plot " + png.string(), env);
    EXPECT_EQ(r.code, 1) << env << "\n" << r.out;
    EXPECT_NE(r.out.find("python3-matplotlib"), std::string::npos) << env << "\n" << r.out;
    EXPECT_NE(r.out.find("--plot " + png.string() + " not drawn"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("4631 packets"), std::string::npos) << r.out;  // the replay's report all the same
    EXPECT_FALSE(fs::exists(png)) << env;
    EXPECT_EQ(read_csv(d / "r.csv").sum("packets"), 4631.0) << env;
    fs::remove(d / "r.csv");
  }
  fs::remove_all(d);
}

// A PNG the disk will not take (a file-size limit stands in for a full disk:
// the CSV fits under it, the picture does not) is one line naming the file,
// exit 1, no partial PNG: matplotlib's traceback was 30 lines before it.
// Python ignores SIGXFSZ, so its write fails with EFBIG; the shell's trap
// makes the replay ignore it too.
TEST(ReplayPlot, APngThatCannotBeWrittenIsSaidInOneLine) {
  const fs::path d = temp_dir("toolarge");
  const fs::path png = d / "r.png";
  const Outcome r = agebloom::testing::shell("sh -c \"trap '' XFSZ; ulimit -f 24; " + std::string(AGEBLOOM_REPLAY) +
                                             " " + trace("pcapplusplus_example.pcap") + " --seed 1 --plot " +
                                             png.string() + "\"");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("replay.py: cannot write " + png.string() + ": File too large"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--plot " + png.string() + " not drawn: cannot write " + png.string()), std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("Traceback"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(png)) << "a partial PNG was left";
  EXPECT_EQ(read_csv(d / "r.csv").sum("packets"), 4631.0);
  fs::remove_all(d);
}

// Installed (bin/agebloom-replay beside share/agebloom/lab/plots/), the
// binary draws with the script installed with it, not the source tree's.
TEST(ReplayPlot, AnInstalledBinaryUsesTheInstalledScript) {
  const fs::path d = temp_dir("installed");
  fs::create_directories(d / "bin");
  fs::create_directories(d / "share" / "agebloom" / "lab" / "plots");
  fs::copy_file(AGEBLOOM_REPLAY, d / "bin" / "agebloom-replay");
  std::ofstream(d / "share" / "agebloom" / "lab" / "plots" / "replay.py")
      << "import sys\nopen(sys.argv[2], 'wb').write(b'\\x89PNG\\r\\n\\x1a\\n installed copy')\n";
  const Outcome r = agebloom::testing::shell((d / "bin" / "agebloom-replay").string() + " " +
                                             trace("pcapplusplus_example.pcap") + " --seed 1 --plot " +
                                             (d / "r.png").string());
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(slurp(d / "r.png"), kPngSignature + " installed copy");
  fs::remove_all(d);
}

// The bins over a long capture: at most 200, from 100 to 200 once they have
// merged, every packet and suppression kept through the merges, the fill
// of a merged bin the later one's, and a bin with no packet keeping the fill
// the filter had.
TEST(ReplayPlot, BinsMergeWithoutLosingCounts) {
  using agebloom::tools::PlotSeries;
  PlotSeries s;
  const uint64_t t0 = 1'700'000'000'000'000'000ull;
  uint64_t packets = 0, suppressed = 0;
  double fill = 0;
  // Two hours, a packet every 10 ms, with a 20-minute gap; one in three suppressed.
  for (uint64_t t = 0; t < 7200'000'000'000ull; t += 10'000'000) {
    if (t > 3000'000'000'000ull && t < 4200'000'000'000ull) continue;
    PlotSeries::Bin& b = s.enter(t0 + t, [&] { return fill; });
    fill = static_cast<double>(t) / 7200e9;
    ++packets;
    if (packets % 3 == 0) {
      ++b.suppressed;
      ++suppressed;
    }
  }
  s.finish(fill);
  ASSERT_GE(s.bins(), 100u);
  ASSERT_LE(s.bins(), 200u);
  EXPECT_NEAR(s.width_seconds() * s.bins(), 7200.0, 2 * s.width_seconds() + 7200.0 / 100);
  uint64_t p = 0, q = 0;
  double last = 0;
  for (size_t i = 0; i < s.bins(); ++i) {
    p += s.bin(i).packets;
    q += s.bin(i).suppressed;
    EXPECT_GE(s.bin(i).fill, last) << i;  // this fill only grows: no bin left unsampled (-1) or out of order
    last = s.bin(i).fill;
  }
  EXPECT_EQ(p, packets);
  EXPECT_EQ(q, suppressed);
  EXPECT_DOUBLE_EQ(s.bin(s.bins() - 1).fill, fill);
  // The gap: bins without packets, with the fill from before it.
  const size_t gap = static_cast<size_t>(3600.0 / s.width_seconds());
  EXPECT_EQ(s.bin(gap).packets, 0u);
  EXPECT_NEAR(s.bin(gap).fill, 3000.0 / 7200, 0.02);
}

// One timestamp (or stamps that step back): one bin; no packet: no bin.
TEST(ReplayPlot, DegenerateCaptures) {
  using agebloom::tools::PlotSeries;
  PlotSeries none;
  none.finish(0.5);
  EXPECT_EQ(none.bins(), 0u);
  PlotSeries same;
  for (uint64_t t : {5'000'000'000ull, 5'000'000'000ull, 4'000'000'000ull}) same.enter(t, [] { return 0.25; });
  same.finish(0.5);
  EXPECT_EQ(same.bins(), 1u);
  EXPECT_EQ(same.bin(0).packets, 3u);
  EXPECT_DOUBLE_EQ(same.bin(0).fill, 0.5);
  EXPECT_EQ(agebloom::tools::plot_csv_path("out/run.1.png"), "out/run.1.csv");
}
