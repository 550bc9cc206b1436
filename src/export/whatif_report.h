// `gpuscope whatif` output: text for people, JSON (schema gpuscope.whatif/1,
// docs/whatif.md) for tools.
#pragma once

#include <string>

#include "analysis/graph/whatif.h"

namespace gpuscope {

struct WhatIfHeader {
  std::string file;
  TraceSource source = TraceSource::unknown;
  std::string producer;
  std::size_t gpus = 0;
};

inline constexpr const char* kWhatIfSchema = "gpuscope.whatif/1";

std::string whatif_text(const graph::WhatIf& w, const WhatIfHeader& header);
std::string whatif_json(const graph::WhatIf& w, const WhatIfHeader& header);

}  // namespace gpuscope
