// The info_hash access list (tracker/access_list.hpp) and the live ban list
// (tracker/client_id.hpp): parsing, file round trips, the live objects.

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include "tracker/access_list.hpp"
#include "tracker/client_id.hpp"

namespace sk {
namespace {

info_hash hash_of(std::uint8_t b) {
  info_hash h;
  h.bytes.fill(b);
  return h;
}

std::string temp_dir() {
  char dir[] = "/tmp/sk-access-XXXXXX";
  EXPECT_NE(::mkdtemp(dir), nullptr);
  return dir;
}

TEST(AccessList, ParsesHashesCommentsAndBlankLines) {
  std::string error;
  auto list = access_list::parse(
      "# comment\n\n  " + hash_of(0xab).hex() + " \r\n\t# indented comment\n" +
          std::string(40, 'C') + "\n" + hash_of(0xab).hex(),
      &error);
  ASSERT_TRUE(list) << error;
  EXPECT_EQ(list->size(), 2u);
  EXPECT_TRUE(list->contains(hash_of(0xab)));
  EXPECT_TRUE(list->contains(hash_of(0xcc)));
  EXPECT_FALSE(list->contains(hash_of(0x01)));
  EXPECT_TRUE(access_list::parse("", &error));
}

TEST(AccessList, BadLinesAreNamedByNumber) {
  std::string error;
  EXPECT_FALSE(access_list::parse("# ok\n" + std::string(40, 'a') + "\nxyz\n", &error));
  EXPECT_NE(error.find("line 3"), std::string::npos) << error;
  EXPECT_NE(error.find("xyz"), std::string::npos) << error;
  EXPECT_FALSE(access_list::parse(std::string(39, 'a'), &error));
  EXPECT_NE(error.find("line 1"), std::string::npos) << error;
  EXPECT_FALSE(access_list::parse(std::string(41, 'a'), &error));
  EXPECT_FALSE(access_list::parse(std::string(39, 'a') + "g", &error));
  EXPECT_FALSE(access_list::parse("\n\n" + std::string(20, 'a') + " " + std::string(19, 'a'), &error));
  EXPECT_NE(error.find("line 3"), std::string::npos) << error;
}

TEST(AccessList, TextRoundTripsSorted) {
  access_list l;
  EXPECT_TRUE(l.add(hash_of(0x22)));
  EXPECT_TRUE(l.add(hash_of(0x11)));
  EXPECT_FALSE(l.add(hash_of(0x11)));
  const std::string text = l.to_text();
  EXPECT_LT(text.find(hash_of(0x11).hex()), text.find(hash_of(0x22).hex()));
  std::string error;
  auto back = access_list::parse(text, &error);
  ASSERT_TRUE(back) << error;
  EXPECT_EQ(back->sorted(), l.sorted());
  EXPECT_TRUE(l.remove(hash_of(0x11)));
  EXPECT_FALSE(l.remove(hash_of(0x11)));
}

TEST(AccessMode, NamesRoundTrip) {
  for (auto m : {access_mode::off, access_mode::allow, access_mode::deny})
    EXPECT_EQ(parse_access_mode(to_string(m)), m);
  EXPECT_FALSE(parse_access_mode("Allow"));
  EXPECT_FALSE(parse_access_mode(""));
}

TEST(AccessControl, OffAllowsEverything) {
  access_control ac{access_mode::off, ""};
  EXPECT_TRUE(ac.allowed(hash_of(1)));
  EXPECT_FALSE(ac.set_allowed(hash_of(1), false).ok);
  EXPECT_FALSE(ac.reload().ok);
}

TEST(AccessControl, AllowAndDenyModesInMemory) {
  access_list initial;
  initial.add(hash_of(1));
  access_control allow{access_mode::allow, "", initial};
  EXPECT_TRUE(allow.allowed(hash_of(1)));
  EXPECT_FALSE(allow.allowed(hash_of(2)));
  ASSERT_TRUE(allow.set_allowed(hash_of(2), true).ok);
  EXPECT_TRUE(allow.allowed(hash_of(2)));  // the same thread sees it at once
  ASSERT_TRUE(allow.set_allowed(hash_of(1), false).ok);
  EXPECT_FALSE(allow.allowed(hash_of(1)));

  access_control deny{access_mode::deny, "", initial};
  EXPECT_FALSE(deny.allowed(hash_of(1)));
  EXPECT_TRUE(deny.allowed(hash_of(2)));
  ASSERT_TRUE(deny.set_allowed(hash_of(1), true).ok);
  EXPECT_TRUE(deny.allowed(hash_of(1)));
  EXPECT_EQ(deny.snapshot()->size(), 0u);
}

TEST(AccessControl, ChangesAreSeenByOtherThreads) {
  access_control ac{access_mode::deny, ""};
  bool before = false, after = true;
  std::thread t1([&] { before = ac.allowed(hash_of(7)); });
  t1.join();
  ASSERT_TRUE(ac.set_allowed(hash_of(7), false).ok);
  std::thread t2([&] { after = ac.allowed(hash_of(7)); });
  t2.join();
  EXPECT_TRUE(before);
  EXPECT_FALSE(after);
}

TEST(AccessControl, WritesTheFileBackAndReloadKeepsOldListOnError) {
  const std::string dir = temp_dir();
  const std::string path = dir + "/list.txt";
  {
    std::ofstream f{path};
    f << hash_of(1).hex() << "\n";
  }
  std::string error;
  auto initial = load_access_file(path, &error);
  ASSERT_TRUE(initial) << error;
  access_control ac{access_mode::deny, path, *initial};
  ASSERT_TRUE(ac.set_allowed(hash_of(2), false).ok);
  auto on_disk = load_access_file(path, &error);
  ASSERT_TRUE(on_disk) << error;
  EXPECT_TRUE(on_disk->contains(hash_of(1)));
  EXPECT_TRUE(on_disk->contains(hash_of(2)));
  {
    std::ofstream f{path, std::ios::trunc};
    f << "garbage\n";
  }
  const auto r = ac.reload();
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("line 1"), std::string::npos) << r.error;
  EXPECT_FALSE(ac.allowed(hash_of(2)));  // the old list stays
  {
    std::ofstream f{path, std::ios::trunc};
    f << hash_of(3).hex() << "\n";
  }
  ASSERT_TRUE(ac.reload().ok);
  EXPECT_TRUE(ac.allowed(hash_of(2)));
  EXPECT_FALSE(ac.allowed(hash_of(3)));
  EXPECT_FALSE(load_access_file(dir + "/missing", &error));
  EXPECT_NE(error.find("missing"), std::string::npos);
  std::remove(path.c_str());
  ::rmdir(dir.c_str());
}

TEST(AccessControl, FailedWriteIsReported) {
  access_control ac{access_mode::deny, "/nonexistent-dir/list.txt"};
  const auto r = ac.set_allowed(hash_of(1), false);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("in memory"), std::string::npos) << r.error;
  EXPECT_FALSE(ac.allowed(hash_of(1)));
}

TEST(LiveBanList, AddRemoveAndSnapshots) {
  live_ban_list bans;
  snapshot_reader<client_ban_list> reader;
  peer_id id;
  const std::string raw = "-XX0001-abcdefghijkl";
  std::copy(raw.begin(), raw.end(), id.bytes.begin());
  EXPECT_EQ(reader.get(bans.cell())->match(id), nullptr);
  auto old = bans.snapshot();
  EXPECT_EQ(bans.add("-XX", "no XX"), live_ban_list::add_result::added);
  EXPECT_EQ(bans.add("-XX", "again"), live_ban_list::add_result::exists);
  EXPECT_EQ(bans.add("-YY", ""), live_ban_list::add_result::invalid);
  ASSERT_NE(reader.get(bans.cell())->match(id), nullptr);
  EXPECT_EQ(reader.get(bans.cell())->match(id)->reason, "no XX");
  EXPECT_TRUE(old->empty());  // a snapshot never changes under its holder
  EXPECT_TRUE(bans.remove("-XX"));
  EXPECT_FALSE(bans.remove("-XX"));
  EXPECT_EQ(reader.get(bans.cell())->match(id), nullptr);
}

TEST(BanPrefix, EscapeAndParseRoundTrip) {
  const std::string raw = std::string("exbc") + '\0' + "%=;\"";
  const std::string text = escape_ban_prefix(raw);
  EXPECT_EQ(text, "exbc%00%25%3D%3B%22");
  std::string error;
  EXPECT_EQ(parse_ban_prefix(text, &error), raw);
  EXPECT_EQ(parse_ban_prefix("-XX0001-", &error), "-XX0001-");
  EXPECT_FALSE(parse_ban_prefix("", &error));
  EXPECT_FALSE(parse_ban_prefix("%zz", &error));
  EXPECT_FALSE(parse_ban_prefix(std::string(21, 'a'), &error));
  EXPECT_NE(error.find("21 bytes"), std::string::npos) << error;
}

}  // namespace
}  // namespace sk
