#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "pacer/types.h"

namespace pacer {

// How GradientSync lays named tensors out on keys. A key's values are one *unit*: a partition of a
// large tensor (so its load spreads over the servers) or a group of consecutive small tensors (so
// they share one message). Units are keys 0, 1, 2, ... in registration order, which the router
// spreads evenly over the servers; every worker registering the same tensors in the same order
// gets the same layout.
class TensorLayout {
 public:
  // A piece of a tensor inside a unit.
  struct Member {
    int tensor;
    size_t tensor_offset;  // in floats
    size_t unit_offset;
    size_t count;
  };
  struct Unit {
    Key key;
    size_t count = 0;  // floats
    std::vector<Member> members;
  };
  struct Tensor {
    std::string name;
    size_t count;
    std::vector<int> units;
  };

  // Units hold at most `partition_floats` floats (at least 1).
  explicit TensorLayout(size_t partition_floats);

  // Adds a tensor; returns its index. Throws Error for a repeated or empty name or no values.
  int Add(const std::string& name, size_t count);
  // Index of the tensor `name`; throws Error naming it if unknown.
  int Find(const std::string& name) const;

  const std::vector<Tensor>& tensors() const { return tensors_; }
  const std::vector<Unit>& units() const { return units_; }

 private:
  const size_t partition_floats_;
  std::vector<Tensor> tensors_;
  std::vector<Unit> units_;
  int open_group_ = -1;  // the unit small tensors are being added to
};

}  // namespace pacer
