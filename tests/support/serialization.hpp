#pragma once
/// Binary serialization round trip for the message tests (what a message
/// goes through when it crosses nodes).

#include <gtest/gtest.h>

#include <vector>

#include <caf/all.hpp>

namespace sk::test {

/// Serializes `msg` as a caf::message and reads it back; a failure on
/// either side is reported and gives an empty message.
inline caf::message round_trip(caf::actor_system& sys, const caf::message& msg) {
  std::vector<char> buf;
  caf::binary_serializer sink{sys, buf};
  auto copy = msg;
  if (auto err = sink(copy)) {
    ADD_FAILURE() << "serialize: " << sys.render(err);
    return {};
  }
  caf::message out;
  caf::binary_deserializer source{sys, buf};
  if (auto err = source(out)) {
    ADD_FAILURE() << "deserialize: " << sys.render(err);
    return {};
  }
  return out;
}

}  // namespace sk::test
