#include "plot.hpp"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace agebloom::tools {

std::string plots_folder() {
  if (const char* env = std::getenv("AGEBLOOM_PLOTS")) return env;
  std::string self;
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n > 0) self.assign(buf, static_cast<size_t>(n));
  const std::string dir = self.substr(0, self.rfind('/'));
  // The build tree first: a developer's edit to a script shows at once.
  for (const std::string& c : {std::string(AGEBLOOM_PLOTS_SOURCE), dir + "/../share/agebloom/lab/plots"}) {
    struct stat st;
    if (stat(c.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return c;
  }
  return AGEBLOOM_PLOTS_SOURCE;
}

bool draw_plot(const char* tool, const std::string& script, const std::string& csv, const std::string& png,
               const std::vector<std::string>& args) {
  // Debian's python3 (with python3-matplotlib) before whatever PATH offers.
  const char* py = std::getenv("AGEBLOOM_PYTHON");
  const std::string python = py ? py : (access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3");
  const std::string path = plots_folder() + "/" + script;
  std::vector<const char*> argv = {python.c_str(), path.c_str(), csv.c_str(), png.c_str()};
  for (const std::string& a : args) argv.push_back(a.c_str());
  argv.push_back(nullptr);
  std::fflush(nullptr);  // the child must not repeat our buffered output
  const pid_t pid = fork();
  if (pid < 0) {
    std::fprintf(stderr, "%s: cannot start %s to draw %s: %s\n", tool, python.c_str(), png.c_str(), std::strerror(errno));
    return false;
  }
  if (pid == 0) {
    execvp(argv[0], const_cast<char* const*>(argv.data()));
    std::fprintf(stderr, "%s: cannot run %s: %s\n", tool, python.c_str(), std::strerror(errno));
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return true;
  std::fprintf(stderr, "%s: drawing %s with %s failed (is python3-matplotlib installed? scripts/setup.sh installs it); "
                       "the data is in %s\n", tool, png.c_str(), path.c_str(), csv.c_str());
  return false;
}

}  // namespace agebloom::tools
