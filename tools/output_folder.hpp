// Where a tool's output file would be made, and why it could not be, checked
// before any work so that a wrong path costs nothing (agebloom-replay's
// outputs, its --plot).
#pragma once

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace agebloom::tools {

// The folder a new file `path` goes into: "." for a bare name, "/" at the root.
inline std::string folder_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
}

// Why a new file cannot be made in `folder` ("cannot write into F: why"), or
// "" when it can. A file where the folder should be is said as such: access()
// alone reports it as a permission (EACCES: a file has no search right).
inline std::string folder_refuses_files(const std::string& folder) {
  struct stat st;
  if (stat(folder.c_str(), &st) != 0) return "cannot write into " + folder + ": " + std::strerror(errno);
  if (!S_ISDIR(st.st_mode)) return "cannot write into " + folder + ": it is not a folder";
  if (access(folder.c_str(), W_OK | X_OK) != 0) return "cannot write into " + folder + ": " + std::strerror(errno);
  return {};
}

}  // namespace agebloom::tools
