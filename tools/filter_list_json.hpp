// The registry's rows as JSON, for `--list-filters --json` in agebloom-plan
// and agebloom-replay: the fields of the text list (print_filter_list), one
// object per structure, in the registry's order (a row with a size rule,
// interleaved-swept, also with auto_over_bytes and auto_in_place_of: where
// --filter auto takes it).
#pragma once

#include "agebloom/registry/structure.hpp"

#include <nlohmann/json.hpp>

namespace agebloom::tools {

inline nlohmann::json filter_list_json() {
    nlohmann::json rows = nlohmann::json::array();
    for (const StructureInfo& s : kStructures) {
        nlohmann::json row = {{"name", s.name},
                              {"windows", windows_label(s)},
                              {"cost", s.cost}, {"summary", s.summary}, {"paper", s.paper}, {"gpu", s.gpu},
                              {"auto_candidate", s.auto_candidate}, {"rate_adaptive", s.rate_adaptive},
                              {"false_negatives", s.false_negatives}};
        // --filter auto's size rule: its choice in place of that row past this size.
        if (s.auto_over_bytes) {
            row["auto_over_bytes"] = s.auto_over_bytes;
            row["auto_in_place_of"] = name(s.auto_in_place_of);
        }
        rows.push_back(std::move(row));
    }
    return rows;
}

}  // namespace agebloom::tools
