// JSON mode of generic streams (Content-Type application/json): an append of a JSON array adds
// its elements, any other JSON value adds itself; reads return one array of every element.
// Messages are stored minified, each element followed by ',' ("1,{\"a\":2},").
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace agentstream::streams {

// The stored form of one append. kInvalidArgument for malformed JSON ("invalid JSON") or an
// empty array ("empty arrays are not allowed"); an empty array at creation yields "".
Result<std::string> ProcessJsonAppend(std::string_view body, bool initial_create);

// Appends the elements of one stored message to `out`, which begins with '[' (the caller adds
// the ']'), with a ',' before them when `out` already holds an element.
void AppendJsonElements(std::string_view stored, std::string* out);

// The first `count` elements of a stored message, in stored form; kInvalidArgument when the
// message holds fewer.
Result<std::string> JsonPrefix(std::string_view stored, std::size_t count);

}  // namespace agentstream::streams
