// The turn engine's state as JSON, so that a session can be loaded from a checkpoint (the state
// as of one seq, docs/event-log-format.md) plus the events after it instead of its whole history.
//
//   {"open":[RUN...],"foreground":"turn_1","nextOrder":4,
//    "byMessage":{"m1":"turn_1"},"byCall":{},"byRequest":{},"byTask":{},
//    "recentClosed":[RUN...],"queue":[PROMPT...],"pendingAfterTeardown":PROMPT,
//    "knownClientIds":[["c1","turn_1"],["c2",""]],"lastPromptText":"hi","errored":false}
//   RUN     {"id":"turn_1","origin":"foreground","phase":"streaming","clientMessageId":"c1",
//            "taskId":"t","promptText":"hi","order":1,"pendingPermissions":["r1"],
//            "messageIds":["m1"],"callIds":[],"requestIds":["r1"]}
//   PROMPT  {"clientMessageId":"c2","text":"next","attachments":[...],"whileRunning":"queue"}
//
// Maps are written with their keys sorted, so equal states encode to equal text; the known
// client ids in the order they are forgotten in (oldest first). `provider`,
// `queue_held` and `reported_status` are not written: the loader sets the provider, and
// TurnStateFold::Finish derives the other two.
#pragma once

#include <boost/json.hpp>

#include "core/status.h"
#include "core/turn/turn_state.h"

namespace agentstream::turn {

boost::json::object TurnStateToJson(const TurnState& state);

// kCorruption naming the first field that is missing or of the wrong type.
Result<TurnState> TurnStateFromJson(const boost::json::value& json);

}  // namespace agentstream::turn
