// The structures a tool's --list-filters prints (the registry, seen from
// outside as a user sees it), read once per test program: each name with
// what its line says about it. The tools' tests enumerate these, so a newly
// registered structure is tested by being registered.
#pragma once

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "shell.hpp"

namespace agebloom::testing {

struct ListedFilter {
  std::string name;
  bool time_windows = false;     // "count+time"
  bool false_negatives = false;  // "false negatives by design"
};

// `tool` is a command line that takes --list-filters (agebloom-replay's path).
inline const std::vector<ListedFilter>& listed_filters(const std::string& tool) {
  static const std::vector<ListedFilter> rows = [&] {
    std::vector<ListedFilter> out;
    const Outcome r = shell(tool + " --list-filters");
    EXPECT_EQ(r.code, 0) << r.out;
    std::istringstream lines(r.out);
    for (std::string line; std::getline(lines, line);)
      if (!line.empty())
        out.push_back({line.substr(0, line.find(' ')), line.find("count+time") != std::string::npos,
                       line.find("false negatives by design") != std::string::npos});
    return out;
  }();
  return rows;
}

}  // namespace agebloom::testing
