// Stop strings over streamed pieces: found across piece boundaries, cut before, never emitted
// early, and never splitting a UTF-8 character.
#include <catch2/catch.hpp>

#include "engine/generation/stop_strings.h"

using namespace eagerlm;

namespace {
std::string feed(StopStringMatcher& m, const std::vector<std::string>& pieces,
                 std::vector<std::string>* emitted = nullptr) {
  std::string out;
  for (const auto& p : pieces) {
    const std::string e = m.push(p);
    if (emitted) emitted->push_back(e);
    out += e;
    if (m.stopped()) break;
  }
  if (!m.stopped()) out += m.finish();
  return out;
}
}  // namespace

TEST_CASE("a stop string across pieces is cut", "[stop]") {
  StopStringMatcher m({"\n\nUser:"});
  std::vector<std::string> emitted;
  CHECK(feed(m, {"Hello", " there", "\n", "\nUs", "er:", " more"}, &emitted) == "Hello there");
  CHECK(m.stopped());
  CHECK(m.text() == "Hello there");
  CHECK(emitted[2].empty());  // "\n" could begin the stop string: held back
}

TEST_CASE("a held-back prefix that does not complete is released", "[stop]") {
  StopStringMatcher m({"STOP"});
  std::vector<std::string> emitted;
  CHECK(feed(m, {"a ST", "OR", "E"}, &emitted) == "a STORE");
  CHECK(emitted[0] == "a ");
  CHECK_FALSE(m.stopped());
}

TEST_CASE("the earliest of several stop strings wins", "[stop]") {
  StopStringMatcher m({"world", "lo w"});
  CHECK(feed(m, {"hello world"}) == "hel");
}

TEST_CASE("no stop strings: everything passes through at once", "[stop]") {
  StopStringMatcher m({});
  CHECK(m.push("abc") == "abc");
  CHECK(m.finish().empty());
}

TEST_CASE("held-back text never splits a UTF-8 character", "[stop]") {
  // "é" is C3 A9; a stop string starting with A9... cannot exist in valid text, but one that
  // starts with the whole "é" makes the matcher hold it back whole.
  StopStringMatcher m({"\xC3\xA9t\xC3\xA9"});
  std::vector<std::string> emitted;
  feed(m, {"caf\xC3\xA9", " ok"}, &emitted);
  CHECK(emitted[0] == "caf");
  CHECK(m.text() == "caf\xC3\xA9 ok");
}
