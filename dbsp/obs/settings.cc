#include "lockstep/dbsp/settings.h"

namespace lockstep::dbsp {
namespace {

SettingNames& Names() {
  static SettingNames names = {"listen",
                               "output",
                               "checkpoint_dir",
                               "peer_timeout",
                               "straggler_timeout",
                               "replace_stragglers",
                               "data_roots",
                               "peer_listen",
                               "health_address",
                               "metrics_address",
                               "max_message_bytes",
                               "max_pool_workers",
                               "max_conns_per_ip",
                               "tls_cert",
                               "tls_key",
                               "tls_ca",
                               "token_file",
                               "insecure"};
  return names;
}

}  // namespace

const std::string& SettingName(Setting setting) { return Names()[static_cast<size_t>(setting)]; }

void NameSettings(const SettingNames& names) { Names() = names; }

}  // namespace lockstep::dbsp
