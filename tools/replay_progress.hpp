// agebloom-replay's progress line: share of the capture read, packets per
// second and time left, redrawn in place on stderr while a long trace
// replays. Only for a person watching: it is off unless stderr is a terminal,
// so logs, pipes and the tests' captured output never see it.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace agebloom::tools {

// Where the trace is read from, found around PcapReader::open: the reader
// keeps its libpcap handle (and so its FILE) private, but the kernel's offset
// of the descriptor libpcap reads through is how far the file has been read
// (ahead by at most one stdio buffer), whatever the format (pcap or pcapng).
class TraceOffset {
 public:
  // Before the reader opens `path`: the descriptor the open will get is the
  // lowest free one (POSIX), unless the trace is standard input ("-").
  explicit TraceOffset(const std::string& path) : path_(path) {
    if (path == "-") {
      expected_fd_ = STDIN_FILENO;
      return;
    }
    const int probe = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (probe >= 0) {
      expected_fd_ = probe;
      ::close(probe);
    }
  }

  // After the reader opened the trace: takes the descriptor if it is the
  // trace (the same file, a regular one, so it has a size); otherwise only
  // packets are shown.
  void locate() {
    struct stat by_fd, by_name;
    if (expected_fd_ < 0 || fstat(expected_fd_, &by_fd) != 0 || !S_ISREG(by_fd.st_mode)) return;
    if (path_ != "-" && (stat(path_.c_str(), &by_name) != 0 || by_name.st_dev != by_fd.st_dev ||
                         by_name.st_ino != by_fd.st_ino))
      return;
    fd_ = expected_fd_;
    size_ = static_cast<uint64_t>(by_fd.st_size);
  }

  bool known() const noexcept { return fd_ >= 0 && size_ > 0; }
  uint64_t size() const noexcept { return size_; }
  uint64_t offset() const noexcept {
    const off_t at = lseek(fd_, 0, SEEK_CUR);
    return at < 0 ? 0 : static_cast<uint64_t>(at) < size_ ? static_cast<uint64_t>(at) : size_;
  }

 private:
  std::string path_;
  int expected_fd_ = -1;
  int fd_ = -1;
  uint64_t size_ = 0;
};

// The line itself, without the '\r' that starts each redraw: `offset` bytes
// of a `size`-byte trace read (size 0: unknown, a pipe), `packets` in
// `elapsed` seconds; `done` after the last packet. Apart from Progress so its
// figures can be checked without a terminal or a clock.
inline std::string progress_line(uint64_t packets, double elapsed, uint64_t offset, uint64_t size, bool done) {
  auto si = [](double v) {
    char buf[32];
    if (v >= 1e9) std::snprintf(buf, sizeof buf, "%.2fG", v / 1e9);
    else if (v >= 1e6) std::snprintf(buf, sizeof buf, "%.2fM", v / 1e6);
    else if (v >= 1e3) std::snprintf(buf, sizeof buf, "%.1fk", v / 1e3);
    else std::snprintf(buf, sizeof buf, "%.0f", v);
    return std::string(buf);
  };
  auto bytes = [](uint64_t b) {
    char buf[32];
    if (b >= (uint64_t{1} << 30)) std::snprintf(buf, sizeof buf, "%.2f GiB", b / 1073741824.0);
    else if (b >= (uint64_t{1} << 20)) std::snprintf(buf, sizeof buf, "%.1f MiB", b / 1048576.0);
    else if (b >= 1024) std::snprintf(buf, sizeof buf, "%.1f KiB", b / 1024.0);
    else std::snprintf(buf, sizeof buf, "%llu bytes", static_cast<unsigned long long>(b));
    return std::string(buf);
  };
  std::string line;
  char buf[96];
  double share = -1;
  if (size > 0) {
    share = static_cast<double>(done ? size : offset < size ? offset : size) / static_cast<double>(size);
    std::snprintf(buf, sizeof buf, "%5.1f%% of %s, ", 100.0 * share, bytes(size).c_str());
    line += buf;
  }
  std::snprintf(buf, sizeof buf, "%llu packets, %s packets/s", static_cast<unsigned long long>(packets),
                si(elapsed > 0 ? packets / elapsed : 0.0).c_str());
  line += buf;
  if (done) {
    std::snprintf(buf, sizeof buf, ", done in %.2f s", elapsed);
    line += buf;
  } else if (share > 0) {
    // At the rate so far: what is left of the file takes its share of the time.
    const uint64_t left = static_cast<uint64_t>(elapsed * (1 - share) / share + 0.5);
    if (left >= 3600)
      std::snprintf(buf, sizeof buf, ", ETA %llu:%02llu:%02llu", static_cast<unsigned long long>(left / 3600),
                    static_cast<unsigned long long>(left / 60 % 60), static_cast<unsigned long long>(left % 60));
    else
      std::snprintf(buf, sizeof buf, ", ETA %llu:%02llu", static_cast<unsigned long long>(left / 60),
                    static_cast<unsigned long long>(left % 60));
    line += buf;
  }
  return line;
}

class Progress {
 public:
  // The clock is read once per kEvery packets, so a replay at tens of
  // millions of packets per second pays a few thousand clock reads a second.
  static constexpr uint64_t kEvery = 1024;
  static constexpr std::chrono::milliseconds kRedraw{200};  // five redraws a second at most

  // `files`: the traces being read (several are merged into one stream), in
  // the vector the caller keeps while this draws.
  Progress(bool on, const std::vector<TraceOffset>& files) : on_(on), files_(files) {}

  // Once per packet, with the packets read so far.
  void tick(uint64_t packets) {
    if (!on_ || packets % kEvery != 0) return;
    const auto now = std::chrono::steady_clock::now();
    if (now - last_ < kRedraw) return;
    last_ = now;
    draw(packets, now, false);
  }

  // After the last packet: the final figures, and the line ended so that
  // what is printed next starts on its own line.
  void finish(uint64_t packets) {
    if (!on_) return;
    draw(packets, std::chrono::steady_clock::now(), true);
    std::fputc('\n', stderr);
    std::fflush(stderr);
  }

 private:
  void draw(uint64_t packets, std::chrono::steady_clock::time_point now, bool done) {
    const double elapsed = std::chrono::duration<double>(now - start_).count();
    // The share of all the files together; a file of unknown size (a pipe)
    // leaves the whole share unknown.
    uint64_t offset = 0, size = 0;
    bool sized = !files_.empty();
    for (const TraceOffset& f : files_) {
      sized = sized && f.known();
      if (!sized) break;
      offset += f.offset();
      size += f.size();
    }
    // "\033[K" erases what a longer earlier line left to the right.
    std::fprintf(stderr, "\r%s\033[K",
                 progress_line(packets, elapsed, sized ? offset : 0, sized ? size : 0, done).c_str());
    std::fflush(stderr);
  }

  bool on_;
  const std::vector<TraceOffset>& files_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last_ = start_;
};

}  // namespace agebloom::tools
