// Drawing a CSV into a PNG with one of the repository's matplotlib scripts
// (lab/plots/*.py), for every tool that draws: agebloom-lab, agebloom-plan
// --plot and agebloom-replay --plot. Python is a separate process, so a
// missing matplotlib costs the picture, never the run's results.
#pragma once

#include <string>
#include <vector>

namespace agebloom::tools {

// The folder of the plotting scripts: $AGEBLOOM_PLOTS when set; else the
// installed share/agebloom/lab/plots beside the running binary's bin folder
// (an installed tool draws with the scripts installed with it); else the
// source tree's lab/plots (a tool run from the build tree).
std::string plots_folder();

// Runs `python3 <plots_folder()>/<script> CSV PNG [args...]` (Debian's
// /usr/bin/python3 first, where python3-matplotlib installs, or
// $AGEBLOOM_PYTHON) and waits for it. Empty when drawn; else a message that
// names what is missing (python3, python3-matplotlib) or how the script
// failed. A script exits 3 when it cannot import matplotlib, 4 when it
// cannot write the PNG (lab/plots/png_file.py, which removes a partial one).
std::string draw_plot(const std::string& script, const std::string& csv, const std::string& png,
                      const std::vector<std::string>& args = {});

}  // namespace agebloom::tools
