#include "app/swarmctl/client.hpp"

#include <cctype>
#include <cerrno>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>

#include <curl/curl.h>

namespace sk::swarmctl {

namespace {

bool is_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

std::string admin_url::authority() const {
  const bool v6 = host.find(':') != std::string::npos;
  return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

std::string admin_url::text() const {
  return (tls ? "https://" : "http://") + authority() + base_path;
}

std::optional<admin_url> parse_admin_url(std::string_view text, std::string& error) {
  const std::string_view scheme_sep = "://";
  const auto sep = text.find(scheme_sep);
  if (sep == std::string_view::npos) {
    error = "'" + std::string(text) +
            "' is not a URL; expected http://HOST:PORT or "
            "https://HOST:PORT";
    return std::nullopt;
  }
  const std::string scheme = lower(text.substr(0, sep));
  if (scheme != "http" && scheme != "https") {
    error = "unsupported URL scheme '" + scheme +
            "'; expected http://HOST:PORT or "
            "https://HOST:PORT";
    return std::nullopt;
  }
  std::string_view rest = text.substr(sep + scheme_sep.size());
  if (rest.find_first_of("?#") != std::string_view::npos) {
    error = "the admin URL may not have a query or fragment: '" + std::string(text) + "'";
    return std::nullopt;
  }
  const auto slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  std::string_view path = slash == std::string_view::npos ? std::string_view{} : rest.substr(slash);
  if (authority.find('@') != std::string_view::npos) {
    error = "the admin URL may not carry credentials; use --token or --token-file";
    return std::nullopt;
  }
  admin_url url;
  url.tls = scheme == "https";
  url.port = url.tls ? 443 : 80;
  std::string_view port_text;
  if (!authority.empty() && authority.front() == '[') {
    const auto close = authority.find(']');
    if (close == std::string_view::npos) {
      error = "unclosed '[' in the host of '" + std::string(text) + "'";
      return std::nullopt;
    }
    url.host = std::string(authority.substr(1, close - 1));
    const auto after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') {
        error = "unexpected text after ']' in '" + std::string(text) + "'";
        return std::nullopt;
      }
      port_text = after.substr(1);
      if (port_text.empty()) {
        error = "empty port in '" + std::string(text) + "'";
        return std::nullopt;
      }
    }
  } else {
    const auto colon = authority.find(':');
    url.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) {
      port_text = authority.substr(colon + 1);
      if (port_text.empty()) {
        error = "empty port in '" + std::string(text) + "'";
        return std::nullopt;
      }
    }
  }
  if (url.host.empty()) {
    error = "no host in '" + std::string(text) + "'";
    return std::nullopt;
  }
  if (!port_text.empty()) {
    if (!is_digits(port_text) || port_text.size() > 5 || std::stoul(std::string(port_text)) == 0 ||
        std::stoul(std::string(port_text)) > 65535) {
      error = "port '" + std::string(port_text) + "' is not a number from 1 to 65535";
      return std::nullopt;
    }
    url.port = static_cast<std::uint16_t>(std::stoul(std::string(port_text)));
  }
  std::string base(path);
  while (!base.empty() && base.back() == '/') base.pop_back();
  url.base_path = base;
  return url;
}

std::string percent_encode(std::string_view raw) {
  static constexpr char hex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : raw) {
    const bool unreserved = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                            (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' || c == '~';
    if (unreserved) {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(hex[c >> 4]);
      out.push_back(hex[c & 15]);
    }
  }
  return out;
}

namespace {

constexpr std::size_t max_answer_bytes = 64u * 1024 * 1024;

/// What the callbacks fill in while libcurl runs.
struct transfer {
  std::string body;
  std::string content_type;
  bool too_large = false;
  const std::atomic<bool>* cancel = nullptr;
  bool cancelled = false;
};

std::size_t on_body(char* data, std::size_t size, std::size_t n, void* user) {
  auto* t = static_cast<transfer*>(user);
  const std::size_t bytes = size * n;
  if (t->body.size() + bytes > max_answer_bytes) {
    t->too_large = true;
    return 0;  // libcurl stops with CURLE_WRITE_ERROR
  }
  t->body.append(data, bytes);
  return bytes;
}

std::size_t on_header(char* data, std::size_t size, std::size_t n, void* user) {
  auto* t = static_cast<transfer*>(user);
  const std::string_view line(data, size * n);
  const auto colon = line.find(':');
  if (colon != std::string_view::npos && lower(line.substr(0, colon)) == "content-type") {
    std::string_view v = line.substr(colon + 1);
    while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
    while (!v.empty() && (v.back() == '\r' || v.back() == '\n' || v.back() == ' '))
      v.remove_suffix(1);
    t->content_type = std::string(v);
  }
  return size * n;
}

int on_progress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  auto* t = static_cast<transfer*>(user);
  if (t->cancel != nullptr && t->cancel->load()) {
    t->cancelled = true;
    return 1;  // libcurl stops with CURLE_ABORTED_BY_CALLBACK
  }
  return 0;
}

struct easy_deleter {
  void operator()(CURL* c) const { curl_easy_cleanup(c); }
};
/// Request headers for CURLOPT_HTTPHEADER, freed with the request.
struct header_list {
  curl_slist* head = nullptr;
  header_list() = default;
  header_list(const header_list&) = delete;
  header_list& operator=(const header_list&) = delete;
  ~header_list() { curl_slist_free_all(head); }
  void add(const std::string& line) {
    curl_slist* next = curl_slist_append(head, line.c_str());
    if (next == nullptr) throw transport_error(transport_failure::broken, "out of memory");
    head = next;
  }
};

/// curl_global_init is not thread-safe; once per process is enough.
void global_init() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

[[noreturn]] void fail(CURLcode rc, long os_errno, const admin_url& url, const char* detail,
                       const std::string& secs, const transfer& t) {
  const std::string where = url.text();
  const std::string why = detail[0] != '\0' ? detail : curl_easy_strerror(rc);
  switch (rc) {
    case CURLE_OPERATION_TIMEDOUT:
      throw transport_error(
          transport_failure::timed_out,
          "swarmkeeper admin at " + where + " did not answer within " + secs + " s");
    case CURLE_COULDNT_RESOLVE_HOST:
      throw transport_error(transport_failure::unresolved,
                            "cannot resolve '" + url.host + "': " + why);
    case CURLE_COULDNT_CONNECT:
      if (os_errno == ECONNREFUSED)
        throw transport_error(transport_failure::refused,
                              "cannot reach swarmkeeper admin at " + where +
                                  ": connection refused; is the daemon running with admin.port "
                                  "set?");
      break;
    case CURLE_GOT_NOTHING:
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
      throw transport_error(transport_failure::broken,
                            "swarmkeeper admin at " + where +
                                " closed the connection without answering (did the daemon stop?)");
    case CURLE_PEER_FAILED_VERIFICATION:
      throw transport_error(transport_failure::tls,
                            "the TLS certificate of " + where + " is not trusted (" + why +
                                "); give the proxy's CA with --ca-file=PEM, or --insecure to "
                                "accept any certificate");
    case CURLE_SSL_CACERT_BADFILE:
      throw transport_error(transport_failure::tls, "cannot use the CA file: " + why);
    case CURLE_SSL_CONNECT_ERROR:
      throw transport_error(transport_failure::tls, "TLS handshake with " + where + " failed (" +
                                                        why + "); is it an https port?");
    case CURLE_ABORTED_BY_CALLBACK:
      if (t.cancelled) throw transport_error(transport_failure::interrupted, "interrupted");
      break;
    case CURLE_WRITE_ERROR:
      if (t.too_large)
        throw transport_error(transport_failure::broken,
                              "the answer of " + where + " is larger than 64 MiB; refused");
      break;
    default:
      break;
  }
  throw transport_error(transport_failure::broken,
                        "cannot talk to swarmkeeper admin at " + where + ": " + why);
}

}  // namespace

http_reply perform(const admin_url& url, const http_request& r, const std::string& token,
                   std::chrono::milliseconds timeout, const transfer_options& opts) {
  global_init();
  std::unique_ptr<CURL, easy_deleter> easy(curl_easy_init());
  if (!easy) throw transport_error(transport_failure::broken, "cannot start libcurl");
  CURL* c = easy.get();
  const std::string target_url =
      (url.tls ? "https://" : "http://") + url.authority() + url.base_path + r.target;
  header_list headers;
  headers.add("Accept: application/json");
  headers.add("Connection: close");
  // The token goes only into this header: never into the URL (which error
  // messages show) and never through a proxy named by the environment.
  if (!token.empty()) headers.add("Authorization: Bearer " + token);
  // Without a body, no Content-Type at all (libcurl would add a form type).
  headers.add(r.body.empty() ? "Content-Type:" : "Content-Type: application/json");
  headers.add("Expect:");

  transfer t;
  t.cancel = opts.cancel;
  char error_text[CURL_ERROR_SIZE] = {};
  curl_easy_setopt(c, CURLOPT_URL, target_url.c_str());
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(c, CURLOPT_PROXY, "");  // no proxy from http_proxy/https_proxy
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout.count()));
  curl_easy_setopt(c, CURLOPT_USERAGENT, "swarmctl");
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers.head);
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, error_text);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &t);
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, &t);
  curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
  curl_easy_setopt(c, CURLOPT_XFERINFODATA, &t);
  curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
  if (r.method == "GET") {
    curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
  } else {
    // POST and DELETE always carry a Content-Length (0 without a body).
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, r.body.c_str());
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(r.body.size()));
    if (r.method != "POST") curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, r.method.c_str());
  }
  if (url.tls) {
    if (!opts.ca_file.empty()) curl_easy_setopt(c, CURLOPT_CAINFO, opts.ca_file.c_str());
    if (opts.insecure) {
      curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 0L);
      curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 0L);
    }
  }
  const CURLcode rc = curl_easy_perform(c);
  if (rc != CURLE_OK) {
    long os_errno = 0;
    curl_easy_getinfo(c, CURLINFO_OS_ERRNO, &os_errno);
    std::ostringstream secs;
    secs << static_cast<double>(timeout.count()) / 1000.0;
    fail(rc, os_errno, url, error_text, secs.str(), t);
  }
  long status = 0;
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
  http_reply out;
  out.status = static_cast<int>(status);
  out.content_type = std::move(t.content_type);
  out.body = std::move(t.body);
  return out;
}

}  // namespace sk::swarmctl
