// Whether two paths name one file, however they are spelled: "x.pcap",
// "./x.pcap", an absolute path, a symbolic or a hard link.
//
// A tool that reads a trace and writes captures refuses an output that is
// its input before it opens either: opening a pcap for writing truncates it,
// so comparing the strings alone let `--write ./x.pcap` replace x.pcap with
// its own deduplicated copy.
#pragma once

#include <sys/stat.h>

#include <filesystem>
#include <string>
#include <system_error>

namespace agebloom::trace {

// Where a path leads once its own symbolic links are followed, even to a
// file not made yet (a link to it is where a writer will make it).
inline std::filesystem::path link_target(const std::string& p) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path at = fs::absolute(p, ec);
  for (int hops = 0; hops < 40 && fs::is_symlink(at, ec); ++hops) {
    const fs::path to = fs::read_symlink(at, ec);
    if (ec) break;
    at = to.is_absolute() ? to : at.parent_path() / to;
  }
  return fs::weakly_canonical(at, ec);
}

// Two files that exist are the same file when their device and inode are; a
// path that does not exist yet is compared by where it leads (links in the
// folders above it and its own followed), so two outputs spelled differently,
// or a link to a file not made yet, still meet. The caller decides what "-"
// means (standard input for a trace, a file for an output): here it is a
// file name like any other.
inline bool same_file(const std::string& a, const std::string& b) {
  if (a == b) return true;
  struct stat sa, sb;
  const bool a_exists = stat(a.c_str(), &sa) == 0, b_exists = stat(b.c_str(), &sb) == 0;
  if (a_exists && b_exists) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  if (a_exists != b_exists) return false;
  return link_target(a) == link_target(b);
}

}  // namespace agebloom::trace
