#include "net/http/request_arena.hpp"

#include <cstring>
#include <string>

#include <gtest/gtest.h>
#include <boost/beast/http.hpp>

namespace sk {
namespace {

namespace http = boost::beast::http;

TEST(RequestArena, BlocksComeFromTheBufferUntilItIsFullThenFromTheHeap) {
  request_arena arena;
  void* a = arena.allocate(100);
  void* b = arena.allocate(200);
  EXPECT_TRUE(arena.owns(a));
  EXPECT_TRUE(arena.owns(b));
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(a) % request_arena::alignment, 0u);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(b) % request_arena::alignment, 0u);
  EXPECT_GE(static_cast<char*>(b) - static_cast<char*>(a), 100);
  void* big = arena.allocate(request_arena::capacity);
  EXPECT_FALSE(arena.owns(big));
  std::memset(big, 0x5a, request_arena::capacity);  // usable whole
  arena.deallocate(big, request_arena::capacity);
  // The latest block goes back at once; an earlier one waits for reset.
  const std::size_t before = arena.used();
  arena.deallocate(b, 200);
  EXPECT_LT(arena.used(), before);
  arena.deallocate(a, 100);
  EXPECT_EQ(arena.used(), 0u);
  void* c = arena.allocate(16);
  void* d = arena.allocate(16);
  arena.deallocate(c, 16);
  EXPECT_NE(arena.used(), 0u);
  arena.deallocate(d, 16);
  arena.reset();
  EXPECT_EQ(arena.used(), 0u);
  EXPECT_EQ(arena.allocate(8), c);
}

using arena_parser = http::request_parser<http::empty_body, request_arena_allocator<char>>;

/// Parses `text` with a parser whose fields live in `arena`.
void parse(request_arena& arena, const std::string& text, std::string& target,
           std::string& agent) {
  arena_parser p(std::piecewise_construct, std::make_tuple(),
                 std::make_tuple(request_arena_allocator<char>(arena)));
  p.eager(true);
  boost::beast::error_code ec;
  p.put(boost::asio::buffer(text), ec);
  ASSERT_FALSE(ec) << ec.message();
  ASSERT_TRUE(p.is_done());
  target = std::string(p.get().target());
  agent = std::string(p.get()[http::field::user_agent]);
}

TEST(RequestArena, BeastFieldsLiveInItAndLongOnesSpillToTheHeap) {
  request_arena arena;
  std::string target;
  std::string agent;
  parse(arena,
        "GET /announce?info_hash=%AA%BB&port=1 HTTP/1.1\r\nHost: t\r\nUser-Agent: x/1\r\n\r\n",
        target, agent);
  EXPECT_EQ(target, "/announce?info_hash=%AA%BB&port=1");
  EXPECT_EQ(agent, "x/1");
  EXPECT_GT(arena.used(), 0u);  // the fields were carved from the buffer
  arena.reset();
  // Headers larger than the buffer: the rest comes from the heap.
  const std::string long_agent(3 * request_arena::capacity, 'a');
  parse(arena, "GET /scrape HTTP/1.1\r\nHost: t\r\nUser-Agent: " + long_agent + "\r\nX-A: 1\r\n\r\n",
        target, agent);
  EXPECT_EQ(target, "/scrape");
  EXPECT_EQ(agent, long_agent);
}

}  // namespace
}  // namespace sk
