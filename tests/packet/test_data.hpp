// Locating the shared real captures (/work/shared/data) from tests. The build
// passes the directory in AGEBLOOM_DATA_DIR; tests skip when it is absent.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace agebloom::testdata {

// The data directory, or empty when not configured or not present.
inline std::filesystem::path data_dir() {
  const char* env = std::getenv("AGEBLOOM_DATA_DIR");
  if (env == nullptr || *env == '\0') return {};
  std::filesystem::path p(env);
  std::error_code ec;
  if (!std::filesystem::is_directory(p / "pcap", ec)) return {};
  return p;
}

// One row of pcap_manifest.csv, keyed by its `file` column (e.g.
// "pcap/http/zeek_bro.org.pcap"), fields by column name.
using ManifestRow = std::map<std::string, std::string>;

inline std::map<std::string, ManifestRow> read_manifest(const std::filesystem::path& dir) {
  std::map<std::string, ManifestRow> rows;
  std::ifstream in(dir / "pcap_manifest.csv");
  std::string line;
  std::vector<std::string> header;
  auto split = [](const std::string& s) {
    std::vector<std::string> out;
    std::stringstream ss(s);
    std::string field;
    while (std::getline(ss, field, ',')) out.push_back(field);
    return out;
  };
  if (!std::getline(in, line)) return rows;
  header = split(line);
  while (std::getline(in, line)) {
    const std::vector<std::string> fields = split(line);
    if (fields.size() != header.size()) continue;
    ManifestRow row;
    for (std::size_t i = 0; i < header.size(); ++i) row[header[i]] = fields[i];
    rows[fields[0]] = std::move(row);
  }
  return rows;
}

inline uint64_t manifest_u64(const ManifestRow& row, const std::string& column) {
  auto it = row.find(column);
  return it == row.end() ? UINT64_MAX : std::strtoull(it->second.c_str(), nullptr, 10);
}

}  // namespace agebloom::testdata
