#include "setting_names.h"

#include "lockstep/dbsp/settings.h"

namespace lockstep::cli {

void NameSettingsByFlag() {
  using dbsp::Setting;
  dbsp::SettingNames names;
  const auto name = [&](Setting s, const char* flag) { names[static_cast<size_t>(s)] = flag; };
  name(Setting::kListen, "--listen");
  name(Setting::kOut, "--out");
  name(Setting::kCheckpointDir, "--checkpoint-dir");
  name(Setting::kPeerTimeout, "--peer-timeout");
  name(Setting::kStragglerTimeout, "--straggler-timeout");
  name(Setting::kReplaceStragglers, "--replace-stragglers");
  name(Setting::kDataRoot, "--data-root");
  name(Setting::kPeerListen, "--peer-listen");
  name(Setting::kHealthPort, "--health-port");
  name(Setting::kMetricsPort, "--metrics-port");
  name(Setting::kMaxMessageBytes, "--max-message-bytes");
  name(Setting::kMaxPoolWorkers, "--max-pool-workers");
  name(Setting::kMaxConnsPerIp, "--max-conns-per-ip");
  name(Setting::kTlsCert, "--tls-cert");
  name(Setting::kTlsKey, "--tls-key");
  name(Setting::kTlsCa, "--tls-ca");
  name(Setting::kTokenFile, "--token-file");
  name(Setting::kInsecure, "--insecure");
  dbsp::NameSettings(names);
}

}  // namespace lockstep::cli
