#include "cluster/secret.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <stdexcept>
#include <vector>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

namespace sk::cluster {

namespace {

std::vector<unsigned char> hmac_sha256(const std::string& key, const std::string& label) {
  std::vector<unsigned char> out(EVP_MAX_MD_SIZE);
  unsigned int len = 0;
  if (HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
           reinterpret_cast<const unsigned char*>(label.data()), label.size(), out.data(),
           &len) == nullptr)
    throw std::runtime_error("HMAC-SHA256 failed");
  out.resize(len);
  return out;
}

[[noreturn]] void fail(const std::string& what) {
  char buf[256] = "unknown error";
  if (auto e = ERR_get_error(); e != 0) ERR_error_string_n(e, buf, sizeof buf);
  throw std::runtime_error("cluster TLS identity: " + what + ": " + buf);
}

struct pkey_free {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
};
struct x509_free {
  void operator()(X509* p) const { X509_free(p); }
};
struct ext_free {
  void operator()(X509_EXTENSION* p) const { X509_EXTENSION_free(p); }
};
struct file_close {
  void operator()(FILE* f) const { std::fclose(f); }
};

void add_ext(X509* cert, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, cert, cert, nullptr, nullptr, 0);
  std::unique_ptr<X509_EXTENSION, ext_free> ext(X509V3_EXT_conf_nid(nullptr, &ctx, nid, value));
  if (!ext || X509_add_ext(cert, ext.get(), -1) != 1) fail("cannot add extension");
}

std::unique_ptr<FILE, file_close> open_private(const std::string& path) {
  // 0600 from creation: the key is never readable by others, not even
  // briefly.
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
  if (fd < 0) throw std::runtime_error("cluster TLS identity: cannot create " + path);
  FILE* f = ::fdopen(fd, "w");
  if (f == nullptr) {
    ::close(fd);
    throw std::runtime_error("cluster TLS identity: cannot open " + path);
  }
  return std::unique_ptr<FILE, file_close>(f);
}

}  // namespace

std::string derive_connection_id_key(const std::string& secret) {
  const auto mac = hmac_sha256(secret, "swarmkeeper udp connection id v1");
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (std::size_t i = 0; i < 16; ++i) {
    out += digits[mac[i] >> 4];
    out += digits[mac[i] & 15];
  }
  return out;
}

tls_identity write_tls_identity(const std::string& secret, const std::string& parent) {
  const auto seed = hmac_sha256(secret, "swarmkeeper cluster tls key v1");
  std::unique_ptr<EVP_PKEY, pkey_free> key(
      EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nullptr, seed.data(), 32));
  if (!key) fail("cannot make the Ed25519 key");

  std::unique_ptr<X509, x509_free> cert(X509_new());
  if (!cert) fail("cannot allocate a certificate");
  X509_set_version(cert.get(), 2);  // v3
  ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), 1);
  // Fixed validity: the bytes must not depend on when a node starts.
  if (ASN1_TIME_set_string(X509_getm_notBefore(cert.get()), "20200101000000Z") != 1 ||
      ASN1_TIME_set_string(X509_getm_notAfter(cert.get()), "99991231235959Z") != 1)
    fail("cannot set validity");
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>("swarmkeeper-cluster"), -1, -1,
                             0);
  X509_set_issuer_name(cert.get(), name);
  if (X509_set_pubkey(cert.get(), key.get()) != 1) fail("cannot set the public key");
  add_ext(cert.get(), NID_basic_constraints, "critical,CA:TRUE");
  add_ext(cert.get(), NID_key_usage, "critical,digitalSignature,keyCertSign");
  add_ext(cert.get(), NID_subject_key_identifier, "hash");
  // Ed25519 signs without a separate digest (md must be null).
  if (X509_sign(cert.get(), key.get(), nullptr) <= 0) fail("cannot sign the certificate");

  std::string tmpl = parent + "/swarmkeeper-cluster-XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (::mkdtemp(buf.data()) == nullptr)  // mkdtemp creates it 0700
    throw std::runtime_error("cluster TLS identity: cannot create a directory under " + parent);
  tls_identity id;
  id.dir = buf.data();
  id.key_file = id.dir + "/key.pem";
  id.cert_file = id.dir + "/cert.pem";
  try {
    {
      auto f = open_private(id.key_file);
      if (PEM_write_PrivateKey(f.get(), key.get(), nullptr, nullptr, 0, nullptr, nullptr) != 1)
        fail("cannot write the key");
    }
    {
      auto f = open_private(id.cert_file);
      if (PEM_write_X509(f.get(), cert.get()) != 1) fail("cannot write the certificate");
    }
  } catch (...) {
    remove_tls_identity(id);
    throw;
  }
  return id;
}

void remove_tls_identity(const tls_identity& id) {
  if (id.dir.empty()) return;
  ::unlink(id.key_file.c_str());
  ::unlink(id.cert_file.c_str());
  ::rmdir(id.dir.c_str());
}

}  // namespace sk::cluster
