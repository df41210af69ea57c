#include "ps/messages/request_validation.h"

#include "common/str_cat.h"

namespace pacer {

std::string ValidateKeyValues(const Key* keys, size_t num_keys, const int32_t* lens,
                              size_t num_lens, size_t value_count, bool has_values) {
  if (num_keys == 0) return "no keys";
  for (size_t i = 1; i < num_keys; ++i) {
    if (keys[i] <= keys[i - 1]) {
      if (keys[i] == keys[i - 1]) {
        return StrCat("duplicate key ", keys[i], " at positions ", i - 1, " and ", i);
      }
      return StrCat("keys not sorted: key ", keys[i], " at position ", i, " follows key ",
                    keys[i - 1]);
    }
  }
  if (!has_values) return num_lens == 0 ? "" : StrCat("a pull carries ", num_lens, " lengths");
  if (num_lens == 0) {
    if (value_count == 0 || value_count % num_keys != 0) {
      return StrCat(value_count, " values for ", num_keys,
                    " keys: without lengths every key needs the same number of values");
    }
    return "";
  }
  if (num_lens != num_keys) return StrCat(num_lens, " lengths for ", num_keys, " keys");
  size_t total = 0;
  for (size_t i = 0; i < num_lens; ++i) {
    if (lens[i] < 0) return StrCat("negative length ", lens[i], " for key ", keys[i]);
    total += static_cast<size_t>(lens[i]);
  }
  if (total != value_count) {
    return StrCat("lengths add up to ", total, " values, but ", value_count, " were given for ",
                  num_keys, " keys");
  }
  return "";
}

}  // namespace pacer
