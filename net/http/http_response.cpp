#include "net/http/http_response.hpp"

#include <charconv>

namespace sk {

std::string_view reason_phrase(http_status s) noexcept {
  switch (s) {
    case http_status::ok:
      return "OK";
    case http_status::bad_request:
      return "Bad Request";
    case http_status::not_found:
      return "Not Found";
    case http_status::method_not_allowed:
      return "Method Not Allowed";
    case http_status::payload_too_large:
      return "Payload Too Large";
    case http_status::uri_too_long:
      return "URI Too Long";
    case http_status::request_header_fields_too_large:
      return "Request Header Fields Too Large";
    case http_status::service_unavailable:
      return "Service Unavailable";
  }
  return "Unknown";
}

void frame_response(std::string& out, http_status status, std::string_view content_type,
                    std::string_view body, connection_header connection,
                    std::string_view extra_headers) {
  char num[24];
  out.clear();
  out.append("HTTP/1.1 ");
  auto code = std::to_chars(num, num + sizeof num, static_cast<unsigned>(status));
  out.append(num, code.ptr);
  out.push_back(' ');
  out.append(reason_phrase(status));
  out.append("\r\nContent-Type: ");
  out.append(content_type);
  out.append("\r\nContent-Length: ");
  auto len = std::to_chars(num, num + sizeof num, body.size());
  out.append(num, len.ptr);
  out.append("\r\n");
  switch (connection) {
    case connection_header::none:
      break;
    case connection_header::keep_alive:
      out.append("Connection: keep-alive\r\n");
      break;
    case connection_header::close:
      out.append("Connection: close\r\n");
      break;
  }
  out.append(extra_headers);
  out.append("\r\n");
  out.append(body);
}

void mark_connection_close(std::string& wire) {
  const std::size_t end = wire.find("\r\n\r\n");
  if (end == std::string::npos) return;
  constexpr std::string_view keep_alive = "\r\nConnection: keep-alive\r\n";
  constexpr std::string_view close = "\r\nConnection: close\r\n";
  const std::string_view head(wire.data(), end + 2);
  if (head.find(close) != std::string_view::npos) return;
  const std::size_t k = head.find(keep_alive);
  if (k != std::string_view::npos) {
    wire.replace(k, keep_alive.size(), close);
    return;
  }
  // After the header block's last line, before the blank line.
  wire.insert(end + 2, close.substr(2));
}

}  // namespace sk
