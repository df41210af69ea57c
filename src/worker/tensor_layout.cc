#include "worker/tensor_layout.h"

#include <algorithm>

#include "common/str_cat.h"
#include "pacer/error.h"

namespace pacer {

TensorLayout::TensorLayout(size_t partition_floats)
    : partition_floats_(std::max<size_t>(1, partition_floats)) {}

int TensorLayout::Add(const std::string& name, size_t count) {
  if (name.empty()) throw Error("a tensor needs a name");
  if (count == 0) throw Error(StrCat("tensor '", name, "' has no values"));
  for (const Tensor& t : tensors_) {
    if (t.name == name) throw Error(StrCat("tensor '", name, "' is registered already"));
  }
  const int index = static_cast<int>(tensors_.size());
  tensors_.push_back({name, count, {}});
  Tensor& tensor = tensors_.back();
  auto new_unit = [&] {
    units_.push_back({static_cast<Key>(units_.size()), 0, {}});
    return static_cast<int>(units_.size() - 1);
  };
  if (count >= partition_floats_) {
    open_group_ = -1;  // groups hold neighbours only: a group waits for its last member
    for (size_t offset = 0; offset < count; offset += partition_floats_) {
      const int u = new_unit();
      const size_t n = std::min(partition_floats_, count - offset);
      units_[u].count = n;
      units_[u].members.push_back({index, offset, 0, n});
      tensor.units.push_back(u);
    }
    return index;
  }
  if (open_group_ < 0 || units_[open_group_].count + count > partition_floats_) {
    open_group_ = new_unit();
  }
  Unit& group = units_[open_group_];
  group.members.push_back({index, 0, group.count, count});
  group.count += count;
  tensor.units.push_back(open_group_);
  return index;
}

int TensorLayout::Find(const std::string& name) const {
  for (size_t i = 0; i < tensors_.size(); ++i) {
    if (tensors_[i].name == name) return static_cast<int>(i);
  }
  throw Error(StrCat("no tensor named '", name, "' was registered"));
}

}  // namespace pacer
