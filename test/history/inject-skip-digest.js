/**
 * Deliberately re-introduces issue 34's bug in a server process (preloaded with -r after
 * tools/ts-register.js), so test/history proves the history checker catches it: a store that takes
 * "these event ids are stored already" as an idempotent duplicate without comparing the caller,
 * command and payload digest, and a kernel that answers with whatever batch the key holds.
 * SQLite only (the PostgreSQL comparison lives in SQL). Never loaded by the server itself.
 */
const { CommandExecutor } = require('../../src/commands/kernel');
const { SqliteEventStore } = require('../../src/stores/sqlite/sqlite-event-store');
const { DuplicateEventId } = require('../../src/events/store/port');

CommandExecutor.prototype.assertOwnBatch = function skipDigestComparison() {};
SqliteEventStore.prototype.duplicateResult = function duplicateWithoutDigest(req, first) {
  if (first.stream_id !== req.streamId) throw new DuplicateEventId(first.event_id);
  let last = first;
  for (let i = 1; i < req.events.length; i++) {
    const row = this.stmts.byId.get(req.events[i].eventId);
    if (!row || row.stream_id !== req.streamId || row.stream_revision !== first.stream_revision + i) throw new DuplicateEventId(req.events[i].eventId);
    last = row;
  }
  return { streamId: req.streamId, nextExpectedRevision: last.stream_revision, firstPosition: first.global_position, lastPosition: last.global_position, duplicate: true };
};
