package org.yarndrf.shim.store;

/**
 * Where one small text record is kept for the next active ResourceManager to read: the core's
 * preemption state ({@link org.yarndrf.shim.PreemptionStore}). A write replaces the record whole.
 */
public interface RecordStore {
  /** The record, or null when none was ever written. */
  String read() throws Exception;

  void write(String record) throws Exception;

  /** Releases what the store opened (not what it was lent: the RM's own ZooKeeper connection). */
  void close();

  /** Where the record is, for logs. */
  String describe();
}
