#pragma once

#include <string>
#include <utility>
#include <vector>

#include "pacer/config.h"

namespace pacer {

// The first PACER_ environment variable whose text is not a value of its flag's type, as a
// message naming it, its text and the type; empty when all parsed. Such a variable leaves its
// flag at the built-in default, and Node::Join turns the message into an error on every rank.
std::string EnvironmentProblem();

// Throws pacer::Error naming the flag, its value and what it must be for the first option of
// `config` that fails its row's check (pacer/config_options.def, pacer/tuning_options.def).
void CheckOptions(const Config& config);

// The options every rank must share (the rows marked kJobWide), as (flag, value as text): a job
// whose ranks disagree on them would run, but not as any of its ranks was told.
std::vector<std::pair<std::string, std::string>> JobWideOptions(const Config& config);

}  // namespace pacer
