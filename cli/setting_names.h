#pragma once

namespace lockstep::cli {

// Tells dbsp that its messages name each setting by the flag that gives it (dbsp/settings.h):
// "--checkpoint-dir: cannot make ...", not "checkpoint_dir: ...".
void NameSettingsByFlag();

}  // namespace lockstep::cli
