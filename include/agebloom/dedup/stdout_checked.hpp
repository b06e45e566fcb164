// What a program prints on standard output must reach it: a listing, a plan,
// a usage text or a run's summary sent to a full disk or /dev/full was lost
// with exit status 0 (agebloom-replay, agebloom-plan, dedup_fwd).
// check_stdout_at_exit() registers a handler that flushes standard output
// (stdio and std::cout) when the program exits and, if that fails or an
// earlier write failed, says so on standard error and ends with status 1.
// A caller that already reported a failed write clears the error flag
// (clearerr(stdout)) so it is not said twice. The status is 1 even where the
// run was already ending with another (a usage error's 2): both messages are
// printed.
//
// A program started with standard output (or input, or error) closed, as
// `tool >&-` does, would hand that descriptor to the first file it opens,
// and its printf()s would land in that file (agebloom-lab's headline lines
// were written into its CSV). check_stdout_at_exit() first puts /dev/null,
// read-only, on each of descriptors 0-2 that is closed: reads see an end of
// file and writes fail, so a closed standard output is still said at exit.
#pragma once

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include <fcntl.h>
#include <unistd.h>

namespace agebloom::dedup {

// The exit handler and the name it reports under (one per process).
namespace detail {
inline const char*& stdout_tool() {
  static const char* name = "";
  return name;
}
inline void flush_stdout_or_fail() {
  std::cout.flush();
  errno = 0;
  const bool flush_failed = std::fflush(stdout) != 0;
  const int err = flush_failed ? errno : 0;  // an earlier write's errno is gone: no reason is better than a wrong one
  if (!flush_failed && !std::ferror(stdout) && std::cout.good()) return;
  std::fprintf(stderr, "%s: cannot write to standard output%s%s\n", stdout_tool(), err ? ": " : "",
               err ? std::strerror(err) : "");
  std::_Exit(1);  // inside exit(): the other handlers would flush the same stream again
}
}  // namespace detail

// Registers the exit handler for program `tool` (its messages' prefix), after
// filling any of descriptors 0-2 that is closed. Call it first in main():
// handlers run in reverse, so it runs last, and no file is opened before it.
inline void check_stdout_at_exit(const char* tool) {
  detail::stdout_tool() = tool;
  // open() takes the lowest free descriptor: in order, each closed one of
  // 0-2 is the one it fills.
  for (int fd = 0; fd <= 2; ++fd)
    if (fcntl(fd, F_GETFD) == -1 && errno == EBADF) {
      const int got = open("/dev/null", O_RDONLY);
      if (got != fd && got >= 0) close(got);
    }
  std::atexit(detail::flush_stdout_or_fail);
}

}  // namespace agebloom::dedup
