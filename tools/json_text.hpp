// JSON as text for the tools' reports: file names are bytes, not UTF-8, and
// nlohmann::json's dump() throws on a string that is not valid UTF-8 (an
// agebloom-replay report on a trace named with a Latin-1 byte aborted). Such
// bytes are written as U+FFFD instead; everything else is dump() as is.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace agebloom::tools {

inline std::string json_text(const nlohmann::json& j, int indent = -1) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace agebloom::tools
