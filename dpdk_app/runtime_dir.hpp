// The EAL's runtime folder (/var/run/dpdk/PREFIX for root): DPDK 22.11's
// rte_eal_cleanup leaves it and its files behind, one folder per process
// that used a --file-prefix of its own (dedup_fwd's tests, agebloom-bench).
// A primary process removes what the EAL put there at exit.
#pragma once

#include <dirent.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

namespace dedup_fwd {

// Removes `dir`'s EAL files (config, hugepage_info, mp_socket, fbarray_*,
// dpdk_telemetry*) and then the folder, which stays if anything else is in it.
inline void remove_eal_runtime_dir(const std::string& dir) {
  if (dir.empty()) return;
  static const char* const kPrefixes[] = {"config", "hugepage_info", "mp_socket", "fbarray_", "dpdk_telemetry"};
  if (DIR* d = opendir(dir.c_str())) {
    std::vector<std::string> files;
    while (const dirent* e = readdir(d))
      for (const char* p : kPrefixes)
        if (std::strncmp(e->d_name, p, std::strlen(p)) == 0) {
          files.push_back(dir + "/" + e->d_name);
          break;
        }
    closedir(d);
    for (const std::string& f : files) unlink(f.c_str());
  }
  rmdir(dir.c_str());  // fails, harmlessly, if anything else is left
}

}  // namespace dedup_fwd
