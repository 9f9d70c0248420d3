// What a LossScaler is asked to do, apart from the scaler itself, so that
// the typed settings hold it without LibTorch's headers.
#pragma once

#include <cstdint>
#include <string>

namespace orchestrate {

// off: no scaling. fixed: a constant scale (the seeds' 1024). dynamic: grow
// after a run of clean steps, back off on inf/nan (GradScaler).
enum class LossScaleMode { off, fixed, dynamic };

// "off" | "static" | "dynamic"; anything else is an Error listing those.
LossScaleMode parse_loss_scale_mode(const std::string& name);
const char* loss_scale_mode_name(LossScaleMode mode);

// torch.amp.GradScaler's defaults, which the recipe's [precision] keys take
// as theirs (core_settings_tables.cpp reads them from here, so they are written once).
struct LossScalerSettings {
  LossScaleMode mode = LossScaleMode::off;
  double scale = 65536.0;  // fixed mode's scale; dynamic mode's initial one (GradScaler's init_scale)
  double growth_factor = 2.0;
  double backoff_factor = 0.5;
  std::int64_t growth_interval = 2000;
};

}  // namespace orchestrate
