// agebloom-replay's progress line: drawn on stderr when that is a terminal
// (run here under a pseudo-terminal, as a person would see it), never when
// it is a pipe or a file, never with --no-progress; percent of the file when
// the trace is a file, packets only when it comes through a pipe.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <pty.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "../common/shell.hpp"
#include "../common/test_paths.hpp"
#include "agebloom/trace/pcap_trace.hpp"
#include "replay_progress.hpp"

namespace {

using agebloom::testing::trace;

struct TtyRun {
  int code = -1;
  std::string tty;  // what the terminal showed: the tool's stderr
};

// Runs the replay with `args`, its stderr on a pseudo-terminal and its stdout
// to /dev/null. With `slow_input`, the trace comes through a pipe on stdin
// in 16 parts 100 ms apart (a capture still being written, or a slow disk).
TtyRun run_on_tty(const std::vector<std::string>& args, const std::string& slow_input = "") {
  TtyRun r;
  int master = -1, slave = -1;
  if (openpty(&master, &slave, nullptr, nullptr, nullptr) != 0) return r;
  int in[2] = {-1, -1};
  if (!slow_input.empty() && pipe(in) != 0) return r;
  std::vector<char*> argv;
  std::string exe = AGEBLOOM_REPLAY;
  argv.push_back(exe.data());
  std::vector<std::string> copy = args;
  for (std::string& a : copy) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    const int null = open("/dev/null", O_RDWR);
    dup2(slow_input.empty() ? null : in[0], STDIN_FILENO);
    dup2(null, STDOUT_FILENO);
    dup2(slave, STDERR_FILENO);
    // Only the tool's own ends: a write end left open here would never let its stdin end.
    for (int fd : {master, slave, in[0], in[1], null})
      if (fd > STDERR_FILENO) close(fd);
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(slave);
  if (!slow_input.empty()) {
    close(in[0]);
    signal(SIGPIPE, SIG_IGN);
    const size_t parts = 16;
    for (size_t i = 0; i < parts; ++i) {
      const size_t from = slow_input.size() * i / parts, to = slow_input.size() * (i + 1) / parts;
      for (size_t at = from; at < to;) {
        const ssize_t n = write(in[1], slow_input.data() + at, to - at);
        if (n <= 0) break;
        at += static_cast<size_t>(n);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    close(in[1]);
  }
  // Until the tool's end closes the terminal's last slave (EIO).
  char buf[4096];
  ssize_t n;
  while ((n = read(master, buf, sizeof buf)) > 0) r.tty.append(buf, static_cast<size_t>(n));
  close(master);
  int status = 0;
  waitpid(pid, &status, 0);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

size_t count(const std::string& s, const std::string& what) {
  size_t c = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++c;
  return c;
}

}  // namespace

// A file: the share of it read, packets/s and, once done, the time taken; the
// line redrawn from its start ('\r') and ended by a newline.
TEST(ReplayProgress, OnATerminalShowsPercentOfTheFileAndRate) {
  const TtyRun r = run_on_tty({trace("pcapplusplus_example.pcap"), "--seed", "1", "--key", "flow"});
  ASSERT_EQ(r.code, 0) << r.tty;
  EXPECT_NE(r.tty.find("\r100.0% of 3.6 MiB, 4631 packets, "), std::string::npos) << r.tty;
  EXPECT_NE(r.tty.find(" packets/s, done in "), std::string::npos) << r.tty;
  EXPECT_NE(r.tty.find(" s\033[K\r\n"), std::string::npos) << r.tty;  // the line ends (the terminal adds \r)
  // The report is on stdout, not mixed into the terminal's progress.
  EXPECT_EQ(r.tty.find("suppressed"), std::string::npos) << r.tty;
}

TEST(ReplayProgress, NoProgressTurnsItOffOnATerminal) {
  const TtyRun r = run_on_tty({trace("pcapplusplus_example.pcap"), "--seed", "1", "--no-progress"});
  ASSERT_EQ(r.code, 0) << r.tty;
  EXPECT_EQ(r.tty, "");
}

// stderr to a file (a log, a CI job, the other tests): no progress at all.
TEST(ReplayProgress, NothingWhenStderrIsNotATerminal) {
  const std::string err = ::testing::TempDir() + "replay-progress-stderr.txt";
  for (const char* extra : {"", " --json"}) {
    const auto r = agebloom::testing::shell(std::string(AGEBLOOM_REPLAY) + " " + trace("pcapplusplus_example.pcap") +
                                            " --seed 1" + extra + " 2>" + err);
    ASSERT_EQ(r.code, 0) << r.out;
    std::ifstream in(err);
    const std::string text((std::istreambuf_iterator<char>(in)), {});
    EXPECT_EQ(text.find('\r'), std::string::npos) << text;
    EXPECT_EQ(text.find("packets/s"), std::string::npos) << text;
    EXPECT_EQ(r.out.find('\r'), std::string::npos) << r.out;
  }
}

// Through a pipe the size is unknown: packets and packets/s only, redrawn in
// place while the packets come (the clock is read every 1024 packets, the
// line drawn at most five times a second).
TEST(ReplayProgress, APipeShowsPacketsOnlyRedrawnInPlace) {
  std::ifstream in(trace("pcapplusplus_example.pcap"), std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), {});
  const auto start = std::chrono::steady_clock::now();
  const TtyRun r = run_on_tty({"-", "--seed", "1", "--key", "flow"}, bytes);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(r.code, 0) << r.tty;
  EXPECT_EQ(r.tty.find('%'), std::string::npos) << r.tty;
  EXPECT_NE(r.tty.find("\r4631 packets, "), std::string::npos) << r.tty;
  // 1.6 s of input: at least two redraws before the last line, and no more
  // than the five a second allowed (plus the last).
  const size_t draws = count(r.tty, " packets/s");
  EXPECT_GE(draws, 3u) << r.tty;
  EXPECT_LE(draws, static_cast<size_t>(seconds * 5) + 2) << r.tty;
  EXPECT_EQ(count(r.tty, "\n"), 1u) << r.tty;  // one line, redrawn, ended once
}

// The figures themselves: share of the file, rate, time left at that rate.
TEST(ReplayProgress, LineFigures) {
  using agebloom::tools::progress_line;
  EXPECT_EQ(progress_line(500000, 2.0, 25 << 20, 100 << 20, false),
            " 25.0% of 100.0 MiB, 500000 packets, 250.0k packets/s, ETA 0:06");
  EXPECT_EQ(progress_line(3000000, 1.0, uint64_t{1} << 20, uint64_t{4000} << 20, false),
            "  0.0% of 3.91 GiB, 3000000 packets, 3.00M packets/s, ETA 1:06:39");
  EXPECT_EQ(progress_line(42, 0.5, 0, 0, false), "42 packets, 84 packets/s");
  EXPECT_EQ(progress_line(4631, 0.25, 100, 3000, true), "100.0% of 2.9 KiB, 4631 packets, 18.5k packets/s, done in 0.25 s");
  // Nothing read yet: no ETA rather than a division by zero.
  EXPECT_EQ(progress_line(0, 0.0, 0, 1000, false), "  0.0% of 1000 bytes, 0 packets, 0 packets/s");
}

// The share of the file: the offset of the descriptor the reader's libpcap
// reads through, found around PcapReader::open, grows as packets are read
// and reaches the file's size at its end.
TEST(ReplayProgress, TraceOffsetFollowsTheReader) {
  const std::string path = trace("pcapplusplus_example.pcap");
  agebloom::tools::TraceOffset offset(path);
  auto opened = agebloom::trace::PcapReader::open(path);
  ASSERT_TRUE(opened.ok()) << opened.error;
  offset.locate();
  ASSERT_TRUE(offset.known());
  EXPECT_EQ(offset.size(), 3812643u);
  agebloom::trace::Packet pkt;
  for (int i = 0; i < 100; ++i) ASSERT_EQ(opened.reader.next(pkt), agebloom::trace::PcapReader::Status::ok);
  const uint64_t early = offset.offset();
  EXPECT_GT(early, 0u);
  EXPECT_LT(early, offset.size() / 4);  // 100 of 4631 packets, and one stdio buffer ahead at most
  while (opened.reader.next(pkt) == agebloom::trace::PcapReader::Status::ok) {
  }
  EXPECT_EQ(offset.offset(), offset.size());
  // Standard input that is not a file (here a pipe): no size, packets only.
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const int saved = dup(STDIN_FILENO);
  dup2(fds[0], STDIN_FILENO);
  agebloom::tools::TraceOffset piped("-");
  piped.locate();
  EXPECT_FALSE(piped.known());
  dup2(saved, STDIN_FILENO);
  for (int fd : {saved, fds[0], fds[1]}) close(fd);
  // A reader that opened something else (the file was not where expected):
  // no size rather than another file's offset.
  agebloom::tools::TraceOffset elsewhere(path);
  const int other = open("/dev/null", O_RDONLY);
  elsewhere.locate();
  EXPECT_FALSE(elsewhere.known());
  close(other);
}
