#include "net/http/http_response.hpp"

#include <gtest/gtest.h>

namespace sk {
namespace {

TEST(FrameResponse, WritesStatusHeadersAndBody) {
  std::string out = "leftover from the previous response";
  frame_response(out, http_status::ok, "text/plain", "d8:intervali1800ee", connection_header::none);
  EXPECT_EQ(out,
            "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 18\r\n\r\n"
            "d8:intervali1800ee");
}

TEST(FrameResponse, ConnectionAndExtraHeaders) {
  std::string out;
  frame_response(out, http_status::method_not_allowed, "text/plain", "", connection_header::close,
                 "Allow: GET\r\n");
  EXPECT_EQ(out,
            "HTTP/1.1 405 Method Not Allowed\r\nContent-Type: text/plain\r\nContent-Length: 0\r\n"
            "Connection: close\r\nAllow: GET\r\n\r\n");
  frame_response(out, http_status::ok, "text/plain", "ok", connection_header::keep_alive);
  EXPECT_EQ(out,
            "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n"
            "Connection: keep-alive\r\n\r\nok");
}

TEST(FrameResponse, AFramedResponseIsMarkedToCloseAfterwards) {
  std::string out;
  frame_response(out, http_status::ok, "text/plain", "d8:intervali1800ee", connection_header::none);
  mark_connection_close(out);
  EXPECT_EQ(out,
            "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 18\r\n"
            "Connection: close\r\n\r\nd8:intervali1800ee");
  frame_response(out, http_status::ok, "text/plain", "ok", connection_header::keep_alive,
                 "Retry-After: 60\r\n");
  mark_connection_close(out);
  EXPECT_EQ(out,
            "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n"
            "Connection: close\r\nRetry-After: 60\r\n\r\nok");
  const std::string closed = out;
  mark_connection_close(out);
  EXPECT_EQ(out, closed) << "a response that closes already is left alone";
  // A body that spells a header is not mistaken for one.
  frame_response(out, http_status::ok, "text/plain", "\r\nConnection: keep-alive\r\n",
                 connection_header::none);
  mark_connection_close(out);
  EXPECT_EQ(out,
            "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 26\r\n"
            "Connection: close\r\n\r\n\r\nConnection: keep-alive\r\n");
}

TEST(FrameResponse, ReusesCapacity) {
  std::string out;
  frame_response(out, http_status::ok, "text/plain", std::string(300, 'x'),
                 connection_header::none);
  const auto* data = out.data();
  frame_response(out, http_status::not_found, "text/plain", "not found\n", connection_header::none);
  EXPECT_EQ(out.data(), data) << "a warm buffer is not reallocated";
}

TEST(FrameResponse, EveryStatusHasItsReason) {
  EXPECT_EQ(reason_phrase(http_status::bad_request), "Bad Request");
  EXPECT_EQ(reason_phrase(http_status::payload_too_large), "Payload Too Large");
  EXPECT_EQ(reason_phrase(http_status::uri_too_long), "URI Too Long");
  EXPECT_EQ(reason_phrase(http_status::request_header_fields_too_large),
            "Request Header Fields Too Large");
  EXPECT_EQ(reason_phrase(http_status::service_unavailable), "Service Unavailable");
}

}  // namespace
}  // namespace sk
