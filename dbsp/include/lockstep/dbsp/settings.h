#pragma once

// The settings of a master or a worker that dbsp's messages name (docs/design.md §2.3). dbsp says
// which setting a message is about; whoever configured the process says how its user knows that
// setting (the command line: by its flag, cli/setting_names.cc). Until it does, a setting is
// named by its field in dbsp's options (`checkpoint_dir`), so dbsp's words never depend on one
// front end.
#include <array>
#include <cstddef>
#include <string>
#include <string_view>

namespace lockstep::dbsp {

enum class Setting : size_t {
  kListen,             // where a master serves (Master::Start)
  kOut,                // a job's output (JobWork::output)
  kCheckpointDir,      // JobSpec::checkpoint_dir
  kPeerTimeout,        // JobSpec::peer_timeout
  kStragglerTimeout,   // JobSpec::straggler_timeout
  kReplaceStragglers,  // JobSpec::replace_stragglers
  kDataRoot,           // WorkerOptions::data_roots
  kPeerListen,         // WorkerOptions::peer_listen
  kHealthPort,         // WorkerOptions::health_address
  kMetricsPort,        // the metrics server's address
  kMaxMessageBytes,    // ConnectionLimits::max_message_bytes
  kMaxPoolWorkers,     // ConnectionLimits::max_pool_workers
  kMaxConnsPerIp,      // ConnectionLimits::max_conns_per_ip
  kTlsCert,            // SecurityFlags::tls_cert
  kTlsKey,             // SecurityFlags::tls_key
  kTlsCa,              // SecurityFlags::tls_ca
  kTokenFile,          // SecurityFlags::token_file
  kInsecure,           // SecurityFlags::insecure
  kCount
};

using SettingNames = std::array<std::string, static_cast<size_t>(Setting::kCount)>;

// How messages name `setting`.
const std::string& SettingName(Setting setting);
// Names the settings as the process's user knows them. Called once at start, before any server
// or job runs (the names are read without a lock).
void NameSettings(const SettingNames& names);

}  // namespace lockstep::dbsp
