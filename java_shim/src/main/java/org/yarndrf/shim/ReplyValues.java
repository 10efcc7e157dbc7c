// Generated from yarn_bridge/contract.yaml by `make contract` (python -m yarn_bridge.contract_gen).
// Do not edit: edit the spec and regenerate.
package org.yarndrf.shim;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.List;
import java.util.Map;
import org.yarndrf.shim.bridge.MalformedReplyException;

/**
 * The objects of the core's replies as the spec states them: one value class each, a field per
 * field of the spec, and its reader, which checks every field ({@link Messages} reads the replies
 * with them).
 */
public final class ReplyValues {
  /** The SHA-256 of the spec's bytes this file was generated from (ContractSpecTest). */
  static final String SPEC_SHA256 = "4df3e377dd8aa1003436126207094277582e10e71ed1e30d8919466c12f4526a";

  private ReplyValues() {
  }

  /** The call's decisions; each optional field only when it says something. */
  public static final class ScheduleReply {
    /** the request's, echoed */
    public final long seq;
    /**
     * at most serve --max-assignments-per-call (64 by default); a call after one that stopped at
     * that bound may assign on nodes it does not list
     */
    public final List<Assignment> assignments;
    /** the submissions placed or refused */
    public final List<Placement> placements;
    /** the whole list, only when the shim has not had the core's tree since a reload or a resync */
    public final List<QueueSettings> queues;
    /**
     * the queues built since the last reply (placement with create, a recovered app's queue) and
     * the leaves they went under, parents first
     */
    public final List<QueueSettings> queuesBuilt;
    /**
     * the leaves built since the last reply with the settings of a created leaf (placement with
     * create, a recovered app's dynamic queue), by parent: parent path -> the leaves' names; each
     * one's entry is a leaf's of weight 1, no max and empty ACLs, with its parent's max_container,
     * labels and default_label (applied after queues_built, which holds none of them)
     */
    public final Map<String, List<String>> queuesCreated;
    /** for the apps whose headroom changed */
    public final Map<String, long[]> headroom;
    /** for the apps whose AM waits on max-am-share with a new reason, or no longer does */
    public final Map<String, String> amDiagnostics;
    /** containers newly marked (and restored marks told again): their AMs are told now */
    public final List<Preemption> preempt;
    /** containers whose grace is over, to kill with exit status PREEMPTED */
    public final List<Preemption> kill;
    /**
     * milliseconds until the core wants a call without a change in YARN; absent when nothing is
     * timed
     */
    public final long callInMs;
    /** the core's preemption state, only when it changed */
    public final String preemptionState;
    /**
     * the nodes the core began holding since the last reply, or now holds for another request (the
     * old hold ends)
     */
    public final List<Messages.Hold> holds;
    /**
     * the nodes whose hold ended since the last reply; a snapshot's new core starts with no hold
     * the shim has (it drops them all)
     */
    public final List<String> holdsEnded;
    /**
     * how many nodes the core goes on with in its next calls, first (a call stopped at its limit
     * before finishing them): the shim lists fewer new nodes while they wait; absent for none
     */
    public final long carried;

    public ScheduleReply(long seq, List<Assignment> assignments, List<Placement> placements,
        List<QueueSettings> queues, List<QueueSettings> queuesBuilt,
        Map<String, List<String>> queuesCreated, Map<String, long[]> headroom,
        Map<String, String> amDiagnostics, List<Preemption> preempt, List<Preemption> kill,
        long callInMs, String preemptionState, List<Messages.Hold> holds, List<String> holdsEnded,
        long carried) {
      this.seq = seq;
      this.assignments = assignments;
      this.placements = placements;
      this.queues = queues;
      this.queuesBuilt = queuesBuilt;
      this.queuesCreated = queuesCreated;
      this.headroom = headroom;
      this.amDiagnostics = amDiagnostics;
      this.preempt = preempt;
      this.kill = kill;
      this.callInMs = callInMs;
      this.preemptionState = preemptionState;
      this.holds = holds;
      this.holdsEnded = holdsEnded;
      this.carried = carried;
    }

    /** Reads one, every field checked. */
    static ScheduleReply read(JsonNode n) throws MalformedReplyException {
      return new ScheduleReply(Messages.integer(n, Contract.Replies.Schedule.SEQ, 0, Long.MAX_VALUE),
          Messages.items(n, Contract.Replies.Schedule.ASSIGNMENTS,
              true, Assignment::read),
          Messages.items(n, Contract.Replies.Schedule.PLACEMENTS,
              true, Placement::read),
          Messages.queueList(n, Contract.Replies.Schedule.QUEUES),
          Messages.queuesBuilt(n, Contract.Replies.Schedule.QUEUES_BUILT),
          Messages.queuesCreated(n, Contract.Replies.Schedule.QUEUES_CREATED),
          Messages.headroom(n, Contract.Replies.Schedule.HEADROOM),
          Messages.amDiagnostics(n, Contract.Replies.Schedule.AM_DIAGNOSTICS),
          Messages.items(n, Contract.Replies.Schedule.PREEMPT,
              false, Preemption::read),
          Messages.items(n, Contract.Replies.Schedule.KILL,
              false, Preemption::read),
          Messages.callInMs(n, Contract.Replies.Schedule.CALL_IN_MS),
          Messages.preemptionState(n, Contract.Replies.Schedule.PREEMPTION_STATE),
          Messages.holds(n, Contract.Replies.Schedule.HOLDS),
          Messages.holdsEnded(n, Contract.Replies.Schedule.HOLDS_ENDED),
          Messages.countOrZero(n, Contract.Replies.Schedule.CARRIED));
    }
  }

  /** A reload applied or refused. */
  public static final class ReloadReply {
    /** whether the file was installed */
    public final boolean accepted;
    /** accepted: queues added, removed, changed and draining */
    public final String changes;
    /** accepted: the new tree */
    public final List<QueueSettings> queues;
    /** refused: every error, each naming its field and line */
    public final List<String> errors;

    public ReloadReply(boolean accepted, String changes, List<QueueSettings> queues,
        List<String> errors) {
      this.accepted = accepted;
      this.changes = changes;
      this.queues = queues;
      this.errors = errors;
    }

    /** Reads one, every field checked. */
    static ReloadReply read(JsonNode n) throws MalformedReplyException {
      return new ReloadReply(Messages.bool(n, Contract.Replies.Reload.ACCEPTED),
          Messages.jsonText(n, Contract.Replies.Reload.CHANGES),
          Messages.queuesIfAccepted(n, Contract.Replies.Reload.QUEUES),
          Messages.errorsIfRefused(n, Contract.Replies.Reload.ERRORS));
    }
  }

  /** The core's answer to a move. */
  public static final class MoveReply {
    /** whether the app moved */
    public final boolean accepted;
    /** the queue it is in now (full path), or null */
    public final String queue;
    /**
     * why not: the target's ACLs for the app's user, or a max or max-running-apps it would break
     */
    public final String reason;

    public MoveReply(boolean accepted, String queue, String reason) {
      this.accepted = accepted;
      this.queue = queue;
      this.reason = reason;
    }

    /** Reads one, every field checked. */
    static MoveReply read(JsonNode n) throws MalformedReplyException {
      return new MoveReply(Messages.bool(n, Contract.Replies.Move.ACCEPTED),
          Messages.queueIfAccepted(n, Contract.Replies.Move.QUEUE),
          Messages.textOrEmpty(n, Contract.Replies.Move.REASON));
    }
  }

  /** A container the core decided to start on a node, for the shim to re-check and commit. */
  public static final class Assignment {
    /** the core's id for it (a labelled partition's carry its label: agpu-1) */
    public final String id;
    /** the app */
    public final String app;
    /** one of the request's nodes */
    public final String node;
    /** the app's leaf queue */
    public final String queue;
    /** the request's priority */
    public final int priority;
    /** the request's allocation id */
    public final long allocationId;
    /** the container's size, resource name -> amount */
    public final Map<String, Long> resources;
    /** on a node with cards: the indices of the cards it goes on (empty: none) */
    public final List<Integer> cards;

    public Assignment(String id, String app, String node, String queue, int priority,
        long allocationId, Map<String, Long> resources, List<Integer> cards) {
      this.id = id;
      this.app = app;
      this.node = node;
      this.queue = queue;
      this.priority = priority;
      this.allocationId = allocationId;
      this.resources = resources;
      this.cards = cards;
    }

    /** Without the optional fields: absent. */
    public Assignment(String id, String app, String node, String queue, int priority,
        long allocationId, Map<String, Long> resources) {
      this(id, app, node, queue, priority, allocationId, resources,
          java.util.Collections.<Integer>emptyList());
    }

    /** Reads one, every field checked. */
    static Assignment read(JsonNode n) throws MalformedReplyException {
      return new Assignment(Messages.text(n, Contract.ReplyItems.Assignment.ASSIGNMENT_ID),
          Messages.text(n, Contract.ReplyItems.Assignment.APP),
          Messages.text(n, Contract.ReplyItems.Assignment.NODE),
          Messages.text(n, Contract.ReplyItems.Assignment.QUEUE),
          (int) Messages.integer(n, Contract.ReplyItems.Assignment.PRIORITY,
              Integer.MIN_VALUE, Integer.MAX_VALUE),
          Messages.integer(n, Contract.ReplyItems.Assignment.ALLOCATION_ID,
              Long.MIN_VALUE, Long.MAX_VALUE),
          Messages.amounts(n, Contract.ReplyItems.Assignment.RESOURCES),
          Messages.cards(n, Contract.ReplyItems.Assignment.CARDS));
    }
  }

  /** The core's placement of a submitted app. */
  public static final class Placement {
    /** the app */
    public final String app;
    /** whether it is accepted */
    public final boolean accepted;
    /** the queue it goes to (full path), or null */
    public final String queue;
    /** why not (empty when accepted) */
    public final String reason;

    public Placement(String app, boolean accepted, String queue, String reason) {
      this.app = app;
      this.accepted = accepted;
      this.queue = queue;
      this.reason = reason;
    }

    /** Reads one, every field checked. */
    static Placement read(JsonNode n) throws MalformedReplyException {
      return new Placement(Messages.text(n, Contract.ReplyItems.Placement.APP),
          Messages.bool(n, Contract.ReplyItems.Placement.ACCEPTED),
          Messages.queueIfAccepted(n, Contract.ReplyItems.Placement.QUEUE),
          Messages.textOrEmpty(n, Contract.ReplyItems.Placement.REASON));
    }
  }

  /** A container of the preemption plan ("preempt", "kill"). */
  public static final class Preemption {
    /** the container (its attempt is the one its id names) */
    public final String container;
    /** its app */
    public final String app;
    /** its node */
    public final String node;
    /** its queue */
    public final String queue;
    /** the starved leaf its room goes to */
    public final String forQueue;
    /** why that leaf starved */
    public final String reason;
    /** milliseconds until the kill (0 in kill) */
    public final long killInMs;

    public Preemption(String container, String app, String node, String queue, String forQueue,
        String reason, long killInMs) {
      this.container = container;
      this.app = app;
      this.node = node;
      this.queue = queue;
      this.forQueue = forQueue;
      this.reason = reason;
      this.killInMs = killInMs;
    }

    /** Reads one, every field checked. */
    static Preemption read(JsonNode n) throws MalformedReplyException {
      return new Preemption(Messages.text(n, Contract.ReplyItems.Preemption.CONTAINER),
          Messages.text(n, Contract.ReplyItems.Preemption.APP),
          Messages.text(n, Contract.ReplyItems.Preemption.NODE),
          Messages.text(n, Contract.ReplyItems.Preemption.QUEUE),
          Messages.text(n, Contract.ReplyItems.Preemption.FOR_QUEUE),
          Messages.text(n, Contract.ReplyItems.Preemption.REASON),
          Messages.integer(n, Contract.ReplyItems.Preemption.KILL_IN_MS, 0, Long.MAX_VALUE));
    }
  }
}
