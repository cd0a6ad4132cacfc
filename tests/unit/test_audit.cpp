// The reliability audit of issue #38, the parts a unit test reaches: staging files (N1, N2),
// spreadsheet formulas in CSV fields and labels (N8), the stop request in long loops (N7), and
// rows files that are not regular files (N6), NPY headers read alone (apply's memory pre-flight)
// and progress lines during a long step (fit at K = 3,000 was silent for over a minute). The
// command-line probes are tests/cli/audit.sh.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/read_file.hpp"
#include "core/rng.hpp"
#include "core/sha256.hpp"
#include "core/stop_request.hpp"
#include "core/temporaries.hpp"
#include "data/npy.hpp"
#include "generators/generator.hpp"
#include "leaderboard/leaderboard.hpp"
#include "report/value_format.hpp"
#include "runners/progress.hpp"
#include "temp_files.hpp"

using namespace calbench;
using calbench::testing::TempDir;
namespace fs = std::filesystem;

namespace {

// A pid no process has: a child that has exited and been waited for.
pid_t dead_pid() {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  int status = 0;
  ::waitpid(child, &status, 0);
  return child;
}

// Clears the stop request on every path out of a test.
struct StopGuard {
  StopGuard() { request_stop(SIGINT); }
  ~StopGuard() { clear_stop(); }
  StopGuard(const StopGuard&) = delete;
  StopGuard& operator=(const StopGuard&) = delete;
};

}  // namespace

// N1: the sweep before an atomic write removed every `*.tmp-DIGITS-DIGITS` of a dead pid in the
// directory (a user's notes.tmp-2023-12). Only TARGET.tmp-calbench-PID-XXXXXX of the target
// being written is calbench's.
TEST_CASE("staging names: the target's own, with a pid and six random characters", "[unit][core]") {
  CHECK(staging_owner("m.json.tmp-calbench-123-a1B2c3", "m.json") == pid_t{123});
  CHECK_FALSE(staging_owner("m.json.tmp-calbench-123-a1B2c3", "n.json"));
  CHECK_FALSE(staging_owner("m.json.tmp-calbench-123-a1B2c3", "m"));
  CHECK_FALSE(staging_owner("notes.tmp-2023-12", "notes"));
  CHECK_FALSE(staging_owner("backup.tmp-1999-1", "backup"));
  CHECK_FALSE(staging_owner("m.json.tmp-123-0", "m.json"));
  CHECK_FALSE(staging_owner("m.json.tmp-calbench-123-a1B2c", "m.json"));
  CHECK_FALSE(staging_owner("m.json.tmp-calbench-123-a1B2c3d", "m.json"));
  CHECK_FALSE(staging_owner("m.json.tmp-calbench-x12-a1B2c3", "m.json"));
  CHECK_FALSE(staging_owner("m.json.tmp-calbench-123-a1B.c3", "m.json"));
}

TEST_CASE("an atomic write removes a dead writer's staging file of its target, nothing else",
          "[unit][core]") {
  const TempDir dir;
  const std::string dead = std::to_string(dead_pid());
  const std::vector<std::string> users = {"notes.tmp-2023-12", "backup.tmp-1999-1",
                                          "target.txt.tmp-" + dead + "-1",
                                          "other.txt.tmp-calbench-" + dead + "-abcdef"};
  for (const auto& name : users) std::ofstream(dir.path / name) << "mine";
  const fs::path left = dir.path / ("target.txt.tmp-calbench-" + dead + "-abcdef");
  std::ofstream(left) << "half";
  write_file_atomically(dir.path / "target.txt", "whole");
  CHECK(read_file(dir.path / "target.txt").bytes == "whole");
  for (const auto& name : users) CHECK(fs::exists(dir.path / name));
  CHECK_FALSE(fs::exists(left));
  // The file has the usual mode (0644 less the umask), not the staging file's 0600.
  const mode_t mask = ::umask(022);
  ::umask(mask);
  struct stat st {};
  REQUIRE(::stat((dir.path / "target.txt").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == (0644 & ~mask));
}

// N2: the NPY writer staged at the fixed name TARGET.partial through std::ofstream, which
// follows a symbolic link planted there.
TEST_CASE("an NPY file is never written through a link planted beside it", "[unit][core]") {
  const TempDir dir;
  std::ofstream(dir.path / "victim") << "victim";
  for (const char* suffix : {".partial", ".tmp", ".tmp-calbench-"})
    fs::create_symlink(dir.path / "victim", fs::path(dir.path / "q.npy") += suffix);
  const std::vector<double> values = {0.5, 0.5, 1.0, 0.0};
  write_npy(dir.path / "q.npy", {2, 2}, std::span<const double>(values));
  CHECK(read_file(dir.path / "victim").bytes == "victim");
  CHECK(fs::is_regular_file(fs::symlink_status(dir.path / "q.npy")));
  CHECK(read_npy(dir.path / "q.npy").floats == values);
  std::size_t entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir.path)) ++entries;
  CHECK(entries == 5);  // victim, the three links, q.npy: no staging file left
}

// N8: OWASP's CSV-injection escape, a leading single quote inside quotes; numbers are left
// alone, and a field that only holds a formula character later is not touched.
TEST_CASE("a CSV field a spreadsheet would run as a formula is escaped", "[unit]") {
  CHECK(csv_escape("=HYPERLINK(\"http://x\")") == "\"'=HYPERLINK(\"\"http://x\"\")\"");
  CHECK(csv_escape("+cmd|'/c calc'!A0") == "\"'+cmd|'/c calc'!A0\"");
  CHECK(csv_escape("@SUM(A1)") == "\"'@SUM(A1)\"");
  CHECK(csv_escape("-2+3") == "\"'-2+3\"");
  CHECK(csv_escape("\tx") == "\"'\tx\"");
  CHECK(csv_escape("\rx") == "\"'\rx\"");
  CHECK(csv_escape("-0.5") == "-0.5");
  CHECK(csv_escape("+1e3") == "+1e3");
  CHECK(csv_escape("ece_ew15") == "ece_ew15");
  CHECK(csv_escape("a=b") == "a=b");
  CHECK(csv_escape("a,b") == "\"a,b\"");
  CHECK(csv_field(Value(std::string("=1+1"))) == "\"'=1+1\"");
}

// N6: sha256_file read a FIFO (blocking forever) or /dev/zero (without end) before any check.
TEST_CASE("the SHA-256 of a file that is not regular is refused before reading", "[unit][core]") {
  const TempDir dir;
  const fs::path fifo = dir.path / "rows.fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK_THROWS_WITH(sha256_file(fifo), Catch::Contains("it is a FIFO, not a regular file"));
  CHECK_THROWS_WITH(sha256_file("/dev/zero"), Catch::Contains("not a regular file"));
  CHECK_THROWS_AS(sha256_file(dir.path), InputError);
  std::ofstream(dir.path / "abc") << "abc";
  CHECK(sha256_file(dir.path / "abc") ==
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");  // FIPS 180-2, B.1
}

// N7: a pending stop request ends the long loops within one poll: sampling, the leaderboard's
// bootstrap (Python's calbench.sample and calbench.leaderboard run them on a worker thread and
// set the request on Ctrl-C).
TEST_CASE("sampling and the leaderboard stop at a pending stop request", "[unit]") {
  const Generator generator(DirichletSpec{.classes = 3, .alpha = {0.5, 0.5, 0.5}});
  Sample sample;
  GeneratorScratch scratch;
  {
    const StopGuard stop;
    Engine engine = make_engine({1, 0, 0, Purpose::sample});
    CHECK_THROWS_AS(generator.sample(engine, 100000, sample, scratch), Interrupted);
  }
  Engine engine = make_engine({1, 0, 0, Purpose::sample});
  generator.sample(engine, 1000, sample, scratch);  // without a request: as before
  CHECK(sample.size == 1000);

  LeaderboardTable table;
  table.methods = {"a", "b"};
  table.clusters = {0, 1, 2, 3};
  table.keys.push_back({.name = "x", .better = Better::lower, .values = {1, 2, 2, 1, 1, 2, 3, 4}});
  {
    const StopGuard stop;
    CHECK_THROWS_AS(compute_leaderboards(table, {}, {}, leaderboard_stream(1, 0)), Interrupted);
  }
  CHECK(compute_leaderboards(table, {}, {}, leaderboard_stream(1, 0)).boards.size() == 1);
}

namespace {

// What `work` writes on stderr (file descriptor 2, as Progress writes).
template <typename Work>
std::string stderr_of(Work&& work) {
  std::fflush(stderr);
  std::FILE* capture = std::tmpfile();
  REQUIRE(capture != nullptr);
  const int saved = ::dup(STDERR_FILENO);
  ::dup2(::fileno(capture), STDERR_FILENO);
  work();
  std::fflush(stderr);
  ::dup2(saved, STDERR_FILENO);
  ::close(saved);
  std::rewind(capture);
  std::string out;
  for (int c = std::fgetc(capture); c != EOF; c = std::fgetc(capture))
    out.push_back(static_cast<char>(c));
  std::fclose(capture);
  return out;
}

}  // namespace

TEST_CASE("a progress line appears while one long step runs", "[unit]") {
  // fit updates its progress between folds; one fold at K = 3,000 took over a minute, and no
  // line came before it ended. With the heartbeat the line comes after first_after, without
  // any update. (Here 0.1 s and 0.2 s stand for fit's 2 s and 5 s.)
  using std::chrono::milliseconds;
  for (const bool heartbeat : {false, true}) {
    INFO("heartbeat " << heartbeat);
    const std::string text = stderr_of([&] {
      Progress progress("fit: fakes of the verdict's folds", true,
                        {.unit = "fits",
                         .first_after = milliseconds(100),
                         .plain_every = milliseconds(200),
                         .heartbeat = heartbeat});
      progress.update(0, 5);
      std::this_thread::sleep_for(milliseconds(700));  // the first fold, still running
      progress.finish();
    });
    if (heartbeat)
      CHECK_THAT(text, Catch::StartsWith("fit: fakes of the verdict's folds: 0/5 fits (0%), ") &&
                           Catch::Contains(" s so far\n"));
    else
      CHECK(text.empty());
  }
}

TEST_CASE("an NPY file's shape is read from its header alone", "[unit][core]") {
  TempDir dir;
  const fs::path file = dir.path / "p.npy";
  const std::vector<double> values = {0.25, 0.75, 0.5, 0.5, 1.0, 0.0};
  write_npy(file, {3, 2}, std::span<const double>(values));
  const NpyShape shape = read_npy_shape(file);
  CHECK(shape.descr == "<f8");
  CHECK(shape.shape == std::vector<std::size_t>{3, 2});
  CHECK(read_npy(file).floats == values);  // the parts written without a joined copy
  // Not a regular file: nothing (read_npy names the problem); a bad header: read_npy's error.
  CHECK(read_npy_shape("/dev/zero").shape.empty());
  std::ofstream(dir.path / "bad.npy", std::ios::binary) << "not an npy file at all";
  CHECK_THROWS_WITH(read_npy_shape(dir.path / "bad.npy"), Catch::Contains("not an NPY file"));
}
