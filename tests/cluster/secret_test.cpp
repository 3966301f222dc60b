// The TLS identity every node derives from the cluster's shared secret, and
// the connection-id key derived from it.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <fstream>
#include <sstream>
#include <string>

#include "cluster/secret.hpp"

namespace sk::cluster {
namespace {

std::string read_all(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

TEST(TlsIdentity, SameSecretSameCertificateOtherSecretOther) {
  const auto a = write_tls_identity("correct horse battery staple");
  const auto b = write_tls_identity("correct horse battery staple");
  const auto c = write_tls_identity("another secret, 16+ bytes");
  EXPECT_NE(a.dir, b.dir);
  EXPECT_EQ(read_all(a.cert_file), read_all(b.cert_file));
  EXPECT_EQ(read_all(a.key_file), read_all(b.key_file));
  EXPECT_NE(read_all(a.cert_file), read_all(c.cert_file));
  EXPECT_NE(read_all(a.cert_file).find("BEGIN CERTIFICATE"), std::string::npos);
  struct stat st {};
  ASSERT_EQ(::stat(a.dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  ASSERT_EQ(::stat(a.key_file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  for (const auto& id : {a, b, c}) remove_tls_identity(id);
  EXPECT_NE(::stat(a.dir.c_str(), &st), 0);
}

TEST(TlsIdentity, ConnectionIdKeyIsDerivedAndDiffers) {
  const auto k = derive_connection_id_key("correct horse battery staple");
  EXPECT_EQ(k.size(), 32u);
  EXPECT_EQ(k, derive_connection_id_key("correct horse battery staple"));
  EXPECT_NE(k, derive_connection_id_key("correct horse battery stapl3"));
}

}  // namespace
}  // namespace sk::cluster
