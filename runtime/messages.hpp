#pragma once
/// Every runtime message in one include: the shared message types and the
/// interfaces (with their atoms) of the swarm, the supervisor, the
/// remediation actor and the prober. For code that speaks to all of them;
/// a file that speaks to one includes that one's interface header instead.

#include "runtime/message_types.hpp"
#include "runtime/probe_interface.hpp"
#include "runtime/remediation_interface.hpp"
#include "runtime/supervisor_interface.hpp"
#include "runtime/swarm_interface.hpp"
