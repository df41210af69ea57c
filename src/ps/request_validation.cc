#include "ps/request_validation.h"

#include <sstream>

namespace pacer {

std::string ValidateKeyValues(const Key* keys, size_t num_keys, const int32_t* lens,
                              size_t num_lens, size_t value_count, bool has_values) {
  std::ostringstream why;
  if (num_keys == 0) {
    why << "no keys";
    return why.str();
  }
  for (size_t i = 1; i < num_keys; ++i) {
    if (keys[i] == keys[i - 1]) {
      why << "duplicate key " << keys[i] << " at positions " << i - 1 << " and " << i;
      return why.str();
    }
    if (keys[i] < keys[i - 1]) {
      why << "keys not sorted: key " << keys[i] << " at position " << i << " follows key "
          << keys[i - 1];
      return why.str();
    }
  }
  if (!has_values) {
    if (num_lens != 0) why << "a pull carries " << num_lens << " lengths";
    return why.str();
  }
  if (num_lens == 0) {
    if (value_count == 0 || value_count % num_keys != 0) {
      why << value_count << " values for " << num_keys
          << " keys: without lengths every key needs the same number of values";
    }
    return why.str();
  }
  if (num_lens != num_keys) {
    why << num_lens << " lengths for " << num_keys << " keys";
    return why.str();
  }
  size_t total = 0;
  for (size_t i = 0; i < num_lens; ++i) {
    if (lens[i] < 0) {
      why << "negative length " << lens[i] << " for key " << keys[i];
      return why.str();
    }
    total += static_cast<size_t>(lens[i]);
  }
  if (total != value_count) {
    why << "lengths add up to " << total << " values, but " << value_count << " were given for "
        << num_keys << " keys";
  }
  return why.str();
}

}  // namespace pacer
