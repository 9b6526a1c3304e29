#include "server/live_reader.h"

namespace agentstream::server {

LiveReader::LiveReader(EventLog& log, SessionId session, Cursor after, BatchLimits limits)
    : log_(log),
      session_(std::move(session)),
      limits_(limits),
      epoch_(after.epoch),
      next_(after.seq.next()) {}

std::shared_ptr<const EventBatch> LiveReader::OnLive(
    const std::shared_ptr<const EventBatch>& batch) {
  if (reset_needed_) return nullptr;
  if (batch->epoch != epoch_) {
    if (batch->epoch > epoch_) reset_needed_ = true;
    return nullptr;
  }
  if (batch->epoch_marker() || batch->last < next_) return nullptr;  // nothing new
  if (!catching_up_ && batch->first == next_) {
    next_ = batch->last.next();
    return batch;
  }
  // A gap, an overlap, or a batch that raced the catch-up: read it from the log instead.
  catching_up_ = true;
  if (batch->last > seen_last_) seen_last_ = batch->last;
  return nullptr;
}

Result<std::shared_ptr<const EventBatch>> LiveReader::Pull() {
  if (!catching_up_ || reset_needed_) return std::shared_ptr<const EventBatch>();
  if (!checked_epoch_) {
    // A cursor of a replaced epoch resets at once rather than replaying stale history.
    AS_ASSIGN_OR_RETURN(Cursor tail, log_.Tail(session_));
    checked_epoch_ = true;
    if (tail.epoch != epoch_) {
      reset_needed_ = true;
      return std::shared_ptr<const EventBatch>();
    }
    if (next_ > tail.seq.next())
      return Error(ErrorCode::kInvalidArgument, "cursor " + FormatCursor(position()) +
                                                    " is past the tail " + FormatCursor(tail));
  }
  bool has_newer = false;
  auto batch = ReadBatch(log_, session_, epoch_, next_, limits_, &has_newer);
  if (!batch.ok()) return batch.status();
  if ((*batch)->count > 0) next_ = (*batch)->last.next();
  if ((*batch)->count == 0 || (!has_newer && seen_last_ < next_)) {
    // At the tail of our epoch. If history moved to another epoch, the client must reset.
    AS_ASSIGN_OR_RETURN(Cursor tail, log_.Tail(session_));
    if (tail.epoch != epoch_) reset_needed_ = true;
    catching_up_ = false;
  }
  if ((*batch)->count == 0) return std::shared_ptr<const EventBatch>();
  return std::move(*batch);
}

}  // namespace agentstream::server
