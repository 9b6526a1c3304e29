// What the fuzz targets check with: a failed expectation aborts, which libFuzzer reports as a
// crash with the input that caused it.
#pragma once

#include <cstdlib>

namespace agentstream::fuzzing {

inline void Check(bool ok) {
  if (!ok) std::abort();
}

}  // namespace agentstream::fuzzing
