// Clears OpenSSL's per-thread error queue before every TLS I/O call that
// libcaf_openssl 0.17.6 makes.
//
// Why: OpenSSL requires the thread's error queue to be empty before
// SSL_read/SSL_write/SSL_accept/SSL_connect, because SSL_get_error() reports
// SSL_ERROR_SSL whenever the queue holds an entry. CAF 0.17.6 drains the
// queue only inside CAF_LOG_INFO (compiled out in Debian's build), and all
// cluster connections share one multiplexer thread. So one failed handshake
// (a process with the wrong secret dialling in) or one peer closing its
// connection left an entry behind, and the next harmless "would block" on
// ANOTHER connection was taken for a fatal error: CAF closed a healthy
// connection between two members. Seen in tests/cluster/cluster_test.py
// before this fix: every dial of the wrong-secret process dropped the
// links between the real members.
//
// How: the daemon defines these four functions; the dynamic linker binds
// libcaf_openssl's calls to them (an executable's definitions come first),
// and each clears the queue and calls the real one (RTLD_NEXT).

#include <dlfcn.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "cluster/secret.hpp"

namespace {

template <class F>
F real(const char* name) {
  return reinterpret_cast<F>(::dlsym(RTLD_NEXT, name));
}

}  // namespace

extern "C" {

int SSL_read(SSL* ssl, void* buf, int num) {
  static const auto fn = real<int (*)(SSL*, void*, int)>("SSL_read");
  ERR_clear_error();
  return fn(ssl, buf, num);
}

int SSL_write(SSL* ssl, const void* buf, int num) {
  static const auto fn = real<int (*)(SSL*, const void*, int)>("SSL_write");
  ERR_clear_error();
  return fn(ssl, buf, num);
}

int SSL_accept(SSL* ssl) {
  static const auto fn = real<int (*)(SSL*)>("SSL_accept");
  ERR_clear_error();
  return fn(ssl);
}

int SSL_connect(SSL* ssl) {
  static const auto fn = real<int (*)(SSL*)>("SSL_connect");
  ERR_clear_error();
  return fn(ssl);
}

}  // extern "C"

namespace sk::cluster {

// Referenced by configure_actor_system so that the linker keeps this object
// (it sits in a static library).
bool openssl_error_queue_fix() noexcept { return true; }

}  // namespace sk::cluster
