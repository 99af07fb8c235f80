// Sharded model directories: a round trip through write_safetensors + an index, the Hugging Face
// hub cache layout (shards symlinked into ../../blobs), and every way the index and the shards
// can disagree or point outside the directory (bad-inputs rows 13 and 14).
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <random>

#include "engine/io/checkpoint.h"
#include "engine/io/model_directory.h"
#include "engine/io/safetensors_writer.h"
#include "test/io/io_test_util.h"

namespace eagerlm::io {
using namespace eagerlm::io::test;

namespace {

const std::string kShard1 = "model-00001-of-00002.safetensors";
const std::string kShard2 = "model-00002-of-00002.safetensors";

struct Owned {
  DType dtype;
  std::vector<int64_t> shape;
  std::string bytes;
};

// Writes each shard with the given tensors (random contents) into `dir`, plus config.json.
std::map<std::string, Owned> write_shards(const std::string& dir,
                                          const std::map<std::string, std::vector<std::string>>& shards,
                                          std::mt19937& rng) {
  write_file(dir + "/config.json", "{}");
  std::map<std::string, Owned> all;
  const DType dtypes[] = {DType::kF32, DType::kF16, DType::kBF16};
  for (const auto& [shard, names] : shards) {
    std::vector<TensorToWrite> views;
    std::vector<std::string> keep;
    for (const std::string& name : names) {
      Owned t{dtypes[rng() % 3], {int64_t(1 + rng() % 4), int64_t(rng() % 5)}, ""};
      t.bytes.resize(size_t(t.shape[0] * t.shape[1]) * dtype_size(t.dtype));
      for (char& c : t.bytes) c = char(rng());
      all[name] = t;
    }
    for (const std::string& name : names)
      views.push_back({name, all[name].dtype, all[name].shape, all[name].bytes.data()});
    write_safetensors(dir + "/" + shard, views);
  }
  return all;
}

std::string index_json(const std::map<std::string, std::string>& weight_map, uint64_t total = 0) {
  nlohmann::json j;
  j["metadata"]["total_size"] = total;
  j["weight_map"] = weight_map;
  return j.dump(2);
}

// The usual two-shard layout: a, b in shard 1; c in shard 2, with a matching index.
const std::map<std::string, std::vector<std::string>> kLayout = {{kShard1, {"a", "b"}}, {kShard2, {"c"}}};
const std::map<std::string, std::string> kIndex = {{"a", kShard1}, {"b", kShard1}, {"c", kShard2}};

}  // namespace

TEST_CASE("sharded checkpoint round trip", "[io][checkpoint]") {
  TempDir dir;
  std::mt19937 rng(Catch::rngSeed());
  std::map<std::string, std::vector<std::string>> layout;
  std::map<std::string, std::string> weight_map;
  const std::vector<std::string> shard_names = {"model-00001-of-00003.safetensors", "model-00002-of-00003.safetensors",
                                                "model-00003-of-00003.safetensors"};
  for (int i = 0; i < 20; ++i) {
    const std::string name = "h." + std::to_string(i) + ".w";
    const std::string& shard = shard_names[rng() % 3];
    layout[shard].push_back(name);
    weight_map[name] = shard;
  }
  for (const std::string& s : shard_names) layout[s];  // write every shard, even if empty
  const std::map<std::string, Owned> tensors = write_shards(dir.path(), layout, rng);
  uint64_t total = 0;
  for (const auto& [name, t] : tensors) total += t.bytes.size();
  // An empty shard is named by no index entry, so it is not part of the checkpoint.
  write_file(dir / "model.safetensors.index.json", index_json(weight_map, total));

  const ModelDirectory md = resolve_model_directory(dir.path());
  CHECK(md.sharded());
  CHECK(md.index_path == dir / "model.safetensors.index.json");
  CHECK(md.index_total_size == total);
  std::vector<std::string> expected_paths;
  for (const std::string& s : shard_names)
    if (!layout[s].empty()) expected_paths.push_back(dir / s);
  CHECK(md.shard_paths == expected_paths);
  REQUIRE(md.index_weight_map.size() == weight_map.size());
  for (const auto& [name, shard] : weight_map) CHECK(md.shard_paths.at(md.index_weight_map.at(name)) == dir / shard);

  const Checkpoint ck = Checkpoint::open(md);
  CHECK(ck.all().size() == tensors.size());
  for (const auto& [name, t] : tensors) {
    INFO(name);
    const TensorEntry* e = ck.find(name);
    REQUIRE(e != nullptr);
    CHECK(e->dtype == t.dtype);
    CHECK(e->shape == t.shape);
    CHECK(std::string(static_cast<const char*>(e->data), e->byte_size()) == t.bytes);
    CHECK(ck.file_of(name) == dir / weight_map.at(name));
  }
}

TEST_CASE("a Hugging Face hub cache snapshot, with shards symlinked into blobs, opens", "[io][checkpoint]") {
  TempDir root;
  std::mt19937 rng(Catch::rngSeed());
  const std::string repo = root / "models--org--tiny";
  const std::string snapshot = repo + "/snapshots/0123abcd";
  make_dirs(repo + "/blobs");
  make_dirs(snapshot);
  write_shards(repo + "/blobs", kLayout, rng);  // written under their own names, then linked
  write_file(repo + "/blobs/index", index_json(kIndex));
  make_symlink("../../blobs/config.json", snapshot + "/config.json");
  make_symlink("../../blobs/index", snapshot + "/model.safetensors.index.json");
  make_symlink("../../blobs/" + kShard1, snapshot + "/" + kShard1);
  make_symlink("../../blobs/" + kShard2, snapshot + "/" + kShard2);
  const Checkpoint ck = Checkpoint::open(resolve_model_directory(snapshot));
  CHECK(ck.all().size() == 3);
  CHECK(ck.file_of("c") == snapshot + "/" + kShard2);
}

TEST_CASE("a symlinked shard that stays inside the model directory is accepted", "[io][checkpoint]") {
  TempDir dir;
  std::mt19937 rng(Catch::rngSeed());
  make_dirs(dir / "real");
  write_shards(dir.path(), {{"real/" + kShard1, {"a", "b"}}, {kShard2, {"c"}}}, rng);
  make_symlink("real/" + kShard1, dir / kShard1);
  write_file(dir / "model.safetensors.index.json", index_json(kIndex));
  CHECK(Checkpoint::open(resolve_model_directory(dir.path())).all().size() == 3);
}

namespace {

// A directory with the usual two shards; `mutate` then breaks it. Returns the error message.
std::string broken_directory_error(const std::function<void(const TempDir& dir, const TempDir& outside)>& mutate,
                                   ErrorCode code) {
  TempDir dir, outside;
  std::mt19937 rng(Catch::rngSeed());
  write_shards(dir.path(), kLayout, rng);
  write_file(dir / "model.safetensors.index.json", index_json(kIndex));
  // A valid shard outside the model directory: reading it would succeed, so only the path
  // checks can stop it.
  write_shards(outside.path(), {{kShard1, {"a", "b"}}}, rng);
  mutate(dir, outside);
  return error_message([&] { Checkpoint::open(resolve_model_directory(dir.path())); }, code);
}

void set_index(const TempDir& dir, const std::map<std::string, std::string>& weight_map) {
  write_file(dir / "model.safetensors.index.json", index_json(weight_map));
}

void set_index_text(const TempDir& dir, const std::string& text) {
  write_file(dir / "model.safetensors.index.json", text);
}

}  // namespace

TEST_CASE("index shard paths must stay inside the model directory (row 13)", "[io][checkpoint]") {
  CHECK_THAT(broken_directory_error(
                 [](const TempDir& dir, const TempDir& outside) {
                   set_index(dir, {{"a", outside / kShard1}, {"b", outside / kShard1}, {"c", kShard2}});
                 },
                 ErrorCode::kInvalidFile),
             Catch::Contains("is an absolute path") && Catch::Contains("listed for tensor 'a'"));
  CHECK_THAT(broken_directory_error(
                 [](const TempDir& dir, const TempDir& outside) {
                   const std::string rel = "../" + outside.path().filename().string() + "/" + kShard1;
                   set_index(dir, {{"a", rel}, {"b", rel}, {"c", kShard2}});
                 },
                 ErrorCode::kInvalidFile),
             Catch::Contains("contains '..'"));
  CHECK_THAT(broken_directory_error(
                 [](const TempDir& dir, const TempDir&) {
                   set_index(dir, {{"a", "sub/../../x.safetensors"}, {"b", kShard1}, {"c", kShard2}});
                 },
                 ErrorCode::kInvalidFile),
             Catch::Contains("shard 'sub/../../x.safetensors'") && Catch::Contains("contains '..'"));
  CHECK_THAT(broken_directory_error(
                 [](const TempDir& dir, const TempDir& outside) {
                   std::remove((dir / kShard1).c_str());
                   make_symlink(outside / kShard1, dir / kShard1);
                 },
                 ErrorCode::kInvalidFile),
             Catch::Contains("resolves to ") && Catch::Contains("outside the model directory"));
  CHECK_THAT(broken_directory_error(
                 [](const TempDir& dir, const TempDir&) {
                   set_index(dir, {{"a", ""}, {"b", kShard1}, {"c", kShard2}});
                 },
                 ErrorCode::kInvalidFile),
             Catch::Contains("empty shard name for tensor 'a'"));
  // A name with a newline and a terminal escape (found by fuzz/shard_index_fuzz): one line, escaped.
  const std::string odd = broken_directory_error(
      [](const TempDir& dir, const TempDir&) {
        set_index(dir, {{"a", "x../outside.safet\nsors\x1b[2J"}, {"b", kShard1}, {"c", kShard2}});
      },
      ErrorCode::kInvalidFile);
  CHECK(odd.find('\n') == std::string::npos);
  CHECK(odd.find('\x1b') == std::string::npos);
  CHECK_THAT(odd, Catch::Contains("outside.safet\\nsors\\x1b[2J") && Catch::Contains("is missing"));
}

TEST_CASE("every eagerlm::Error is one line: control characters become escapes", "[io][errors]") {
  const Error e(ErrorCode::kInvalidFile, "a\nb\tc\rd\x01" "e\x7f f \xc3\xa9");
  CHECK(std::string(e.what()) == "a\\nb\\tc\\rd\\x01e\\x7f f \xc3\xa9");  // UTF-8 stays as it is
  CHECK(e.code() == ErrorCode::kInvalidFile);
}

TEST_CASE("index and shards must agree exactly (row 14)", "[io][checkpoint]") {
  SECTION("missing shard file") {
    CHECK_THAT(broken_directory_error([](const TempDir& dir, const TempDir&) { std::remove((dir / kShard2).c_str()); },
                                      ErrorCode::kInvalidFile),
               Catch::Contains("shard '" + kShard2 + "' (listed for tensor 'c') is missing"));
  }
  SECTION("tensor listed for a shard that lacks it") {
    CHECK_THAT(broken_directory_error(
                   [](const TempDir& dir, const TempDir&) {
                     set_index(dir, {{"a", kShard1}, {"b", kShard1}, {"c", kShard2}, {"d", kShard2}});
                   },
                   ErrorCode::kInvalidFile),
               Catch::Contains("lists tensor 'd' in") && Catch::Contains(kShard2 + ", which lacks it"));
  }
  SECTION("tensor listed for the wrong shard") {
    CHECK_THAT(broken_directory_error(
                   [](const TempDir& dir, const TempDir&) {
                     set_index(dir, {{"a", kShard1}, {"b", kShard2}, {"c", kShard2}});
                   },
                   ErrorCode::kInvalidFile),
               Catch::Contains(kShard1 + ": tensor 'b' is here") && Catch::Contains("lists it in"));
  }
  SECTION("tensor present in two shards") {
    CHECK_THAT(
        broken_directory_error(
            [](const TempDir& dir, const TempDir&) {
              std::mt19937 rng(1);
              write_shards(dir.path(), {{kShard2, {"c", "a"}}}, rng);
            },
            ErrorCode::kInvalidFile),
        Catch::Contains("tensor 'a' is present in two shards") && Catch::Contains(kShard1) && Catch::Contains(kShard2));
  }
  SECTION("shard tensor not listed in the index") {
    CHECK_THAT(broken_directory_error(
                   [](const TempDir& dir, const TempDir&) {
                     set_index(dir, {{"a", kShard1}, {"c", kShard2}});
                   },
                   ErrorCode::kInvalidFile),
               Catch::Contains("tensor 'b' is not listed in"));
  }
  SECTION("a shard that is itself malformed") {
    CHECK_THAT(broken_directory_error([](const TempDir& dir, const TempDir&) { write_file(dir / kShard2, "short"); },
                                      ErrorCode::kInvalidFile),
               Catch::Contains(kShard2 + ": header too small"));
  }
  SECTION("a shard that is a FIFO") {
    TempDir dir;
    std::mt19937 rng(Catch::rngSeed());
    write_shards(dir.path(), {{kShard1, {"a", "b"}}}, rng);
    make_fifo(dir / kShard2);
    set_index(dir, kIndex);
    const std::string report = run_in_child([&] { Checkpoint::open(resolve_model_directory(dir.path())); }, 5.0);
    CHECK_THAT(report, Catch::StartsWith("error: ") && Catch::Contains("is not a regular file"));
  }
}

TEST_CASE("malformed index files are refused", "[io][checkpoint]") {
  const auto index_error = [](const std::string& text) {
    return broken_directory_error([&](const TempDir& dir, const TempDir&) { set_index_text(dir, text); },
                                  ErrorCode::kInvalidFile);
  };
  CHECK_THAT(index_error("not json"), Catch::Contains("not valid JSON"));
  CHECK_THAT(index_error("[]"), Catch::Contains("expected a JSON object"));
  CHECK_THAT(index_error("{\"metadata\":{}}"), Catch::Contains("missing 'weight_map'"));
  CHECK_THAT(index_error("{\"weight_map\":[]}"), Catch::Contains("'weight_map' is not an object"));
  CHECK_THAT(index_error("{\"weight_map\":{}}"), Catch::Contains("lists no tensors"));
  CHECK_THAT(index_error("{\"weight_map\":{\"a\":1}}"), Catch::Contains("entry for tensor 'a' is a JSON number"));
  CHECK_THAT(index_error("{\"weight_map\":{\"a\":\"" + kShard1 + "\",\"a\":\"" + kShard2 + "\"}}"),
             Catch::Contains("duplicate key 'a' under 'weight_map'"));
  CHECK_THAT(index_error("{\"metadata\":{\"total_size\":-1},\"weight_map\":{\"a\":\"x\"}}"),
             Catch::Contains("total_size"));
  CHECK_THAT(index_error("{\"weight_map\":{\"a\":\"" + kShard1 + "\"}} trailing"), Catch::Contains("trailing bytes"));
  CHECK_THAT(index_error("{\"weight_map\":{\"\xff\":\"x\"}}"), Catch::Contains("not valid UTF-8"));
}

}  // namespace eagerlm::io
