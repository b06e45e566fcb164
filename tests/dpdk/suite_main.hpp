// main() of the dpdk test programs. dedup_fwd runs over an empty capture
// first: on a machine where DPDK's EAL cannot start the suite is skipped
// (77, with the EAL's message), not failed. After the tests, the folder of
// their files goes when they passed, and so do the runtime directories of
// their file prefixes, which DPDK 22.11 leaves behind.
#pragma once

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <functional>
#include <string>
#include <system_error>

#include "../common/shell.hpp"
#include "captures.hpp"

namespace agebloom::testing {

// `probe(in, out)` runs dedup_fwd over the empty capture `in`; every EAL
// file prefix of the program starts with `prefix_stem`.
inline int dpdk_suite_main(int argc, char** argv, const std::filesystem::path& temp, const std::string& prefix_stem,
                           const std::function<Outcome(const std::filesystem::path&, const std::filesystem::path&)>& probe) {
  namespace fs = std::filesystem;
  ::testing::InitGoogleTest(&argc, argv);
  const fs::path in = temp / "probe.pcap", out = temp / "probe.out.pcap";
  write_pcap(in, {});
  const Outcome p = probe(in, out);
  int rc = 77;
  if (p.code != 0) std::printf("SKIP: the DPDK EAL cannot initialise here (exit %d):\n%s\n", p.code, p.out.c_str());
  else rc = RUN_ALL_TESTS();
  if (rc == 0) fs::remove_all(temp);
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/var/run/dpdk", ec))
    if (e.path().filename().string().rfind(prefix_stem, 0) == 0) fs::remove_all(e.path(), ec);
  return rc;
}

}  // namespace agebloom::testing
