// Drawing a CSV into a PNG with one of the repository's matplotlib scripts
// (lab/plots/*.py), for every tool that draws: agebloom-lab, agebloom-plan
// --plot and agebloom-replay --plot. Python is a separate process, so a
// missing matplotlib costs the picture, never the run's results.
#pragma once

#include <string>
#include <vector>

namespace agebloom::tools {

// The folder of the plotting scripts: $AGEBLOOM_PLOTS when set; else the
// source tree's lab/plots when the tool runs from the build tree; else the
// installed share/agebloom/lab/plots beside the tool's bin folder.
std::string plots_folder();

// Runs `python3 <plots_folder()>/<script> CSV PNG [args...]` (Debian's
// /usr/bin/python3 first, or $AGEBLOOM_PYTHON) and waits for it. False, with
// a message on stderr that begins with `tool` and names python3-matplotlib,
// when Python or matplotlib is missing or the script fails.
bool draw_plot(const char* tool, const std::string& script, const std::string& csv, const std::string& png,
               const std::vector<std::string>& args = {});

}  // namespace agebloom::tools
