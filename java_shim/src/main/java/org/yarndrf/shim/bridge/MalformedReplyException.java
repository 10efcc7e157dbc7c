package org.yarndrf.shim.bridge;

/** The core answered, but not with a well-formed version-1 reply. */
public class MalformedReplyException extends Exception {
  public MalformedReplyException(String message) {
    super(message);
  }
}
