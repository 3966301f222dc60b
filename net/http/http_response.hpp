#pragma once
/// Writes complete HTTP/1.1 responses into a reusable buffer.
///
/// The tracker sends a handful of fixed response shapes, so they are framed
/// by hand instead of through `http::response` + serializer: one `append`
/// per header line into a buffer whose capacity survives from one response
/// to the next (no allocation per request once a connection is warm).

#include <cstddef>
#include <string>
#include <string_view>

namespace sk {

/// The statuses this server sends.
enum class http_status : unsigned {
  ok = 200,
  bad_request = 400,
  not_found = 404,
  method_not_allowed = 405,
  payload_too_large = 413,
  uri_too_long = 414,
  request_header_fields_too_large = 431,
  service_unavailable = 503,
};

/// What the `Connection` header says.
enum class connection_header : unsigned char {
  none,        ///< HTTP/1.1 default (persistent); no header
  keep_alive,  ///< HTTP/1.0 client that asked for keep-alive
  close,       ///< the server closes after this response
};

/// The reason phrase for a status ("OK", "Not Found", ...).
std::string_view reason_phrase(http_status s) noexcept;

/// Replaces the content of `out` with a complete response: status line,
/// `Content-Type`, `Content-Length`, optional `Connection`, `extra_headers`
/// (zero or more complete "Name: value\r\n" lines), blank line, body.
void frame_response(std::string& out, http_status status, std::string_view content_type,
                    std::string_view body, connection_header connection,
                    std::string_view extra_headers = {});

/// Makes a response `frame_response` wrote announce the close: its
/// `Connection` header becomes `close` (added when it had none). For a
/// response framed before the server decided to close (a drain).
void mark_connection_close(std::string& wire);

}  // namespace sk
