#include "replay_plot.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>


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

}  // namespace agebloom::tools
