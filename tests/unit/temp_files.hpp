#pragma once
// Test helpers for runs that write files: a temporary directory and a file's bytes.
#include <atomic>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <system_error>

#include "core/read_file.hpp"

namespace calbench::testing {

// A fresh directory under the system temp directory, removed with everything in it.
struct TempDir {
  std::filesystem::path path;
  TempDir() {
    static std::atomic<int> counter{0};
    path = std::filesystem::temp_directory_path() /
           ("calbench_test_" + std::to_string(std::random_device{}()) + "_" +
            std::to_string(counter++));
    std::filesystem::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
};

// The file's bytes; empty when it cannot be read (the checks that follow then fail).
inline std::string read_text(const std::filesystem::path& file) {
  return read_file(file).bytes;
}

}  // namespace calbench::testing
