#include "net/http/http_session.hpp"

#include <algorithm>
#include <cerrno>
#include <tuple>
#include <utility>

#ifdef __linux__
#include <sys/socket.h>
#include <sys/uio.h>
#endif

#include <spdlog/spdlog.h>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>

#include "protocol/reply.hpp"

namespace sk {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

namespace {

constexpr std::string_view text_plain = "text/plain";

/// Request-line bytes besides the target: "GET " " HTTP/1.1" "\r\n" with
/// room for longer methods.
constexpr std::size_t request_line_overhead = 32;

/// How long a closing connection waits for the client to close its side.
constexpr auto linger_timeout = std::chrono::seconds(2);

/// How long a draining connection waits for the one request whose response
/// announces the close.
constexpr std::chrono::milliseconds drain_read_timeout{1000};

/// Network errors that are part of normal life (clients vanish, time out).
bool expected_network_error(const beast::error_code& ec) {
  return ec == asio::error::operation_aborted || ec == beast::error::timeout ||
         ec == asio::error::connection_reset || ec == asio::error::broken_pipe ||
         ec == asio::error::eof || ec == asio::error::not_connected ||
         ec == http::error::partial_message || ec == http::error::end_of_stream;
}

}  // namespace

ip_address to_ip_address(const asio::ip::address& a) noexcept {
  if (a.is_v4()) return ip_address::make_v4(a.to_v4().to_uint());
  const auto b = a.to_v6().to_bytes();
  std::uint8_t raw[16];
  std::copy(b.begin(), b.end(), raw);
  return ip_address::make_v6(raw);  // normalises IPv4-mapped to IPv4
}

// -- life cycle ---------------------------------------------------------------

http_session::http_session(socket_type&& socket, const tcp::endpoint& peer, http_context& ctx,
                           std::size_t lane, connection_slots::ticket slot)
    : ctx_(ctx),
      lane_(lane),
      executor_(socket.get_executor()),
      stream_(std::move(socket)),
      peer_(to_ip_address(peer.address())),
      peer_port_(peer.port()),
      linger_timer_(executor_),
      slot_(slot),
      ring_(std::max<std::size_t>(ctx.cfg.max_pipeline, 1)) {
  write_buffers_.reserve(ring_.size());
}

http_session::~http_session() {
  if (registered_) ctx_.remove(registry_pos_);
  ctx_.per_address.close(slot_);
}

void http_session::start(http_context::registry::iterator pos, bool drain_now) {
  registry_pos_ = pos;
  registered_ = true;
  asio::dispatch(executor_, [self = shared_from_this(), drain_now] {
#ifndef __linux__
    // Elsewhere accepted sockets need their own TCP_NODELAY (Linux inherits
    // the listener's).
    beast::error_code ec;
    self->stream_.socket().set_option(tcp::no_delay(true), ec);
#endif
    if (drain_now) {
      self->begin_drain();
      return;
    }
    self->do_read();
  });
}

std::string http_session::who() const {
  std::string s = peer_.v6 ? "[" + peer_.to_string() + "]" : peer_.to_string();
  return s + ":" + std::to_string(peer_port_);
}

void http_session::drain() {
  asio::post(executor_, [self = shared_from_this()] { self->begin_drain(); });
}

void http_session::shed() {
  asio::post(executor_, [self = shared_from_this()] { self->shed_now(); });
}

void http_session::shed_now() {
  if (closed_) return;
  if (!lingering_ && !(reading_ && in_flight() == 0 && writing_count_ == 0)) return;  // busy now
  // Bytes in the buffer while a read waits: part of a request came, the
  // rest has not (a whole one would have been handled already).
  auto& shed = lingering_ || buffer_.size() == 0 ? ctx_.shed_idle : ctx_.shed_slow;
  shed.fetch_add(1, std::memory_order_relaxed);
  if (spdlog::should_log(spdlog::level::debug))
    spdlog::debug("http {}: shed for a new connection (http.max-connections)", who());
  close_now();
}

void http_session::note_waiting() {
  std::int64_t v = busy_mark;
  if (closed_) {
    v = busy_mark;
  } else if (lingering_) {
    v = 0;
  } else if (reading_ && in_flight() == 0 && writing_count_ == 0) {
    v = waiting_since_seen_ != busy_mark
            ? waiting_since_seen_
            : std::chrono::steady_clock::now().time_since_epoch().count();
  }
  if (v == waiting_since_seen_) return;
  waiting_since_seen_ = v;
  waiting_since_.store(v, std::memory_order_relaxed);
}

void http_session::begin_drain() {
  if (closed_ || lingering_ || draining_) return;
  draining_ = true;
  // Finish what we owe; the last response announces the close.
  if (in_flight() != 0 && close_last_response()) {
    read_closed_ = true;
    return;
  }
  // Every response owed is on the wire already without the close, or none
  // is owed (an idle keep-alive connection, or one whose next requests are
  // on their way): one more request is read and its response announces
  // the close, so a pipelining client learns of the close from a response
  // instead of a write into a closed socket. A client that sends none is
  // closed at the (short) read deadline.
  linger_timer_.expires_after(drain_read_timeout);
  linger_timer_.async_wait([self = shared_from_this()](beast::error_code ec) {
    if (!ec) self->end_drain_wait();
  });
  maybe_read();
}

void http_session::end_drain_wait() {
  if (closed_ || lingering_ || read_closed_) return;  // the request came, or closed already
  read_closed_ = true;
  maybe_finish();  // else the write under way finishes it
}

bool http_session::close_last_response() {
  const std::uint64_t last_seq = next_seq_ - 1;
  slot& last = slot_for(last_seq);
  if (last.close_after) return true;
  if (!last.ready) {
    last.close_after = true;  // framed with the header when its answer comes
    return true;
  }
  if (last_seq >= head_seq_ + writing_count_) {
    // Framed, not yet being written: the header is put in.
    last.close_after = true;
    mark_connection_close(last.wire);
    return true;
  }
  return false;
}

// -- reading ------------------------------------------------------------------

void http_session::maybe_read() {
  if (!reading_ && !read_closed_ && !closed_ && !lingering_ && in_flight() < ring_.size())
    do_read();
}

void http_session::do_read() {
  // A fresh parser per request: Beast parsers are single-use, and a fresh
  // one resets the limits' counters. The previous request's fields go with
  // its parser, so their memory is free for this one.
  parser_.reset();
  arena_.reset();
  parser_.emplace(std::piecewise_construct, std::make_tuple(),
                  std::make_tuple(request_arena_allocator<char>(arena_)));
  parser_->header_limit(static_cast<std::uint32_t>(
      ctx_.cfg.max_url_length + ctx_.cfg.max_header_bytes + request_line_overhead));
  // Tracker requests are GETs without a body; any body is refused (413).
  parser_->body_limit(0);
  // (A draining connection's wait is bounded by begin_drain's timer.)
  stream_.expires_after(ctx_.cfg.read_timeout);
  reading_ = true;
  http::async_read(stream_, buffer_, *parser_,
                   beast::bind_front_handler(&http_session::on_read, shared_from_this()));
  note_waiting();
}

void http_session::on_read(beast::error_code ec, std::size_t bytes) {
  reading_ = false;
  if (closed_) return;
  note_waiting();
  if (lingering_) {
    if (ec)
      close_now();
    else
      do_discard();
    return;
  }
  if (read_closed_) {
    // Draining began while this read was pending: requests that arrive now
    // are not served (the client sees the close and retries elsewhere).
    maybe_finish();
    return;
  }
  if (ec == http::error::end_of_stream) {  // the client closed between requests
    read_closed_ = true;
    maybe_finish();
    return;
  }
  if (ec) {
    if (respond_to_parse_error(ec)) return;
    if (!expected_network_error(ec))
      spdlog::warn("http {}: read: {}", who(), ec.message());
    else if (spdlog::should_log(spdlog::level::debug))
      spdlog::debug("http {}: read: {}", who(), ec.message());
    close_now();
    return;
  }
  handle_request(bytes);
  if (draining_ && in_flight() != 0 && close_last_response()) read_closed_ = true;
  maybe_write();
  maybe_read();
  note_waiting();
}

bool http_session::respond_to_parse_error(beast::error_code ec) {
  if (ec.category() != http::make_error_code(http::error::end_of_stream).category() ||
      ec == http::error::partial_message)
    return false;
  http_status status = http_status::bad_request;
  std::string_view text = "bad request\n";
  std::string_view extra;
  if (ec == http::error::header_limit || ec == http::error::buffer_overflow) {
    // Tell an overlong URL (414) from overlong headers (431) by where the
    // request line ends in what was received.
    const auto data = buffer_.data();
    const std::string_view received(static_cast<const char*>(data.data()), data.size());
    const auto eol = received.find('\n');
    if (eol == std::string_view::npos || eol > ctx_.cfg.max_url_length + request_line_overhead) {
      status = http_status::uri_too_long;
      text = "request URI too long\n";
    } else {
      status = http_status::request_header_fields_too_large;
      text = "request header fields too large\n";
    }
  } else if (ec == http::error::body_limit || ec == http::error::unexpected_body) {
    // The request line was parsed before the body limit tripped, so the
    // method is known: a POST with a body is a wrong method first of all.
    const auto method = parser_->get().method();
    if (method != http::verb::get && method != http::verb::unknown) {
      status = http_status::method_not_allowed;
      text = "method not allowed\n";
      extra = "Allow: GET\r\n";
    } else {
      status = http_status::payload_too_large;
      text = "request bodies are not accepted\n";
    }
  }
  count(status == http_status::method_not_allowed ? http_outcome::method_not_allowed
                                                  : http_outcome::bad_request);
  if (spdlog::should_log(spdlog::level::debug))
    spdlog::debug("http {}: {} ({})", who(), static_cast<unsigned>(status), ec.message());
  // The parser's state is unknown after an error: answer and close.
  slot& s = open_slot();
  s.close_after = true;
  read_closed_ = true;
  finish_slot(s, status, text, extra);
  maybe_write();
  return true;
}

// -- requests -----------------------------------------------------------------

http_session::slot& http_session::open_slot() {
  slot& s = slot_for(next_seq_);
  s.seq = next_seq_++;
  s.ready = false;
  s.close_after = false;
  s.http10_keep_alive = false;
  s.compact = true;
  s.no_peer_id = false;
  s.announce = false;
  s.scrape = false;
  return s;
}

void http_session::handle_request(std::size_t header_bytes) {
  const auto& req = parser_->get();
  const bool keep_alive = req.keep_alive();
  slot& s = open_slot();
  s.http10_keep_alive = keep_alive && req.version() == 10;
  if (!keep_alive) {
    s.close_after = true;
    read_closed_ = true;
    client_closes_ = true;
  }
  const beast::string_view target = req.target();
  if (target.size() > ctx_.cfg.max_url_length) {
    count(http_outcome::bad_request);
    s.close_after = true;
    read_closed_ = true;
    finish_slot(s, http_status::uri_too_long, "request URI too long\n");
    return;
  }
  if (header_bytes > target.size() + ctx_.cfg.max_header_bytes + request_line_overhead) {
    count(http_outcome::bad_request);
    s.close_after = true;
    read_closed_ = true;
    finish_slot(s, http_status::request_header_fields_too_large,
                "request header fields too large\n");
    return;
  }
  if (req.method() != http::verb::get) {
    count(http_outcome::method_not_allowed);
    finish_slot(s, http_status::method_not_allowed, "method not allowed\n", "Allow: GET\r\n");
    return;
  }
  const std::string_view whole(target.data(), target.size());
  const auto qmark = whole.find('?');
  const std::string_view path = whole.substr(0, qmark);
  const std::string_view query =
      qmark == std::string_view::npos ? std::string_view{} : whole.substr(qmark + 1);
  const bool tracker_path = path == "/announce" || path == "/scrape";
  if (tracker_path && ctx_.starting.load(std::memory_order_acquire)) {
    // Before the daemon is ready (its state file loading) no swarm is asked:
    // an empty peer list now would be wrong a moment later.
    count(path == "/announce" ? http_outcome::announce_failure : http_outcome::scrape_failure);
    finish_failure(s, "tracker starting (loading its state), retry later", true);
  } else if (path == "/announce") {
    handle_announce(s, query);
  } else if (path == "/scrape") {
    handle_scrape(s, query);
  } else if (path == "/health") {
    count(http_outcome::health);
    if (ctx_.starting.load(std::memory_order_relaxed))
      finish_slot(s, http_status::service_unavailable, "starting");
    else if (ctx_.serving.load(std::memory_order_relaxed))
      finish_slot(s, http_status::ok, "ok");
    else
      finish_slot(s, http_status::service_unavailable, "draining");
  } else {
    count(http_outcome::not_found);
    finish_slot(s, http_status::not_found, "not found\n");
  }
}

void http_session::handle_announce(slot& s, std::string_view query) {
  announce_request ar;
  const query_error err = parse_announce_query(query, ctx_.limits, ar);
  if (err != query_error::ok) {
    count(http_outcome::bad_request);
    finish_failure(s, failure_text(err), false);
    return;
  }
  s.announce = true;
  s.received = std::chrono::steady_clock::now();
  // Whether to believe the `ip` the client claims is the gateway's rule,
  // the same for both transports.
  const ip_address client = client_address();
  s.external_ip = client;
  s.compact = ar.compact;
  s.no_peer_id = ar.no_peer_id;
  http_lane& lane = *ctx_.lanes[lane_];
  lane.gw().announce(lane.gateway_lane(), transport::http, std::move(ar), client, false,
                     make_http_announce_reply(shared_from_this(), s.seq, lane));
  lane.schedule_flush();
}

ip_address http_session::client_address() {
  // The socket peer, or whom a trusted proxy names (HTTP's own headers).
  if (ctx_.cfg.proxies.empty() || !ctx_.cfg.proxies.contains(peer_)) return peer_;
  const auto& req = parser_->get();
  forwarded_for_.clear();
  const auto fields = req.equal_range("X-Forwarded-For");
  for (auto it = fields.first; it != fields.second; ++it) {
    if (!forwarded_for_.empty()) forwarded_for_.push_back(',');
    forwarded_for_.append(it->value().data(), it->value().size());
  }
  const auto real = req["X-Real-IP"];
  return resolve_client_address(peer_, forwarded_for_, {real.data(), real.size()},
                                ctx_.cfg.proxies);
}

void http_session::handle_scrape(slot& s, std::string_view query) {
  std::vector<info_hash> hashes;
  const query_error err = parse_scrape_query(query, ctx_.limits, hashes);
  if (err != query_error::ok) {
    count(http_outcome::bad_request);
    finish_failure(s, failure_text(err), false);
    return;
  }
  if (hashes.empty()) {
    // A full scrape would walk every swarm for one anonymous request.
    count(http_outcome::bad_request);
    finish_failure(s, "full scrape is not supported: give at least one info_hash", false);
    return;
  }
  // The reply's dictionary is keyed by hash: sorted and unique.
  std::sort(hashes.begin(), hashes.end());
  hashes.erase(std::unique(hashes.begin(), hashes.end()), hashes.end());
  s.scrape = true;
  http_lane& lane = *ctx_.lanes[lane_];
  lane.gw().scrape(lane.gateway_lane(), transport::http, std::move(hashes), client_address(),
                   make_http_scrape_reply(shared_from_this(), s.seq, lane));
  lane.schedule_flush();
}

void http_session::finish_slot(slot& s, http_status status, std::string_view body,
                               std::string_view extra_headers) {
  const connection_header conn = s.close_after         ? connection_header::close
                                 : s.http10_keep_alive ? connection_header::keep_alive
                                                       : connection_header::none;
  frame_response(s.wire, status, text_plain, body, conn, extra_headers);
  s.ready = true;
}

void http_session::finish_failure(slot& s, std::string_view reason, bool retryable) {
  body_.clear();
  encode_failure(
      body_, reason,
      retryable ? std::optional<std::int64_t>{ctx_.gw.config().retry_in_minutes} : std::nullopt);
  finish_slot(s, http_status::ok, body_);
}

// -- replies from the network actors -----------------------------------------

http_session::slot* http_session::reply_slot(std::uint64_t tag) noexcept {
  if (closed_ || lingering_ || tag < head_seq_ || tag >= next_seq_) return nullptr;
  slot& s = slot_for(tag);
  if (s.seq != tag || s.ready) return nullptr;
  return &s;
}

void http_session::apply(http_lane::reply& r) {
  slot* s = reply_slot(r.tag);
  if (s == nullptr) return;
  switch (r.what) {
    case http_lane::reply::kind::announce: {
      const announce_result& a = r.announce;
      if (!a.failure_reason.empty()) {
        count(http_outcome::announce_refused);
        // The swarm refused this peer (banned client, abuse): BEP 3 failure,
        // with BEP 31 retry-in when the swarm set one.
        body_.clear();
        encode_failure(body_, a.failure_reason,
                       a.retry_in_minutes != 0 ? std::optional<std::int64_t>{a.retry_in_minutes}
                                               : std::nullopt);
        finish_slot(*s, http_status::ok, body_);
        break;
      }
      count(http_outcome::announce_ok);
      announce_reply_view v;
      v.interval = a.interval;
      v.min_interval = a.min_interval;
      v.stats = a.stats;
      v.compact = s->compact;
      v.no_peer_id = s->no_peer_id;
      v.peers4 = a.peers4;
      v.peers6 = a.peers6;
      v.peers = a.peers.data();
      v.peer_count = a.peers.size();
      v.warning_message = a.warning_message;
      v.external_ip = s->external_ip;
      body_.clear();
      encode_announce_reply(body_, v);
      finish_slot(*s, http_status::ok, body_);
      break;
    }
    case http_lane::reply::kind::scrape: {
      count(http_outcome::scrape_ok);
      // Refused torrents are left out of the reply (BEP 48 lets a tracker
      // omit torrents it does not serve), so a scrape cannot tell a refused
      // torrent from an unknown one's absence either way.
      scrape_entries_.clear();
      for (const scrape_answer& a : r.scrape) {
        if (a.served) scrape_entries_.push_back(scrape_entry{a.hash, a.stats});
      }
      body_.clear();
      encode_scrape_reply(body_, scrape_entries_.data(), scrape_entries_.size());
      finish_slot(*s, http_status::ok, body_);
      break;
    }
    case http_lane::reply::kind::refusal:
      if (r.refusal == gateway_refusal::denied) {
        count(http_outcome::announce_denied);
      } else if (r.refusal == gateway_refusal::rate_limited) {
        count(http_outcome::rate_limited);
      } else {
        count(s->scrape ? http_outcome::scrape_failure : http_outcome::announce_failure);
      }
      body_.clear();
      encode_failure(
          body_, refusal_text(r.refusal),
          r.retry_in_minutes != 0 ? std::optional<std::int64_t>{r.retry_in_minutes} : std::nullopt);
      finish_slot(*s, http_status::ok, body_);
      break;
  }
  maybe_write();
}

// -- writing ------------------------------------------------------------------

void http_session::maybe_write() {
  if (closed_ || lingering_ || writing_count_ > 0) return;
  // Gather every consecutive ready response into one write.
  write_buffers_.clear();
  std::chrono::steady_clock::time_point now{};
  for (std::uint64_t seq = head_seq_; seq < next_seq_; ++seq) {
    slot& s = slot_for(seq);
    if (!s.ready) break;
    if (s.announce) {
      // Receipt -> reply handed to the socket (one clock read per write).
      if (now == std::chrono::steady_clock::time_point{}) now = std::chrono::steady_clock::now();
      ctx_.lanes[lane_]->latency.record(now - s.received);
      s.announce = false;
    }
    write_buffers_.push_back(asio::buffer(s.wire));
    if (s.close_after) break;
  }
  if (write_buffers_.empty()) return;
  writing_count_ = write_buffers_.size();
  if (slot_for(head_seq_ + writing_count_ - 1).close_after && write_closing_now()) return;
  stream_.expires_after(ctx_.cfg.write_timeout);
  asio::async_write(stream_, write_buffers_,
                    beast::bind_front_handler(&http_session::on_write, shared_from_this()));
}

bool http_session::write_closing_now() {
#ifdef __linux__
  constexpr std::size_t most_buffers = 64;
  if (write_buffers_.size() > most_buffers) return false;
  iovec iov[most_buffers];
  std::size_t total = 0;
  for (std::size_t i = 0; i < write_buffers_.size(); ++i) {
    iov[i].iov_base = const_cast<void*>(write_buffers_[i].data());
    iov[i].iov_len = write_buffers_[i].size();
    total += iov[i].iov_len;
  }
  msghdr msg{};
  msg.msg_iov = iov;
  msg.msg_iovlen = write_buffers_.size();
  ssize_t sent;
  do {
    sent = ::sendmsg(stream_.socket().native_handle(), &msg,
                     MSG_MORE | MSG_DONTWAIT | MSG_NOSIGNAL);
  } while (sent < 0 && errno == EINTR);
  if (sent < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK) return false;
    on_write(beast::error_code(errno, boost::system::system_category()), 0);
    return true;
  }
  if (static_cast<std::size_t>(sent) == total) {
    on_write({}, total);
    return true;
  }
  // The socket took a part: the caller writes the rest the usual way, and
  // being sent without MSG_MORE it also pushes out the part held back.
  auto skip = static_cast<std::size_t>(sent);
  std::size_t first = 0;
  while (skip >= write_buffers_[first].size()) skip -= write_buffers_[first++].size();
  write_buffers_.erase(write_buffers_.begin(),
                       write_buffers_.begin() + static_cast<std::ptrdiff_t>(first));
  write_buffers_.front() += skip;
  return false;
#else
  return false;
#endif
}

void http_session::on_write(beast::error_code ec, std::size_t) {
  const std::size_t written = writing_count_;
  writing_count_ = 0;
  if (closed_) return;
  if (ec) {
    if (!expected_network_error(ec))
      spdlog::warn("http {}: write: {}", who(), ec.message());
    else if (spdlog::should_log(spdlog::level::debug))
      spdlog::debug("http {}: write: {}", who(), ec.message());
    close_now();
    return;
  }
  bool closing = false;
  for (std::size_t i = 0; i < written; ++i) {
    slot& s = slot_for(head_seq_++);
    closing = closing || s.close_after;
    s.ready = false;
    s.wire.clear();  // keeps its capacity for the next response
  }
  if (closing) {
    sent_close_ = true;
    read_closed_ = true;
    linger_close();
    return;
  }
  maybe_write();
  maybe_read();
  maybe_finish();
  note_waiting();
}

// -- closing ------------------------------------------------------------------

void http_session::maybe_finish() {
  if (closed_ || lingering_ || !read_closed_ || in_flight() != 0 || writing_count_ != 0) return;
  // A drain closes with the client possibly still sending: linger, so that
  // its unread bytes do not turn the close into a reset.
  if (sent_close_ || draining_)
    linger_close();
  else
    close_now();
}

void http_session::linger_close() {
  if (closed_ || lingering_) return;
  // A close with unread bytes in our receive buffer, or with bytes still
  // on their way, is answered by the client's kernel with a reset, which
  // can discard responses the client has not read yet. A client that asked
  // for the close itself sends nothing more (RFC 9112 9.6), so when nothing
  // of it is buffered, close at once: no timer, no extra read. That is
  // every non-keep-alive request. When the server decided to close (an
  // error, draining), a pipelining client may have sent more before it
  // reads the close, however empty the socket is now: shut the sending
  // side and read until its EOF (or `linger_timeout`).
  if (!reading_ && buffer_.size() == 0 && client_closes_) {
    close_now();
    return;
  }
  lingering_ = true;
  beast::error_code ec;
  stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
  if (ec) {
    close_now();
    return;
  }
  note_waiting();
  linger_timer_.expires_after(linger_timeout);
  linger_timer_.async_wait([self = shared_from_this()](beast::error_code wait_ec) {
    if (!wait_ec) self->close_now();
  });
  // A pending read (drain) becomes the discard read when it completes.
  if (!reading_) do_discard();
}

void http_session::do_discard() {
  reading_ = true;
  stream_.expires_never();
  stream_.async_read_some(asio::buffer(discard_),
                          [self = shared_from_this()](beast::error_code ec, std::size_t) {
                            self->reading_ = false;
                            if (self->closed_) return;
                            if (ec)
                              self->close_now();
                            else
                              self->do_discard();
                          });
}

void http_session::close_now() {
  if (closed_) return;
  closed_ = true;
  note_waiting();
  linger_timer_.cancel();
  // Closes the socket (whatever is queued still goes out, then FIN; a
  // shutdown() first would only be one more system call) and cancels the
  // stream's deadline timer.
  stream_.close();
  // Jobs still held by network actors keep this object alive; their replies
  // find closed_ set and are dropped.
}

}  // namespace sk
