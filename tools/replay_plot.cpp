#include "replay_plot.hpp"

#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

extern char** environ;

namespace agebloom::tools {

void PlotSeries::move_to(uint64_t t_ns, double fill_of_current) {
  bins_[current_].fill = fill_of_current;
  while ((t_ns - origin_) / width_ >= kBins) {
    for (size_t i = 0; i < kBins / 2; ++i) {
      const Bin a = bins_[2 * i], b = bins_[2 * i + 1];
      // The fill is a level, not a count: the merged bin ends where b does.
      bins_[i] = Bin{a.packets + b.packets, a.suppressed + b.suppressed, a.false_positives + b.false_positives,
                     a.slack + b.slack, b.fill >= 0 ? b.fill : a.fill};
    }
    for (size_t i = kBins / 2; i < kBins; ++i) bins_[i] = Bin{};
    current_ /= 2;
    width_ *= 2;
  }
  const size_t next = static_cast<size_t>((t_ns - origin_) / width_);
  // No packet in the bins skipped over, so nothing changed the filter there.
  for (size_t i = current_ + 1; i < next; ++i) bins_[i].fill = bins_[current_].fill;
  current_ = next;
  if (__builtin_add_overflow(origin_, (next + 1) * width_, &end_)) end_ = ~uint64_t{0};
}

std::string PlotSeries::write_csv(const std::string& path, bool truth) const {
  FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) return "cannot open " + path + ": " + std::strerror(errno);
  std::fprintf(f, "start_s,end_s,packets,suppressed,fill%s\n", truth ? ",false_positives,slack_suppressed" : "");
  for (size_t i = 0; i < bins(); ++i) {
    const Bin& b = bins_[i];
    std::fprintf(f, "%.9g,%.9g,%llu,%llu,%.6g", i * width_ / 1e9, (i + 1) * width_ / 1e9,
                 static_cast<unsigned long long>(b.packets), static_cast<unsigned long long>(b.suppressed),
                 b.fill < 0 ? 0.0 : b.fill);
    if (truth)
      std::fprintf(f, ",%llu,%llu", static_cast<unsigned long long>(b.false_positives),
                   static_cast<unsigned long long>(b.slack));
    std::fputc('\n', f);
  }
  const bool flushed = std::fflush(f) == 0 && !std::ferror(f);
  const int err = errno;
  const bool closed = std::fclose(f) == 0;
  if (flushed && closed) return {};
  return "cannot write " + path + ": " + std::strerror(err ? err : errno);
}

std::string plot_csv_path(const std::string& png) {
  const size_t slash = png.rfind('/');
  const size_t dot = png.rfind('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return png + ".csv";
  return png.substr(0, dot) + ".csv";
}

namespace {

bool is_file(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// An installed binary draws with the script installed with it; one in the
// build tree finds no share folder beside it and takes the source tree's.
std::string plot_script() {
  char self[4096];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n > 0) {
    const std::string exe(self, static_cast<size_t>(n));
    const std::string beside = exe.substr(0, exe.rfind('/')) + "/../share/agebloom/tools/plots/replay.py";
    if (is_file(beside)) return beside;
  }
  for (const char* c : {AGEBLOOM_TOOLS_SOURCE "/plots/replay.py", AGEBLOOM_TOOLS_INSTALLED "/plots/replay.py"})
    if (is_file(c)) return c;
  return AGEBLOOM_TOOLS_SOURCE "/plots/replay.py";
}

}  // namespace

std::string draw_plot(const std::string& csv, const std::string& png, const std::string& title) {
  // Debian's python3, where python3-matplotlib installs, before whatever
  // PATH offers (a virtualenv without matplotlib); AGEBLOOM_PYTHON as for
  // agebloom-lab.
  const char* env = std::getenv("AGEBLOOM_PYTHON");
  const std::string python = env ? env : access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
  const std::string script = plot_script();
  const char* argv[] = {python.c_str(), script.c_str(), csv.c_str(), png.c_str(), title.c_str(), nullptr};
  pid_t pid;
  if (const int err = posix_spawnp(&pid, python.c_str(), nullptr, nullptr, const_cast<char* const*>(argv), environ))
    return "cannot run " + python + " (" + std::strerror(err) + "): install python3 and python3-matplotlib " +
           "(scripts/setup.sh does)";
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return {};
  // replay.py exits 3 when matplotlib cannot be imported.
  if (WIFEXITED(status) && WEXITSTATUS(status) == 3)
    return python + " has no matplotlib: install Debian's python3-matplotlib (scripts/setup.sh does)";
  return script + " failed (" +
         (WIFEXITED(status) ? "exit " + std::to_string(WEXITSTATUS(status))
                            : "signal " + std::to_string(WTERMSIG(status))) +
         "; is python3-matplotlib installed? scripts/setup.sh installs it)";
}

}  // namespace agebloom::tools
