package org.yarndrf.shim.bridge;

/** Something that carries one request to the decision core and brings back its reply. */
public interface CoreChannel extends AutoCloseable {
  /**
   * @throws CoreUnavailableException if the core cannot be reached or did not answer in time;
   *     the caller then assigns nothing and resynchronises later.
   */
  String call(String message) throws CoreUnavailableException;

  @Override
  void close();
}
