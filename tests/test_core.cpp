#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "core/atomic_file.hpp"
#include "core/format.hpp"
#include "core/rng.hpp"
#include "core/running_stats.hpp"

using namespace calbench;

TEST_CASE("running statistics merge to the sequential result", "[unit][core]") {
  RunningStats all, left, right;
  for (int i = 0; i < 100; ++i) {
    const double x = std::sin(i * 0.37) * 3.0 + i * 0.01;
    all.add(x);
    (i < 37 ? left : right).add(x);
  }
  left.merge(right);
  CHECK(left.count() == 100);
  CHECK(left.mean() == Approx(all.mean()).epsilon(1e-14));
  CHECK(left.variance() == Approx(all.variance()).epsilon(1e-12));
  // Known answer: 1..5 has mean 3 and sample variance 2.5.
  RunningStats s;
  for (int i = 1; i <= 5; ++i) s.add(i);
  CHECK(s.mean() == 3.0);
  CHECK(s.variance() == Approx(2.5).epsilon(1e-15));
  CHECK(s.standard_error() == Approx(std::sqrt(2.5 / 5)).epsilon(1e-15));
}

TEST_CASE("streams are keyed by what they compute", "[unit][core]") {
  Engine a = make_engine({7, 1, 2, Purpose::sample});
  Engine b = make_engine({7, 1, 2, Purpose::sample});
  CHECK(a() == b());
  const auto first = make_engine({7, 1, 2, Purpose::sample})();
  CHECK(make_engine({7, 1, 3, Purpose::sample})() != first);
  CHECK(make_engine({7, 2, 2, Purpose::sample})() != first);
  CHECK(make_engine({8, 1, 2, Purpose::sample})() != first);
  CHECK(make_engine({7, 1, 2, Purpose::truth})() != first);
  // The key's high words matter too.
  CHECK(make_engine({7 + (1ull << 32), 1, 2, Purpose::sample})() != first);
}

TEST_CASE("doubles are formatted in shortest round-trip form", "[unit][core]") {
  CHECK(format_double(0.7) == "0.7");
  CHECK(format_double(0.1 + 0.2) == "0.30000000000000004");
  CHECK(format_double(1e-300) == "1e-300");
  CHECK(format_double(std::nan("")) == "nan");
  CHECK(format_hash(0xabcull) == "0000000000000abc");
}

TEST_CASE("atomic writes leave the whole file and no temporary", "[unit][core]") {
  namespace fs = std::filesystem;
  const fs::path dir =
      fs::temp_directory_path() / ("calbench_atomic_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  write_file_atomically(dir / "sub" / "a.txt", "first");
  write_file_atomically(dir / "sub" / "a.txt", "second");
  std::ifstream in(dir / "sub" / "a.txt");
  std::string content((std::istreambuf_iterator<char>(in)), {});
  CHECK(content == "second");
  std::size_t files = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir / "sub")) ++files;
  CHECK(files == 1);
  fs::remove_all(dir);
}
