// bench_tokenizer: throughput of the GPT-2 tokenizer on English-like prose.
//
//   bench_tokenizer [--mb N] [--file PATH] [--repeat R] [--threads T]
//
// Without --file it generates N MB (default 4) of varied prose: sentences of common English words
// with capitals, punctuation, contractions, numbers and paragraph breaks, from a fixed seed. It
// reports the time to load the embedded vocabulary, then encode MB/s on one core for the first
// pass (cold word cache) and the best of R later passes (warm cache), decode and stream-decode
// MB/s, and with --threads T > 1 the combined MB/s of T threads encoding at once.
#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "engine/tokenizer/tokenizer.h"

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

std::string generate_prose(size_t bytes) {
  static const char* const kWords[] = {"the",
                                       "of",
                                       "and",
                                       "to",
                                       "in",
                                       "a",
                                       "is",
                                       "that",
                                       "for",
                                       "it",
                                       "as",
                                       "was",
                                       "with",
                                       "be",
                                       "by",
                                       "on",
                                       "not",
                                       "he",
                                       "this",
                                       "are",
                                       "or",
                                       "his",
                                       "from",
                                       "at",
                                       "which",
                                       "but",
                                       "have",
                                       "an",
                                       "had",
                                       "they",
                                       "you",
                                       "were",
                                       "their",
                                       "one",
                                       "all",
                                       "we",
                                       "can",
                                       "her",
                                       "has",
                                       "there",
                                       "been",
                                       "if",
                                       "more",
                                       "when",
                                       "will",
                                       "would",
                                       "who",
                                       "so",
                                       "no",
                                       "time",
                                       "people",
                                       "year",
                                       "way",
                                       "day",
                                       "man",
                                       "thing",
                                       "woman",
                                       "life",
                                       "child",
                                       "world",
                                       "school",
                                       "state",
                                       "family",
                                       "student",
                                       "group",
                                       "country",
                                       "problem",
                                       "hand",
                                       "part",
                                       "place",
                                       "case",
                                       "week",
                                       "company",
                                       "system",
                                       "program",
                                       "question",
                                       "work",
                                       "government",
                                       "number",
                                       "night",
                                       "point",
                                       "home",
                                       "water",
                                       "room",
                                       "mother",
                                       "area",
                                       "money",
                                       "story",
                                       "fact",
                                       "month",
                                       "lot",
                                       "right",
                                       "study",
                                       "book",
                                       "eye",
                                       "job",
                                       "word",
                                       "business",
                                       "issue",
                                       "side",
                                       "kind",
                                       "head",
                                       "house",
                                       "service",
                                       "friend",
                                       "father",
                                       "power",
                                       "hour",
                                       "game",
                                       "line",
                                       "end",
                                       "member",
                                       "law",
                                       "car",
                                       "city",
                                       "community",
                                       "name",
                                       "president",
                                       "team",
                                       "minute",
                                       "idea",
                                       "kid",
                                       "body",
                                       "information",
                                       "back",
                                       "parent",
                                       "face",
                                       "others",
                                       "level",
                                       "office",
                                       "door",
                                       "health",
                                       "person",
                                       "art",
                                       "war",
                                       "history",
                                       "party",
                                       "result",
                                       "change",
                                       "morning",
                                       "reason",
                                       "research",
                                       "girl",
                                       "guy",
                                       "moment",
                                       "air",
                                       "teacher",
                                       "force",
                                       "education",
                                       "foot",
                                       "boy",
                                       "age",
                                       "policy",
                                       "music",
                                       "market",
                                       "sense",
                                       "nation",
                                       "plan",
                                       "college",
                                       "interest",
                                       "death",
                                       "experience",
                                       "effect",
                                       "class",
                                       "control",
                                       "care",
                                       "field",
                                       "development",
                                       "role",
                                       "effort",
                                       "rate",
                                       "heart",
                                       "drug",
                                       "show",
                                       "leader",
                                       "light",
                                       "voice",
                                       "wife",
                                       "police",
                                       "mind",
                                       "price",
                                       "report",
                                       "decision",
                                       "son",
                                       "view",
                                       "relationship",
                                       "town",
                                       "road",
                                       "arm",
                                       "difference",
                                       "value",
                                       "building",
                                       "action",
                                       "model",
                                       "season",
                                       "society",
                                       "tax",
                                       "director",
                                       "position",
                                       "player",
                                       "record",
                                       "paper",
                                       "space",
                                       "ground",
                                       "form",
                                       "event",
                                       "official",
                                       "matter",
                                       "center",
                                       "couple",
                                       "site",
                                       "project",
                                       "activity",
                                       "star",
                                       "table",
                                       "need",
                                       "court",
                                       "oil",
                                       "situation",
                                       "cost",
                                       "industry",
                                       "figure",
                                       "street",
                                       "image",
                                       "phone",
                                       "data",
                                       "picture",
                                       "practice",
                                       "piece",
                                       "land",
                                       "product",
                                       "doctor",
                                       "wall",
                                       "patient",
                                       "worker",
                                       "news",
                                       "test",
                                       "movie",
                                       "north",
                                       "love",
                                       "support",
                                       "technology",
                                       "step",
                                       "baby",
                                       "computer",
                                       "type",
                                       "attention",
                                       "film",
                                       "tree",
                                       "source",
                                       "organization",
                                       "hair",
                                       "window",
                                       "evidence",
                                       "population",
                                       "site",
                                       "truth",
                                       "beautiful",
                                       "quickly",
                                       "remarkable",
                                       "understand",
                                       "remember",
                                       "considered",
                                       "throughout",
                                       "although",
                                       "nevertheless",
                                       "particularly",
                                       "environmental",
                                       "responsibility",
                                       "extraordinary",
                                       "unfortunately",
                                       "significantly",
                                       "opportunities",
                                       "say",
                                       "get",
                                       "make",
                                       "go",
                                       "know",
                                       "take",
                                       "see",
                                       "come",
                                       "think",
                                       "look",
                                       "want",
                                       "give",
                                       "use",
                                       "find",
                                       "tell",
                                       "ask",
                                       "seem",
                                       "feel",
                                       "try",
                                       "leave",
                                       "call",
                                       "good",
                                       "new",
                                       "first",
                                       "last",
                                       "long",
                                       "great",
                                       "little",
                                       "own",
                                       "other",
                                       "old",
                                       "big",
                                       "high",
                                       "different",
                                       "small",
                                       "large",
                                       "next",
                                       "early",
                                       "young",
                                       "important",
                                       "few",
                                       "public",
                                       "bad",
                                       "same",
                                       "able",
                                       "don't",
                                       "it's",
                                       "we're",
                                       "they've",
                                       "I'll",
                                       "she'd",
                                       "isn't",
                                       "can't",
                                       "John's",
                                       "Mary's"};
  static const char* const kEnds[] = {".", ".", ".", "?", "!", ";", ":"};
  const size_t word_count = sizeof(kWords) / sizeof(kWords[0]);
  std::mt19937 rng(20240601);
  std::string text;
  text.reserve(bytes + 256);
  while (text.size() < bytes) {
    const int sentences = 2 + int(rng() % 6);
    for (int s = 0; s < sentences; ++s) {
      const int words = 4 + int(rng() % 18);
      for (int w = 0; w < words; ++w) {
        std::string word = kWords[rng() % word_count];
        if (w == 0) word[0] = char(std::toupper(static_cast<unsigned char>(word[0])));
        if (rng() % 40 == 0) word = std::to_string(rng() % 3000);
        if (w > 0) text += (rng() % 15 == 0) ? ", " : " ";
        if (rng() % 60 == 0) word = "\"" + word + "\"";
        if (rng() % 80 == 0) word = "(" + word + ")";
        text += word;
      }
      text += kEnds[rng() % (sizeof(kEnds) / sizeof(kEnds[0]))];
      if (s + 1 < sentences) text += ' ';
    }
    text += "\n\n";
  }
  return text;
}

double mb_per_second(size_t bytes, double seconds) { return double(bytes) / 1e6 / seconds; }

}  // namespace

int main(int argc, char** argv) {
  double mb = 4.0;
  std::string file;
  int repeat = 3, threads = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--mb" && has_value)
      mb = std::atof(argv[++i]);
    else if (arg == "--file" && has_value)
      file = argv[++i];
    else if (arg == "--repeat" && has_value)
      repeat = std::max(1, std::atoi(argv[++i]));
    else if (arg == "--threads" && has_value)
      threads = std::max(1, std::atoi(argv[++i]));
    else {
      std::fprintf(stderr, "usage: bench_tokenizer [--mb N] [--file PATH] [--repeat R] [--threads T]\n");
      return 2;
    }
  }

  std::string text;
  if (!file.empty()) {
    std::ifstream in(file, std::ios::binary);
    if (!in) {
      std::fprintf(stderr, "bench_tokenizer: cannot open %s\n", file.c_str());
      return 1;
    }
    std::ostringstream contents;
    contents << in.rdbuf();
    text = contents.str();
  } else {
    text = generate_prose(size_t(mb * 1e6));
  }

  try {
    auto start = Clock::now();
    const eagerlm::Tokenizer tokenizer = eagerlm::Tokenizer::gpt2();
    std::printf("load embedded GPT-2 vocabulary: %.1f ms\n", seconds_since(start) * 1e3);
    std::printf("text: %.2f MB (%s)\n", text.size() / 1e6, file.empty() ? "generated prose" : file.c_str());

    start = Clock::now();
    std::vector<int32_t> ids = tokenizer.encode(text);
    const double cold = seconds_since(start);
    double warm = 1e30;
    for (int r = 0; r < repeat; ++r) {
      start = Clock::now();
      ids = tokenizer.encode(text);
      warm = std::min(warm, seconds_since(start));
    }
    std::printf("tokens: %zu (%.2f bytes/token)\n", ids.size(), double(text.size()) / double(ids.size()));
    std::printf("encode, 1 thread, cold cache: %.1f MB/s\n", mb_per_second(text.size(), cold));
    std::printf("encode, 1 thread, warm cache: %.1f MB/s\n", mb_per_second(text.size(), warm));

    start = Clock::now();
    const std::string decoded = tokenizer.decode(ids);
    std::printf("decode: %.1f MB/s%s\n", mb_per_second(text.size(), seconds_since(start)),
                decoded == text ? "" : "  (ROUND TRIP MISMATCH)");

    start = Clock::now();
    eagerlm::StreamDecoder stream(tokenizer);
    size_t streamed = 0;
    for (int32_t id : ids) streamed += stream.push(id).size();
    streamed += stream.finish().size();
    std::printf("stream decode: %.1f MB/s\n", mb_per_second(streamed, seconds_since(start)));

    if (threads > 1) {
      std::vector<std::thread> workers;
      std::vector<int> same(threads, 0);
      start = Clock::now();
      for (int t = 0; t < threads; ++t) workers.emplace_back([&, t] { same[t] = tokenizer.encode(text) == ids; });
      for (auto& w : workers) w.join();
      const double elapsed = seconds_since(start);
      const bool all_same = std::all_of(same.begin(), same.end(), [](int s) { return s != 0; });
      std::printf("encode, %d threads at once: %.1f MB/s combined%s\n", threads,
                  mb_per_second(text.size() * threads, elapsed), all_same ? "" : "  (RESULTS DIFFER)");
    }
    return decoded == text ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_tokenizer: %s\n", e.what());
    return 1;
  }
}
