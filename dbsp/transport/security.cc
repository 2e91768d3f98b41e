#include "lockstep/dbsp/security.h"

#include <grpcpp/grpcpp.h>
#include <grpcpp/security/tls_certificate_provider.h>
#include <grpcpp/security/tls_certificate_verifier.h>
#include <grpcpp/security/tls_credentials_options.h>

#include <fstream>
#include <iterator>

#include "absl/strings/str_cat.h"
#include "lockstep/bsp/text.h"
#include "spdlog/spdlog.h"

namespace lockstep::dbsp {
namespace {

absl::StatusOr<std::string> ReadSecret(const std::string& path, const char* flag) {
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

absl::StatusOr<std::string> ReadPem(const std::string& path, const char* flag, const char* what) {
  auto text = ReadSecret(path, flag);
  if (!text.ok()) return text;
  if (text->find("-----BEGIN ") == std::string::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, ": ", bsp::SanitizeForLog(path, 200), " holds no PEM ", what));
  }
  return text;
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
        "--tls-cert, --tls-key and --tls-ca go together: give all three, or none");
  }
  if (flags.insecure && given != 0) {
    return absl::InvalidArgumentError("--insecure: plain text asked for, but --tls-* given too");
  }
  s->insecure_ = flags.insecure;
  if (given == 3) {
    auto cert = ReadPem(flags.tls_cert, "--tls-cert", "certificate");
    if (!cert.ok()) return cert.status();
    auto key = ReadPem(flags.tls_key, "--tls-key", "private key");
    if (!key.ok()) return key.status();
    auto ca = ReadPem(flags.tls_ca, "--tls-ca", "certificate");
    if (!ca.ok()) return ca.status();
    s->cert_ = *std::move(cert);
    s->key_ = *std::move(key);
    s->ca_ = *std::move(ca);
  }
  if (!flags.token_file.empty()) {
    auto token = ReadSecret(flags.token_file, "--token-file");
    if (!token.ok()) return token.status();
    if (token->ends_with('\n')) token->pop_back();
    if (token->ends_with('\r')) token->pop_back();
    if (token->empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--token-file: ", bsp::SanitizeForLog(flags.token_file, 200), " is empty"));
    }
    // gRPC metadata values are printable ASCII.
    for (unsigned char ch : *token) {
      if (ch < 0x20 || ch > 0x7e) {
        return absl::InvalidArgumentError(
            absl::StrCat("--token-file: ", bsp::SanitizeForLog(flags.token_file, 200),
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
        "--tls-cert, --tls-key and --tls-ca (and --token-file), or --insecure to say that this is "
        "meant",
        role, address, security.has_token() ? " (the join token travels unencrypted)" : "",
        security.has_token() ? "read the token and then join" : "join the cluster");
    return;
  }
  spdlog::info("{} listening on {}: {}", role, address, security.Describe());
}

}  // namespace lockstep::dbsp
