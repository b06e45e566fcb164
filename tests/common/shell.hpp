// Runs a command line as a user would and returns its exit code and what it
// printed (stdout and stderr together): the tools' and dedup_fwd's tests
// check programs from the outside with it.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
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

// As shell(), with standard error apart: `out` is standard output alone (a
// --json report to parse), `err` what went to standard error (warnings).
struct SplitOutcome {
  int code;  // exit status, or 128 + signal number
  std::string out, err;
};

inline SplitOutcome shell_split(const std::string& cmd) {
  char path[] = "/tmp/agebloom-stderr-XXXXXX";
  const int fd = mkstemp(path);
  if (fd < 0) return {-1, "", "mkstemp failed"};
  close(fd);
  // Nested: shell() appends its own 2>&1, which must not reach cmd.
  const Outcome r = shell("((" + cmd + ") 2>" + path + ")");
  std::string err;
  if (FILE* f = std::fopen(path, "r")) {
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) err.append(buf, n);
    std::fclose(f);
  }
  std::remove(path);
  return {r.code, r.out, err};
}

}  // namespace agebloom::testing
