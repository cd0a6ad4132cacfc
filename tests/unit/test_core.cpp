#include <unistd.h>

#include <algorithm>
#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include "core/atomic_file.hpp"
#include "core/fast_math.hpp"
#include "core/format.hpp"
#include "core/multiple_testing.hpp"
#include "core/read_file.hpp"
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
  CHECK(read_file(dir / "sub" / "a.txt").bytes == "second");
  std::size_t files = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir / "sub")) ++files;
  CHECK(files == 1);
  fs::remove_all(dir);
}

TEST_CASE("read_file gives the bytes or says what stopped it", "[unit][core]") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("calbench_read_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  // Bytes as they are: a NUL, a CR LF, no final newline, and more than one read's buffer.
  std::string content("a\0b\r\n", 5);
  content += std::string(200000, 'x');
  write_file_atomically(dir / "bytes.bin", content);
  const FileBytes whole = read_file(dir / "bytes.bin");
  CHECK(whole);
  CHECK(whole.bytes == content);
  write_file_atomically(dir / "empty.txt", "");
  CHECK(read_file(dir / "empty.txt"));
  const FileBytes missing = read_file(dir / "missing.txt");
  CHECK(!missing);
  CHECK(missing.failure == FileBytes::Failure::open);
  CHECK(missing.error == std::errc::no_such_file_or_directory);
  const FileBytes directory = read_file(dir);
  CHECK(directory.failure == FileBytes::Failure::open);
  CHECK(directory.error == std::errc::is_a_directory);
  CHECK(directory.bytes.empty());
  fs::remove_all(dir);
}

namespace {

// |a - ref| in units of the last place of ref (ref finite and non-zero).
double ulp_error(double a, double ref) {
  if (a == ref) return 0.0;
  const double ulp = std::nextafter(std::fabs(ref), INFINITY) - std::fabs(ref);
  return std::fabs(a - ref) / ulp;
}

// Checks fast::log_bulk / exp_bulk against glibc on xs, and bit for bit against the scalar
// fast::log / exp (the bulk functions may run an AVX2 clone). Returns the largest ulp error.
template <class Bulk, class Scalar, class Ref>
double check_fast(const std::vector<double>& xs, Bulk bulk, Scalar scalar, Ref ref) {
  std::vector<double> out(xs.size());
  bulk(xs.data(), out.data(), xs.size());
  // In place (the softmax does this) must give the same bits, here and on a short block with
  // one element that needs the fallback.
  std::vector<double> in_place(xs);
  bulk(in_place.data(), in_place.data(), in_place.size());
  REQUIRE(std::memcmp(in_place.data(), out.data(), out.size() * sizeof(double)) == 0);
  for (std::size_t start = 0; start + 7 < xs.size(); start += xs.size() / 3) {
    std::vector<double> block(xs.begin() + static_cast<std::ptrdiff_t>(start),
                              xs.begin() + static_cast<std::ptrdiff_t>(start + 7));
    block[3] = xs.back();  // the last of the special cases, handled by the fallback
    const std::vector<double> block_in(block);
    bulk(block.data(), block.data(), block.size());
    for (std::size_t i = 0; i < block.size(); ++i)
      REQUIRE(std::bit_cast<std::uint64_t>(block[i]) ==
              std::bit_cast<std::uint64_t>(scalar(block_in[i])));
  }
  double worst = 0.0;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const double expected = ref(xs[i]);
    const double scalar_value = scalar(xs[i]);
    INFO("x = " << xs[i]);
    if (std::isnan(expected)) {
      REQUIRE(std::isnan(out[i]));
      continue;
    }
    REQUIRE(std::bit_cast<std::uint64_t>(out[i]) == std::bit_cast<std::uint64_t>(scalar_value));
    if (std::isinf(expected) || expected == 0.0) {
      REQUIRE(out[i] == expected);
      continue;
    }
    worst = std::max(worst, ulp_error(out[i], expected));
  }
  return worst;
}

}  // namespace

TEST_CASE("fast::log is within 1 ulp of std::log", "[unit][core]") {
  std::vector<double> xs;
  // Dense near 1, where log x ~ x - 1 and cancellation would show, and across the reduction
  // boundaries sqrt(2)/2 and sqrt(2).
  for (int i = 0; i <= 200000; ++i) xs.push_back(0.5 + 1.5 * i / 200000.0);
  for (int i = -2000; i <= 2000; ++i) xs.push_back(1.0 + i * 0x1p-40);
  // Random points over the whole normal range, and the special cases the fallback handles.
  Engine engine = make_engine({7, 0, 0, Purpose::sample});
  for (int i = 0; i < 1000000; ++i) {
    const double e = std::floor(uniform_open01(engine) * 2046.0) - 1022.0;
    xs.push_back(std::ldexp(1.0 + uniform_open01(engine), static_cast<int>(e)));
  }
  for (double x :
       std::initializer_list<double>{0x1p-1022, 0x1p-1074, 1e-310, 0.0, -0.0, -1.0, 1.0, 2.0, 0.5,
                                     INFINITY, NAN, 0x1.fffffffffffffp1023, 1e-320})
    xs.push_back(x);
  const double worst = check_fast(
      xs, fast::log_bulk, [](double x) { return fast::log(x); },
      [](double x) { return std::log(x); });
  CHECK(worst <= 1.0);
  CHECK(fast::log(1.0) == 0.0);
}

TEST_CASE("fast::exp is within 1 ulp of std::exp", "[unit][core]") {
  std::vector<double> xs;
  for (int i = 0; i <= 200000; ++i) xs.push_back(-1.0 + 2.0 * i / 200000.0);
  // Around the reduction boundaries x = (k + 1/2) ln 2.
  for (int k = -20; k <= 20; ++k)
    for (int i = -50; i <= 50; ++i) xs.push_back((k + 0.5) * 0.6931471805599453 + i * 1e-15);
  Engine engine = make_engine({8, 0, 0, Purpose::sample});
  for (int i = 0; i < 1000000; ++i) xs.push_back(-708.0 + 1417.0 * uniform_open01(engine));
  for (int i = 0; i < 1000; ++i) xs.push_back(-760.0 + 60.0 * uniform_open01(engine));  // fallback
  for (double x : std::initializer_list<double>{0.0, -0.0, -708.0, 709.0, 709.5, 710.0, -745.5,
                                                -800.0, INFINITY, -INFINITY, NAN, 1e-300, -800.0})
    xs.push_back(x);
  const double worst = check_fast(
      xs, fast::exp_bulk, [](double x) { return fast::exp(x); },
      [](double x) { return std::exp(x); });
  CHECK(worst <= 1.0);
  CHECK(fast::exp(0.0) == 1.0);
  // exp_bulk_in_range (no range test; an AVX-512 clone besides AVX2's) on its domain: the same
  // bits as the scalar function.
  std::vector<double> in_range;
  for (const double x : xs)
    if (x >= -708.0 && x <= 709.0) in_range.push_back(x);
  std::vector<double> out(in_range.size());
  fast::exp_bulk_in_range(in_range.data(), out.data(), in_range.size());
  for (std::size_t i = 0; i < in_range.size(); ++i) {
    INFO("x = " << in_range[i]);
    REQUIRE(std::bit_cast<std::uint64_t>(out[i]) ==
            std::bit_cast<std::uint64_t>(fast::exp(in_range[i])));
  }
}

TEST_CASE("engine lanes: each lane is xoshiro256++ from four parent outputs", "[unit][core]") {
  // Lane l starts from the parent's outputs 4l .. 4l + 3 and steps as the scalar engine does;
  // fill interleaves the lanes.
  Engine parent = make_engine({9, 1, 2, Purpose::sample});
  Engine copy = make_engine({9, 1, 2, Purpose::sample});  // the same stream, drawn separately
  EngineLanes lanes(parent);
  std::vector<Engine> scalar;
  for (std::size_t l = 0; l < EngineLanes::kLanes; ++l) {
    const std::uint64_t state[4] = {copy(), copy(), copy(), copy()};
    scalar.emplace_back(state);
  }
  REQUIRE(parent == copy);  // the lanes took exactly four outputs each
  constexpr std::size_t L = EngineLanes::kLanes;
  std::vector<std::uint64_t> words(L * 250);
  lanes.fill(words.data(), L * 100);  // two calls: the state carries over
  lanes.fill(words.data() + L * 100, L * 150);
  for (std::size_t t = 0; t < 250; ++t)
    for (std::size_t l = 0; l < L; ++l) REQUIRE(words[L * t + l] == scalar[l]());
}

TEST_CASE("fast::sum adds in four interleaved accumulators", "[unit][core]") {
  // Exact where every partial sum is (small integers), and in its stated order otherwise.
  std::vector<double> x(13);
  for (std::size_t n = 0; n <= x.size(); ++n) {
    for (std::size_t i = 0; i < n; ++i) x[i] = static_cast<double>(i * i) - 7.0;
    double exact = 0.0;
    for (std::size_t i = 0; i < n; ++i) exact += x[i];
    REQUIRE(fast::sum(x.data(), n) == exact);
  }
  const double y[6] = {1.0, 1e-16, 1e-16, 1e-16, 1e-16, -1.0};
  // (1 + 1e-16 + (-1)) + 1e-16 + 1e-16 + 1e-16 by accumulator: a0 = 1 + 1e-16 (= 1),
  // a1 = 1e-16 - 1, a2 = a3 = 1e-16.
  const double a0 = 1.0 + 1e-16, a1 = 1e-16 + -1.0;
  CHECK(fast::sum(y, 6) == (a0 + a1) + (1e-16 + 1e-16));
}

TEST_CASE("fast::max equals std::max_element's value", "[unit][core]") {
  Engine engine = make_engine({21, 0, 0, Purpose::sample});
  for (std::size_t n = 1; n <= 40; ++n) {
    std::vector<double> x(n);
    for (double& v : x) v = std::log(uniform_open01(engine)) * 100.0;
    REQUIRE(fast::max(x.data(), n) == *std::max_element(x.begin(), x.end()));
    x[n - 1] = 1.0;  // the largest in the tail
    REQUIRE(fast::max(x.data(), n) == 1.0);
  }
}

TEST_CASE("Holm's adjusted p-values and the two-sided normal p-value", "[unit][core]") {
  // By hand (Holm 1979): sorted 0.005, 0.01, 0.03, 0.04 times 4, 3, 2, 1 is 0.02, 0.03, 0.06,
  // 0.04, made non-decreasing: 0.02, 0.03, 0.06, 0.06; R's p.adjust(c(0.01, 0.04, 0.03, 0.005),
  // "holm") gives 0.03 0.06 0.06 0.02.
  const std::vector<double> p = {0.01, 0.04, 0.03, 0.005};
  const auto adjusted = calbench::holm_adjusted(p);
  REQUIRE(adjusted.size() == 4);
  CHECK(adjusted[0] == Approx(0.03).epsilon(1e-15));
  CHECK(adjusted[1] == Approx(0.06).epsilon(1e-15));
  CHECK(adjusted[2] == Approx(0.06).epsilon(1e-15));
  CHECK(adjusted[3] == Approx(0.02).epsilon(1e-15));
  CHECK(calbench::holm_adjusted(std::vector<double>{0.5, 0.9}) == std::vector<double>{1.0, 1.0});
  CHECK(calbench::holm_adjusted(std::vector<double>{}).empty());
  // The 97.5% normal quantile gives 0.05; z = 0 gives 1; the sign does not matter.
  CHECK(calbench::two_sided_normal_p(1.959963984540054) == Approx(0.05).epsilon(1e-12));
  CHECK(calbench::two_sided_normal_p(-1.959963984540054) == Approx(0.05).epsilon(1e-12));
  CHECK(calbench::two_sided_normal_p(0.0) == 1.0);
}
