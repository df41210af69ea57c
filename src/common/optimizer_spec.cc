#include "common/optimizer_spec.h"

#include <cstdlib>
#include <sstream>

#include "pacer/error.h"

namespace pacer {
namespace {

[[noreturn]] void Bad(const std::string& text, const std::string& why) {
  throw Error("--optimizer=" + text + ": " + why +
              " (expected sgd:lr=L,momentum=M,nesterov,wd=W or adam|adamw:lr=L,beta1=B1,beta2=B2,"
              "eps=E,wd=W; either with lr_steps=C1/C2/...,lr_factor=F)");
}

float Number(const std::string& text, const std::string& field, const std::string& value) {
  char* end = nullptr;
  double v = std::strtod(value.c_str(), &end);
  if (value.empty() || *end != '\0' || !(v >= 0)) {
    Bad(text, field + "=" + value + " is not a number >= 0");
  }
  return static_cast<float>(v);
}

// "1000/1500": increasing clocks.
std::vector<int64_t> Clocks(const std::string& text, const std::string& value) {
  std::vector<int64_t> clocks;
  std::istringstream parts(value);
  std::string part;
  while (std::getline(parts, part, '/')) {
    char* end = nullptr;
    const long long clock = std::strtoll(part.c_str(), &end, 10);
    if (part.empty() || *end != '\0' || clock < 0 || (!clocks.empty() && clock <= clocks.back())) {
      Bad(text, "lr_steps=" + value + " is not a list of increasing clocks (C1/C2/...)");
    }
    clocks.push_back(clock);
  }
  if (clocks.empty()) Bad(text, "lr_steps= names no clock");
  return clocks;
}

}  // namespace

OptimizerSpec OptimizerSpec::Parse(const std::string& text) {
  const size_t colon = text.find(':');
  const std::string name = text.substr(0, colon);
  OptimizerSpec spec;
  if (name == "sgd") {
    spec.kind = Kind::kSgd;
  } else if (name == "adam" || name == "adamw") {
    spec.kind = Kind::kAdam;
    spec.adam.decoupled_weight_decay = name == "adamw";
  } else {
    Bad(text, "unknown optimizer '" + name + "'");
  }
  std::istringstream fields(colon == std::string::npos ? "" : text.substr(colon + 1));
  std::string field;
  while (std::getline(fields, field, ',')) {
    const size_t eq = field.find('=');
    const std::string key = field.substr(0, eq);
    const std::string value = eq == std::string::npos ? "" : field.substr(eq + 1);
    const bool sgd = spec.kind == Kind::kSgd;
    if (key == "nesterov" && sgd && eq == std::string::npos) {
      spec.sgd.nesterov = true;
    } else if (eq == std::string::npos) {
      Bad(text, "'" + field + "' has no value");
    } else if (key == "lr") {
      spec.sgd.lr = spec.adam.lr = Number(text, key, value);
    } else if (key == "wd") {
      spec.sgd.weight_decay = spec.adam.weight_decay = Number(text, key, value);
    } else if (key == "momentum" && sgd) {
      spec.sgd.momentum = Number(text, key, value);
    } else if (key == "beta1" && !sgd) {
      spec.adam.beta1 = Number(text, key, value);
    } else if (key == "beta2" && !sgd) {
      spec.adam.beta2 = Number(text, key, value);
    } else if (key == "eps" && !sgd) {
      spec.adam.eps = Number(text, key, value);
    } else if (key == "lr_steps") {
      spec.lr_steps = Clocks(text, value);
    } else if (key == "lr_factor") {
      spec.lr_factor = Number(text, key, value);
    } else {
      Bad(text, "'" + key + "' is not a field of " + name);
    }
  }
  if (spec.sgd.nesterov && spec.sgd.momentum == 0) Bad(text, "nesterov needs momentum > 0");
  return spec;
}

float OptimizerSpec::LearningRateScale(int64_t clock) const {
  float scale = 1;
  for (size_t i = 0; i < lr_steps.size() && clock >= lr_steps[i]; ++i) scale *= lr_factor;
  return scale;
}

}  // namespace pacer
