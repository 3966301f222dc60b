#pragma once
/// Everything derived from the cluster secret.
///
/// BASP (CAF's wire protocol) has no authentication: whoever reaches the
/// port may spawn registered actors and send messages. The cluster port
/// therefore speaks only TLS (libcaf_openssl), with certificates required
/// and verified on both sides (CAF 0.17.6 sets SSL_VERIFY_PEER |
/// SSL_VERIFY_FAIL_IF_NO_PEER_CERT on client and server once a certificate
/// is configured). Every node derives the same Ed25519 key and the same
/// self-signed certificate from the secret, and trusts exactly that
/// certificate (it is its own CA file):
///
///   seed = HMAC-SHA256(secret, "swarmkeeper cluster tls key v1")   32 bytes
///   key  = Ed25519 private key with that seed
///   cert = X.509 v3, serial 1, CN=swarmkeeper-cluster (subject = issuer),
///          valid 2020-01-01 .. 9999-12-31, CA:TRUE, self-signed with key
///          (Ed25519 signatures are deterministic, so the bytes are equal
///          on every node)
///
/// A process without the secret has another key: its certificate does not
/// verify against ours and the handshake fails before any BASP byte, in
/// both directions (it can neither dial in nor accept our dials).
///
/// The UDP connection-id key comes from the same secret, so an id issued by
/// one node validates on every other.

#include <string>

namespace sk::cluster {

/// 32 hex digits: HMAC-SHA256(secret, "swarmkeeper udp connection id v1"),
/// first 16 bytes (the form `udp.connection-id-key` takes).
std::string derive_connection_id_key(const std::string& secret);

/// The PEM files of the derived identity in a private directory.
struct tls_identity {
  /// A fresh 0700 directory (mkdtemp) holding the two files (0600).
  std::string dir;
  std::string key_file;
  /// The certificate; also the only trusted CA.
  std::string cert_file;
};

/// Derives the key and certificate from `secret` and writes them under
/// `parent` (e.g. /tmp) into a new private directory. Throws
/// std::runtime_error (with OpenSSL's reason) on failure.
tls_identity write_tls_identity(const std::string& secret, const std::string& parent = "/tmp");

/// Always true. Referencing it links openssl_error_queue.cpp, which makes
/// libcaf_openssl clear OpenSSL's error queue before each TLS call (see
/// there: without it one failed handshake drops healthy member links).
bool openssl_error_queue_fix() noexcept;

/// Removes the files and the directory (best effort; for shutdown).
void remove_tls_identity(const tls_identity& id);

}  // namespace sk::cluster
