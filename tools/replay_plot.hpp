// agebloom-replay --plot FILE.png: the replay's suppressions, false
// suppressions (--truth) and the filter's fill over packet time, binned into
// at most kBins intervals, written as FILE.csv and drawn from it by
// lab/plots/replay.py (tools/plot.hpp) with Debian's python3-matplotlib.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace agebloom::tools {

// The series, binned while the packets are read: the capture's length is
// unknown until its last packet, so the bins start narrow and, when a packet
// falls past the last one, pairs are merged and the width doubles. A
// capture of any length ends with between kBins / 2 and kBins bins (fewer
// when it is shorter than kBins first widths).
class PlotSeries {
 public:
  static constexpr size_t kBins = 200;
  static constexpr uint64_t kFirstWidthNs = 100'000;  // 100 us: a capture under 20 ms still gets bins

  struct Bin {
    uint64_t packets = 0;
    uint64_t suppressed = 0;
    uint64_t false_positives = 0;  // suppressed, not seen before within the window (--truth)
    uint64_t slack = 0;            // suppressed, last seen before the window: the slack (--truth)
    double fill = -1;              // the filter's fill after the bin's last packet; -1: not sampled yet
  };

  // Each packet, before its verdict, at its capture time: moves to the
  // packet's bin. Leaving a bin samples `fill()` for it (fill_ratio() reads
  // the whole filter, so once per bin, never per packet). Stamps that step
  // back are held at the latest, as the replay's clock is.
  template <class Fill>
  Bin& enter(uint64_t t_ns, Fill&& fill) {
    if (!started_) {
      started_ = true;
      origin_ = latest_ = t_ns;
      end_ = origin_ + width_;
    }
    if (t_ns > latest_) latest_ = t_ns;
    if (latest_ >= end_) move_to(latest_, fill());
    ++bins_[current_].packets;
    return bins_[current_];
  }

  // After the last packet: the fill of the last bin.
  void finish(double fill) {
    if (started_) bins_[current_].fill = fill;
  }

  // The bins from the first packet's to the last packet's.
  size_t bins() const noexcept { return started_ ? current_ + 1 : 0; }
  const Bin& bin(size_t i) const noexcept { return bins_[i]; }
  double width_seconds() const noexcept { return width_ / 1e9; }

  // Writes the CSV (with the false suppression columns when `truth`): empty
  // when written, else why not.
  std::string write_csv(const std::string& path, bool truth) const;

 private:
  void move_to(uint64_t t_ns, double fill_of_current);

  std::vector<Bin> bins_ = std::vector<Bin>(kBins);
  bool started_ = false;
  uint64_t origin_ = 0, latest_ = 0, end_ = 0;  // end_: where the current bin ends
  uint64_t width_ = kFirstWidthNs;
  size_t current_ = 0;
};

// The CSV named after the PNG: FILE.png -> FILE.csv.
std::string plot_csv_path(const std::string& png);

}  // namespace agebloom::tools
