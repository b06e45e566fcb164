// Every benchmark subject's configuration: what the planner builds for
// structure s at window W and the suite's one FPR, as `--filter NAME --fpr
// 0.01` would (the filters, and the memory floors sized as their layouts).
#pragma once

#include <cstdint>
#include <cstdio>
#include <variant>

#include "agebloom/model/planner.hpp"
#include "agebloom/registry/filter_config.hpp"

namespace agebloom::perf {

// The FPR every subject is planned for.
inline constexpr double kFpr = 0.01;

// The planner's configuration for s at count window w; the planner's message
// on stderr, and Errc::too_large, when it refuses.
inline Expected<FilterConfig> planned_config(Structure s, uint64_t w) {
  model::PlanRequest r;
  r.window = Window::count(w);
  r.fpr = kFpr;
  r.structure = s;
  auto p = model::plan(r);
  if (auto* err = std::get_if<model::PlanError>(&p)) {
    std::fprintf(stderr, "%s: %s\n", info(s).name, err->message.c_str());
    return Errc::too_large;
  }
  return std::get<model::Plan>(p).config;
}

}  // namespace agebloom::perf
