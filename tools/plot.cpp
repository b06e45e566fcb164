#include "plot.hpp"

#include "output_folder.hpp"

#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

extern char** environ;

namespace agebloom::tools {

std::string plots_folder() {
  if (const char* env = std::getenv("AGEBLOOM_PLOTS")) return env;
  char self[4096];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n > 0) {
    const std::string exe(self, static_cast<size_t>(n));
    const std::string installed = exe.substr(0, exe.rfind('/')) + "/../share/agebloom/lab/plots";
    struct stat st;
    if (stat(installed.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return installed;
  }
  return AGEBLOOM_PLOTS_SOURCE;
}

std::string draw_plot(const std::string& script, const std::string& csv, const std::string& png,
                      const std::vector<std::string>& args) {
  // Debian's python3 before whatever PATH offers (a virtualenv without matplotlib).
  const char* env = std::getenv("AGEBLOOM_PYTHON");
  const std::string python = env ? env : access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
  const std::string path = plots_folder() + "/" + script;
  std::vector<const char*> argv = {python.c_str(), path.c_str(), csv.c_str(), png.c_str()};
  for (const std::string& a : args) argv.push_back(a.c_str());
  argv.push_back(nullptr);
  // A PNG that cannot be written is said plainly, not as a traceback.
  {
    struct stat st;
    if (stat(png.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) return png + " exists and is not a file";
    if (std::string why = folder_refuses_files(folder_of(png)); !why.empty()) return why;
  }
  pid_t pid;
  if (const int err = posix_spawnp(&pid, python.c_str(), nullptr, nullptr, const_cast<char* const*>(argv.data()), environ))
    return "cannot run " + python + " (" + std::strerror(err) + "): install python3 and python3-matplotlib " +
           "(scripts/setup.sh does)";
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return {};
  if (WIFEXITED(status) && WEXITSTATUS(status) == 3)
    return python + " has no matplotlib: install Debian's python3-matplotlib (scripts/setup.sh does)";
  // lab/plots/png_file.py: the PNG could not be written (its reason is on
  // stderr) and no partial one is left.
  if (WIFEXITED(status) && WEXITSTATUS(status) == 4) return "cannot write " + png;
  // Every script exits 3 when matplotlib is missing (above): any other
  // failure is the script's own, and its message is on stderr already.
  return path + " failed (" +
         (WIFEXITED(status) ? "exit " + std::to_string(WEXITSTATUS(status))
                            : "signal " + std::to_string(WTERMSIG(status))) +
         "; its message is above)";
}

}  // namespace agebloom::tools
