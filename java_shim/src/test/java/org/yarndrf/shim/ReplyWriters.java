// Generated from yarn_bridge/contract.yaml by `make contract` (python -m yarn_bridge.contract_gen).
// Do not edit: edit the spec and regenerate.
package org.yarndrf.shim;

import com.fasterxml.jackson.core.JsonGenerator;
import java.io.IOException;
import java.util.List;

/** Writes the objects of {@link ReplyValues} as the core does: the spec's fields in its order. */
final class ReplyWriters {
  /** The SHA-256 of the spec's bytes this file was generated from (ContractSpecTest). */
  static final String SPEC_SHA256 = "4df3e377dd8aa1003436126207094277582e10e71ed1e30d8919466c12f4526a";

  private ReplyWriters() {
  }

  static void write(JsonGenerator g, ReplyValues.Assignment x) throws IOException {
    g.writeStartObject();
    g.writeStringField(Contract.ReplyItems.Assignment.ASSIGNMENT_ID, x.id);
    g.writeStringField(Contract.ReplyItems.Assignment.APP, x.app);
    g.writeStringField(Contract.ReplyItems.Assignment.NODE, x.node);
    g.writeStringField(Contract.ReplyItems.Assignment.QUEUE, x.queue);
    g.writeNumberField(Contract.ReplyItems.Assignment.PRIORITY, x.priority);
    g.writeNumberField(Contract.ReplyItems.Assignment.ALLOCATION_ID, x.allocationId);
    RequestValues.writeAmounts(g, Contract.ReplyItems.Assignment.RESOURCES, x.resources);
    if (!(x.cards.isEmpty())) {
      writeInts(g, Contract.ReplyItems.Assignment.CARDS, x.cards);
    }
    g.writeEndObject();
  }

  static void write(JsonGenerator g, ReplyValues.Placement x) throws IOException {
    g.writeStartObject();
    g.writeStringField(Contract.ReplyItems.Placement.APP, x.app);
    g.writeBooleanField(Contract.ReplyItems.Placement.ACCEPTED, x.accepted);
    g.writeStringField(Contract.ReplyItems.Placement.QUEUE, x.queue);
    g.writeStringField(Contract.ReplyItems.Placement.REASON, x.reason);
    g.writeEndObject();
  }

  static void write(JsonGenerator g, ReplyValues.Preemption x) throws IOException {
    g.writeStartObject();
    g.writeStringField(Contract.ReplyItems.Preemption.CONTAINER, x.container);
    g.writeStringField(Contract.ReplyItems.Preemption.APP, x.app);
    g.writeStringField(Contract.ReplyItems.Preemption.NODE, x.node);
    g.writeStringField(Contract.ReplyItems.Preemption.QUEUE, x.queue);
    g.writeStringField(Contract.ReplyItems.Preemption.FOR_QUEUE, x.forQueue);
    g.writeStringField(Contract.ReplyItems.Preemption.REASON, x.reason);
    g.writeNumberField(Contract.ReplyItems.Preemption.KILL_IN_MS, x.killInMs);
    g.writeEndObject();
  }

  private static void writeInts(JsonGenerator g, String field, List<Integer> values)
      throws IOException {
    g.writeArrayFieldStart(field);
    for (int x : values) {
      g.writeNumber(x);
    }
    g.writeEndArray();
  }
}
