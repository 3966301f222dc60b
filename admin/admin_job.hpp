#pragma once
/// One admin API request on its way from the I/O thread to the admin actor,
/// and the way its answer goes back.

#include <functional>
#include <memory>
#include <string>
#include <utility>

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/typed_actor.hpp>
#include <nlohmann/json.hpp>

namespace sk::admin_api {

/// An authenticated request. `reply` is called once, on a CAF thread; it
/// only posts to the I/O thread. A job destroyed unanswered (the actor is
/// gone, or a handler dropped it) answers 503 itself, so a connection never
/// waits for an answer that cannot come.
struct admin_job {
  using reply_function =
      std::function<void(unsigned status, std::string content_type, std::string body)>;

  std::string method;
  /// Path and query as sent; never changed after the job is handed over
  /// (path parameters point into it).
  std::string target;
  std::string body;
  reply_function reply_fn;
  bool replied = false;

  void reply(unsigned status, std::string content_type, std::string body_text) {
    if (replied) return;
    replied = true;
    reply_fn(status, std::move(content_type), std::move(body_text));
  }
  /// Messages may echo request bytes that are not UTF-8 (a percent-decoded
  /// query key): those are replaced (U+FFFD), never a throw (which would
  /// turn a 400 into a 500).
  void reply_json(unsigned status, const nlohmann::json& j) {
    reply(status, "application/json",
          j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  }
  void reply_error(unsigned status, const std::string& message) {
    reply_json(status, nlohmann::json{{"error", message}});
  }
  ~admin_job() {
    if (!replied && reply_fn) {
      replied = true;
      reply_fn(503, "application/json", "{\"error\":\"admin service unavailable\"}\n");
    }
  }
};

using job_ptr = std::shared_ptr<admin_job>;

}  // namespace sk::admin_api

// A job holds a callback into a session: it never leaves this process.
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(sk::admin_api::job_ptr)

namespace sk::admin_api {

/// The admin actor as the transport reaches it: every message is one
/// request to route and answer (admin/admin_routes.cpp).
using admin_actor_type = caf::typed_actor<caf::reacts_to<job_ptr>>;

}  // namespace sk::admin_api
