#include "lockstep/dbsp/security.h"

#include <grpcpp/grpcpp.h>
#include <grpcpp/security/tls_certificate_provider.h>
#include <grpcpp/security/tls_certificate_verifier.h>
#include <grpcpp/security/tls_credentials_options.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>

#include <fstream>
#include <iterator>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "lockstep/bsp/text.h"
#include "lockstep/dbsp/settings.h"
#include "spdlog/spdlog.h"

namespace lockstep::dbsp {
namespace {

absl::StatusOr<std::string> ReadSecret(const std::string& path, const std::string& flag) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, ": cannot read ", bsp::SanitizeForLog(path, 200)));
  }
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, ": cannot read ", bsp::SanitizeForLog(path, 200)));
  }
  return text;
}

absl::StatusOr<std::string> ReadPem(const std::string& path, const std::string& flag,
                                    const char* what) {
  auto text = ReadSecret(path, flag);
  if (!text.ok()) return text;
  if (text->find("-----BEGIN ") == std::string::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, ": ", bsp::SanitizeForLog(path, 200), " holds no PEM ", what));
  }
  return text;
}

struct BioDeleter {
  void operator()(BIO* b) const { BIO_free(b); }
};
struct X509Deleter {
  void operator()(X509* x) const { X509_free(x); }
};
struct KeyDeleter {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
struct StoreDeleter {
  void operator()(X509_STORE* s) const { X509_STORE_free(s); }
};
struct StoreCtxDeleter {
  void operator()(X509_STORE_CTX* c) const { X509_STORE_CTX_free(c); }
};
struct StackDeleter {
  void operator()(STACK_OF(X509) * s) const { sk_X509_pop_free(s, X509_free); }
};

// The certificates of a PEM text, in order.
std::vector<std::unique_ptr<X509, X509Deleter>> Certificates(const std::string& pem) {
  std::vector<std::unique_ptr<X509, X509Deleter>> certs;
  std::unique_ptr<BIO, BioDeleter> bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  while (bio) {
    X509* cert = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr);
    if (cert == nullptr) break;
    certs.emplace_back(cert);
  }
  ERR_clear_error();
  return certs;
}

// Refuses, at start, a set of TLS files that no handshake could use: a certificate or key that
// does not parse, a key that is not the certificate's, a certificate the authority did not sign
// (or that has expired). gRPC would otherwise start and fail every handshake.
absl::Status CheckTlsFiles(const SecurityFlags& flags, const std::string& cert_pem,
                           const std::string& key_pem, const std::string& ca_pem) {
  const auto name = [](const std::string& path) { return bsp::SanitizeForLog(path, 200); };
  auto chain = Certificates(cert_pem);
  if (chain.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(SettingName(Setting::kTlsCert), ": ",
                                                   name(flags.tls_cert),
                                                   " holds no readable certificate"));
  }
  std::unique_ptr<BIO, BioDeleter> key_bio(
      BIO_new_mem_buf(key_pem.data(), static_cast<int>(key_pem.size())));
  std::unique_ptr<EVP_PKEY, KeyDeleter> key(
      key_bio ? PEM_read_bio_PrivateKey(key_bio.get(), nullptr, nullptr, nullptr) : nullptr);
  ERR_clear_error();
  if (!key) {
    return absl::InvalidArgumentError(absl::StrCat(SettingName(Setting::kTlsKey), ": ",
                                                   name(flags.tls_key),
                                                   " holds no readable private key"));
  }
  if (X509_check_private_key(chain.front().get(), key.get()) != 1) {
    ERR_clear_error();
    return absl::InvalidArgumentError(absl::StrCat(
        SettingName(Setting::kTlsKey), ": ", name(flags.tls_key), " is not the private key of ",
        SettingName(Setting::kTlsCert), " ", name(flags.tls_cert)));
  }
  auto authorities = Certificates(ca_pem);
  if (authorities.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        SettingName(Setting::kTlsCa), ": ", name(flags.tls_ca), " holds no readable certificate"));
  }
  std::unique_ptr<X509_STORE, StoreDeleter> store(X509_STORE_new());
  for (const auto& a : authorities) X509_STORE_add_cert(store.get(), a.get());
  std::unique_ptr<STACK_OF(X509), StackDeleter> intermediates(sk_X509_new_null());
  for (size_t i = 1; i < chain.size(); ++i) {
    X509_up_ref(chain[i].get());
    sk_X509_push(intermediates.get(), chain[i].get());
  }
  std::unique_ptr<X509_STORE_CTX, StoreCtxDeleter> ctx(X509_STORE_CTX_new());
  if (!store || !intermediates || !ctx ||
      X509_STORE_CTX_init(ctx.get(), store.get(), chain.front().get(), intermediates.get()) != 1) {
    return absl::ResourceExhaustedError("cannot check the TLS certificates: out of memory");
  }
  if (X509_verify_cert(ctx.get()) != 1) {
    const int error = X509_STORE_CTX_get_error(ctx.get());
    ERR_clear_error();
    return absl::InvalidArgumentError(
        absl::StrCat(SettingName(Setting::kTlsCert), ": ", name(flags.tls_cert),
                     " does not verify under ", SettingName(Setting::kTlsCa), " ",
                     name(flags.tls_ca), ": ", X509_verify_cert_error_string(error)));
  }
  return absl::OkStatus();
}

// Whether `address` (HOST:PORT) listens on loopback only.
bool Loopback(std::string_view address) {
  const size_t colon = address.rfind(':');
  std::string_view host = address.substr(0, colon == std::string_view::npos ? 0 : colon);
  if (host.starts_with('[') && host.ends_with(']')) host = host.substr(1, host.size() - 2);
  return host == "localhost" || host == "::1" || host.starts_with("127.") ||
         address.starts_with("unix:");
}

}  // namespace

std::shared_ptr<const Security> Security::Plain() {
  static const std::shared_ptr<const Security> plain(new Security());
  return plain;
}

absl::StatusOr<std::shared_ptr<const Security>> Security::Load(const SecurityFlags& flags,
                                                               const ConnectionLimits& limits) {
  std::shared_ptr<Security> s(new Security());
  s->limits_ = limits;
  const int given = !flags.tls_cert.empty() + !flags.tls_key.empty() + !flags.tls_ca.empty();
  if (given != 0 && given != 3) {
    return absl::InvalidArgumentError(
        absl::StrCat(SettingName(Setting::kTlsCert), ", ", SettingName(Setting::kTlsKey), " and ",
                     SettingName(Setting::kTlsCa), " go together: give all three, or none"));
  }
  if (flags.insecure && given != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(SettingName(Setting::kInsecure), ": plain text asked for, but ",
                     SettingName(Setting::kTlsCert), ", ", SettingName(Setting::kTlsKey), " or ",
                     SettingName(Setting::kTlsCa), " given too"));
  }
  s->insecure_ = flags.insecure;
  if (given == 3) {
    auto cert = ReadPem(flags.tls_cert, SettingName(Setting::kTlsCert), "certificate");
    if (!cert.ok()) return cert.status();
    auto key = ReadPem(flags.tls_key, SettingName(Setting::kTlsKey), "private key");
    if (!key.ok()) return key.status();
    auto ca = ReadPem(flags.tls_ca, SettingName(Setting::kTlsCa), "certificate");
    if (!ca.ok()) return ca.status();
    if (auto st = CheckTlsFiles(flags, *cert, *key, *ca); !st.ok()) return st;
    s->cert_ = *std::move(cert);
    s->key_ = *std::move(key);
    s->ca_ = *std::move(ca);
  }
  if (!flags.token_file.empty()) {
    auto token = ReadSecret(flags.token_file, SettingName(Setting::kTokenFile));
    if (!token.ok()) return token.status();
    if (token->ends_with('\n')) token->pop_back();
    if (token->ends_with('\r')) token->pop_back();
    if (token->empty()) {
      return absl::InvalidArgumentError(absl::StrCat(SettingName(Setting::kTokenFile), ": ",
                                                     bsp::SanitizeForLog(flags.token_file, 200),
                                                     " is empty"));
    }
    // gRPC metadata values are printable ASCII.
    for (unsigned char ch : *token) {
      if (ch < 0x20 || ch > 0x7e) {
        return absl::InvalidArgumentError(absl::StrCat(
            SettingName(Setting::kTokenFile), ": ", bsp::SanitizeForLog(flags.token_file, 200),
            ": the token must be one line of printable ASCII"));
      }
    }
    s->token_ = *std::move(token);
  }
  return std::shared_ptr<const Security>(std::move(s));
}

std::string Security::Describe() const {
  if (tls()) return has_token() ? "mutual TLS and a join token" : "mutual TLS";
  return has_token() ? "a join token over plain text" : "plain text";
}

std::shared_ptr<grpc::ServerCredentials> Security::ServerCredentials() const {
  if (!tls()) return grpc::InsecureServerCredentials();
  auto provider = std::make_shared<grpc::experimental::StaticDataCertificateProvider>(
      ca_, std::vector<grpc::experimental::IdentityKeyCertPair>{{key_, cert_}});
  grpc::experimental::TlsServerCredentialsOptions options(provider);
  options.watch_root_certs();
  options.watch_identity_key_cert_pairs();
  options.set_cert_request_type(GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  return grpc::experimental::TlsServerCredentials(options);
}

std::shared_ptr<grpc::ChannelCredentials> Security::ChannelCredentials() const {
  if (!tls()) return grpc::InsecureChannelCredentials();
  auto provider = std::make_shared<grpc::experimental::StaticDataCertificateProvider>(
      ca_, std::vector<grpc::experimental::IdentityKeyCertPair>{{key_, cert_}});
  grpc::experimental::TlsChannelCredentialsOptions options;
  options.set_certificate_provider(provider);
  options.watch_root_certs();
  options.watch_identity_key_cert_pairs();
  // The chain is verified against the authority; workers are reached at addresses no
  // certificate names (pod IPs), so the authority, not a host name, is the identity.
  options.set_verify_server_certs(true);
  options.set_certificate_verifier(std::make_shared<grpc::experimental::NoOpCertificateVerifier>());
  options.set_check_call_host(false);
  return grpc::experimental::TlsCredentials(options);
}

void Security::Sign(grpc::ClientContext& context) const {
  if (has_token()) context.AddMetadata(kTokenKey, token_);
}

bool Security::Admits(const std::string_view* presented) const {
  if (!has_token()) return true;
  if (presented == nullptr) return false;
  // Constant time in the presented value's content: every byte is compared.
  unsigned diff = presented->size() == token_.size() ? 0 : 1;
  for (size_t i = 0; i < presented->size(); ++i) {
    diff |= static_cast<unsigned char>((*presented)[i]) ^
            static_cast<unsigned char>(token_[i % token_.size()]);
  }
  return diff == 0;
}

void LogSecurity(const std::string& role, const std::string& address, const Security& security) {
  if (!security.tls() && !security.insecure() && !Loopback(address)) {
    spdlog::warn(
        "{} listening on {} in plain text{}: any process that reaches this port can {}; give "
        "{}, {} and {} (and {}), or {} to say that this is meant",
        role, address, security.has_token() ? " (the join token travels unencrypted)" : "",
        security.has_token() ? "read the token and then join" : "join the cluster",
        SettingName(Setting::kTlsCert), SettingName(Setting::kTlsKey), SettingName(Setting::kTlsCa),
        SettingName(Setting::kTokenFile), SettingName(Setting::kInsecure));
    return;
  }
  spdlog::info("{} listening on {}: {}", role, address, security.Describe());
}

}  // namespace lockstep::dbsp
