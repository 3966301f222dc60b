#pragma once
/// One HTTP connection (internal to net/http: included by http_server.cpp,
/// http_session.cpp and http_lane.cpp only). Its lane and the state all
/// sessions share are in http_lane.hpp.
///
/// A session lives on one I/O thread: each I/O thread runs its own
/// io_context, and an io_context run by a single thread is an implicit
/// strand, so every member below is touched only on that thread. The
/// exception is `executor_` (immutable); the replies of its requests run on
/// swarm threads and only queue an answer for the lane (`http_lane`).
/// (An explicit strand per connection would serialise nothing more and add
/// a strand queue hop and a lock to every completion.)
///
/// Pipelining: each request takes the next slot of a ring of `max_pipeline`
/// slots, in request order. A slot is filled when its response is known
/// (at once for /health and errors, later for announces and scrapes) and
/// written only when every slot before it has been written:
///
///   seq:    7        8         9        10
///         [sent]  [ready]  [waiting]  [ready]   ← write 8, then wait for 9
///          head ───▶                    next_seq_ = 11
///
/// Reading pauses while the ring is full and resumes as writes free slots.

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/basic_stream_socket.hpp>
#include <boost/asio/basic_waitable_timer.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "net/gateway.hpp"
#include "net/http/http_lane.hpp"
#include "net/http/http_response.hpp"
#include "net/http/http_server.hpp"
#include "net/http/request_arena.hpp"

namespace sk {

/// The socket peer as the tracker sees it (IPv4-mapped IPv6 as IPv4).
ip_address to_ip_address(const boost::asio::ip::address& a) noexcept;

class http_session final : public std::enable_shared_from_this<http_session> {
 public:
  using tcp = boost::asio::ip::tcp;
  /// The executor of the connection's io_context (concrete, not type-erased:
  /// `any_io_executor` costs reference counting on every handler).
  using executor_type = boost::asio::io_context::executor_type;
  using socket_type = boost::asio::basic_stream_socket<tcp, executor_type>;
  using stream_type =
      boost::beast::basic_stream<tcp, executor_type, boost::beast::unlimited_rate_policy>;
  using timer_type =
      boost::asio::basic_waitable_timer<std::chrono::steady_clock,
                                        boost::asio::wait_traits<std::chrono::steady_clock>,
                                        executor_type>;

  /// `socket` was accepted on the io_context of I/O thread `lane`, from
  /// `peer`; `slot` is its count in `ctx.per_address` (given back when the
  /// session ends).
  http_session(socket_type&& socket, const tcp::endpoint& peer, http_context& ctx,
               std::size_t lane, connection_slots::ticket slot = {});
  ~http_session();

  /// `waiting_since` of a session that owes something (a response, a
  /// write) or is closed: never shed.
  static constexpr std::int64_t busy_mark = INT64_MAX;
  /// Since when (steady_clock ticks) the session waits for a request with
  /// nothing owed — idle between requests or still receiving one — or
  /// `busy_mark`; 0 while lingering (closing anyway). Read by the accepting
  /// thread to pick whom to shed.
  const std::atomic<std::int64_t>& waiting_since() const noexcept { return waiting_since_; }
  /// Thread-safe: closes the session on its thread if it still waits
  /// there (counted as shed: idle, or slow with part of a request read).
  void shed();

  /// Starts reading; call once, right after construction, with the registry
  /// position from `http_context::add`.
  void start(http_context::registry::iterator pos, bool drain_now);

  /// Thread-safe: asks the session to finish (see http_server::drain).
  void drain();

  /// Applies what came back for one request (on the session's I/O thread).
  void apply(http_lane::reply& r);

 private:
  using request_parser = boost::beast::http::request_parser<boost::beast::http::empty_body,
                                                            request_arena_allocator<char>>;

  /// One pipelined request's response.
  struct slot {
    std::uint64_t seq = 0;
    bool ready = false;
    /// Close the connection after this response.
    bool close_after = false;
    /// HTTP/1.0 client asking for keep-alive: must be told it got it.
    bool http10_keep_alive = false;
    // What the announce encoder needs from the request.
    bool compact = true;
    bool no_peer_id = false;
    ip_address external_ip;
    /// An announce (its latency is recorded when the reply is written) or a
    /// scrape (for the failure outcome); neither for anything else.
    bool announce = false;
    bool scrape = false;
    /// When the request was read (announces only).
    std::chrono::steady_clock::time_point received{};
    /// The framed response (headers + body); capacity reused.
    std::string wire;
  };

  slot& slot_for(std::uint64_t seq) noexcept { return ring_[seq % ring_.size()]; }
  std::size_t in_flight() const noexcept { return static_cast<std::size_t>(next_seq_ - head_seq_); }

  void do_read();
  void on_read(boost::beast::error_code ec, std::size_t bytes);
  /// Turns a read error that carries an HTTP meaning into its response.
  bool respond_to_parse_error(boost::beast::error_code ec);
  void handle_request(std::size_t header_bytes);
  void handle_announce(slot& s, std::string_view query);
  void handle_scrape(slot& s, std::string_view query);
  /// Who sent the request being handled: the socket peer, or the client a
  /// trusted proxy names.
  ip_address client_address();
  slot& open_slot();
  /// Frames `body` into `s` and marks it ready.
  void finish_slot(slot& s, http_status status, std::string_view body,
                   std::string_view extra_headers = {});
  void finish_failure(slot& s, std::string_view reason, bool retryable);
  void count(http_outcome o) noexcept { ctx_.lanes[lane_]->count(o); }
  /// Finds the slot for a reply; null if the session closed or `tag` is stale.
  slot* reply_slot(std::uint64_t tag) noexcept;

  void maybe_read();
  void maybe_write();
  void on_write(boost::beast::error_code ec, std::size_t bytes);
  /// Ends the session if nothing is left to do.
  void maybe_finish();
  /// Graceful end after a final response: shutdown(send), then discard what
  /// the client still sends until EOF or a short deadline, so the kernel
  /// does not answer unread data with a RST that would destroy the response.
  void linger_close();
  void do_discard();
  void close_now();
  /// Writes `write_buffers_`, the last of which announces the close, at
  /// once and without waiting for the socket, marked as more to come so
  /// that the FIN of the close that follows leaves in the same segment as
  /// the response (one packet fewer for both ends). True when the write is
  /// done (or failed and the connection closed); false when the socket took
  /// none or only a part of it now: `write_buffers_` then holds what is
  /// left, for the caller to write asynchronously.
  bool write_closing_now();
  /// Makes the last response in the ring announce the close; false when
  /// it is being written already.
  bool close_last_response();
  /// A draining connection's wait for one more request is over.
  void end_drain_wait();
  void begin_drain();
  void shed_now();
  /// Publishes `waiting_since` after the session's state changed.
  void note_waiting();
  /// "ADDR:PORT" of the peer, for debug logs (formatted only when logged).
  std::string who() const;

  http_context& ctx_;
  const std::size_t lane_;
  const executor_type executor_;
  stream_type stream_;
  boost::beast::flat_buffer buffer_;
  /// The current request's target and fields (before the parser: it
  /// outlives the parser's blocks).
  request_arena arena_;
  std::optional<request_parser> parser_;
  ip_address peer_;  ///< socket peer, IPv4-mapped normalised
  std::uint16_t peer_port_ = 0;
  timer_type linger_timer_;
  http_context::registry::iterator registry_pos_;
  bool registered_ = false;
  connection_slots::ticket slot_;
  std::atomic<std::int64_t> waiting_since_{busy_mark};
  std::int64_t waiting_since_seen_ = busy_mark;  ///< the last value stored there

  std::vector<slot> ring_;
  std::uint64_t head_seq_ = 0;  ///< oldest slot not yet written
  std::uint64_t next_seq_ = 0;  ///< slot the next request takes
  std::vector<boost::asio::const_buffer> write_buffers_;
  std::size_t writing_count_ = 0;  ///< slots in the write in flight (0: none)

  bool reading_ = false;
  bool read_closed_ = false;  ///< no further requests will be read
  bool draining_ = false;
  bool lingering_ = false;
  bool closed_ = false;
  /// A response with `Connection: close` went out: end with a lingering close.
  bool sent_close_ = false;
  /// The client itself ended the conversation (`Connection: close` or
  /// HTTP/1.0 without keep-alive) and so sends nothing more.
  bool client_closes_ = false;

  /// Scratch buffers reused for every request of this connection.
  std::string body_;
  std::vector<scrape_entry> scrape_entries_;
  std::string forwarded_for_;
  char discard_[512];
};

}  // namespace sk
