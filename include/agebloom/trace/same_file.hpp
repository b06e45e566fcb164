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

// Two files that exist are the same file when their device and inode are; a
// path that does not exist yet is compared by its canonical spelling (links
// in the folders above it followed), so two outputs spelled differently still
// meet. "-" (standard input or output) is no file.
inline bool same_file(const std::string& a, const std::string& b) {
  if (a == "-" || b == "-") return a == b;
  if (a == b) return true;
  struct stat sa, sb;
  const bool a_exists = stat(a.c_str(), &sa) == 0, b_exists = stat(b.c_str(), &sb) == 0;
  if (a_exists && b_exists) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  if (a_exists != b_exists) return false;
  namespace fs = std::filesystem;
  std::error_code ea, eb;
  const fs::path ca = fs::weakly_canonical(fs::absolute(a, ea), ea);
  const fs::path cb = fs::weakly_canonical(fs::absolute(b, eb), eb);
  return !ea && !eb && ca == cb;
}

}  // namespace agebloom::trace
