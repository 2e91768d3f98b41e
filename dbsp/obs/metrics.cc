#include "lockstep/dbsp/metrics.h"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <memory>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "lockstep/dbsp/settings.h"

namespace lockstep::dbsp {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

// A client has this long to send its request and take the answer.
constexpr std::chrono::seconds kClientTime(2);
// Connections served at once; more are closed at once.
constexpr int kMaxClients = 16;

void Family(std::string& out, const char* name, const char* type, const char* help) {
  absl::StrAppend(&out, "# HELP ", name, " ", help, "\n# TYPE ", name, " ", type, "\n");
}

void Sample(std::string& out, const char* name, const std::string& labels, uint64_t value) {
  absl::StrAppend(&out, name, labels.empty() ? "" : absl::StrCat("{", labels, "}"), " ", value,
                  "\n");
}

}  // namespace

std::string Metrics::Render(const std::string& role) const {
  std::string out;
  const std::string r = absl::StrCat("role=\"", role, "\"");
  Family(out, "lockstep_superstep", "gauge", "The running (or last) job's superstep.");
  Sample(out, "lockstep_superstep", r, superstep.load());
  Family(out, "lockstep_active_vertices", "gauge",
         "Vertices active in the current superstep (the master: the whole job's).");
  Sample(out, "lockstep_active_vertices", r, active_vertices.load());
  Family(out, "lockstep_messages_total", "counter",
         "Messages sent (the master: every worker's, as they report them).");
  Sample(out, "lockstep_messages_total", r, messages.load());
  Family(out, "lockstep_bytes_sent_total", "counter",
         "Bytes of message batches sent to other processes (the master: relayed).");
  Sample(out, "lockstep_bytes_sent_total", r, bytes_sent.load());
  if (role == "master") {
    Family(out, "lockstep_workers", "gauge", "Workers connected, in the pool or in a job.");
    Sample(out, "lockstep_workers", r, workers.load());
    Family(out, "lockstep_restarts_total", "counter",
           "Attempts restarted from a checkpoint after a lost worker.");
    Sample(out, "lockstep_restarts_total", r, restarts.load());
  }
  Family(out, "lockstep_jobs_total", "counter", "Jobs ended, by outcome.");
  Sample(out, "lockstep_jobs_total", absl::StrCat(r, ",outcome=\"completed\""),
         jobs_completed.load());
  Sample(out, "lockstep_jobs_total", absl::StrCat(r, ",outcome=\"failed\""), jobs_failed.load());
  Family(out, "lockstep_checkpoints_total", "counter", "Checkpoints taken.");
  Sample(out, "lockstep_checkpoints_total", r, checkpoints.load());
  Family(out, "lockstep_phase_seconds_total", "counter", "Seconds spent in each phase of jobs.");
  static constexpr const char* kPhases[] = {"load", "compute", "checkpoint", "output"};
  for (int p = 0; p < static_cast<int>(JobPhase::kCount); ++p) {
    absl::StrAppend(&out, "lockstep_phase_seconds_total{", r, ",phase=\"", kPhases[p], "\"} ",
                    absl::StrFormat("%.6f", static_cast<double>(phase_us[p].load()) / 1e6), "\n");
  }
  return out;
}

struct MetricsServer::Impl {
  asio::io_context io{1};
  tcp::acceptor acceptor{io};
  asio::steady_timer retry{io};
  std::function<std::string()> render;
  std::thread thread;
  int clients = 0;  // on the io thread only
  int port = 0;

  void Accept() {
    acceptor.async_accept([this](beast::error_code ec, tcp::socket socket) {
      if (ec == asio::error::operation_aborted) return;
      if (ec) {
        // Out of descriptors, say: the connection stays queued and the next accept would fail
        // at once. Wait a little rather than spin.
        retry.expires_after(std::chrono::milliseconds(100));
        retry.async_wait([this](beast::error_code waited) {
          if (waited != asio::error::operation_aborted) Accept();
        });
        return;
      }
      if (clients < kMaxClients) {
        Serve(std::move(socket));
      } else {
        beast::error_code ignored;
        socket.close(ignored);
      }
      Accept();
    });
  }

  struct Client {
    explicit Client(tcp::socket s) : stream(std::move(s)) {}
    beast::tcp_stream stream;
    beast::flat_buffer buffer{8192};
    http::request_parser<http::empty_body> parser;
    http::response<http::string_body> response;
  };

  void Serve(tcp::socket socket) {
    auto c = std::make_shared<Client>(std::move(socket));
    ++clients;
    c->parser.header_limit(8192);
    c->stream.expires_after(kClientTime);
    http::async_read(c->stream, c->buffer, c->parser, [this, c](beast::error_code ec, size_t) {
      if (ec) return Done(*c);
      const auto& request = c->parser.get();
      c->response.version(request.version());
      c->response.keep_alive(false);
      if (request.method() != http::verb::get && request.method() != http::verb::head) {
        c->response.result(http::status::method_not_allowed);
        c->response.body() = "GET only\n";
      } else if (request.target() == "/metrics") {
        c->response.result(http::status::ok);
        c->response.set(http::field::content_type, "text/plain; version=0.0.4; charset=utf-8");
        c->response.body() = render();
      } else if (request.target() == "/healthz") {
        c->response.result(http::status::ok);
        c->response.body() = "ok\n";
      } else {
        c->response.result(http::status::not_found);
        c->response.body() = "/metrics or /healthz\n";
      }
      c->response.prepare_payload();
      http::async_write(c->stream, c->response, [this, c](beast::error_code, size_t) { Done(*c); });
    });
  }

  void Done(Client& c) {
    beast::error_code ignored;
    c.stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
    c.stream.close();
    --clients;
  }
};

MetricsServer::MetricsServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

MetricsServer::~MetricsServer() {
  asio::post(impl_->io, [impl = impl_.get()] {
    beast::error_code ignored;
    impl->acceptor.close(ignored);
    impl->retry.cancel();
    impl->io.stop();
  });
  impl_->thread.join();
}

int MetricsServer::port() const { return impl_->port; }

absl::StatusOr<std::unique_ptr<MetricsServer>> MetricsServer::Start(
    const std::string& address, std::function<std::string()> render) {
  auto impl = std::make_unique<Impl>();
  impl->render = std::move(render);
  const size_t colon = address.rfind(':');
  std::string host = colon == std::string::npos ? "" : address.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  const std::string port = colon == std::string::npos ? address : address.substr(colon + 1);
  beast::error_code ec;
  const auto ip = asio::ip::make_address(host.empty() ? "0.0.0.0" : host, ec);
  char* end = nullptr;
  const long number = std::strtol(port.c_str(), &end, 10);
  if (ec || port.empty() || *end != '\0' || number < 0 || number > 65535) {
    return absl::InvalidArgumentError(absl::StrCat(
        SettingName(Setting::kMetricsPort), ": cannot listen on ", address, ": not HOST:PORT"));
  }
  const tcp::endpoint endpoint(ip, static_cast<uint16_t>(number));
  impl->acceptor.open(endpoint.protocol(), ec);
  if (!ec) impl->acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) impl->acceptor.bind(endpoint, ec);
  if (!ec) impl->acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    return absl::UnavailableError(absl::StrCat(SettingName(Setting::kMetricsPort),
                                               ": cannot listen on ", address, ": ", ec.message()));
  }
  impl->port = impl->acceptor.local_endpoint().port();
  impl->Accept();
  impl->thread = std::thread([impl = impl.get()] { impl->io.run(); });
  return std::unique_ptr<MetricsServer>(new MetricsServer(std::move(impl)));
}

}  // namespace lockstep::dbsp
