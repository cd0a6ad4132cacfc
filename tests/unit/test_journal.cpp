// Runs that survive (docs/durability.md): the byte archive keeps every bit, the journal
// recovers its whole records after a torn or corrupted tail and refuses another run's journal,
// stream_tasks resumed after a stop hands over exactly the uninterrupted sequence whatever the
// thread counts, and a result set is swapped in whole, locked against a second writer.
#include <sys/stat.h>
#include <tbb/global_control.h>

#include <atomic>
#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "core/byte_archive.hpp"
#include "core/journal.hpp"
#include "core/rng.hpp"
#include "core/task_kernel.hpp"
#include "report/result_set.hpp"
#include "temp_files.hpp"

using namespace calbench;
using calbench::testing::read_text;
using calbench::testing::TempDir;
namespace fs = std::filesystem;

namespace {

struct Record {
  std::vector<double> values;
  std::optional<std::string> note;
  std::array<std::optional<int>, 2> pair;
  std::vector<bool> flags;
};

template <typename Archive>
void serialize(Archive& a, Record& r) {
  a(r.values, r.note, r.pair, r.flags);
}

void write_text(const fs::path& file, const std::string& text) {
  std::ofstream(file, std::ios::binary) << text;
}

std::vector<std::string> replay_stage(TaskJournal& journal, std::size_t tasks) {
  std::vector<std::string> out;
  const std::size_t n = journal.begin_stage(tasks);
  for (std::size_t i = 0; i < n; ++i) out.push_back(journal.next_replayed());
  return out;
}

}  // namespace

TEST_CASE("crc32 is the IEEE 802.3 CRC-32", "[unit][journal]") {
  // The catalogue's check value: CRC-32 of the nine ASCII digits "123456789" is 0xCBF43926
  // (Williams, "A painless guide to CRC error detection algorithms", 1993; zlib's crc32).
  CHECK(crc32("123456789") == 0xCBF43926u);
  CHECK(crc32("") == 0u);
}

TEST_CASE("the byte archive keeps every bit of a record", "[unit][journal]") {
  Record r;
  r.values = {0.1,
              -0.0,
              std::numeric_limits<double>::denorm_min(),
              std::numeric_limits<double>::quiet_NaN(),
              std::numeric_limits<double>::infinity(),
              1.0 / 3.0};
  r.note = std::string("fit failed: \0 inside", 20);
  r.pair = {std::nullopt, 7};
  r.flags = {true, false, true};
  const Record back = from_bytes<Record>(to_bytes(r));
  REQUIRE(back.values.size() == r.values.size());
  for (std::size_t i = 0; i < r.values.size(); ++i)
    CHECK(std::bit_cast<std::uint64_t>(back.values[i]) ==
          std::bit_cast<std::uint64_t>(r.values[i]));
  CHECK(back.note == r.note);
  CHECK(back.pair == r.pair);
  CHECK(back.flags == r.flags);
  // A record cut short, or followed by extra bytes, is refused.
  const std::string bytes = to_bytes(r);
  CHECK_THROWS(from_bytes<Record>(bytes.substr(0, bytes.size() - 1)));
  CHECK_THROWS(from_bytes<Record>(bytes + "x"));
}

TEST_CASE("a journal replays its records stage by stage, in task order", "[unit][journal]") {
  TempDir dir;
  const fs::path file = dir.path / "journal.bin";
  {
    TaskJournal j = TaskJournal::create(file, "config 1");
    CHECK(j.begin_stage(2) == 0);
    j.append(0, "a");
    j.append(1, "bb");
    CHECK(j.begin_stage(3) == 0);
    j.append(0, "ccc");
    CHECK_THROWS_AS(j.append(2, "x"), std::logic_error);  // out of order
  }
  TaskJournal j = TaskJournal::resume(file, "config 1");
  CHECK(j.records() == 3);
  CHECK(j.dropped_bytes() == 0);
  CHECK(replay_stage(j, 2) == std::vector<std::string>{"a", "bb"});
  CHECK(replay_stage(j, 3) == std::vector<std::string>{"ccc"});
  j.append(1, "dddd");
  j.append(2, "");
  CHECK(replay_stage(j, 0).empty());  // a third stage, with no tasks
  j.flush();
  TaskJournal again = TaskJournal::resume(file, "config 1");
  CHECK(again.records() == 5);
  replay_stage(again, 2);
  CHECK(replay_stage(again, 3) == std::vector<std::string>{"ccc", "dddd", ""});
}

TEST_CASE("a torn or corrupted last record is dropped, the ones before are kept",
          "[unit][journal]") {
  TempDir dir;
  const fs::path file = dir.path / "journal.bin";
  {
    TaskJournal j = TaskJournal::create(file, "id");
    j.begin_stage(4);
    j.append(0, "first");
    j.append(1, "second");
    j.append(2, "third");
  }
  const std::string whole = read_text(file);
  // A record is 16 bytes of head, the payload and a 4-byte checksum.
  const std::size_t last = 16 + 5 + 4;
  for (std::size_t cut : {std::size_t{1}, std::size_t{4}, std::size_t{10}, last - 1}) {
    CAPTURE(cut);
    write_text(file, whole.substr(0, whole.size() - cut));
    TaskJournal j = TaskJournal::resume(file, "id");
    CHECK(j.records() == 2);
    CHECK(j.dropped_bytes() == last - cut);
    CHECK(fs::file_size(file) == whole.size() - last);  // the torn tail is truncated
    CHECK(replay_stage(j, 4) == std::vector<std::string>{"first", "second"});
  }
  // One flipped bit in the last payload fails its checksum.
  std::string flipped = whole;
  flipped[whole.size() - 6] ^= 0x10;
  write_text(file, flipped);
  {
    TaskJournal j = TaskJournal::resume(file, "id");
    CHECK(j.records() == 2);
    CHECK(replay_stage(j, 4) == std::vector<std::string>{"first", "second"});
    j.append(2, "third again");  // appended after the truncation
  }
  TaskJournal j = TaskJournal::resume(file, "id");
  CHECK(j.dropped_bytes() == 0);
  CHECK(replay_stage(j, 4) == std::vector<std::string>{"first", "second", "third again"});
}

TEST_CASE("a journal of another config, or not a journal, is refused", "[unit][journal]") {
  TempDir dir;
  const fs::path file = dir.path / "journal.bin";
  {
    TaskJournal j = TaskJournal::create(file, "config 0123abcd, calbench 1.0 (abc)");
    j.begin_stage(1);
    j.append(0, "x");
  }
  CHECK_THROWS_AS(TaskJournal::resume(file, "config 99999999, calbench 1.0 (abc)"),
                  JournalMismatch);
  CHECK_THROWS_WITH(TaskJournal::resume(file, "config 99999999, calbench 1.0 (abc)"),
                    Catch::Contains("config 0123abcd") && Catch::Contains("config 99999999"));
  // The same identity, but a run with fewer tasks in the stage than the journal holds.
  TaskJournal j = TaskJournal::resume(file, "config 0123abcd, calbench 1.0 (abc)");
  CHECK_THROWS_AS(j.begin_stage(0), JournalMismatch);

  write_text(dir.path / "other.bin", "{\"name\": \"not a journal\"}");
  CHECK_THROWS_AS(TaskJournal::resume(dir.path / "other.bin", "id"), JournalMismatch);
  // A header cut short recorded nothing: the journal starts empty.
  write_text(dir.path / "short.bin", "CALBJ");
  CHECK(TaskJournal::resume(dir.path / "short.bin", "id").records() == 0);
}

TEST_CASE("shards' streams merge into the journal of one run; a gap is refused",
          "[unit][journal]") {
  const TaskGrid grid({4, 3, 0, 6});
  const auto compute = [](TaskKey key) {
    return 100.0 * static_cast<double>(key.cell) + static_cast<double>(key.replicate);
  };
  std::vector<double> single;
  stream_tasks<double>(grid, compute, [&](TaskKey, double v) { single.push_back(v); });
  TempDir dir;
  std::vector<fs::path> shards;
  for (std::size_t i = 0; i < 3; ++i) {
    shards.push_back(dir.path / ("shard" + std::to_string(i)));
    TaskJournal journal = TaskJournal::create(shards.back(), "id");
    StreamControl control;
    control.journal = &journal;
    control.shard = StreamControl::Shard{i, 3};
    std::size_t consumed = 0;
    stream_tasks<double>(
        grid, compute, [&](TaskKey, double) { ++consumed; }, control);
    CHECK(consumed == 0);  // a shard hands nothing over
    CHECK(journal.records() == (i + 1) * 13 / 3 - i * 13 / 3);
  }
  merge_shards(shards, "id", dir.path / "merged");
  TaskJournal merged = TaskJournal::resume(dir.path / "merged", "id");
  StreamControl control;
  control.journal = &merged;
  std::vector<double> replayed;
  stream_tasks<double>(
      grid, [](TaskKey) -> double { throw std::logic_error("a merged task was computed"); },
      [&](TaskKey, double v) { replayed.push_back(v); }, control);
  CHECK(replayed == single);
  // Without the middle shard the last one does not begin where the first ends.
  CHECK_THROWS_WITH(merge_shards({shards[0], shards[2]}, "id", dir.path / "gap"),
                    Catch::Contains("unfinished shard"));
  CHECK_THROWS_AS(merge_shards(shards, "another run", dir.path / "other"), JournalMismatch);

  // A finished shard's journal is only read: a record with a flipped bit is corruption, named
  // with the file, and the file is left as it was (issue #28; resume() would cut it short).
  CHECK_THROWS_WITH(merge_shards(shards, "id", dir.path / "counted", {4, 5, 4}),
                    Catch::Contains(shards[1].string() + ": the journal is corrupt: it holds 4 "
                                                         "records, its shard.json 5"));
  std::string bytes = read_text(shards[1]);
  bytes[bytes.size() - 30] ^= 0x10;
  write_text(shards[1], bytes);
  CHECK_THROWS_AS(merge_shards(shards, "id", dir.path / "flipped"), JournalCorrupt);
  CHECK_THROWS_WITH(TaskJournal::read(shards[1], "id"),
                    Catch::Contains(shards[1].string() + ": the journal is corrupt: the record"));
  CHECK(read_text(shards[1]) == bytes);
  bytes[13] ^= 0x10;  // inside the run's identity ("id", after the magic and its length)
  write_text(shards[1], bytes);
  CHECK_THROWS_WITH(TaskJournal::read(shards[1], "id"), Catch::Contains("its header"));
  CHECK(read_text(shards[1]) == bytes);
}

TEST_CASE("a stopped task stream resumes to the uninterrupted sequence, any thread count",
          "[unit][journal]") {
  // Task (cell, replicate) yields a value from its own stream; the fold keeps the order.
  const TaskGrid grid({7, 0, 12, 5});
  const auto compute = [](TaskKey key) {
    Engine e = make_engine({42, key.cell, key.replicate, Purpose::sample});
    return std::vector<double>{std::ldexp(static_cast<double>(e()), -64),
                               static_cast<double>(key.replicate)};
  };
  std::vector<double> expected;
  stream_tasks<std::vector<double>>(grid, compute, [&](TaskKey, std::vector<double>&& v) {
    expected.insert(expected.end(), v.begin(), v.end());
  });
  REQUIRE(expected.size() == 2 * grid.size());

  // The stop is seen by the next task to start, and up to 4 per thread (8) are in flight when
  // the fold sets it: stop_after + 8 must stay below the grid's 24 tasks, or every task may
  // already have started (17 did, under load, about one run in ten: no Interrupted).
  for (const auto& [stop_after, threads] :
       std::vector<std::pair<std::size_t, int>>{{0, 1}, {5, 2}, {12, 1}}) {
    CAPTURE(stop_after, threads);
    TempDir dir;
    const fs::path file = dir.path / "journal.bin";
    std::vector<double> folded;
    std::atomic<bool> stop{stop_after == 0};
    {
      tbb::global_control limit(tbb::global_control::max_allowed_parallelism, 2);
      TaskJournal journal = TaskJournal::create(file, "id");
      StreamControl control;
      control.journal = &journal;
      control.stop = &stop;
      CHECK_THROWS_AS(stream_tasks<std::vector<double>>(
                          grid, compute,
                          [&](TaskKey, std::vector<double>&& v) {
                            folded.insert(folded.end(), v.begin(), v.end());
                            if (folded.size() == 2 * stop_after) stop = true;
                          },
                          control),
                      Interrupted);
      CHECK(journal.records() == folded.size() / 2);
      CHECK(journal.records() >= stop_after);
    }
    // Resumed on another thread count: the recorded tasks are replayed, not computed.
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism,
                              static_cast<std::size_t>(threads));
    TaskJournal journal = TaskJournal::resume(file, "id");
    const std::size_t recorded = journal.records();
    std::atomic<std::size_t> computed{0};
    std::vector<double> resumed;
    StreamControl control;
    control.journal = &journal;
    stream_tasks<std::vector<double>>(
        grid,
        [&](TaskKey key) {
          ++computed;
          return compute(key);
        },
        [&](TaskKey, std::vector<double>&& v) {
          resumed.insert(resumed.end(), v.begin(), v.end());
        },
        control);
    CHECK(computed == grid.size() - recorded);
    REQUIRE(resumed.size() == expected.size());
    for (std::size_t i = 0; i < expected.size(); ++i)
      CHECK(std::bit_cast<std::uint64_t>(resumed[i]) == std::bit_cast<std::uint64_t>(expected[i]));
  }
}

TEST_CASE("a result set is swapped in whole, and one run at a time holds it", "[unit][journal]") {
  TempDir dir;
  const fs::path out = dir.path / "results" / "run";
  {
    ResultSetTransaction first(out, Overwrite::no);
    write_text(first.staging() / "config.resolved.json", "{\"set\": 1}\n");
    // A second writer on the same directory is refused while the first holds it.
    CHECK_THROWS_AS(ResultSetTransaction(out, Overwrite::yes), OutputError);
    CHECK_THROWS_WITH(ResultSetTransaction(out, Overwrite::yes),
                      Catch::Contains("is writing") && Catch::Contains(out.string()));
    CHECK(!fs::exists(out));  // nothing is visible before the commit
    first.commit();
  }
  CHECK(read_text(out / "config.resolved.json") == "{\"set\": 1}\n");
  // A finished set is replaced only with Overwrite::yes (--overwrite): a rerun without it is
  // refused before anything is touched (issue #28).
  CHECK_THROWS_WITH(ResultSetTransaction(out, Overwrite::no),
                    Catch::Contains("already holds a finished calbench result set") &&
                        Catch::Contains("--overwrite"));
  CHECK(read_text(out / "config.resolved.json") == "{\"set\": 1}\n");
  {
    // An abandoned set leaves the old one as it was, and nothing beside it.
    ResultSetTransaction second(out, Overwrite::yes);
    write_text(second.staging() / "config.resolved.json", "{\"set\": 2}\n");
    write_text(second.staging() / "summary.json", "{}\n");
  }
  CHECK(read_text(out / "config.resolved.json") == "{\"set\": 1}\n");
  std::vector<std::string> entries;
  for (const auto& e : fs::directory_iterator(out.parent_path()))
    entries.push_back(e.path().filename().string());
  CHECK(entries == std::vector<std::string>{"run"});
  {
    ResultSetTransaction third(out, Overwrite::yes);
    write_text(third.staging() / "config.resolved.json", "{\"set\": 3}\n");
    third.commit();
  }
  CHECK(read_text(out / "config.resolved.json") == "{\"set\": 3}\n");
  CHECK(!fs::exists(out / "summary.json"));  // the whole set is replaced
  CHECK(std::distance(fs::directory_iterator(out.parent_path()), fs::directory_iterator()) == 1);

  // A journal kept on failure is found by the next run on the directory.
  {
    ResultSetTransaction failing(out, Overwrite::yes);
    write_text(failing.journal_path(), "journal");
    failing.keep_journal(true);
  }
  {
    // A run that ends without choosing (it refused to resume, say) leaves that journal alone.
    // The journal beside the finished set lets it in without Overwrite::yes (the run that left
    // the journal was allowed to replace the set; --resume continues it).
    ResultSetTransaction refused(out, Overwrite::no);
    CHECK(refused.previous_journal());
  }
  {
    ResultSetTransaction next(out, Overwrite::no);
    REQUIRE(next.previous_journal());
    CHECK(read_text(*next.previous_journal()) == "journal");
    next.discard_previous();
    CHECK(!next.previous_journal());
  }

  // What is not a result set is not replaced; an empty name is no directory.
  const fs::path home = dir.path / "home";
  fs::create_directories(home);
  write_text(home / "thesis.tex", "years of work");
  CHECK_THROWS_WITH(
      ResultSetTransaction(home, Overwrite::yes),
      Catch::Contains("not a calbench result set") || Catch::Contains("neither empty nor"));
  CHECK(read_text(home / "thesis.tex") == "years of work");
  CHECK_THROWS_AS(ResultSetTransaction("", Overwrite::yes), OutputError);
  write_text(dir.path / "file", "x");
  CHECK_THROWS_AS(ResultSetTransaction(dir.path / "file", Overwrite::yes), OutputError);
}
