// Paths the outside-in tests (tools, dpdk) share: a folder of the test
// process's own, and the captures the repository ships in data/traces/.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <string>

namespace agebloom::testing {

// <system temp>/<stem>-<pid>, created if missing: one per test process, so
// suites running in parallel never share a file.
inline std::filesystem::path process_temp_dir(const std::string& stem) {
  std::filesystem::path d = std::filesystem::temp_directory_path() / (stem + "-" + std::to_string(getpid()));
  std::filesystem::create_directories(d);
  return d;
}

#ifdef AGEBLOOM_SOURCE_ROOT
// A capture shipped in data/traces/, by file name.
inline std::string trace(const char* name) { return std::string(AGEBLOOM_SOURCE_ROOT) + "/data/traces/" + name; }
#endif

}  // namespace agebloom::testing
