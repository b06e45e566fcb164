// Report (report.hpp): partial files renamed into place once whole, and
// removed on any other ending, a stopping signal included.
#include "report.hpp"

#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <cstring>
#include <tuple>
#include <utility>

namespace agebloom::lab {

namespace {

// The partial files open now, for the signal handler: fixed slots, filled
// before they are marked, so the handler reads only whole paths and calls
// only unlink(), which is async-signal-safe.
constexpr const char* kPartial = ".partial";  // what a result is named until it is whole
constexpr int kSlots = 8;
char g_partial[kSlots][PATH_MAX];
volatile sig_atomic_t g_in_use[kSlots];

void remove_partials_and_stop(int sig) {
  for (int i = 0; i < kSlots; ++i)
    if (g_in_use[i]) unlink(g_partial[i]);
  signal(sig, SIG_DFL);
  raise(sig);  // the status says which signal ended the run, as before
}

int hold(const std::string& path) {
  static bool handlers = false;
  if (!handlers) {
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
      struct sigaction was{};
      // A signal the caller ignores (nohup's SIGHUP) stays ignored.
      if (sigaction(sig, nullptr, &was) == 0 && was.sa_handler != SIG_IGN) signal(sig, remove_partials_and_stop);
    }
    handlers = true;
  }
  if (path.size() >= PATH_MAX) return -1;
  for (int i = 0; i < kSlots; ++i)
    if (!g_in_use[i]) {
      std::memcpy(g_partial[i], path.c_str(), path.size() + 1);
      g_in_use[i] = 1;
      return i;
    }
  return -1;  // more reports open than slots: a signal leaves this one's partial file behind
}

void release(int& slot) {
  if (slot >= 0) g_in_use[slot] = 0;
  slot = -1;
}

// Where a result named `path` goes: through a symbolic link to the file it
// names (a link to a shared results folder stays a link), else `path`.
std::string destination(const std::string& path) {
  struct stat st;
  if (lstat(path.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return path;
  char target[PATH_MAX];
  return realpath(path.c_str(), target) != nullptr ? std::string(target) : path;
}

}  // namespace

Report::Report(const std::string& folder, const std::string& name)
    : csv_path(folder + "/" + name + ".csv"), md_path(folder + "/" + name + ".md"), png_path(folder + "/" + name + ".png"),
      csv_partial_(destination(csv_path) + kPartial), md_partial_(destination(md_path) + kPartial) {
  // Both or neither: a CSV beside a markdown that could not be made would
  // read as a run's result.
  for (auto [file, partial, slot] : {std::tuple{&csv_, &csv_partial_, &csv_slot_}, std::tuple{&md_, &md_partial_, &md_slot_}}) {
    *slot = hold(*partial);
    *file = std::fopen(partial->c_str(), "w");
    if (*file == nullptr) {
      std::fprintf(stderr, "agebloom-lab: cannot write %s: %s\n", partial->c_str(), std::strerror(errno));
      discard();
      return;
    }
  }
}

Report::~Report() { discard(); }

void Report::discard() {
  // Both partial files go, open or closed (after close() renamed them there
  // are none, and removing a missing file does nothing).
  for (auto [file, partial, slot] : {std::tuple{&csv_, &csv_partial_, &csv_slot_}, std::tuple{&md_, &md_partial_, &md_slot_}}) {
    if (*file != nullptr) std::fclose(*file);
    *file = nullptr;
    std::remove(partial->c_str());
    release(*slot);
  }
}

void Report::write(std::FILE* file, const char* fmt, va_list ap) {
  if (file && std::vfprintf(file, fmt, ap) < 0 && !failed_) {
    failed_ = true;
    failed_errno_ = errno;  // the first failure's reason, said at close()
  }
}

void Report::csv(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  write(csv_, fmt, ap);
  va_end(ap);
}

void Report::md(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  write(md_, fmt, ap);
  va_end(ap);
}

bool Report::close() {
  if (!ok()) return false;
  // Each file closed and said by name: which one the disk refused, and why.
  for (auto [file, path] : {std::pair{&csv_, &csv_path}, std::pair{&md_, &md_path}}) {
    const bool write_failed = failed_ || std::ferror(*file);
    errno = 0;
    const bool close_failed = std::fclose(*file) != 0;
    const int err = close_failed ? errno : failed_errno_;
    *file = nullptr;
    if (write_failed || close_failed) {
      std::fprintf(stderr, "agebloom-lab: cannot write %s%s%s (%s is as it was)\n", path->c_str(), err ? ": " : "",
                   err ? std::strerror(err) : "", path->c_str());
      discard();
      return false;
    }
  }
  // Both whole: into place, the CSV first (the markdown is read as the
  // table of the CSV beside it).
  for (auto [partial, path] : {std::pair{&csv_partial_, &csv_path}, std::pair{&md_partial_, &md_path}}) {
    // The partial file's name less its suffix: the destination the
    // constructor resolved (through a link), not resolved again.
    const std::string target = partial->substr(0, partial->size() - std::strlen(kPartial));
    if (std::rename(partial->c_str(), target.c_str()) != 0) {
      std::fprintf(stderr, "agebloom-lab: cannot put %s in place of %s: %s\n", partial->c_str(), path->c_str(),
                   std::strerror(errno));
      discard();
      return false;
    }
  }
  discard();
  return true;
}

bool Report::publish(const LabOptions& o, const char* script) {
  if (!close()) return false;
  std::printf("wrote %s, %s\n", csv_path.c_str(), md_path.c_str());
  if (!plot(o, script, csv_path, png_path)) {
    struct stat st;
    if (stat(png_path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && std::remove(png_path.c_str()) == 0)
      std::fprintf(stderr, "agebloom-lab: removed the earlier %s: it drew the data this run replaced\n", png_path.c_str());
    return false;
  }
  std::printf("wrote %s\n", png_path.c_str());
  return true;
}

}  // namespace agebloom::lab
