// Runs a command line as a user would and returns its exit code and what it
// printed (stdout and stderr together): the tools' and dedup_fwd's tests
// check programs from the outside with it.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace agebloom::testing {

struct Outcome {
  int code;  // exit status, or 128 + signal number
  std::string out;
};

inline Outcome shell(const std::string& cmd) {
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return {-1, "popen failed"};
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  const int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), out};
}

}  // namespace agebloom::testing
