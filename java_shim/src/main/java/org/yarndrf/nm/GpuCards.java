package org.yarndrf.nm;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * How a node's GPU cards travel between a NodeManager and the ResourceManager (docs/library.md, "GPU cards"):
 * <ul>
 *   <li>up: the NodeManager declares its cards as the node attribute {@value #ATTRIBUTE}, the MiB of
 *       each card joined by "_" ({@code 10240_10240}; node attribute values allow no comma);</li>
 *   <li>down: the cards the scheduler chose for a container ride on the container as the allocation
 *       tag {@code yarn-drf.gpu-cards=0,1}. Allocation tags are in the container token the RM signs,
 *       so the NodeManager reads the RM's choice, never one the application made up.</li>
 * </ul>
 * Both sides of the project use this class, so the two formats are defined once.
 */
public final class GpuCards {
  /** The node attribute's name (YARN gives attributes from the NodeManager the prefix nm.yarn.io). */
  public static final String ATTRIBUTE = "yarn-drf-gpu-cards";
  public static final String DISTRIBUTED_PREFIX = "nm.yarn.io";
  public static final String TAG_PREFIX = "yarn-drf.gpu-cards=";
  /** As scheduler/cards.py: more cards than this on one node is a configuration error. */
  public static final int MAX_CARDS = 64;

  private GpuCards() {
  }

  /**
   * The MiB of each card of a node attribute value such as {@code 10240_10240}.
   * @throws IllegalArgumentException naming what is wrong: no cards, more than {@value #MAX_CARDS},
   *     or a size that is not a positive integer of MiB
   */
  public static List<Long> sizes(String value) {
    if (value == null || value.trim().isEmpty()) {
      throw new IllegalArgumentException("no cards: expected the MiB of each card joined by _, e.g. 10240_10240");
    }
    String[] parts = value.trim().split("_", -1);
    if (parts.length > MAX_CARDS) {
      throw new IllegalArgumentException("at most " + MAX_CARDS + " cards per node, got " + parts.length);
    }
    List<Long> out = new ArrayList<>(parts.length);
    for (int i = 0; i < parts.length; i++) {
      long mib = parts[i].matches("[0-9]{1,18}") ? Long.parseLong(parts[i]) : 0;  // 18 digits: a long
      if (mib <= 0) {
        throw new IllegalArgumentException("card " + i + ": \"" + abbreviate(parts[i])
            + "\" is not a positive integer of MiB");
      }
      out.add(mib);
    }
    return Collections.unmodifiableList(out);
  }

  /** The allocation tag of a container on these cards (indices of the node's cards). */
  public static String tag(List<Integer> cards) {
    StringBuilder b = new StringBuilder(TAG_PREFIX);
    for (int i = 0; i < cards.size(); i++) {
      b.append(i == 0 ? "" : ",").append(cards.get(i));
    }
    return b.toString();
  }

  /**
   * The card indices a container's allocation tags name, or null when no tag names cards.
   * @throws IllegalArgumentException for a cards tag that is not distinct indices 0 to {@value
   *     #MAX_CARDS}-1 (or more than one cards tag)
   */
  public static List<Integer> fromTags(Set<String> tags) {
    List<Integer> found = null;
    for (String t : tags == null ? Collections.<String>emptySet() : tags) {
      if (t == null || !t.startsWith(TAG_PREFIX)) {
        continue;
      }
      if (found != null) {
        throw new IllegalArgumentException("more than one " + TAG_PREFIX + " tag: " + tags);
      }
      found = indices(t.substring(TAG_PREFIX.length()), t);
    }
    return found;
  }

  private static List<Integer> indices(String list, String tag) {
    String[] parts = list.split(",", -1);
    Set<Integer> seen = new TreeSet<>();
    List<Integer> out = new ArrayList<>(parts.length);
    for (String p : parts) {
      if (parts.length > MAX_CARDS || !p.matches("[0-9]{1,2}") || Integer.parseInt(p) >= MAX_CARDS
          || !seen.add(Integer.parseInt(p))) {
        throw new IllegalArgumentException("allocation tag \"" + abbreviate(tag) + "\" is not "
            + TAG_PREFIX + " followed by distinct card indices 0-" + (MAX_CARDS - 1) + " joined by commas");
      }
      out.add(Integer.parseInt(p));
    }
    return out;
  }

  private static String abbreviate(String s) {
    return s.length() <= 80 ? s : s.substring(0, 80) + "...";
  }
}
