// An experiment's results on disk: a CSV and a markdown table written side
// by side, every write checked, then the PNG drawn from the CSV.
//
// The files replace a published run only once they are whole: both are
// written as NAME.csv.partial and NAME.md.partial and renamed over NAME.csv
// and NAME.md when both closed cleanly. A run that fails, returns early or
// is stopped (SIGINT, SIGTERM, SIGHUP) removes its partial files and leaves
// the earlier results as they were: a full run takes minutes, and a Ctrl-C
// or a full disk used to leave empty or cut files where they had been.
#pragma once

#include <cstdarg>
#include <cstdio>
#include <string>

#include "experiment.hpp"

namespace agebloom::lab {

// One experiment's CSV and markdown table (and its PNG, by publish()).
class Report {
 public:
  // Opens both partial files in `folder`; ok() says whether it could (and a
  // message was printed when not).
  Report(const std::string& folder, const std::string& name);
  // Removes partial files a run did not publish.
  ~Report();
  Report(const Report&) = delete;
  Report& operator=(const Report&) = delete;
  bool ok() const noexcept { return csv_ != nullptr && md_ != nullptr; }
  void csv(const char* fmt, ...) __attribute__((format(printf, 2, 3)));
  void md(const char* fmt, ...) __attribute__((format(printf, 2, 3)));
  // Closes both and renames them into place; false (a message naming the
  // file and the reason, the partial files removed) when a write failed.
  bool close();
  // What every experiment ends with: close(), then the PNG drawn from the CSV
  // by lab/plots/<script>, each file named as written. False (with a
  // message) when a write or the plot failed; a PNG not drawn takes an
  // earlier run's PNG away with it, as it drew data that is now replaced.
  bool publish(const LabOptions& o, const char* script);
  std::string csv_path, md_path, png_path;

 private:
  void discard();
  void write(std::FILE* file, const char* fmt, va_list ap);
  std::string csv_partial_, md_partial_;
  std::FILE* csv_ = nullptr;
  std::FILE* md_ = nullptr;
  int csv_slot_ = -1, md_slot_ = -1;  // this report's partial files in the signal handler's list
  int failed_errno_ = 0;
  bool failed_ = false;
};

}  // namespace agebloom::lab
