package org.yarndrf.shim;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Collections;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import org.apache.hadoop.security.authorize.AccessControlList;
import org.yarndrf.shim.bridge.MalformedReplyException;

/**
 * One entry of the core's queue list (BRIDGE.md, "queues"), read and checked whole before any
 * queue changes. Every number is checked, never wrapped or rounded into range: Jackson's asLong()
 * reads 18446744073709551621 as 5, and a limit read that way would let a queue past its max.
 */
final class QueueSettings {
  final String path;
  final boolean leaf;
  /** The weight YARN reports (QueueInfo): the number, or the largest per-resource weight. */
  final double weight;
  /** Per-resource max: an absolute amount, or a fraction of the cluster. */
  final Map<String, Long> maxAmounts;
  final Map<String, Double> maxFractions;
  /** The whole-queue max as a fraction of the cluster; NaN if none. */
  final double maxFraction;
  /** Parsed here by Hadoop's own class, from the text the core parsed with the same rules. */
  final AccessControlList submitAcl;
  final AccessControlList adminAcl;

  private QueueSettings(String path, boolean leaf, double weight, Map<String, Long> maxAmounts,
      Map<String, Double> maxFractions, double maxFraction, String submitAcl, String adminAcl) {
    this.path = path;
    this.leaf = leaf;
    this.weight = weight;
    this.maxAmounts = Collections.unmodifiableMap(maxAmounts);
    this.maxFractions = Collections.unmodifiableMap(maxFractions);
    this.maxFraction = maxFraction;
    this.submitAcl = new AccessControlList(submitAcl);
    this.adminAcl = new AccessControlList(adminAcl);
  }

  /** A queue YARN knows before the core has described it: weight 1, no max, nobody in its ACLs. */
  static QueueSettings defaults(String path) {
    return new QueueSettings(path, false, 1.0, new HashMap<>(), new HashMap<>(), Double.NaN, "", "");
  }

  /** Reads one entry; the exception names the queue and the field. */
  static QueueSettings read(JsonNode spec) throws MalformedReplyException {
    if (spec == null || !spec.isObject()) {
      throw new MalformedReplyException("queue entry " + shown(spec) + " is not an object");
    }
    JsonNode name = spec.get("name");
    String path = name != null && name.isTextual() ? name.asText() : null;
    if (path == null || !(path.equals("root") || path.startsWith("root."))) {
      throw new MalformedReplyException("queue name " + shown(name) + " is not a full path from root");
    }
    Reader r = new Reader(path);
    Map<String, Long> amounts = new HashMap<>();
    Map<String, Double> fractions = new HashMap<>();
    r.max(spec.get("max"), amounts, fractions);
    JsonNode mf = spec.get("max_fraction");
    return new QueueSettings(path, r.bool(spec.get("leaf"), "leaf", true), r.weight(spec.get("weight")),
        amounts, fractions, mf == null || mf.isNull() ? Double.NaN : r.fraction(mf, "max_fraction"),
        r.text(spec.get("submit_acl"), "submit_acl"), r.text(spec.get("admin_acl"), "admin_acl"));
  }

  /** The configured maximum of one resource type, or -1 if unlimited (as the core computes it). */
  long limitFor(String resource, long clusterAmount) {
    Long amount = maxAmounts.get(resource);
    if (amount != null) {
      return amount;
    }
    double fraction = maxFractions.getOrDefault(resource, maxFraction);
    return Double.isNaN(fraction) ? -1 : (long) (fraction * clusterAmount);
  }

  /** Parses the fields of one entry, naming its queue in every error. */
  private static final class Reader {
    private final String path;

    Reader(String path) {
      this.path = path;
    }

    boolean bool(JsonNode n, String field, boolean absent) throws MalformedReplyException {
      if (n == null || n.isNull()) {
        return absent;
      }
      if (!n.isBoolean()) {
        throw bad(field, n, "is not true or false");
      }
      return n.booleanValue();
    }

    String text(JsonNode n, String field) throws MalformedReplyException {
      if (n == null || n.isNull()) {
        return "";
      }
      if (!n.isTextual()) {
        throw bad(field, n, "is not a string");
      }
      return n.textValue();
    }

    double weight(JsonNode w) throws MalformedReplyException {
      if (w == null || w.isNull()) {
        return 1.0;
      }
      if (!w.isObject()) {
        return positive(w, "weight");
      }
      double largest = 0;
      for (Iterator<Map.Entry<String, JsonNode>> it = w.fields(); it.hasNext();) {
        Map.Entry<String, JsonNode> e = it.next();
        largest = Math.max(largest, positive(e.getValue(), "weight." + e.getKey()));
      }
      return largest > 0 ? largest : 1.0;
    }

    void max(JsonNode max, Map<String, Long> amounts, Map<String, Double> fractions)
        throws MalformedReplyException {
      if (max == null || max.isNull()) {
        return;
      }
      if (!max.isObject()) {
        throw bad("max", max, "is not an object");
      }
      for (Iterator<Map.Entry<String, JsonNode>> it = max.fields(); it.hasNext();) {
        Map.Entry<String, JsonNode> e = it.next();
        String field = "max." + e.getKey();
        JsonNode v = e.getValue();
        if (v.isIntegralNumber()) {
          if (!v.canConvertToLong() || v.longValue() < 0) {
            throw bad(field, v, "is not a whole number from 0 to " + Long.MAX_VALUE);
          }
          amounts.put(e.getKey(), v.longValue());
        } else {
          fractions.put(e.getKey(), fraction(v, field));
        }
      }
    }

    double positive(JsonNode n, String field) throws MalformedReplyException {
      if (!n.isNumber() || !(n.doubleValue() > 0) || Double.isInfinite(n.doubleValue())) {
        throw bad(field, n, "is not a finite number above 0");
      }
      return n.doubleValue();
    }

    double fraction(JsonNode n, String field) throws MalformedReplyException {
      if (!n.isNumber() || !(n.doubleValue() >= 0 && n.doubleValue() <= 1)) {
        throw bad(field, n, "is not a fraction of the cluster from 0 to 1");
      }
      return n.doubleValue();
    }

    MalformedReplyException bad(String field, JsonNode value, String problem) {
      return new MalformedReplyException("queue " + shown(path) + ": " + field + " " + shown(value)
          + " " + problem);
    }
  }

  private static String shown(Object value) {
    String s = String.valueOf(value);
    return s.length() <= 60 ? s : s.substring(0, 59) + "…";
  }
}
