#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "pacer/types.h"

namespace pacer {

// Checks the keys, lengths and values of a push or pull; the same rules apply to a caller's input
// (checked by the worker before sending) and to a peer's request (checked again by the server).
// Returns an empty string when valid, otherwise what is wrong, naming keys, positions and sizes.
// `value_count` is the number of values (elements); `has_values` is false for a pull.
std::string ValidateKeyValues(const Key* keys, size_t num_keys, const int32_t* lens,
                              size_t num_lens, size_t value_count, bool has_values);

}  // namespace pacer
