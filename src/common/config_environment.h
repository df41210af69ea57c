#pragma once

#include <string>

namespace pacer {

// The first PACER_ environment variable whose text is not a value of its flag's type, as a
// message naming it, its text and the type; empty when all parsed. Such a variable leaves its
// flag at the built-in default, and Node::Join turns the message into an error on every rank.
std::string EnvironmentProblem();

}  // namespace pacer
