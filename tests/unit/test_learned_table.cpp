// Learned tuning tables (libcomm/tuning.hpp), without MPI: the file is replaced whole or
// not at all (write_tuning_table_file: a temporary beside it, renamed over it; a failed
// write leaves the old file and no temporary), and the "# learned-on" record of what a
// table was learned on reads back as written, is checked field by field, and is absent
// from a hand-written table, which works as before.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "error_helpers.hpp"
#include "libcomm/node_map.hpp"
#include "libcomm/tuning.hpp"

namespace libcomm {
namespace {

namespace fs = std::filesystem;
using testing::contains;
using testing::error_of;

TuningTable parse(const std::string& text, const std::string& source = "t.tune") {
  std::istringstream in(text);
  return TuningTable::parse(in, source);
}

std::string read_all(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_plain(const fs::path& p, const std::string& text) {
  std::ofstream out(p);
  out << text;
}

// A fresh directory for one test, removed after it.
struct TempDir {
  fs::path path;
  TempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path = fs::temp_directory_path() /
           ("libcomm_learned_" + std::to_string(::getpid()) + "_" + info->name());
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::permissions(path, fs::perms::owner_all, fs::perm_options::add, ec);
    fs::remove_all(path, ec);
  }
  // The names in the directory, sorted.
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(path)) out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }
};

const std::string kOld = "# the old table\nalltoall 4 1 0 inf bruck\n";

// A table of `rows` rows (text large enough to need many writes under a small file limit).
std::string table_text(int rows) {
  std::string text = "# a new table\n";
  for (int k = 0; k < rows; ++k)
    text += "alltoall " + std::to_string(k + 2) + " 1 0 inf pairwise\n";
  return text;
}

TEST(WriteTuningTableFile, ReplacesTheFileWholeAndLeavesNoTemporary) {
  TempDir dir;
  const fs::path target = dir.path / "learned.tune";
  write_plain(target, kOld);
  std::ifstream reader_before(target);  // a reader that opened the old file keeps all of it
  const std::string text = table_text(500);
  write_tuning_table_file(target.string(), text);
  EXPECT_EQ(read_all(target), text);
  std::stringstream old_seen;
  old_seen << reader_before.rdbuf();
  EXPECT_EQ(old_seen.str(), kOld) << "the old file was overwritten in place, not replaced";
  EXPECT_EQ(dir.names(), std::vector<std::string>{"learned.tune"});
  // And a file that did not exist yet.
  write_tuning_table_file((dir.path / "new.tune").string(), kOld);
  EXPECT_EQ(read_all(dir.path / "new.tune"), kOld);
  EXPECT_EQ(dir.names(), (std::vector<std::string>{"learned.tune", "new.tune"}));
}

// The write fails half way (the file size limit, as a full disk or a quota would): the
// target keeps the old table, the partial temporary is gone, the error names the target.
TEST(WriteTuningTableFile, FailedWriteLeavesTheOldFileAndNoTemporary) {
  TempDir dir;
  const fs::path target = dir.path / "learned.tune";
  write_plain(target, kOld);
  rlimit before{};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &before), 0);
  auto* const old_handler = ::signal(SIGXFSZ, SIG_IGN);  // write() then fails with EFBIG
  rlimit small = before;
  small.rlim_cur = 4096;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  const std::string message =
      error_of([&] { write_tuning_table_file(target.string(), table_text(2000)); });
  ::setrlimit(RLIMIT_FSIZE, &before);
  ::signal(SIGXFSZ, old_handler);
  EXPECT_TRUE(contains(message, "cannot write tuning table '" + target.string() + "'")) << message;
  EXPECT_TRUE(contains(message, "writing the temporary file")) << message;
  EXPECT_EQ(read_all(target), kOld);
  EXPECT_EQ(dir.names(), std::vector<std::string>{"learned.tune"});
}

// A directory the process may not write in: no temporary can be made, the old file stays.
// (Skipped where the process may write anyway, as root may.)
TEST(WriteTuningTableFile, UnwritableDirectoryLeavesTheOldFile) {
  TempDir dir;
  const fs::path target = dir.path / "learned.tune";
  write_plain(target, kOld);
  fs::permissions(dir.path, fs::perms::owner_read | fs::perms::owner_exec);
  if (::access(dir.path.c_str(), W_OK) == 0)
    GTEST_SKIP() << "this process may write in a read-only directory (root)";
  const std::string message =
      error_of([&] { write_tuning_table_file(target.string(), table_text(10)); });
  fs::permissions(dir.path, fs::perms::owner_all);
  EXPECT_TRUE(contains(message, "cannot write tuning table '" + target.string() + "'")) << message;
  EXPECT_TRUE(contains(message, "creating the temporary file")) << message;
  EXPECT_EQ(read_all(target), kOld);
  EXPECT_EQ(dir.names(), std::vector<std::string>{"learned.tune"});
}

// The rename fails (the target is a directory that holds a file): the temporary is removed
// and the directory is untouched.
TEST(WriteTuningTableFile, FailedRenameRemovesTheTemporary) {
  TempDir dir;
  const fs::path target = dir.path / "learned.tune";
  fs::create_directory(target);
  write_plain(target / "inside", kOld);
  const std::string message =
      error_of([&] { write_tuning_table_file(target.string(), table_text(10)); });
  EXPECT_TRUE(contains(message, "renaming the temporary file")) << message;
  EXPECT_TRUE(fs::is_directory(target));
  EXPECT_EQ(read_all(target / "inside"), kOld);
  EXPECT_EQ(dir.names(), std::vector<std::string>{"learned.tune"});
}

TEST(WriteTuningTableFile, MissingDirectoryIsAnError) {
  TempDir dir;
  const fs::path target = dir.path / "no_such_dir" / "learned.tune";
  const std::string message = error_of([&] { write_tuning_table_file(target.string(), kOld); });
  EXPECT_TRUE(contains(message, "cannot write tuning table '" + target.string() + "'")) << message;
  EXPECT_TRUE(dir.names().empty());
}

const char* const kMpi =
    "Open MPI v4.1.2, package: Debian OpenMPI, ident: 4.1.2, repo rev: v4.1.2, Nov 24, 2021";

TEST(LearnedOn, RecordReadsBackAsWritten) {
  LearnedOn on;
  on.ranks = 8;
  on.nodes = "sizes=4,4";
  on.mpi = kMpi;
  const std::string text = "# learned by auto's online policy\n" + learned_on_text(on) +
                           "# measured: bruck 12 us\nalltoall 8 4 0 1024 bruck\n";
  EXPECT_TRUE(contains(text, "# learned-on ranks: 8\n")) << text;
  EXPECT_TRUE(contains(text, "# learned-on nodes: sizes=4,4\n")) << text;
  EXPECT_TRUE(contains(text, std::string("# learned-on mpi: ") + kMpi + "\n")) << text;
  const TuningTable t = parse(text);
  ASSERT_TRUE(t.learned_on().has_value());
  EXPECT_EQ(*t.learned_on(), on);
  ASSERT_EQ(t.rows().size(), 1u);  // the record is no row, and the rows are as before
  EXPECT_EQ(t.rows()[0].algo, "bruck");
  EXPECT_EQ(t.rows()[0].line, 6);
  // And through a file, written as save_learned_tuning_table writes it.
  TempDir dir;
  const fs::path file = dir.path / "learned.tune";
  write_tuning_table_file(file.string(), text);
  const TuningTable loaded = TuningTable::load(file.string());
  ASSERT_TRUE(loaded.learned_on().has_value());
  EXPECT_EQ(*loaded.learned_on(), on);
}

TEST(LearnedOn, PartialRecordsAndLayoutsInTheirCanonicalForm) {
  LearnedOn on;
  on.ranks = 5;  // saved over a sub-communicator: no layout; an MPI library that says nothing
  EXPECT_EQ(learned_on_text(on), "# learned-on ranks: 5\n");
  EXPECT_EQ(*parse(learned_on_text(on)).learned_on(), on);
  // A layout given as a map is kept as the sizes when its nodes are blocks in order.
  EXPECT_EQ(parse("# learned-on ranks: 4\n# learned-on nodes: map=0,0,1,1\n").learned_on()->nodes,
            "sizes=2,2");
  EXPECT_EQ(parse("# learned-on ranks: 4\n# learned-on nodes: map=5,0,5,0\n").learned_on()->nodes,
            "map=0,1,0,1");
  // The record may stand anywhere, nodes before ranks included.
  EXPECT_EQ(
      parse("alltoall 4 1 0 inf bruck\n#learned-on nodes: sizes=1,3\n  #  learned-on ranks: 4\n")
          .learned_on()
          ->nodes,
      "sizes=1,3");
}

TEST(LearnedOn, NodeLayoutSpec) {
  EXPECT_EQ(node_layout_spec(NodeMap::from_sizes({3, 1, 2})), "sizes=3,1,2");
  EXPECT_EQ(node_layout_spec(NodeMap::one_rank_per_node(3)), "sizes=1,1,1");
  EXPECT_EQ(node_layout_spec(NodeMap({0, 1, 0, 1})), "map=0,1,0,1");
  EXPECT_EQ(node_layout_spec(NodeMap({7, 7, 2})), "sizes=2,1");
  // Two layouts are the same exactly when their specs are.
  EXPECT_NE(node_layout_spec(NodeMap({0, 1, 0, 1})), node_layout_spec(NodeMap::from_sizes({2, 2})));
}

TEST(LearnedOn, HandWrittenTablesHaveNoRecord) {
  const TuningTable t = parse(
      "# OP RANKS PPN FROM TO ALGORITHM\n"
      "# learned on a cluster, by hand: a comment that names it is no record\n"
      "alltoall 4 1 0 inf bruck  # learned-on ranks: 9 (after a row: a comment)\n");
  EXPECT_FALSE(t.learned_on().has_value());
  EXPECT_EQ(t.rows().size(), 1u);
}

TEST(LearnedOn, MalformedRecordsAreErrorsNamingTheLine) {
  EXPECT_EQ(error_of([] { parse("alltoall 4 1 0 inf bruck\n# learned-on rank: 4\n"); }),
            "t.tune:2: unknown record 'learned-on rank' (valid: ranks, nodes, mpi)");
  EXPECT_EQ(error_of([] { parse("# learned-on ranks: 4\n# learned-on ranks: 4\n"); }),
            "t.tune:2: learned-on ranks is recorded twice (first on line 1)");
  EXPECT_EQ(error_of([] { parse("# learned-on ranks: four\n"); }),
            "t.tune:1: learned-on ranks must be a positive integer, got 'four'");
  EXPECT_EQ(error_of([] { parse("# learned-on ranks: 0\n"); }),
            "t.tune:1: learned-on ranks must be a positive integer, got '0'");
  EXPECT_EQ(error_of([] { parse("# learned-on ranks 4\n"); }),
            "t.tune:1: a record line reads '# learned-on KEY: VALUE' (KEY ranks, nodes or mpi), "
            "got '# learned-on ranks 4'");
  EXPECT_EQ(error_of([] { parse("# learned-on mpi:\n"); }), "t.tune:1: learned-on mpi is empty");
  EXPECT_EQ(
      error_of([] { parse("# learned-on nodes: ppn=2\n# learned-on ranks: 4\n"); }),
      "t.tune:1: learned-on nodes must be a node layout 'sizes=...' or 'map=...', got 'ppn=2'");
  EXPECT_EQ(error_of([] { parse("# learned-on nodes: sizes=2,2\n"); }),
            "t.tune:1: learned-on nodes needs a learned-on ranks line");
  EXPECT_TRUE(contains(
      error_of([] { parse("# learned-on ranks: 5\n# learned-on nodes: sizes=2,2\n"); }),
      "t.tune:2: learned-on nodes: node map 'sizes=2,2' covers 4 ranks but the job has 5"));
}

TEST(LearnedOn, MismatchNamesTheFirstFieldThatDiffers) {
  LearnedOn table{8, "sizes=4,4", kMpi};
  EXPECT_FALSE(learned_on_mismatch(table, table).has_value());
  LearnedOn run = table;
  run.ranks = 6;
  run.nodes = "sizes=3,3";
  auto m = learned_on_mismatch(table, run);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->field, "ranks");
  EXPECT_EQ(m->table_value, "8");
  EXPECT_EQ(m->run_value, "6");
  run.mpi = "MPICH Version: 4.0";
  m = learned_on_mismatch(table, run);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->field, "mpi");
  EXPECT_EQ(m->table_value, kMpi);
  EXPECT_EQ(m->run_value, "MPICH Version: 4.0");
  run = table;
  run.nodes = "sizes=2,2,2,2";
  m = learned_on_mismatch(table, run);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->field, "nodes");
  EXPECT_EQ(m->run_value, "sizes=2,2,2,2");
  // A field not known on either side is not compared.
  run.nodes.clear();
  EXPECT_FALSE(learned_on_mismatch(table, run).has_value());
  EXPECT_FALSE(
      learned_on_mismatch(LearnedOn{8, "", ""}, LearnedOn{8, "sizes=8", kMpi}).has_value());
}

// The run's MPI library as a record holds it: one line, no terminating zero (Open MPI
// counts it in the length it returns), no trailing blank. (Callable before MPI_Init.)
TEST(LearnedOn, MpiLibraryVersionIsOneCleanLine) {
  const std::string v = mpi_library_version();
  ASSERT_FALSE(v.empty());
  EXPECT_EQ(v.find('\0'), std::string::npos);
  EXPECT_EQ(v.find('\n'), std::string::npos);
  EXPECT_NE(v.back(), ' ');
  LearnedOn on;
  on.mpi = v;
  EXPECT_EQ(parse(learned_on_text(on)).learned_on()->mpi, v);
}

// Without MPI nothing of the run is known: a learned table is kept but no decision uses it
// (tuned_choice), while a hand-written table answers as always.
TEST(LearnedOn, LearnedTableIsNotUsedBeforeItIsChecked) {
  const std::string rows = "alltoall 4 1 0 inf bruck\n";
  set_tuning_table(std::make_shared<const TuningTable>(parse(rows, "hand.tune")));
  TuningQuery q;
  q.op = "alltoall";
  q.ranks = 4;
  q.bytes = 64;
  auto pick = tuned_choice(q);
  ASSERT_TRUE(pick.has_value());
  EXPECT_EQ(pick->algo, "bruck");
  set_tuning_table(
      std::make_shared<const TuningTable>(parse("# learned-on ranks: 4\n" + rows, "learned.tune")));
  EXPECT_NE(active_tuning_table(), nullptr);
  EXPECT_FALSE(tuned_choice(q).has_value());
  set_tuning_table(nullptr);
}

}  // namespace
}  // namespace libcomm
